// SPDX-License-Identifier: MIT
#include "src/core/units.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(ParseBytes, PlainNumbers) {
  EXPECT_EQ(parse_bytes("0"), 0u);
  EXPECT_EQ(parse_bytes("1"), 1u);
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("000123"), 123u);
  EXPECT_EQ(parse_bytes("5B"), 5u);
  EXPECT_EQ(parse_bytes("7b"), 7u);
}

TEST(ParseBytes, BinarySuffixes) {
  EXPECT_EQ(parse_bytes("1K"), 1024u);
  EXPECT_EQ(parse_bytes("64K"), 64u * 1024);
  EXPECT_EQ(parse_bytes("1M"), 1u << 20);
  EXPECT_EQ(parse_bytes("2G"), 2ull << 30);
  EXPECT_EQ(parse_bytes("1T"), 1ull << 40);
  EXPECT_EQ(parse_bytes("0K"), 0u);
}

TEST(ParseBytes, SuffixSpellingsAreCaseInsensitiveAndAllBinary) {
  for (const char* text : {"1k", "1K", "1KB", "1kb", "1Kb", "1KiB", "1kib", "1KIB"}) {
    EXPECT_EQ(parse_bytes(text), 1024u) << text;
  }
  EXPECT_EQ(parse_bytes("32KB"), 32u * 1024);
  EXPECT_EQ(parse_bytes("1MiB"), 1u << 20);
  EXPECT_EQ(parse_bytes("3gb"), 3ull << 30);
  EXPECT_EQ(parse_bytes("2tib"), 2ull << 40);
}

TEST(ParseBytes, LargestValuesFit) {
  EXPECT_EQ(parse_bytes("18446744073709551615"), kMax);
  EXPECT_EQ(parse_bytes("16777215T"), 16777215ull << 40);
  EXPECT_EQ(parse_bytes("17179869183G"), 17179869183ull << 30);
}

void expect_rejected(const std::string& text) {
  try {
    parse_bytes(text);
    ADD_FAILURE() << "'" << text << "' was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + text + "'"), std::string::npos)
        << "message does not name the text: " << e.what();
  }
}

TEST(ParseBytes, OverflowIsRejected) {
  expect_rejected("18446744073709551616");  // 2^64
  expect_rejected("99999999999999999999999");
  expect_rejected("16777216T");     // 2^24 · 2^40 = 2^64
  expect_rejected("17179869184G");  // 2^34 · 2^30 = 2^64
}

TEST(ParseBytes, GarbageIsRejectedNamingTheText) {
  for (const char* text : {"", "K", "MiB", "-1", "+1", "1.5M", "1X", "1 M", " 1", "1M ", "1KK",
                           "1KiBs", "0x10", "1e6", "one", "1P", "1Mi", "1,024"}) {
    expect_rejected(text);
  }
}

TEST(FormatBytes, PicksTheLargestWholeUnit) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(4u << 20), "4 MiB");
  EXPECT_EQ(format_bytes(1ull << 40), "1 TiB");
  EXPECT_EQ(format_bytes(2048ull << 40), "2048 TiB");  // no unit beyond TiB
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(3ull << 29), "1.50 GiB");
}

TEST(FormatDuration, PicksTheUnitThatFitsWithThreeDigits) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(850), "850 ns");
  EXPECT_EQ(format_duration(999), "999 ns");
  EXPECT_EQ(format_duration(1000), "1.00 µs");
  EXPECT_EQ(format_duration(12345), "12.3 µs");
  EXPECT_EQ(format_duration(92.8e6), "92.8 ms");
  EXPECT_EQ(format_duration(9.28e6), "9.28 ms");
  EXPECT_EQ(format_duration(313.4e6), "313 ms");
  EXPECT_EQ(format_duration(1.25e9), "1.25 s");
  EXPECT_EQ(format_duration(7200e9), "7200 s");  // no unit beyond s
  EXPECT_EQ(format_duration(-60.3e6), "-60.3 ms");
}

TEST(FormatBytes, RoundTripsThroughParseForWholeUnits) {
  for (std::uint64_t bytes : {1ull, 1024ull, 1ull << 20, 7ull << 30, 3ull << 40}) {
    std::string text = format_bytes(bytes);
    text.erase(text.find(' '), 1);  // "4 MiB" -> "4MiB"
    EXPECT_EQ(parse_bytes(text), bytes) << text;
  }
}

}  // namespace
}  // namespace commprof
