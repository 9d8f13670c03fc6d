// slurmdbd's association tree from `sacctmgr dump` output (config/sacctmgr_dump.hpp).
#include "config/sacctmgr_dump.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"

namespace fmsim::config {
namespace {

// sacctmgr dump: Parent lines set the parent of the Account/User lines that follow.
TEST(SacctmgrDump, ReadsParentsAccountsAndUsers) {
  const auto t = parse_sacctmgr_dump(
      "# sacctmgr dump cluster\n"
      "Cluster - 'fmsim':Fairshare=1:QOS='normal'\n"
      "Parent - 'root'\n"
      "Account - 'research':Description='research':Fairshare=60\n"
      "Account - 'product':Fairshare=40\n"
      "Parent - 'research'\n"
      "Account - 'llm':Fairshare=3\n"
      "Parent - 'llm'\n"
      "User - 'alice':DefaultAccount='llm':Fairshare=2\n",
      "assoc.cfg");
  const int research = t.find_account("research"), llm = t.find_account("llm");
  ASSERT_GE(research, 0);
  ASSERT_GE(llm, 0);
  EXPECT_EQ(t.associations()[static_cast<std::size_t>(llm)].parent, research);
  EXPECT_DOUBLE_EQ(t.associations()[static_cast<std::size_t>(research)].raw_shares, 60);
  EXPECT_EQ(t.users(), 1);
  const auto& users = t.associations();
  const auto alice = std::find_if(users.begin(), users.end(), [](const auto& a) { return a.user; });
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->parent, llm);
  EXPECT_DOUBLE_EQ(alice->raw_shares, 2);
}

TEST(SacctmgrDump, ErrorsNameTheLineAndField) {
  try {
    parse_sacctmgr_dump("Parent - 'root'\nAccount - 'a':Fairshare=lots\n", "assoc.cfg");
    FAIL() << "expected an error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "Fairshare");
  }
  EXPECT_THROW(parse_sacctmgr_dump("Parent - 'nosuch'\n", "assoc.cfg"), core::InputError);
  EXPECT_THROW(parse_sacctmgr_dump("Account 'x'\n", "assoc.cfg"), core::InputError);
}

}  // namespace
}  // namespace fmsim::config
