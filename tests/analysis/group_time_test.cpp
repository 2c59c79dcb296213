// SPDX-License-Identifier: MIT
// Time per communicator group: a context-parallel ring's exposed time and an expert-parallel
// dispatch's balance, on hand-built steps whose answers are worked out below.
#include "analysis/group_time.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/reducer.hpp"
#include "analysis/step_metrics.hpp"
#include "support/hand_timelines.hpp"

namespace commprof {
namespace {

using test::timed_op;

OpRecord comm(const std::string& collective, const std::string& comm_name, std::int64_t seq,
              std::int64_t start, std::int64_t end) {
  OpRecord o = timed_op(collective, Category::kComm, start, end);
  o.collective = collective;
  o.comm = comm_name;
  o.comm_size = 2;
  o.seq = seq;
  o.bytes = 1000;
  return o;
}

TEST(GroupTime, GroupIsTheCommunicatorsNameWithoutItsIndex) {
  EXPECT_EQ(group_of("dp3"), "dp");
  EXPECT_EQ(group_of("tp_ep0"), "tp_ep");
  EXPECT_EQ(group_of("tp0_1"), "tp");
  EXPECT_EQ(group_of("world"), "world");
  EXPECT_EQ(group_of("17"), "17");  // nothing but digits: the name itself
}

// COMP [0,100). The cp ring's two sends [50,150) and [140,160): busy 50..160 = 110 ns, of which
// 100..160 = 60 ns with no compute. The ep all-to-allv [200,260) is exposed whole (60 ns) and
// received 3000 B; a dp all-reduce [20,80) lies under compute (busy 60, exposed 0).
TEST(GroupTime, ExposedTimeAndAllToAllBytesPerGroup) {
  StepRecord step;
  step.ops.push_back(timed_op("gemm", Category::kComp, 0, 100));
  step.ops.push_back(comm("sendrecv", "cp0", -1, 50, 150));
  step.ops.push_back(comm("sendrecv", "cp0", -1, 140, 160));
  OpRecord a2a = comm("alltoallv", "ep1", 0, 200, 260);
  a2a.recv_bytes = 3000;
  step.ops.push_back(a2a);
  step.ops.push_back(comm("allreduce", "dp0", 0, 20, 80));
  const std::vector<OpView> views = op_views(step);
  const StepView view{0, false, 0, 300, &views};
  StepScratch scratch;
  compute_step_metrics(view, scratch);
  std::vector<GroupTime> groups;
  GroupScratch gs;
  add_group_times(view, scratch.comp, groups, gs);
  add_group_times(view, scratch.comp, groups, gs);  // a second step adds the same again
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].group, "cp");
  EXPECT_EQ(groups[0].comm_ns, 2 * 110);
  EXPECT_EQ(groups[0].exposed_ns, 2 * 60);
  EXPECT_EQ(groups[0].alltoalls, 0);
  EXPECT_EQ(groups[1].group, "ep");
  EXPECT_EQ(groups[1].comm_ns, 2 * 60);
  EXPECT_EQ(groups[1].exposed_ns, 2 * 60);
  EXPECT_EQ(groups[1].alltoalls, 2);
  EXPECT_EQ(groups[1].recv_bytes, 2u * 3000);
  EXPECT_EQ(groups[1].recv_calls, 2);
  EXPECT_EQ(groups[2].group, "dp");
  EXPECT_EQ(groups[2].comm_ns, 2 * 60);
  EXPECT_EQ(groups[2].exposed_ns, 0);
}

