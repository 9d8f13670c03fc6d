// A built-in mutation driver for the fuzz targets where libFuzzer is not used (g++ builds, CI):
// it runs LLVMFuzzerTestOneInput on every seed file, then on `--runs` mutations of them
// (bit flips, byte changes, insertions, deletions, copies within and splices across inputs,
// and tokens that parsers care about), from a fixed `--seed` so a run can be repeated.
//
//   fmsim_fuzz_hf_config --runs 100000 --seed 1 data/models tests/data
//
// A crash or sanitizer report ends the process (the input is first saved as crash-<n> in
// --artifacts, default $TMPDIR or /tmp); a hang is stopped by --timeout per input (SIGALRM).
// Exit status 0: every input was handled.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// The input being run, saved by the crash handlers.
std::string g_current;
std::string g_artifact;

void save_current() {
  std::ofstream(g_artifact, std::ios::binary).write(g_current.data(), static_cast<std::streamsize>(g_current.size()));
}

extern "C" void on_fatal(int sig) {
  save_current();
  const char* what = sig == SIGALRM ? "timeout (hang)" : "crash";
  std::fprintf(stderr, "fmsim fuzz driver: %s on signal %d; input saved as %s\n", what, sig, g_artifact.c_str());
  ::signal(sig, SIG_DFL);
  ::raise(sig == SIGALRM ? SIGABRT : sig);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::vector<std::string> kTokens = {"\n",
                                          ":",
                                          ": ",
                                          "- ",
                                          "{",
                                          "}",
                                          "[",
                                          "]",
                                          ",",
                                          "\"",
                                          "'",
                                          "#",
                                          "&a",
                                          "*a",
                                          "!!str ",
                                          "~",
                                          "null",
                                          "true",
                                          "-1",
                                          "0",
                                          "1e308",
                                          "1e30",
                                          "nan",
                                          "inf",
                                          "-inf",
                                          "9223372036854775808",
                                          "2147483648",
                                          "4294967296",
                                          "0.0",
                                          "1e-320",
                                          " GiB",
                                          " TB",
                                          " Gbps",
                                          " TFLOPS",
                                          " us",
                                          " W",
                                          "K",
                                          "M",
                                          "T",
                                          "--",
                                          "--tp",
                                          "--pp",
                                          "--seq",
                                          "--gbs",
                                          "--cluster",
                                          "--model",
                                          ":0",
                                          ":-1",
                                          "p5.48xlarge:",
                                          "u-p6e-gb200x72:",
                                          "\xff",
                                          std::string(1, '\0')};

std::string mutate(std::string s, const std::vector<std::string>& pool, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  const int steps = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < steps; ++i) {
    const std::size_t at = pick(s.size() + 1);
    switch (rng() % 7) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng() % 256);
        break;
      case 2: s.insert(at, kTokens[pick(kTokens.size())]); break;
      case 3:
        if (!s.empty()) s.erase(pick(s.size()), 1 + pick(std::min<std::size_t>(s.size(), 16)));
        break;
      case 4:
        if (!s.empty()) {
          const std::size_t from = pick(s.size());
          s.insert(at, s.substr(from, 1 + pick(32)));
        }
        break;
      case 5: {
        const std::string& other = pool[pick(pool.size())];
        if (!other.empty()) s = s.substr(0, at) + other.substr(pick(other.size()));
        break;
      }
      default: {  // a number replaced by an extreme one
        const auto d = s.find_first_of("0123456789", at);
        if (d != std::string::npos) s.replace(d, s.find_first_not_of("0123456789.e", d) - d, kTokens[18 + pick(10)]);
        break;
      }
    }
  }
  if (s.size() > 65536) s.resize(65536);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long long runs = 1000;
  unsigned long long seed = 1;
  int timeout = 20;
  double max_seconds = 0;
  const char* tmp = std::getenv("TMPDIR");
  std::string artifacts = tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
  std::vector<fs::path> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "fmsim fuzz driver: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--runs") {
      runs = std::atoll(value().c_str());
    } else if (a == "--seed") {
      seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--timeout") {
      timeout = std::atoi(value().c_str());
    } else if (a == "--max-seconds") {
      max_seconds = std::atof(value().c_str());
    } else if (a == "--artifacts") {
      artifacts = value();
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: " << argv[0]
                << " [--runs N] [--seed S] [--timeout SECONDS] [--max-seconds T] "
                   "[--artifacts DIR] SEED_FILE_OR_DIR...\n";
      return 0;
    } else {
      seeds.emplace_back(a);
    }
  }
  std::vector<std::string> pool;
  for (const auto& p : seeds) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());  // a fixed order: the same seed gives the same run
      for (const auto& f : files) pool.push_back(slurp(f));
    } else if (fs::is_regular_file(p, ec)) {
      pool.push_back(slurp(p));
    } else {
      std::cerr << "fmsim fuzz driver: no seed file or folder '" << p.string() << "'\n";
      return 2;
    }
  }
  if (pool.empty()) pool.emplace_back();
  g_artifact =
      artifacts + "/fmsim-fuzz-crash-" + fs::path(argv[0]).filename().string() + "-" + std::to_string(::getpid());
  for (const int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM}) ::signal(sig, on_fatal);

  const auto start = std::chrono::steady_clock::now();
  auto run_one = [&](const std::string& input) {
    g_current = input;
    ::alarm(static_cast<unsigned>(timeout));
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    ::alarm(0);
  };
  for (const auto& s : pool) run_one(s);
  std::mt19937_64 rng(seed);
  long long done = 0;
  for (; done < runs; ++done) {
    if (max_seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds)
      break;
    run_one(mutate(pool[static_cast<std::size_t>(rng() % pool.size())], pool, rng));
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "fmsim fuzz driver: " << pool.size() << " seeds and " << done << " mutations (seed " << seed << ") in "
            << s << " s, " << static_cast<long long>((pool.size() + done) / std::max(s, 1e-9))
            << " exec/s, no finding\n";
  return 0;
}
