// SPDX-License-Identifier: MIT
// Runs of back-to-back calls in a plugin capture: hand-made calls of one communicator, every one
// timed or one in K with the others listed untimed, with compute between some, calls of another
// size between others, and a call carrying a later call's GPU times.
#include "src/timeline/back_to_back.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace commprof {
namespace {

constexpr std::int64_t kUs = 1'000;

OpRecord call(std::int64_t seq, std::int64_t start_ns, std::int64_t kernel_ns,
              std::uint64_t bytes = 16 << 20) {
  OpRecord op;
  op.name = "AllReduce";
  op.category = Category::kComm;
  op.collective = "allreduce";
  op.comm = "comm-1";
  op.comm_size = 2;
  op.seq = seq;
  op.bytes = bytes;
  op.start_ns = start_ns;
  op.end_ns = start_ns + kernel_ns;
  return op;
}

// 10 calls of 16 MiB, every one timed, each 72 us of kernel and 78 us apart (nccl-tests' loop
// on 2 H200): 9 pairs, 9 calls, 9 x 78 us.
TEST(BackToBack, EveryCallTimedGivesTheLoopsPeriod) {
  std::vector<OpRecord> ops;
  for (int i = 0; i < 10; ++i) ops.push_back(call(i, 1000 * kUs + i * 78 * kUs, 72 * kUs));
  const std::vector<BackToBackSums> runs = back_to_back_runs(ops, {});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].collective, "allreduce");
  EXPECT_EQ(runs[0].comm_size, 2);
  EXPECT_EQ(runs[0].bytes, 16u << 20);
  EXPECT_EQ(runs[0].pairs, 9);
  EXPECT_EQ(runs[0].calls, 9);
  EXPECT_EQ(runs[0].span_ns, 9 * 78 * kUs);
}

// One call in 4 timed (numbers 0, 4, 8), the others listed untimed of the same kind: 2 pairs of
// 4 calls each. With a call of another size among them, the pair around it is no run.
TEST(BackToBack, SampledCallsCountTheUntimedOnesBetween) {
  std::vector<OpRecord> ops;
  std::vector<NumberedKind> untimed;
  for (int i = 0; i < 9; ++i) {
    if (i % 4 == 0)
      ops.push_back(call(i, i * 78 * kUs, 72 * kUs));
    else
      untimed.push_back({"comm-1", i, "allreduce", 16u << 20});
  }
  std::vector<BackToBackSums> runs = back_to_back_runs(ops, untimed);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].pairs, 2);
  EXPECT_EQ(runs[0].calls, 8);
  EXPECT_EQ(runs[0].span_ns, 8 * 78 * kUs);

  untimed[5].bytes = 1 << 20;  // number 6: another size
  runs = back_to_back_runs(ops, untimed);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].pairs, 1) << "0 to 4 only";
  untimed.erase(untimed.begin());  // number 1 unknown: not listed, so not known alike
  EXPECT_TRUE(back_to_back_runs(ops, untimed).empty());
}

// FSDP's like all-gathers with a layer's compute between them are not back to back: periods of
// 2 ms against 100 us kernels.
TEST(BackToBack, CallsWithComputeBetweenAreNoRun) {
  std::vector<OpRecord> ops;
  for (int i = 0; i < 6; ++i) ops.push_back(call(i, i * 2000 * kUs, 100 * kUs));
  EXPECT_TRUE(back_to_back_runs(ops, {}).empty());
  // At the bound, 1.5 times the kernel: still a run.
  ops.clear();
  for (int i = 0; i < 3; ++i) ops.push_back(call(i, i * 150 * kUs, 100 * kUs));
  EXPECT_EQ(back_to_back_runs(ops, {}).at(0).pairs, 2);
}