// Two ranks, one measured step each, one dispatch all-to-allv on ep0: rank 0 arrives at 100 and
// receives 1000 B, rank 1 at 130 and receives 3000 B. Mean received 2000 B, max 3000 (rank 1),
// max/mean 1.5; rank 0 waits 30 ns for rank 1: 30 ns over 2 rank-steps = 15 ns per rank and step.
// Each rank's all-to-allv ends at 200, with no compute: exposed 100 and 70 ns, worst rank 0.
TEST(GroupTime, ReportRowsGiveTheDispatchImbalanceAndItsWait) {
  Reducer reducer({});
  for (int rank = 0; rank < 2; ++rank) {
    RankTimeline t;
    t.rank = rank;
    t.world_size = 2;
    t.host = "h";
    StepRecord st;
    st.start_ns = 0;
    st.end_ns = 200;
    OpRecord a2a = comm("alltoallv", "ep0", 0, rank == 0 ? 100 : 130, 200);
    a2a.recv_bytes = rank == 0 ? 1000 : 3000;
    st.ops.push_back(a2a);
    t.steps.push_back(st);
    reducer.add(std::move(t), "rank-" + std::to_string(rank));
  }
  const Report r = reducer.finish();
  ASSERT_EQ(r.group_times.size(), 1u);
  const GroupTimeRow& g = r.group_times[0];
  EXPECT_EQ(g.group, "ep");
  EXPECT_EQ(g.ranks, 2);
  EXPECT_DOUBLE_EQ(g.comm_ns, 85.0);
  EXPECT_DOUBLE_EQ(g.exposed_ns, 85.0);
  EXPECT_DOUBLE_EQ(g.exposed_max_ns, 100.0);
  EXPECT_EQ(g.exposed_worst_rank, 0);
  EXPECT_DOUBLE_EQ(g.alltoalls, 1.0);
  EXPECT_DOUBLE_EQ(g.recv_mean_bytes, 2000.0);
  EXPECT_DOUBLE_EQ(g.recv_max_bytes, 3000.0);
  EXPECT_DOUBLE_EQ(g.recv_imbalance, 1.5);
  EXPECT_EQ(g.recv_busiest_rank, 1);
  EXPECT_DOUBLE_EQ(g.alltoall_wait_ns, 15.0);
}

// The way an MoE all-to-all moves rows, from its op name: the combine's backward goes the
// dispatch's way, the dispatch's backward the combine's; other names have no phase.
TEST(GroupTime, AllToAllPhaseFromTheOpName) {
  EXPECT_EQ(alltoall_phase("l3.dispatch.mb0"), "dispatch");
  EXPECT_EQ(alltoall_phase("l3.combine.bwd.mb1"), "dispatch");
  EXPECT_EQ(alltoall_phase("l3.combine.mb0"), "combine");
  EXPECT_EQ(alltoall_phase("l3.dispatch.bwd.mb0"), "combine");
  EXPECT_EQ(alltoall_phase("dispatch"), "dispatch");
  EXPECT_EQ(alltoall_phase("l0.cp.a2a_q.fwd"), "");
  EXPECT_EQ(alltoall_phase("l0.redispatch.mb0"), "");   // a word, not a substring
  EXPECT_EQ(alltoall_phase("bwd.combine"), "combine");  // "bwd" before the word says nothing
  EXPECT_EQ(phase_group("ep", "dispatch"), "ep:dispatch");
}

