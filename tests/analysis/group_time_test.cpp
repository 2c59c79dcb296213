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
