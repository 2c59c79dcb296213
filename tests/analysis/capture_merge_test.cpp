// SPDX-License-Identifier: MIT
// A plugin capture merged into a trace of the same job (analysis/capture_merge.hpp), on a
// hand-made pair whose clock offset is known: the capture's clock reads 1 s more than the
// trace's, and its calls repeat every step, so the run that matches by kind and bytes alone is
// not unique; the right one keeps the offset for every pair.
#include "analysis/capture_merge.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

OpRecord call(std::uint64_t bytes, std::int64_t start, std::int64_t dur) {
  OpRecord op;
  op.name = "allreduce";
  op.category = Category::kComm;
  op.collective = "allreduce";
  op.comm = "comm-1";
  op.bytes = bytes;
  op.start_ns = start;
  op.end_ns = start + dur;
  return op;
}

constexpr std::int64_t kOffset = 1'000'000'000;

// The capture: 4 steps of two all-reduces (1 MiB, then 2 MiB), steps 10 ms apart but the third
// 12 ms after the second, with NCCL's algorithm; the trace saw steps 2 and 3 (from 0), with a
// compute op between, its kernels' times the same on its own clock.
RankTimeline capture() {
  RankTimeline t;
  t.rank = 1;
  t.backend = "nccl-profiler";
  StepRecord s;
  const std::int64_t starts[4] = {0, 10'000'000, 20'000'000, 32'000'000};
  for (std::int64_t at : starts) {
    s.ops.push_back(call(1 << 20, kOffset + at, 100'000));
    s.ops.push_back(call(2 << 20, kOffset + at + 500'000, 200'000));
  }
  for (OpRecord& op : s.ops) op.algo = "RING";
  t.steps.push_back(s);
  return t;
}

RankTimeline trace() {
  RankTimeline t;
  t.rank = 1;
  t.backend = "pytorch";
  for (const std::int64_t at : {20'000'000, 32'000'000}) {
    StepRecord s;
    s.start_ns = at - 1'000'000;
    OpRecord comp;
    comp.name = "gemm";
    comp.category = Category::kComp;
    comp.start_ns = at - 900'000;
    comp.end_ns = at - 100'000;
    s.ops.push_back(comp);
    s.ops.push_back(call(1 << 20, at, 103'000));  // the kernel: a little longer than its channels
    s.ops.push_back(call(2 << 20, at + 500'000, 203'000));
    s.end_ns = at + 800'000;
    t.steps.push_back(s);
  }
  return t;
}

TEST(CaptureMerge, TheRunKeepingOneOffsetIsMatchedAndMovedOntoTheTracesClock) {
  CaptureMerge how;
  const RankTimeline m = merge_capture_into_trace(capture(), trace(), &how);
  EXPECT_EQ(how.rank, 1);
  EXPECT_EQ(how.trace_collectives, 4u);
  EXPECT_EQ(how.capture_calls, 8u);
  EXPECT_EQ(how.first_call, 4u);  // steps 2 and 3; step 1 matches by kind and bytes too
  EXPECT_DOUBLE_EQ(how.offset_ns, static_cast<double>(kOffset));
  EXPECT_DOUBLE_EQ(how.residual_ns, 0.0);
  ASSERT_EQ(m.steps.size(), 2u);
  ASSERT_EQ(m.steps[1].ops.size(), 3u);
  EXPECT_EQ(m.steps[1].ops[0].name, "gemm");  // the trace's compute stays
  const OpRecord& second = m.steps[1].ops[2];
  EXPECT_EQ(second.algo, "RING");  // the capture's call
  EXPECT_EQ(second.start_ns, 32'500'000);
  EXPECT_EQ(second.end_ns, 32'700'000);  // its duration, the capture's
  EXPECT_EQ(m.config.json().at("merged_capture").at("first_call"), 4);
}

TEST(CaptureMerge, WhatDoesNotPairIsRefusedByName) {
  RankTimeline other = trace();
  other.rank = 0;
  EXPECT_THROW(merge_capture_into_trace(capture(), other, nullptr), Error);
  RankTimeline sizes = trace();
  sizes.steps[0].ops[1].bytes = 3 << 20;
  try {
    merge_capture_into_trace(capture(), sizes, nullptr);
    FAIL() << "merged a trace whose sizes no run of the capture has";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no run of the capture's 8 calls is the trace's 4 "
                                         "collectives (the first allreduce of 3145728 B)"),
              std::string::npos)
        << e.what();
  }
  RankTimeline none = trace();
  for (StepRecord& s : none.steps) s.ops.resize(1);
  EXPECT_THROW(merge_capture_into_trace(capture(), none, nullptr), Error);
}

}  // namespace
}  // namespace commprof