// Two ranks, one step each, a dispatch then a combine on ep0 (names as commprof's MoE layers
// give them). Dispatch: rank 0 arrives at 100 and receives 1000 B, rank 1 at 130 and 3000 B,
// both end at 200. Combine [300,350) on both, 2000 B each (each rank's own rows back).
//   ep:dispatch: recv mean 2000, max 3000 (rank 1), max/mean 1.5; rank 0 waits 30 ns: 15 ns per
//     rank and step; COMM 100 and 70 ns: mean 85.
//   ep:combine: recv 2000 each, max/mean 1; no wait; COMM 50.
//   ep (both): recv 3000 and 5000, mean 4000, max/mean 1.25, the excess over 1 half the
//     dispatch's; a2a 2; COMM 135; wait 15.
TEST(GroupTime, DispatchAndCombineHaveRowsOfTheirOwn) {
  Reducer reducer({});
  for (int rank = 0; rank < 2; ++rank) {
    RankTimeline t;
    t.rank = rank;
    t.world_size = 2;
    t.host = "h";
    StepRecord st;
    st.start_ns = 0;
    st.end_ns = 400;
    OpRecord dispatch = comm("alltoallv", "ep0", 0, rank == 0 ? 100 : 130, 200);
    dispatch.name = "l0.dispatch.mb0";
    dispatch.recv_bytes = rank == 0 ? 1000 : 3000;
    st.ops.push_back(dispatch);
    OpRecord combine = comm("alltoallv", "ep0", 1, 300, 350);
    combine.name = "l0.combine.mb0";
    combine.recv_bytes = 2000;
    st.ops.push_back(combine);
    t.steps.push_back(st);
    reducer.add(std::move(t), "rank-" + std::to_string(rank));
  }
  const Report r = reducer.finish();
  ASSERT_EQ(r.group_times.size(), 3u);
  const GroupTimeRow& all = r.group_times[0];
  EXPECT_EQ(all.group, "ep");
  EXPECT_DOUBLE_EQ(all.comm_ns, 135.0);
  EXPECT_DOUBLE_EQ(all.alltoalls, 2.0);
  EXPECT_DOUBLE_EQ(all.recv_mean_bytes, 4000.0);
  EXPECT_DOUBLE_EQ(all.recv_imbalance, 1.25);
  EXPECT_EQ(all.recv_busiest_rank, 1);
  EXPECT_DOUBLE_EQ(all.alltoall_wait_ns, 15.0);
  const GroupTimeRow& combine = r.group_times[1];
  EXPECT_EQ(combine.group, "ep:combine");
  EXPECT_EQ(combine.ranks, 2);
  EXPECT_DOUBLE_EQ(combine.comm_ns, 50.0);
  EXPECT_DOUBLE_EQ(combine.alltoalls, 1.0);
  EXPECT_DOUBLE_EQ(combine.recv_mean_bytes, 2000.0);
  EXPECT_DOUBLE_EQ(combine.recv_imbalance, 1.0);
  EXPECT_DOUBLE_EQ(combine.alltoall_wait_ns, 0.0);
  const GroupTimeRow& dispatch = r.group_times[2];
  EXPECT_EQ(dispatch.group, "ep:dispatch");
  EXPECT_DOUBLE_EQ(dispatch.comm_ns, 85.0);
  EXPECT_DOUBLE_EQ(dispatch.alltoalls, 1.0);
  EXPECT_DOUBLE_EQ(dispatch.recv_mean_bytes, 2000.0);
  EXPECT_DOUBLE_EQ(dispatch.recv_max_bytes, 3000.0);
  EXPECT_DOUBLE_EQ(dispatch.recv_imbalance, 1.5);
  EXPECT_EQ(dispatch.recv_busiest_rank, 1);
  EXPECT_DOUBLE_EQ(dispatch.alltoall_wait_ns, 15.0);
}

// Files without recv_bytes (imports, earlier runs) leave the balance unknown, not zero.
TEST(GroupTime, BalanceIsUnknownWithoutRecordedBytes) {
  Reducer reducer({});
  RankTimeline t;
  t.world_size = 1;
  StepRecord st;
  st.end_ns = 100;
  st.ops.push_back(comm("alltoall", "ep0", 0, 0, 50));
  t.steps.push_back(st);
  reducer.add(std::move(t), "rank-0");
  const Report r = reducer.finish();
  ASSERT_EQ(r.group_times.size(), 1u);
  EXPECT_LT(r.group_times[0].recv_mean_bytes, 0.0);
  EXPECT_LT(r.group_times[0].recv_imbalance, 0.0);
  EXPECT_EQ(r.group_times[0].recv_busiest_rank, -1);
}

}  // namespace
}  // namespace commprof
