// SPDX-License-Identifier: MIT
// The text of commprof's NVTX op ranges: the format the CUDA backend writes and import-nsys
// reads (pinned here: exports written today must import tomorrow).
#include "src/timeline/op_range_text.hpp"

#include <gtest/gtest.h>

namespace commprof {
namespace {

TEST(OpRangeText, FormatIsPinned) {
  EXPECT_EQ(format_op_range_text("dp.bucket0.allreduce", {"allreduce", "dp1", 2, 1048576}),
            "dp.bucket0.allreduce [coll=allreduce comm=dp1 size=2 bytes=1048576]");
  // Characters that would break the tag are replaced, so it always parses back.
  EXPECT_EQ(format_op_range_text("x", {"send", "my comm[1]", 4, 0}),
            "x [coll=send comm=my_comm_1_ size=4 bytes=0]");
}

TEST(OpRangeText, ParsesWhatItFormats) {
  for (const OpRangeTag& tag :
       {OpRangeTag{"allreduce", "dp1", 2, 1048576}, OpRangeTag{"reducescatter", "tp0", 8, 0},
        OpRangeTag{"sendrecv", "pp3", 2, 18446744073709551615ull},
        OpRangeTag{"allgather", "world", 1024, 7}}) {
    for (const std::string name : {"l0.attn.mb0.ar", "pp.send_act+pp.recv_grad.mb3", "a [b]"}) {
      const ParsedOpRangeText p = parse_op_range_text(format_op_range_text(name, tag));
      EXPECT_EQ(p.name, name);
      ASSERT_TRUE(p.tag.has_value()) << name;
      EXPECT_EQ(*p.tag, tag) << name;
    }
  }
}

TEST(OpRangeText, TextsWithoutAWellFormedTagAreNames) {
  // commprof before the tag, COMP and MEM ranges, foreign ranges, damaged tags.
  for (const std::string text :
       {"dp.bucket0.allreduce", "l0.qkv.mb0.fwd", "", "]", " []", "x [coll=allreduce]",
        "x [coll=allreduce comm=dp0 size=0 bytes=1]", "x [coll=allreduce comm=dp0 size=2 bytes=-1]",
        "x [coll=allreduce comm=dp0 size=2 bytes=1", "x [coll=allreduce comm=dp0 size=two bytes=1]",
        "x [coll=allreduce comm= size=2 bytes=1]", "x[coll=allreduce comm=dp0 size=2 bytes=1]"}) {
    const ParsedOpRangeText p = parse_op_range_text(text);
    EXPECT_EQ(p.name, text);
    EXPECT_FALSE(p.tag.has_value()) << text;
  }
  // Keys added by a later version are skipped.
  const ParsedOpRangeText p =
      parse_op_range_text("x [coll=allreduce comm=dp0 size=2 bytes=1 algo=ring]");
  ASSERT_TRUE(p.tag.has_value());
  EXPECT_EQ(p.tag->comm, "dp0");
}

}  // namespace
}  // namespace commprof
