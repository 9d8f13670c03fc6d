// core::Vocabulary: one canonical word per value plus aliases; comparison ignores case, '-', '_'
// and spaces; refusals list every accepted word and suggest the closest.
#include "core/vocabulary.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using fmsim::core::Vocabulary;
using fmsim::core::Word;
using ::testing::HasSubstr;

enum class Colour { Red, DarkBlue };
constexpr Word<Colour> kColourList[] = {{Colour::Red, "red", "crimson, scarlet"},
                                        {Colour::DarkBlue, "dark-blue", "navy"}};
constexpr Vocabulary<Colour> kColours{"colour", kColourList};

TEST(Vocabulary, CanonicalNamesAndAliasesParse) {
  // Every canonical name and every alias names its value.
  EXPECT_EQ(kColours.parse("red"), Colour::Red);
  EXPECT_EQ(kColours.parse("scarlet"), Colour::Red);
  EXPECT_EQ(kColours.parse("navy"), Colour::DarkBlue);
  EXPECT_EQ(kColours.parse("dark-blue"), Colour::DarkBlue);
}

TEST(Vocabulary, CaseDashUnderscoreAndSpaceAreIgnored) {
  // "Dark_Blue", "DARK BLUE" and "darkblue" fold to the same word as "dark-blue".
  EXPECT_EQ(kColours.parse("Dark_Blue"), Colour::DarkBlue);
  EXPECT_EQ(kColours.parse("DARK BLUE"), Colour::DarkBlue);
  EXPECT_EQ(kColours.parse("darkblue"), Colour::DarkBlue);
  EXPECT_EQ(kColours.parse("CRIMSON"), Colour::Red);
}

TEST(Vocabulary, UnknownAndEmptyWordsAreRefused) {
  EXPECT_FALSE(kColours.parse("green").has_value());
  EXPECT_FALSE(kColours.parse("").has_value());
  EXPECT_FALSE(kColours.parse("--").has_value());
}

TEST(Vocabulary, NamesAreCanonicalAndConstexpr) {
  static_assert(kColours.name(Colour::DarkBlue) == "dark-blue");
  EXPECT_EQ(kColours.name(Colour::Red), "red");
  EXPECT_EQ(kColours.names(), (std::vector<std::string>{"red", "dark-blue"}));
}

TEST(Vocabulary, ErrorListsEveryWordAndSuggests) {
  // allowed(): each canonical name followed by its aliases in parentheses, in table order.
  EXPECT_EQ(kColours.allowed(), "red (crimson, scarlet), dark-blue (navy)");
  const auto e = kColours.error("nvy");
  EXPECT_THAT(e, HasSubstr("unknown colour 'nvy'; allowed: red (crimson, scarlet), dark-blue (navy)"));
  EXPECT_THAT(e, HasSubstr("did you mean navy"));
}

}  // namespace
