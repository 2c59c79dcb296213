// SPDX-License-Identifier: MIT
// The shared reduction's codec (wire_codec.hpp): containers come back as they went, and a message
// of another format version, cut short, too long or with a count beyond its bytes is a clear
// Error.
#include "analysis/wire_codec.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/byte_codec.hpp"
#include "src/core/errors.hpp"
#include "support/wire_round_trip.hpp"

namespace commprof {
namespace {

// A struct of its own with one transfer(), as the reduction's messages have.
struct CodecProbe {
  std::int32_t a = 0;
  std::string b;
};

template <class IO>
void transfer(IO& io, CodecProbe& p) {
  io(p.a, p.b);
}

using Mixed = std::tuple<std::vector<CodecProbe>, std::map<std::string, std::set<std::int64_t>>,
                         std::pair<double, bool>>;

TEST(WireCodec, ContainersComeBackAsTheyWent) {
  Mixed in;
  std::get<0>(in) = {{7, "seven"}, {-3, ""}};
  std::get<1>(in) = {{"dp0", {5, -1, 9}}, {"tp1", {}}};
  std::get<2>(in) = {0.1, true};
  const Mixed out = test::round_trip(in);
  ASSERT_EQ(std::get<0>(out).size(), 2u);
  EXPECT_EQ(std::get<0>(out)[0].a, 7);
  EXPECT_EQ(std::get<0>(out)[0].b, "seven");
  EXPECT_EQ(std::get<0>(out)[1].a, -3);
  EXPECT_EQ(std::get<0>(out)[1].b, "");
  EXPECT_EQ(std::get<1>(out), std::get<1>(in));
  EXPECT_EQ(std::get<2>(out).first, 0.1);  // the same bits
  EXPECT_TRUE(std::get<2>(out).second);
  test::expect_cut_messages_refused(in);
}

// A message begins with the version; this build's is 7. Version 8's is refused, naming both.
TEST(WireCodec, AnotherVersionIsRefusedNamingBoth) {
  ByteWriter out;
  out.put<std::uint32_t>(8);
  out.put<std::int32_t>(42);
  const std::string bytes = out.take();
  try {
    wire::decode<std::int32_t>(bytes);
    FAIL() << "version 8 was read";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "reduction message of format version 8, but this commprof reads version 7 "
                 "(are the processes running different builds?)");
  }
  EXPECT_EQ(wire::kVersion, 7u);
}

TEST(WireCodec, ACutMessageIsRefused) {
  const std::string bytes = wire::encode(std::int64_t{5}, std::string("abc"));
  ASSERT_EQ(bytes.size(), 4u + 8u + 8u + 3u);  // version, the number, the length, the letters
  try {
    wire::Reader in(std::string_view(bytes).substr(0, bytes.size() - 1));
    in.read<std::int64_t>();
    in.read<std::string>();
    FAIL() << "a string cut short was read";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "reduction message cut short");
  }
  EXPECT_THROW(wire::Reader(std::string_view(bytes).substr(0, 2)), Error);  // not even a version
}

TEST(WireCodec, BytesAfterTheEndAreRefused) {
  const std::string bytes = wire::encode(std::int32_t{1}) + "x";
  try {
    wire::decode<std::int32_t>(bytes);
    FAIL() << "trailing bytes were accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "reduction message has bytes after its end");
  }
}

// A garbled count (2^62 elements in a message of a few bytes) is refused before anything is
// allocated for it.
TEST(WireCodec, ACountBeyondTheMessageIsRefused) {
  ByteWriter out;
  out.put<std::uint32_t>(wire::kVersion);
  out.put<std::uint64_t>(std::uint64_t{1} << 62);
  out.put<std::int64_t>(0);
  const std::string bytes = out.take();
  EXPECT_THROW(wire::decode<std::vector<std::int64_t>>(bytes), Error);
  EXPECT_THROW(wire::decode<std::string>(bytes), Error);
}

// Writer::list and Reader::each: a list built one element at a time reads as a vector.
TEST(WireCodec, AListWrittenElementByElementReadsAsAVector) {
  wire::Writer w;
  w.list(3);
  for (std::int32_t v : {4, 5, 6}) w(CodecProbe{v, std::to_string(v)});
  const std::string bytes = w.take();
  const auto all = wire::decode<std::vector<CodecProbe>>(bytes);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].a, 6);
  EXPECT_EQ(all[2].b, "6");
  wire::Reader in(bytes);
  std::vector<std::int32_t> seen;
  in.each<CodecProbe>([&](const CodecProbe& p) { seen.push_back(p.a); });
  in.expect_end();
  EXPECT_EQ(seen, (std::vector<std::int32_t>{4, 5, 6}));
}

}  // namespace
}  // namespace commprof
