// The CSV table with named columns every measurements reader shares (config/csv.hpp).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config/csv.hpp"
#include "core/error.hpp"

namespace fmsim::config {
namespace {

CsvTable table(const std::string& text, const std::map<std::string, std::string>& aliases = {}) {
  return CsvTable(parse_csv(text, "t.csv"), "t.csv", "empty file", aliases);
}

// Cells are found by the header's names; a row shorter than the header, or a column the header
// lacks, reads as empty.
TEST(CsvTable, CellsByColumnName) {
  const auto t = table("id,b,c\nr1,2,3\nr2,5\n");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.cell(0, "c"), "3");
  EXPECT_EQ(t.cell(1, "b"), "5");
  EXPECT_EQ(t.cell(1, "c"), "");
  EXPECT_EQ(t.cell(0, "nope"), "");
  EXPECT_EQ(t.line(1), 3);
}

// A header cell named by an alias answers to the alias's target.
TEST(CsvTable, AliasesRenameHeaderCells) {
  const auto t = table("row,sharding\nr1,fsdp\n", {{"sharding", "fsdp_or_zero"}});
  EXPECT_TRUE(t.has("fsdp_or_zero"));
  EXPECT_FALSE(t.has("sharding"));
  EXPECT_EQ(t.cell(0, "fsdp_or_zero"), "fsdp");
}

// A missing required column is an InputError at the header's line naming the column; an empty
// file is one at line 1 with the reader's message.
TEST(CsvTable, MissingColumnAndEmptyFile) {
  const auto t = table("\nid,b\nr1,2\n");
  try {
    t.require({"id", "c"}, "missing column");
    FAIL() << "expected an InputError";
  } catch (const core::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("t.csv:2"), std::string::npos) << what;
    EXPECT_NE(what.find("c"), std::string::npos) << what;
    EXPECT_NE(what.find("missing column"), std::string::npos) << what;
  }
  EXPECT_THROW(table(""), core::InputError);
}

}  // namespace
}  // namespace fmsim::config
