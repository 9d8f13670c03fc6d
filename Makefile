# fmsim: `make run` and `make test` install what is missing, build, and run.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
FMSIM := $(BUILD_DIR)/src/cli/fmsim

# Debian 12 packages the build and the tests need (pybind11-dev, python3-dev: the Python API,
# src/python; chromium: the HTML report's browser test;
# slurmctld, slurmd, slurm-client: the real Slurm on loopback, tests/support/slurm_loopback.hpp;
# prometheus: promtool and a real Prometheus on loopback for the metrics tests;
# python3-pandas: fmsim.to_pandas in tests/python).
DEB_PACKAGES := cmake ninja-build g++ make libyaml-cpp-dev nlohmann-json3-dev libcli11-dev \
                libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev \
                pkg-config libcpp-httplib-dev pybind11-dev python3-dev
DEB_TEST_PACKAGES := chromium slurmctld slurmd slurm-client prometheus python3-pandas

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps test-deps configure build run test test-sanitize test-slurm-long fuzz-long bench clean format format-check format-deps

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

# A unity build (FMSIM_UNITY_BUILD, CMakeLists.txt): each target's sources compiled in batches, about
# half the compile time of one file at a time.
$(BUILD_DIR)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DFMSIM_UNITY_BUILD=ON

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job on the embedded default data: plan Llama 3.1 70B on 512 GPUs (15T tokens) across
# P5, P5en, P6-B200 and P6e-GB200, print the ranked layouts and write the HTML report. It builds
# only the `fmsim` target and what it links (67 steps of the unity build: no tests, benchmarks or
# Python extension): on a fresh clone of a 2-core machine the plan printed after 272 s (482 s of
# CPU; 2026-11-29, packages installed); `make test` builds the rest.
run: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target fmsim
	$(FMSIM) plan --report $(BUILD_DIR)/plan.html

test: test-deps build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer in its own build folder (g++;
# any report fails the test: -fno-sanitize-recover=all and halt_on_error); CI runs it after
# `make test` (.ci/run). It compiles the library, the command, the unit, prometheus and fuzz tests
# sanitized (-Og -g0, no benchmarks: docs/fuzzing.md has the measured times) and runs them; then
# the Release build's golden tests run against the sanitized fmsim (FMSIM_TEST_BINARY: every
# command and its bad input, without compiling those tests twice). Speed tests skip themselves
# there (FMSIM_SANITIZED, FMSIM_TEST_SANITIZED) and hang guards allow 10x. The validation bands,
# the browser and the real-Slurm tests are the Release suite's; so is the Python extension (it
# would need libasan preloaded into python3).
SANITIZE_DIR ?= build-sanitize
SANITIZE_ENV := ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
test-sanitize: test-deps configure
	cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-Og -g0" \
	  -DFMSIM_SANITIZE=ON -DFMSIM_BUILD_BENCH=OFF -DFMSIM_BUILD_PYTHON=OFF -DFMSIM_UNITY_BUILD=ON
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	$(SANITIZE_ENV) ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target fmsim_golden_test
	$(SANITIZE_ENV) FMSIM_TEST_BINARY=$(abspath $(SANITIZE_DIR))/src/cli/fmsim FMSIM_TEST_SANITIZED=1 \
	  ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L golden -E '$(SANITIZE_GOLDEN_SKIP)'
# Golden tests that check figures or layout, not memory, and rerun commands other golden tests run:
# byte-identical reruns (Determinism), every --help example again (HelpExamples: 334 s alone under
# the sanitizers; each command's own tests run its paths), the HTML reports' width in Chromium
# (ReportsFitThePage), the validate commands' summaries over whole files (ValidateSummary), the
# ten-year cluster replay's hang guard, the calibration's hold-out figures. The Release suite runs
# them all. docs/fuzzing.md has the measured times.
SANITIZE_GOLDEN_SKIP := ^(Determinism\.|HelpExamples\.|ReportsFitThePage\.|ValidateSummary\.|Robustness\.ClusterWithoutHorizonStopsAfterTenYears|CalibrateCli\.HoldoutErrorDoesNotDependOnTuning)

# The long differential run against the real Slurm (issue 40): SLURM_TRACES seeded random traces
# of 20 jobs, each replayed twice on a real slurmctld with slurmd nodes on loopback and on the
# scheduler twin (about 4 min a trace); prints each diff and the figures over all traces.
SLURM_TRACES ?= 10
test-slurm-long: test-deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target fmsim_slurm_test
	FMSIM_SLURM_LONG=$(SLURM_TRACES) $(BUILD_DIR)/tests/fmsim_slurm_test \
	  --gtest_filter='SchedulerTwinDifferential.ManyRandomTraces'

# libFuzzer with ASan/UBSan (clang 14), each target for FUZZ_RUNS executions (docs/fuzzing.md).
# FUZZ_ASAN=0: UndefinedBehaviorSanitizer alone, in build-fuzz-ub (2-3x the executions per
# second: 1,400 against 4,000 on the catalog target, measured 2026-11-25; docs/fuzzing.md).
FUZZ_RUNS ?= 10000000
FUZZ_ASAN ?= 1
ifeq ($(FUZZ_ASAN),0)
FUZZ_DIR ?= build-fuzz-ub
FUZZ_SANITIZERS := -DFMSIM_SANITIZE=OFF "-DCMAKE_CXX_FLAGS=-fsanitize=undefined -fno-sanitize-recover=all" \
                   "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=undefined -fno-sanitize-recover=all"
else
FUZZ_DIR ?= build-fuzz
FUZZ_SANITIZERS := -DFMSIM_SANITIZE=ON
endif
fuzz-long: deps
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 \
	  $(FUZZ_SANITIZERS) -DFMSIM_LIBFUZZER=ON -DFMSIM_BUILD_TESTS=OFF -DFMSIM_BUILD_BENCH=OFF -DFMSIM_BUILD_PYTHON=OFF
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	for t in catalog_yaml cluster_yaml job_yaml hf_config validation_csv cli_args metrics_load traces; do \
	  FUZZ_RUNS=$(FUZZ_RUNS) sh $(FUZZ_DIR)/fuzz/run_$$t.sh || exit 1; \
	done

bench: build
	$(BUILD_DIR)/bench/fmsim_bench

# C++ formatting by .clang-format (Debian package clang-format); format-check changes nothing and
# fails listing the files that `make format` would rewrite.
FORMAT_FILES = $(shell git ls-files 'src/*.cpp' 'src/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp' 'bench/*.hpp' \
                                    'fuzz/*.cpp' 'fuzz/*.hpp')
CLANG_FORMAT ?= clang-format
FORMAT_PACKAGES := clang-format

format-deps:
	@dpkg-query -W -f='$${Status}' $(FORMAT_PACKAGES) 2>/dev/null | grep -q "install ok installed" || { \
	  echo "Installing Debian packages: $(FORMAT_PACKAGES)"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(FORMAT_PACKAGES); }

format: format-deps
	$(CLANG_FORMAT) -i $(FORMAT_FILES)

format-check: format-deps
	@$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES) 2>/dev/null || { \
	  for f in $(FORMAT_FILES); do $(CLANG_FORMAT) --dry-run --Werror $$f >/dev/null 2>&1 || echo "not formatted: $$f"; done; \
	  echo "run 'make format' (clang-format, .clang-format)"; exit 1; }

clean:
	rm -rf $(BUILD_DIR)
