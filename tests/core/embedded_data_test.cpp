// The embedded data table (cmake/embed.cmake): every file under data/ and validation/*.csv, byte for
// byte, placed in the binary by the assembler.
#include "core/embedded_data.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fmsim::core {
namespace {

std::string read_source_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Each embedded file's contents are the bytes of data/<path> (validation/<file> for the
// measurements), with a NUL right after the last byte (readers may hand contents to C APIs).
TEST(EmbeddedData, EveryFileIsTheSourceFileByteForByteThenANul) {
  const std::filesystem::path root(FMSIM_SOURCE_DIR);
  int checked = 0;
  for (const auto& file : embedded_files()) {
    const std::string path(file.path);
    const std::filesystem::path source = path.starts_with("validation/") ? root / path : root / "data" / path;
    ASSERT_TRUE(std::filesystem::exists(source)) << source;
    EXPECT_EQ(file.contents, read_source_file(source)) << path;
    EXPECT_EQ(file.contents.data()[file.contents.size()], '\0') << path;
    ++checked;
  }
  EXPECT_GT(checked, 80);
}

// Every file under data/ with a shipped extension (.yaml, .json, .csv) is in the table, and
// embedded_file() finds it by its path relative to data/.
TEST(EmbeddedData, EveryShippedDataFileIsFoundByItsPath) {
  const std::filesystem::path data = std::filesystem::path(FMSIM_SOURCE_DIR) / "data";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(data)) {
    const std::string extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".yaml" && extension != ".json" && extension != ".csv")) continue;
    const std::string relative = std::filesystem::relative(entry.path(), data).generic_string();
    const auto contents = embedded_file(relative);
    ASSERT_TRUE(contents.has_value()) << relative;
    EXPECT_EQ(contents->size(), std::filesystem::file_size(entry.path())) << relative;
  }
  EXPECT_FALSE(embedded_file("hardware/no-such-file.yaml").has_value());
}

}  // namespace
}  // namespace fmsim::core
