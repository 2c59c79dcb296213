// SPDX-License-Identifier: MIT
// The LEB128 varints of byte_codec.hpp, which the step graphs' exchange and the Chakra export
// write: the bytes of known values (protobuf's own example, 300 as AC 02), every value back as it
// went, and a message cut anywhere, a number over 64 bits or text longer than its message refused
// with an Error naming the message.
#include "analysis/byte_codec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

using ::testing::HasSubstr;

std::string varint(std::uint64_t v) {
  std::string out;
  put_varint(out, v);
  return out;
}

TEST(Varint, KnownValuesTakeTheirBytes) {
  EXPECT_EQ(varint(0), std::string(1, '\0'));
  EXPECT_EQ(varint(1), "\x01");
  EXPECT_EQ(varint(127), "\x7f");
  EXPECT_EQ(varint(128), "\x80\x01");
  EXPECT_EQ(varint(300), "\xac\x02");
  EXPECT_EQ(varint(std::numeric_limits<std::uint64_t>::max()), std::string(9, '\xff') + "\x01");
  // Zig-zag: 0, -1, 1, -2, 2 as 0, 1, 2, 3, 4; the extremes as the largest two.
  const std::vector<std::pair<std::int64_t, std::uint64_t>> zigzag = {
      {0, 0}, {-1, 1}, {1, 2}, {-2, 3}, {2, 4}, {-64, 127}, {64, 128}};
  for (const auto& [in, as] : zigzag) {
    std::string out;
    put_signed_varint(out, in);
    EXPECT_EQ(out, varint(as)) << in;
  }
  std::string most;
  put_signed_varint(most, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(most, varint(std::numeric_limits<std::uint64_t>::max()));
}

// A message of every kind of value, read back in order.
std::string sample_message() {
  std::string out;
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 300ull, 1ull << 35, ~0ull})
    put_varint(out, v);
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{-5000000000},
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    put_signed_varint(out, v);
  }
  put_varint_text(out, "allreduce");
  put_varint_text(out, "");
  put_varint_text(out, std::string(200, 'x'));  // a length of two bytes
  return out;
}

TEST(Varint, EveryValueComesBackAsItWent) {
  const std::string bytes = sample_message();
  VarintReader in(bytes, "probe message");
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 300ull, 1ull << 35, ~0ull})
    EXPECT_EQ(in.get(), v);
  EXPECT_EQ(in.get_signed(), 0);
  EXPECT_EQ(in.get_signed(), -1);
  EXPECT_EQ(in.get_signed(), -5000000000);
  EXPECT_EQ(in.get_signed(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(in.get_signed(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(in.get_text(), "allreduce");
  EXPECT_EQ(in.get_text(), "");
  EXPECT_EQ(in.get_text(), std::string(200, 'x'));
  EXPECT_TRUE(in.done());
}

// Cut at every byte, the message is refused when the reader reaches the cut: never a value
// made up from what is missing, never a read past the end.
TEST(Varint, AMessageCutShortIsRefusedWithItsName) {
  const std::string whole = sample_message();
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    const std::string bytes = whole.substr(0, cut);
    VarintReader in(bytes, "probe message");
    try {
      for (int i = 0; i < 12; ++i) in.get();
      for (int i = 0; i < 3; ++i) in.get_text();
      ADD_FAILURE() << "a message cut at " << cut << " of " << whole.size() << " was read whole";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "probe message cut short") << cut;
    }
  }
}

TEST(Varint, ANumberOverSixtyFourBitsIsRefused) {
  // Ten bytes whose last holds more than the 64th bit, and eleven bytes.
  for (const std::string& bytes :
       {std::string(9, '\xff') + "\x02", std::string(10, '\x80') + "\x01"}) {
    VarintReader in(bytes, "probe message");
    try {
      in.get();
      ADD_FAILURE() << "an overlong number was read";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("probe message holds a number too long"));
    }
  }
  // Text longer than what is left of the message.
  std::string bytes;
  put_varint(bytes, 1000);
  bytes += "short";
  VarintReader in(bytes, "probe message");
  EXPECT_THROW(in.get_text(), Error);
}

}  // namespace
}  // namespace commprof
