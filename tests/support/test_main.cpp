// The GoogleTest main of every fmsim test executable: each process gets a temporary directory
// of its own (mkdtemp), exported as TEST_TMPDIR so that ::testing::TempDir() points into it,
// and removed at exit. Two runs of the suite at the same time therefore never share a file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

int main(int argc, char** argv) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && base[0] != '\0' ? base : "/tmp") + "/fmsim_test_XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    perror("fmsim test: mkdtemp");
    return 1;
  }
  ::setenv("TEST_TMPDIR", pattern.c_str(), 1);
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  std::error_code ec;
  std::filesystem::remove_all(pattern, ec);
  return status;
}
