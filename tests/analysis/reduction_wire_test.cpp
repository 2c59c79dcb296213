// SPDX-License-Identifier: MIT
// Each report struct that crosses processes (reduction_wire.hpp), every field set to a value of
// its own that no default has, encoded and decoded: every field comes back. A field left out of
// its transfer() comes back as its default and fails here; every message cut short is an Error.
#include "analysis/reduction_wire.hpp"

#include <gtest/gtest.h>

#include "analysis/graph/critical_report.hpp"
#include "support/wire_round_trip.hpp"

namespace commprof {
namespace {

using test::expect_cut_messages_refused;
using test::round_trip;

TEST(ReductionWire, FileProblem) {
  const FileProblem in{"rank-3.json", "truncated at byte 12"};
  const FileProblem out = round_trip(in);
  EXPECT_EQ(out.file, "rank-3.json");
  EXPECT_EQ(out.message, "truncated at byte 12");
  expect_cut_messages_refused(in);
}

GroupTime some_group_time() {
  GroupTime g;
  g.group = "ep";
  g.comm_ns = 11;
  g.exposed_ns = 12;
  g.alltoalls = 13;
  g.recv_bytes = 14;
  g.recv_calls = 15;
  return g;
}

TEST(ReductionWire, GroupTime) {
  const GroupTime out = round_trip(some_group_time());
  EXPECT_EQ(out.group, "ep");
  EXPECT_EQ(out.comm_ns, 11);
  EXPECT_EQ(out.exposed_ns, 12);
  EXPECT_EQ(out.alltoalls, 13);
  EXPECT_EQ(out.recv_bytes, 14u);
  EXPECT_EQ(out.recv_calls, 15);
  expect_cut_messages_refused(some_group_time());
}

StepPoint some_step_point() {
  StepPoint p;
  p.index = 21;
  p.warmup = true;
  p.ops = 22;
  p.start_ns = 23;
  p.wall_ns = 24;
  p.overlap = 0.25f;
  return p;
}

TEST(ReductionWire, StepPoint) {
  const StepPoint out = round_trip(some_step_point());
  EXPECT_EQ(out.index, 21);
  EXPECT_TRUE(out.warmup);
  EXPECT_EQ(out.ops, 22);
  EXPECT_EQ(out.start_ns, 23);
  EXPECT_EQ(out.wall_ns, 24);
  EXPECT_EQ(out.overlap, 0.25f);
  expect_cut_messages_refused(some_step_point());
}

// A Stat of `first`, first + 1 and first - 2 (added in that order): min first - 2 (index 2),
// max first + 1 (index 1), mean first - 1/3.
Stat stat_from(double first) {
  Stat s;
  s.add(first);
  s.add(first + 1.0);
  s.add(first - 2.0);
  return s;
}

// Its public fields, and its running sums: a value added after the trip gives the same mean
// and standard deviation as one added before it.
void expect_same_stat(const Stat& in, const Stat& out, const char* which) {
  SCOPED_TRACE(which);
  EXPECT_EQ(out.min, in.min);
  EXPECT_EQ(out.mean, in.mean);
  EXPECT_EQ(out.max, in.max);
  EXPECT_EQ(out.count, 3);
  EXPECT_EQ(out.argmax, 1);
  EXPECT_EQ(out.argmin, 2);
  Stat a = in, b = out;
  a.add(100.0);
  b.add(100.0);
  EXPECT_EQ(b.mean, a.mean);
  EXPECT_EQ(b.stddev(), a.stddev());
}

RankSummary some_summary() {
  RankSummary r;
  r.rank = 31;
  r.world_size = 32;
  r.host = "node7";
  r.device = "H200";
  r.backend = "cuda";
  r.source = "run/rank-31.json";
  r.clock_offset_ns = -33;
  r.pp_stage = 34;
  r.steps = 35;
  r.timed_steps = 36;
  r.warmup_steps = 37;
  r.ops = 38;
  double first = 100.0;
  for (Stat* s : {&r.wall_ns, &r.comp_ns, &r.comm_ns, &r.mem_ns, &r.busy_ns, &r.comm_comp_ns,
                  &r.exposed_comm_ns, &r.idle_ns, &r.timed_wall_ns, &r.plain_wall_ns, &r.overlap,
                  &r.hidden_fraction}) {
    *s = stat_from(first);
    first += 10.0;
  }
  r.hta.steps = 39;
  r.hta.steps_of = 40;
  r.hta.comm_ns = 41;
  r.hta.comp_ns = 42;
  r.hta.comm_comp_ns = 43;
  r.hta.busy_ns = 44;
  r.hta.span_ns = 45;
  r.step_points = {some_step_point(), StepPoint{}};
  r.group_times = {some_group_time()};
  r.back_to_back = {BackToBackSums{"allgather", 46, 47, 48, 49, 50, 1}};
  return r;
}

TEST(ReductionWire, RankSummary) {
  const RankSummary in = some_summary();
  const RankSummary out = round_trip(in);
  EXPECT_EQ(out.rank, 31);
  EXPECT_EQ(out.world_size, 32);
  EXPECT_EQ(out.host, "node7");
  EXPECT_EQ(out.device, "H200");
  EXPECT_EQ(out.backend, "cuda");
  EXPECT_EQ(out.source, "run/rank-31.json");
  EXPECT_EQ(out.clock_offset_ns, -33);
  EXPECT_EQ(out.pp_stage, 34);
  EXPECT_EQ(out.steps, 35);
  EXPECT_EQ(out.timed_steps, 36);
  EXPECT_EQ(out.warmup_steps, 37);
  EXPECT_EQ(out.ops, 38);
  EXPECT_EQ(out.hta.steps, 39);
  EXPECT_EQ(out.hta.steps_of, 40);
  EXPECT_EQ(out.hta.comm_ns, 41);
  EXPECT_EQ(out.hta.comp_ns, 42);
  EXPECT_EQ(out.hta.comm_comp_ns, 43);
  EXPECT_EQ(out.hta.busy_ns, 44);
  EXPECT_EQ(out.hta.span_ns, 45);
  ASSERT_EQ(out.back_to_back.size(), 1u);
  EXPECT_EQ(out.back_to_back[0].collective, "allgather");
  EXPECT_EQ(out.back_to_back[0].comm_size, 46);
  EXPECT_EQ(out.back_to_back[0].bytes, 47u);
  EXPECT_EQ(out.back_to_back[0].pairs, 48);
  EXPECT_EQ(out.back_to_back[0].calls, 49);
  EXPECT_EQ(out.back_to_back[0].span_ns, 50);
  EXPECT_EQ(out.back_to_back[0].in_place, 1);
  expect_same_stat(in.wall_ns, out.wall_ns, "wall_ns");
  expect_same_stat(in.comp_ns, out.comp_ns, "comp_ns");
  expect_same_stat(in.comm_ns, out.comm_ns, "comm_ns");
  expect_same_stat(in.mem_ns, out.mem_ns, "mem_ns");
  expect_same_stat(in.busy_ns, out.busy_ns, "busy_ns");
  expect_same_stat(in.comm_comp_ns, out.comm_comp_ns, "comm_comp_ns");
  expect_same_stat(in.exposed_comm_ns, out.exposed_comm_ns, "exposed_comm_ns");
  expect_same_stat(in.idle_ns, out.idle_ns, "idle_ns");
  expect_same_stat(in.timed_wall_ns, out.timed_wall_ns, "timed_wall_ns");
  expect_same_stat(in.plain_wall_ns, out.plain_wall_ns, "plain_wall_ns");
  expect_same_stat(in.overlap, out.overlap, "overlap");
  expect_same_stat(in.hidden_fraction, out.hidden_fraction, "hidden_fraction");
  EXPECT_EQ(out.wall_ns.min, 98.0);  // the first Stat's, by hand
  EXPECT_EQ(out.hidden_fraction.max, 211.0);
  ASSERT_EQ(out.step_points.size(), 2u);
  EXPECT_EQ(out.step_points[0].index, 21);
  EXPECT_EQ(out.step_points[1].overlap, -1.0f);
  ASSERT_EQ(out.group_times.size(), 1u);
  EXPECT_EQ(out.group_times[0].recv_calls, 15);
  expect_cut_messages_refused(in);
}

CollectiveInstance some_instance() {
  CollectiveInstance c;
  c.comm = "tp3";
  c.seq = 41;
  c.collective = "alltoallv";
  c.comm_size = 42;
  c.bytes = 43;
  c.offrank_bytes = 44;
  c.offrank_ranks = 45;
  c.algo = "Ring/Simple";
  c.phase = "dispatch";
  c.in_place = 1;
  c.ranks_seen = 46;
  c.consistent = false;
  c.first_start_ns = 47;
  c.last_start_ns = 48;
  c.first_rank = 49;
  c.last_rank = 50;
  c.min_end_ns = 51;
  c.max_end_ns = 52;
  c.min_duration_ns = 53;
  c.max_duration_ns = 54;
  c.mean_duration_ns = 55.5;
  c.wait_caused_ns = 56;
  c.order = 57;
  c.sum_duration_ns_ = 58;
  return c;
}

void expect_some_instance(const CollectiveInstance& c) {
  EXPECT_EQ(c.comm, "tp3");
  EXPECT_EQ(c.seq, 41);
  EXPECT_EQ(c.collective, "alltoallv");
  EXPECT_EQ(c.comm_size, 42);
  EXPECT_EQ(c.bytes, 43u);
  EXPECT_EQ(c.offrank_bytes, 44u);
  EXPECT_EQ(c.offrank_ranks, 45);
  EXPECT_EQ(c.algo, "Ring/Simple");
  EXPECT_EQ(c.phase, "dispatch");
  EXPECT_EQ(c.in_place, 1);
  EXPECT_EQ(c.ranks_seen, 46);
  EXPECT_FALSE(c.consistent);
  EXPECT_EQ(c.first_start_ns, 47);
  EXPECT_EQ(c.last_start_ns, 48);
  EXPECT_EQ(c.first_rank, 49);
  EXPECT_EQ(c.last_rank, 50);
  EXPECT_EQ(c.min_end_ns, 51);
  EXPECT_EQ(c.max_end_ns, 52);
  EXPECT_EQ(c.min_duration_ns, 53);
  EXPECT_EQ(c.max_duration_ns, 54);
  EXPECT_EQ(c.mean_duration_ns, 55.5);
  EXPECT_EQ(c.wait_caused_ns, 56);
  EXPECT_EQ(c.order, 57u);
  EXPECT_EQ(c.sum_duration_ns_, 58);
}

TEST(ReductionWire, CollectiveInstance) {
  expect_some_instance(round_trip(some_instance()));
  expect_cut_messages_refused(some_instance());
}

TEST(ReductionWire, RankWait) {
  const RankWait in{61, "node2", 62, 63, 64, 65, 66};
  const RankWait out = round_trip(in);
  EXPECT_EQ(out.rank, 61);
  EXPECT_EQ(out.host, "node2");
  EXPECT_EQ(out.collectives, 62);
  EXPECT_EQ(out.wait_ns, 63);
  EXPECT_EQ(out.wait_caused_ns, 64);
  EXPECT_EQ(out.times_last, 65);
  EXPECT_EQ(out.times_first, 66);
  expect_cut_messages_refused(in);
}

TEST(ReductionWire, WaitCell) {
  const WaitCell out = round_trip(WaitCell{71, 72, 73});
  EXPECT_EQ(out.rank, 71);
  EXPECT_EQ(out.column, 72);
  EXPECT_EQ(out.wait_caused_ns, 73);
  expect_cut_messages_refused(WaitCell{71, 72, 73});
}

CriticalStepSummary some_critical_step() {
  CriticalStepSummary s;
  CriticalStepRow& r = s.row;
  r.step = 81;
  r.step_ns = 82;
  r.path_ns = 83;
  r.comp_ns = 84;
  r.comm_ns = 85;
  r.mem_ns = 86;
  r.gap_ns = 87;
  r.ops = 88;
  r.ranks = 89;
  r.exposed_comm_ns = 90.5;
  r.straggler_rank = 91;
  r.straggler_at = "allreduce on dp0 #4";
  r.straggler_late_ns = 92;
  r.straggler_cause = "gemm ran 93 ns long";
  r.straggler_excess_ns = 93.5;
  s.path.step = 94;
  s.path.segments = {{95, 96, true, Category::kMem, "memcpy", 97, 98}, CriticalSegment{}};
  s.comms = {"dp0", ""};
  s.waits = 99;
  s.incomplete = 100;
  s.unmatched = 101;
  s.no_peers = 102;
  return s;
}

TEST(ReductionWire, CriticalStepSummary) {
  const CriticalStepSummary out = round_trip(some_critical_step());
  const CriticalStepRow& r = out.row;
  EXPECT_EQ(r.step, 81);
  EXPECT_EQ(r.step_ns, 82);
  EXPECT_EQ(r.path_ns, 83);
  EXPECT_EQ(r.comp_ns, 84);
  EXPECT_EQ(r.comm_ns, 85);
  EXPECT_EQ(r.mem_ns, 86);
  EXPECT_EQ(r.gap_ns, 87);
  EXPECT_EQ(r.ops, 88);
  EXPECT_EQ(r.ranks, 89);
  EXPECT_EQ(r.exposed_comm_ns, 90.5);
  EXPECT_EQ(r.straggler_rank, 91);
  EXPECT_EQ(r.straggler_at, "allreduce on dp0 #4");
  EXPECT_EQ(r.straggler_late_ns, 92);
  EXPECT_EQ(r.straggler_cause, "gemm ran 93 ns long");
  EXPECT_EQ(r.straggler_excess_ns, 93.5);
  EXPECT_EQ(out.path.step, 94);
  ASSERT_EQ(out.path.segments.size(), 2u);
  const CriticalSegment& g = out.path.segments[0];
  EXPECT_EQ(g.rank, 95);
  EXPECT_EQ(g.op, 96);
  EXPECT_TRUE(g.gap);
  EXPECT_EQ(g.category, Category::kMem);
  EXPECT_EQ(g.name, "memcpy");
  EXPECT_EQ(g.start_ns, 97);
  EXPECT_EQ(g.end_ns, 98);
  EXPECT_EQ(out.path.segments[1].category, Category::kComp);
  EXPECT_EQ(out.comms, (std::vector<std::string>{"dp0", ""}));
  EXPECT_EQ(out.waits, 99);
  EXPECT_EQ(out.incomplete, 100);
  EXPECT_EQ(out.unmatched, 101);
  EXPECT_EQ(out.no_peers, 102);
  expect_cut_messages_refused(some_critical_step());
}

}  // namespace
}  // namespace commprof
