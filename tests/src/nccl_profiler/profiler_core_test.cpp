// SPDX-License-Identifier: MIT
// The plugin's bookkeeping, driven with event sequences on clocks the test sets: an operation's
// time is its kernel channels' first start to last stop, moved from the GPU's globaltimer to the
// host's steady clock; enqueue and channel stops may come in any order.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/nccl_profiler/profiler_core.hpp"

namespace commprof::nccl_profiler {
namespace {

// The realtime clock (which the GPU's globaltimer follows) runs with the steady clock, ahead by
// a fixed amount.
struct Clocks {
  std::int64_t steady = 1'000'000;
  static constexpr std::int64_t kAhead = 1'700'000'000'000'000'000;
  std::int64_t gpu(std::int64_t steady_ns) const { return steady_ns + kAhead; }
};

Options test_options(Clocks& c) {
  Options o;
  o.out_dir = testing::TempDir();
  o.flush_thread = false;
  o.global_rank = 3;
  o.world_size = 8;
  o.steady_ns = [&c] { return c.steady; };
  o.realtime_ns = [&c] { return c.steady + Clocks::kAhead; };
  return o;
}

OpInfo allreduce(std::uint64_t seq, int channels) {
  OpInfo op;
  op.func = "AllReduce";
  op.seq = seq;
  op.count = 1024;
  op.datatype = "ncclBfloat16";
  op.channels = channels;
  return op;
}

TEST(NcclProfilerCore, AnOperationSpansItsChannelsOnTheHostClock) {
  Clocks c;
  Process p(test_options(c));
  Comm* dp = p.init_comm({"dp0", 0xabc, 1, 4, 1});
  Event* op = p.start_op(dp, allreduce(7, 2));  // enqueued at steady 1 ms
  p.op_enqueued(op);
  c.steady += 50'000;
  Event* ch0 = p.start_channel(op, static_cast<std::uint64_t>(c.gpu(1'020'000)));
  Event* ch1 = p.start_channel(op, static_cast<std::uint64_t>(c.gpu(1'010'000)));
  c.steady += 100'000;
  p.channel_stopped(ch1, static_cast<std::uint64_t>(c.gpu(1'090'000)));
  p.release_channel(ch1);
  p.channel_stopped(ch0, static_cast<std::uint64_t>(c.gpu(1'080'000)));
  p.release_channel(ch0);
  const RankTimeline t = p.timeline();
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 8);
  ASSERT_EQ(t.steps.size(), 1u);
  ASSERT_EQ(t.steps[0].ops.size(), 1u);
  const OpRecord& r = t.steps[0].ops[0];
  EXPECT_EQ(r.name, "allreduce");
  EXPECT_EQ(r.collective, "allreduce");
  EXPECT_EQ(r.category, Category::kComm);
  EXPECT_EQ(r.comm, "dp0");
  EXPECT_EQ(r.comm_size, 4);
  EXPECT_EQ(r.seq, 7);
  EXPECT_EQ(r.bytes, 2048u);
  EXPECT_EQ(r.start_ns, 1'010'000);  // the earlier channel's start
  EXPECT_EQ(r.end_ns, 1'090'000);    // the later channel's stop
  EXPECT_EQ(t.config.json().at("unfinished").size(), 0u);
}

// Two hosts whose steady clocks started days apart, one realtime (UTC) clock: each file's
// clock_offset_ns puts its times on that clock (less kRealtimeEpochNs), so one collective whose
// kernels ran at the same instant on both hosts starts at the same time in both files.
TEST(NcclProfilerCore, RanksOfTwoHostsMeetOnTheRealtimeClock) {
  constexpr std::int64_t kUtc = kRealtimeEpochNs + 86'400'000'000'000;  // a day past the epoch
  std::int64_t start[2] = {0, 0};
  for (int host = 0; host < 2; ++host) {
    const std::int64_t boot = host == 0 ? 3'600'000'000'000 : 400'000'000'000'000;  // 1 h, 4.6 d
    std::int64_t steady = boot;
    Options o;
    o.out_dir = testing::TempDir();
    o.flush_thread = false;
    o.global_rank = host;
    o.steady_ns = [&steady] { return steady; };
    o.realtime_ns = [&steady, boot] { return steady - boot + kUtc; };
    Process p(o);
    Comm* world = p.init_comm({"world", 0x5, 2, 2, host});
    Event* op = p.start_op(world, allreduce(0, 1));
    p.op_enqueued(op);
    steady += 10'000;
    Event* ch = p.start_channel(op, static_cast<std::uint64_t>(kUtc + 5'000));
    steady += 30'000;
    p.channel_stopped(ch, static_cast<std::uint64_t>(kUtc + 25'000));
    p.release_channel(ch);
    const RankTimeline t = p.timeline();
    ASSERT_EQ(t.steps.at(0).ops.size(), 1u);
    EXPECT_EQ(t.clock_offset_ns, kUtc - boot - kRealtimeEpochNs) << "host " << host;
    start[host] = t.steps[0].ops[0].start_ns + t.clock_offset_ns;
    EXPECT_EQ(start[host], kUtc + 5'000 - kRealtimeEpochNs) << "host " << host;
  }
  EXPECT_EQ(start[0], start[1]);
}

TEST(NcclProfilerCore, ChannelsBeforeTheEnqueueAndAllGathersBytes) {
  Clocks c;
  Process p(test_options(c));
  Comm* tp = p.init_comm({"", 0x1f, 1, 2, 0});  // unnamed: named after its hash
  OpInfo ag = allreduce(0, 1);
  ag.func = "AllGather";
  ag.datatype = "ncclFloat32";
  Event* op = p.start_op(tp, ag);
  Event* ch = p.start_channel(op, static_cast<std::uint64_t>(c.gpu(1'000'100)));
  c.steady += 10'000;
  p.channel_stopped(ch, static_cast<std::uint64_t>(c.gpu(1'005'000)));
  p.release_channel(ch);
  EXPECT_EQ(p.timeline().steps[0].ops.size(), 0u) << "not complete before NCCL's stop";
  p.op_enqueued(op);
  const RankTimeline t = p.timeline();
  ASSERT_EQ(t.steps[0].ops.size(), 1u);
  EXPECT_EQ(t.steps[0].ops[0].comm, "comm-000000000000001f");
  EXPECT_EQ(t.steps[0].ops[0].bytes, 1024u * 4 * 2) << "S = count x E x n for all-gather";
}

TEST(NcclProfilerCore, UnfinishedAndRecordlessOperationsAreNamedNotTimed) {
  Clocks c;
  Process p(test_options(c));
  Comm* dp = p.init_comm({"dp0", 1, 1, 2, 0});
  Event* hung = p.start_op(dp, allreduce(4, 2));
  p.op_enqueued(hung);
  p.start_channel(hung, static_cast<std::uint64_t>(c.gpu(1'000'000)));  // never stops
  Event* recordless = p.start_op(dp, allreduce(5, 0));                  // no channels to wait for
  p.op_enqueued(recordless);
  const RankTimeline t = p.timeline();
  EXPECT_EQ(t.steps[0].ops.size(), 0u);
  const auto& cfg = t.config.json();
  ASSERT_EQ(cfg.at("unfinished").size(), 1u);
  EXPECT_EQ(cfg.at("unfinished").at(0).at("comm"), "dp0");
  EXPECT_EQ(cfg.at("unfinished").at(0).at("seq"), 4);
  EXPECT_EQ(cfg.at("unfinished").at(0).at("collective"), "allreduce");
  EXPECT_EQ(cfg.at("without_kernel_records"), 1);
  EXPECT_EQ(cfg.at("communicators").at(0).at("name"), "dp0");
}

TEST(NcclProfilerCore, ATimerOffTheHostClockFallsBackToWhatTheHostSaw) {
  Clocks c;
  Process p(test_options(c));
  Comm* dp = p.init_comm({"dp0", 1, 1, 2, 0});
  Event* op = p.start_op(dp, allreduce(0, 1));
  p.op_enqueued(op);
  Event* ch = p.start_channel(op, 12345);  // a globaltimer on another epoch
  c.steady += 70'000;
  p.channel_stopped(ch, 12999);
  const RankTimeline t = p.timeline();
  ASSERT_EQ(t.steps[0].ops.size(), 1u);
  EXPECT_EQ(t.steps[0].ops[0].start_ns, 1'000'000);  // the call
  EXPECT_EQ(t.steps[0].ops[0].end_ns, 1'070'000);    // the stop's arrival
  EXPECT_EQ(t.config.json().at("clock_fallbacks"), 1);
}

// A send is matched with its receive as a collective of the pair: the k-th transfer from rank s
// to rank d of a communicator, counted at each end.
TEST(NcclProfilerCore, PointToPointIsAPairsCollective) {
  Clocks c;
  Process p(test_options(c));
  Comm* pp = p.init_comm({"pp0", 1, 1, 2, 0});
  OpInfo send;
  send.p2p = true;
  send.func = "Send";
  send.count = 256;
  send.datatype = "ncclFloat16";
  send.peer = 1;
  send.channels = 1;
  Event* op = p.start_op(pp, send);
  p.op_enqueued(op);
  Event* ch = p.start_channel(op, static_cast<std::uint64_t>(c.gpu(1'000'000)));
  p.channel_stopped(ch, static_cast<std::uint64_t>(c.gpu(1'000'500)));
  const RankTimeline t = p.timeline();
  ASSERT_EQ(t.steps[0].ops.size(), 1u);
  EXPECT_EQ(t.steps[0].ops[0].name, "send");
  EXPECT_EQ(t.steps[0].ops[0].collective, "sendrecv");
  EXPECT_EQ(t.steps[0].ops[0].comm, "pp0/0>1");
  EXPECT_EQ(t.steps[0].ops[0].comm_size, 2);
  EXPECT_EQ(t.steps[0].ops[0].seq, 0);
  EXPECT_EQ(t.steps[0].ops[0].bytes, 512u);
  OpInfo recv = send;
  recv.func = "Recv";
  Event* r = p.start_op(pp, recv);  // from rank 1: the pair's other direction
  Event* again = p.start_op(pp, send);
  p.op_enqueued(r);
  p.op_enqueued(again);
  std::int64_t at = 1'001'000;
  for (Event* e : {r, again}) {
    Event* ch2 = p.start_channel(e, static_cast<std::uint64_t>(c.gpu(at)));
    p.channel_stopped(ch2, static_cast<std::uint64_t>(c.gpu(at + 1'000)));
    at += 2'000;
  }
  const RankTimeline t2 = p.timeline();
  ASSERT_EQ(t2.steps[0].ops.size(), 3u);
  EXPECT_EQ(t2.steps[0].ops[1].comm, "pp0/1>0");
  EXPECT_EQ(t2.steps[0].ops[1].seq, 0);
  EXPECT_EQ(t2.steps[0].ops[2].comm, "pp0/0>1");
  EXPECT_EQ(t2.steps[0].ops[2].seq, 1);
}

}  // namespace
}  // namespace commprof::nccl_profiler