// NCCL's proxy fell more than 64 works behind: the call numbered 0 carries number 64's GPU times
// (in a capture of every call). It is left out, and so are both pairs it belongs to.
TEST(BackToBack, ACallCarryingALaterCallsTimesIsLeftOut) {
  std::vector<OpRecord> ops;
  for (int i = 0; i < 70; ++i) ops.push_back(call(i, 1000 * kUs + i * 78 * kUs, 72 * kUs));
  ops[0].start_ns = ops[64].start_ns;
  ops[0].end_ns = ops[64].end_ns;
  const std::vector<BackToBackSums> runs = back_to_back_runs(ops, {});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].pairs, 68) << "69 pairs less the one with call 0";
  EXPECT_EQ(runs[0].span_ns, 68 * 78 * kUs);
}

// nccl-tests' two loops of one size: 8 calls out of place, 78 us apart, then 8 in place, 70 us
// apart (an all-gather's in-place loop ran faster on 2 H200s). Each loop is a run of its own;
// the pair across them is neither's. Sampled (one in 4), an untimed call of the other placement
// between two timed ones breaks their run as a call of another size would.
TEST(BackToBack, InPlaceAndOutOfPlaceCallsAreRunsApart) {
  std::vector<OpRecord> ops;
  std::int64_t t = 0;
  for (int i = 0; i < 16; ++i) {
    ops.push_back(call(i, t, 68 * kUs));
    ops.back().in_place = i < 8 ? 0 : 1;
    t += i < 8 ? 78 * kUs : 70 * kUs;
  }
  const std::vector<BackToBackSums> runs = back_to_back_runs(ops, {});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].in_place, 0);
  EXPECT_EQ(runs[0].pairs, 7);
  EXPECT_EQ(runs[0].span_ns, 7 * 78 * kUs);
  EXPECT_EQ(runs[1].in_place, 1);
  EXPECT_EQ(runs[1].pairs, 7);
  EXPECT_EQ(runs[1].span_ns, 7 * 70 * kUs);

  std::vector<OpRecord> timed;
  std::vector<NumberedKind> untimed;
  for (int i = 0; i < 16; ++i) {
    const int in_place = i < 6 ? 0 : 1;  // calls 0-5 out of place: call 4's pair to 8 mixes
    if (i % 4 == 0) {
      timed.push_back(call(i, i * 78 * kUs, 72 * kUs));
      timed.back().in_place = in_place;
    } else {
      untimed.push_back({"comm-1", i, "allreduce", 16u << 20, in_place});
    }
  }
  const std::vector<BackToBackSums> sampled = back_to_back_runs(timed, untimed);
  ASSERT_EQ(sampled.size(), 2u);
  EXPECT_EQ(sampled[0].in_place, 0);
  EXPECT_EQ(sampled[0].pairs, 1);  // 0 -> 4
  EXPECT_EQ(sampled[1].in_place, 1);
  EXPECT_EQ(sampled[1].pairs, 1);  // 8 -> 12
}

TEST(BackToBack, TheConfigurationsListReadsBack) {
  const std::vector<BackToBackSums> in = {{"allgather", 8, 1 << 20, 3, 384, 5'000'000, 1},
                                          {"allgather", 8, 1 << 20, 2, 256, 4'000'000}};
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  config["back_to_back"] = back_to_back_json(in);
  const std::vector<BackToBackSums> out = back_to_back_from_json(config);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].collective, "allgather");
  EXPECT_EQ(out[0].comm_size, 8);
  EXPECT_EQ(out[0].bytes, 1u << 20);
  EXPECT_EQ(out[0].pairs, 3);
  EXPECT_EQ(out[0].calls, 384);
  EXPECT_EQ(out[0].span_ns, 5'000'000);
  EXPECT_EQ(out[0].in_place, 1);
  EXPECT_EQ(out[1].in_place, -1) << "not known: not written, read back as not known";
  EXPECT_FALSE(config["back_to_back"][1].contains("in_place"));
  EXPECT_TRUE(back_to_back_from_json(nlohmann::ordered_json::object()).empty());
}

}  // namespace
}  // namespace commprof
