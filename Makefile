# fmsim: `make run` and `make test` install what is missing, build, and run.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
FMSIM := $(BUILD_DIR)/src/cli/fmsim

# Debian 12 packages the build and the tests need (chromium: the HTML report's browser test;
# slurmctld, slurmd, slurm-client: the real Slurm on loopback, tests/support/slurm_loopback.hpp;
# prometheus: promtool and a real Prometheus on loopback for the metrics tests).
DEB_PACKAGES := cmake ninja-build g++ make libyaml-cpp-dev nlohmann-json3-dev libcli11-dev \
                libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev \
                pkg-config libcpp-httplib-dev
DEB_TEST_PACKAGES := chromium slurmctld slurmd slurm-client prometheus

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps test-deps configure build run test bench clean

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

test-deps: deps
	@missing=""; for p in $(DEB_TEST_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing || \
	  echo "warning: could not install$$missing; browser tests will be skipped"; \
	fi

$(BUILD_DIR)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job on the embedded default data: plan Llama 3.1 70B on 512 GPUs (15T tokens) across
# P5, P5en, P6-B200 and P6e-GB200, print the ranked layouts and write the HTML report.
run: build
	$(FMSIM) plan --report $(BUILD_DIR)/plan.html

test: test-deps build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

bench: build
	$(BUILD_DIR)/bench/fmsim_bench

clean:
	rm -rf $(BUILD_DIR)
