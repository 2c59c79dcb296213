// SPDX-License-Identifier: MIT
// Enum name tables: canonical names both ways, aliases accepted on input only, and the one error
// message that lists what was expected.
#include "src/core/name_table.hpp"

#include <gtest/gtest.h>

namespace commprof {
namespace {

enum class Fruit { kApple, kPear, kPlum };
constexpr NamedValue<Fruit> kFruits[] = {{Fruit::kApple, "apple"},
                                         {Fruit::kPear, "pear"},
                                         {Fruit::kPlum, "plum"},
                                         {Fruit::kPear, "poire", true}};

TEST(NameTable, CanonicalNamesBothWays) {
  for (Fruit f : {Fruit::kApple, Fruit::kPear, Fruit::kPlum}) {
    EXPECT_EQ(parse_name(kFruits, name_of(kFruits, f), "unknown fruit"), f);
  }
  EXPECT_STREQ(name_of(kFruits, Fruit::kPear), "pear") << "an alias is never printed";
}

TEST(NameTable, AliasesParse) {
  EXPECT_EQ(parse_name(kFruits, "poire", "unknown fruit"), Fruit::kPear);
}

TEST(NameTable, AnUnknownNameListsTheCanonicalOnes) {
  try {
    parse_name(kFruits, "kiwi", "unknown fruit");
    FAIL() << "kiwi parsed";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "unknown fruit 'kiwi': expected apple, pear or plum");
  }
  EXPECT_THROW(parse_name(kFruits, "Apple", "unknown fruit"), ConfigError) << "names are exact";
}

}  // namespace
}  // namespace commprof
