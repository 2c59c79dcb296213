// SPDX-License-Identifier: MIT
// The plugin's bookkeeping, driven with event sequences on clocks the test sets: an operation's
// time is its kernel channels' first start to last stop, moved from the GPU's globaltimer to the
// host's steady clock; enqueue and channel stops may come in any order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/nccl_profiler/profiler_core.hpp"
#include "src/timeline/rank_file.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_files.hpp"

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
  o.out_dir = test::fresh_temp_dir("profiler_core");
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

// A directory of this process's own: tests of this binary run in parallel processes, and each
// Process writes its rank file when it ends.
std::string own_dir(const std::string& name) {
  const std::string dir =
      testing::TempDir() + "/nccl_core_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

// One collective of one kernel channel, from its call to its channel's stop (a call not timed
// gets no channel: NCCL then reports none).
void complete_one(Process& p, Comm* comm, const OpInfo& op, Clocks& c) {
  Event* e = p.start_op(comm, op);
  p.op_enqueued(e);
  Channel* ch = p.start_channel(e, static_cast<std::uint64_t>(c.gpu(c.steady)));
  c.steady += 1'000;
  if (ch != nullptr) p.channel_stopped(ch, static_cast<std::uint64_t>(c.gpu(c.steady)));
}

// COMMPROF_PLUGIN_SAMPLE and COMMPROF_PLUGIN_MEMORY_MIB: unset, the defaults (one call in 128,
// 64 MiB); a value that is no whole K from 1 up or no MiB above 0 keeps the default (inside
// NCCL there is nothing to refuse to: the plugin warns).
TEST(NcclProfilerCore, SamplePeriodAndBudgetFromTheEnvironment) {
  unsetenv("COMMPROF_PLUGIN_SAMPLE");
  unsetenv("COMMPROF_PLUGIN_MEMORY_MIB");
  Options o = options_from_environment();
  EXPECT_EQ(o.sample_period, kDefaultSamplePeriod);
  EXPECT_EQ(o.memory_budget_bytes, 64 << 20);
  setenv("COMMPROF_PLUGIN_SAMPLE", "1", 1);
  setenv("COMMPROF_PLUGIN_MEMORY_MIB", "0.5", 1);
  o = options_from_environment();
  EXPECT_EQ(o.sample_period, 1);
  EXPECT_EQ(o.memory_budget_bytes, 512 << 10);
  for (const char* bad : {"0", "-3", "16x", "many"}) {
    setenv("COMMPROF_PLUGIN_SAMPLE", bad, 1);
    setenv("COMMPROF_PLUGIN_MEMORY_MIB", bad, 1);
    o = options_from_environment();
    EXPECT_EQ(o.sample_period, kDefaultSamplePeriod) << bad;
    EXPECT_EQ(o.memory_budget_bytes, 64 << 20) << bad;
  }
  unsetenv("COMMPROF_PLUGIN_SAMPLE");
  unsetenv("COMMPROF_PLUGIN_MEMORY_MIB");
}

// Sampled (K = 3): calls 0, 3, 6 of the communicator are timed and recorded; the others get
// the untimed handle, their channels none, and are counted by kind with NCCL's choices.
TEST(NcclProfilerCore, OneCallInKIsTimedAndEveryCallCounted) {
  Clocks c;
  Options o = test_options(c);
  o.sample_period = 3;
  Process p(o);
  Comm* dp = p.init_comm({"dp0", 0xabc, 1, 4, 1});
  for (int i = 0; i < 8; ++i) {
    OpInfo op = allreduce(static_cast<std::uint64_t>(i), 1);
    op.algo = "RING";
    op.proto = "LL";
    Event* e = p.start_op(dp, op);
    EXPECT_EQ(e == untimed_call(), i % 3 != 0) << "call " << i;
    p.op_enqueued(e);
    Channel* ch = p.start_channel(e, static_cast<std::uint64_t>(c.gpu(c.steady)));
    EXPECT_EQ(ch == nullptr, i % 3 != 0) << "call " << i;  // not wanted: NCCL reports no more
    c.steady += 1'000;
    if (ch != nullptr) p.channel_stopped(ch, static_cast<std::uint64_t>(c.gpu(c.steady)));
  }
  const RankTimeline t = p.timeline();
  ASSERT_EQ(t.steps.size(), 1u);
  std::vector<std::int64_t> seqs;
  for (const OpRecord& r : t.steps[0].ops) seqs.push_back(r.seq);
  EXPECT_EQ(seqs, (std::vector<std::int64_t>{0, 3, 6}));
  const auto& comm = t.config.json().at("communicators").at(0);
  EXPECT_EQ(comm.at("sample_period"), 3);
  EXPECT_EQ(comm.at("calls"), 8);
  EXPECT_EQ(comm.at("collectives"), 8);  // untimed ones counted: diagnose's launches
  EXPECT_EQ(comm.at("timed"), 3);
  EXPECT_EQ(comm.at("dropped"), 0);
  ASSERT_EQ(comm.at("untimed").size(), 1u);
  const auto& g = comm.at("untimed").at(0);
  EXPECT_EQ(g.at("collective"), "allreduce");
  EXPECT_EQ(g.at("calls"), 5);
  EXPECT_EQ(g.at("bytes"), 2048);  // 1024 bf16
  EXPECT_EQ(g.at("algo"), "RING");
  EXPECT_EQ(g.at("proto"), "LL");
  EXPECT_EQ(g.at("channels"), 1);
}

// Sampled (K = 3): each untimed collective is listed with its number on the communicator, its
// call's time and its group, so that the steps can be cut from every call; beyond the budget
// they are counted, not listed.
TEST(NcclProfilerCore, UntimedCollectivesAreListedWithTheirNumberAndCallTime) {
  Clocks c;
  Options o = test_options(c);
  o.sample_period = 3;
  o.memory_budget_bytes = kGroupBytes + 4 * kUntimedCallBytes + 3 * kRecordBytes;
  Process p(o);
  Comm* dp = p.init_comm({"dp0", 0xabc, 1, 4, 1});
  std::vector<std::int64_t> called;
  for (int i = 0; i < 9; ++i) {
    called.push_back(c.steady);
    Event* e = p.start_op(dp, allreduce(static_cast<std::uint64_t>(i), 1));
    p.op_enqueued(e);
    Channel* ch = p.start_channel(e, static_cast<std::uint64_t>(c.gpu(c.steady)));
    c.steady += 1'000;
    if (ch != nullptr) p.channel_stopped(ch, static_cast<std::uint64_t>(c.gpu(c.steady)));
    if (i == 4) p.flush();  // listed across two writes: each call once
  }
  p.flush();
  const RankTimeline t = read_rank_file(p.path());
  const auto& comm = t.config.json().at("communicators").at(0);
  const auto& listed = comm.at("untimed_calls");
  // Calls 1, 2, 4, 5 listed (the budget's four), 7 and 8 only counted.
  ASSERT_EQ(listed.size(), 4u) << listed.dump();
  const std::int64_t seqs[4] = {1, 2, 4, 5};
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(listed.at(k).at(0), seqs[k]);
    EXPECT_EQ(listed.at(k).at(1), called[static_cast<std::size_t>(seqs[k])]);
    EXPECT_EQ(comm.at("untimed").at(listed.at(k).at(2).get<std::size_t>()).at("collective"),
              "allreduce");
  }
  EXPECT_EQ(comm.at("untimed_unlisted"), 2);
  EXPECT_EQ(comm.at("untimed").at(0).at("calls"), 6);
  std::size_t timed = 0;
  for (const StepRecord& s : t.steps) timed += s.ops.size();
  EXPECT_EQ(timed, 3u);
}

// A budget of three records and two groups: the first three timed calls are recorded whole, the
// next two dropped and counted (on their communicator), their kinds kept in the groups; what
// the budget cannot hold any more is counted in `calls` and as one entry without a kind.
TEST(NcclProfilerCore, RecordsBeyondTheBudgetAreDroppedAndCounted) {
  Clocks c;
  Options o = test_options(c);
  o.memory_budget_bytes = 3 * kRecordBytes + 2 * kGroupBytes;
  Process p(o);
  Comm* dp = p.init_comm({"dp0", 0xabc, 1, 4, 1});
  Comm* tp = p.init_comm({"tp0", 0xdef, 1, 2, 0});
  for (int i = 0; i < 4; ++i) complete_one(p, dp, allreduce(static_cast<std::uint64_t>(i), 1), c);
  OpInfo gather = allreduce(0, 1);
  gather.func = "AllGather";
  complete_one(p, tp, gather, c);
  gather.count = 7;  // a third kind: no group left
  complete_one(p, tp, gather, c);
  const RankTimeline t = p.timeline();
  ASSERT_EQ(t.steps[0].ops.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const OpRecord& r = t.steps[0].ops[i];
    EXPECT_EQ(r.comm, "dp0");
    EXPECT_EQ(r.seq, static_cast<std::int64_t>(i));
    EXPECT_EQ(r.end_ns - r.start_ns, 1'000);
    EXPECT_EQ(r.bytes, 2048u);
  }
  const auto& comms = t.config.json().at("communicators");
  EXPECT_EQ(comms.at(0).at("calls"), 4);
  EXPECT_EQ(comms.at(0).at("timed"), 4);
  EXPECT_EQ(comms.at(0).at("dropped"), 1);
  EXPECT_EQ(comms.at(0).at("untimed").at(0).at("calls"), 1);
  EXPECT_EQ(comms.at(1).at("dropped"), 2);
  ASSERT_EQ(comms.at(1).at("untimed").size(), 2u);
  EXPECT_EQ(comms.at(1).at("untimed").at(0).at("collective"), "allgather");
  EXPECT_EQ(comms.at(1).at("untimed").at(1).at("collective"), "");  // beyond the budget
  EXPECT_EQ(comms.at(1).at("untimed").at(1).at("calls"), 1);
  EXPECT_EQ(t.config.json().at("memory_budget_bytes"), o.memory_budget_bytes);
}

TEST(NcclProfilerCore, AnOperationSpansItsChannelsOnTheHostClock) {
  Clocks c;
  Process p(test_options(c));
  Comm* dp = p.init_comm({"dp0", 0xabc, 1, 4, 1});
  Event* op = p.start_op(dp, allreduce(7, 2));  // enqueued at steady 1 ms
  p.op_enqueued(op);
  c.steady += 50'000;
  Channel* ch0 = p.start_channel(op, static_cast<std::uint64_t>(c.gpu(1'020'000)));
  Channel* ch1 = p.start_channel(op, static_cast<std::uint64_t>(c.gpu(1'010'000)));
  c.steady += 100'000;
  p.channel_stopped(ch1, static_cast<std::uint64_t>(c.gpu(1'090'000)));
  p.channel_stopped(ch0, static_cast<std::uint64_t>(c.gpu(1'080'000)));
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
  EXPECT_EQ(r.seq, 0) << "the communicator's first collective, whatever NCCL's number";
  EXPECT_EQ(r.bytes, 2048u);
  EXPECT_EQ(r.start_ns, 1'010'000);  // the earlier channel's start
  EXPECT_EQ(r.end_ns, 1'090'000);    // the later channel's stop
  EXPECT_EQ(t.config.json().at("unfinished").size(), 0u);
}

// The realtime clock is read between two steady readings, three times, and the pair read
// closest together is kept: a thread preempted between the reads would otherwise move the
// offset by half the time it was away. Here the first pair is preempted after its realtime
// read (offset 2,495 ns low), the third before it (1,495 ns high), the second is 20 ns wide
// and exact: the file's clock offset must be the clocks' true difference.
TEST(NcclProfilerCore, TheClockOffsetComesFromTheTightestOfThreeReadings) {
  constexpr std::int64_t kAhead = kRealtimeEpochNs + 86'400'000'000'000;
  const std::int64_t before_gap[3] = {10, 10, 3'000};  // steady read, then realtime
  const std::int64_t after_gap[3] = {5'000, 10, 10};   // realtime read, then steady
  std::int64_t now = 1'000'000;
  int reals = 0;
  bool after_real = false;
  Options o;
  o.out_dir = test::fresh_temp_dir("profiler_core_tight");
  o.flush_thread = false;
  o.steady_ns = [&] {
    if (after_real) now += after_gap[std::min(reals, 3) - 1];
    after_real = false;
    return now;
  };
  o.realtime_ns = [&] {
    now += reals < 3 ? before_gap[reals] : 0;
    ++reals;
    after_real = true;
    return now + kAhead;
  };
  Process p(o);
  const RankTimeline t = p.timeline();
  EXPECT_EQ(reals, 3);
  EXPECT_EQ(t.clock_offset_ns, kAhead - kRealtimeEpochNs);
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
    o.out_dir = test::fresh_temp_dir("profiler_core_hosts");
    o.flush_thread = false;
    o.global_rank = host;
    o.steady_ns = [&steady] { return steady; };
    o.realtime_ns = [&steady, boot] { return steady - boot + kUtc; };
    Process p(o);
    Comm* world = p.init_comm({"world", 0x5, 2, 2, host});
    Event* op = p.start_op(world, allreduce(0, 1));
    p.op_enqueued(op);
    steady += 10'000;
    Channel* ch = p.start_channel(op, static_cast<std::uint64_t>(kUtc + 5'000));
    steady += 30'000;
    p.channel_stopped(ch, static_cast<std::uint64_t>(kUtc + 25'000));
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
  Channel* ch = p.start_channel(op, static_cast<std::uint64_t>(c.gpu(1'000'100)));
  c.steady += 10'000;
  p.channel_stopped(ch, static_cast<std::uint64_t>(c.gpu(1'005'000)));
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
  EXPECT_EQ(cfg.at("unfinished").at(0).at("seq"), 0);
  EXPECT_EQ(cfg.at("unfinished").at(0).at("nccl_seq"), 4);
  EXPECT_EQ(cfg.at("unfinished").at(0).at("collective"), "allreduce");
  // One of its two channels began, none stopped: started, not finished (diagnose's class).
  EXPECT_EQ(cfg.at("unfinished").at(0).at("channels_started"), 1);
  EXPECT_EQ(cfg.at("unfinished").at(0).at("channels_stopped"), 0);
  EXPECT_EQ(cfg.at("without_kernel_records"), 1);
  EXPECT_EQ(cfg.at("communicators").at(0).at("name"), "dp0");
  // Both calls launched on the communicator: the next collective is #2.
  EXPECT_EQ(cfg.at("communicators").at(0).at("collectives"), 2);
}

TEST(NcclProfilerCore, ATimerOffTheHostClockFallsBackToWhatTheHostSaw) {
  Clocks c;
  Process p(test_options(c));
  Comm* dp = p.init_comm({"dp0", 1, 1, 2, 0});
  Event* op = p.start_op(dp, allreduce(0, 1));
  p.op_enqueued(op);
  Channel* ch = p.start_channel(op, 12345);  // a globaltimer on another epoch
  c.steady += 70'000;
  p.channel_stopped(ch, 12999);
  const RankTimeline t = p.timeline();
  ASSERT_EQ(t.steps[0].ops.size(), 1u);
  EXPECT_EQ(t.steps[0].ops[0].start_ns, 1'000'000);  // the call
  EXPECT_EQ(t.steps[0].ops[0].end_ns, 1'070'000);    // the stop's arrival
  EXPECT_EQ(t.config.json().at("clock_fallbacks"), 1);
}

// NCCL numbers a communicator's collectives per function (comm->seqNumber[func]): DDP's first
// calls on its group are an all-gather #0 (the parameter count), broadcasts #0 and #1 (shapes,
// then the module's state) and all-reduces #0 and #1 (gradients). Matched across ranks by
// (communicator, NCCL's number), three different calls would meet at #0. The plugin numbers
// them in the order they are called, which every rank shares: 0 to 4.
TEST(NcclProfilerCore, CollectivesAreNumberedPerCommunicatorNotPerFunction) {
  Clocks c;
  Process p(test_options(c));
  Comm* world = p.init_comm({"world", 7, 1, 2, 0});
  Comm* other = p.init_comm({"other", 8, 1, 2, 0});
  const std::pair<const char*, std::uint64_t> calls[] = {
      {"AllGather", 0}, {"Broadcast", 0}, {"Broadcast", 1}, {"AllReduce", 0}, {"AllReduce", 1}};
  for (const auto& [func, nccl_seq] : calls) {
    OpInfo op = allreduce(nccl_seq, 1);
    op.func = func;
    complete_one(p, world, op, c);
  }
  complete_one(p, other, allreduce(0, 1), c);  // another communicator counts from 0
  const RankTimeline t = p.timeline();
  ASSERT_EQ(t.steps.at(0).ops.size(), 6u);
  for (std::size_t i = 0; i < 5; ++i) {
    const OpRecord& r = t.steps[0].ops[i];
    EXPECT_EQ(r.comm, "world");
    EXPECT_EQ(r.seq, static_cast<std::int64_t>(i)) << r.collective;
  }
  EXPECT_EQ(t.steps[0].ops[0].collective, "allgather");
  EXPECT_EQ(t.steps[0].ops[2].collective, "broadcast");
  EXPECT_EQ(t.steps[0].ops[4].collective, "allreduce");
  EXPECT_EQ(t.steps[0].ops[5].comm, "other");
  EXPECT_EQ(t.steps[0].ops[5].seq, 0);
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
  Channel* ch = p.start_channel(op, static_cast<std::uint64_t>(c.gpu(1'000'000)));
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
    Channel* ch2 = p.start_channel(e, static_cast<std::uint64_t>(c.gpu(at)));
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

// S of nccl-tests' formulas from NCCL's own function and type names (as its events give them),
// worked by hand: the elements of the collective's larger buffer times one element's bytes.
TEST(NcclProfilerCore, BytesAreTheCollectivesLargerBufferInNcclsElementSize) {
  struct Case {
    const char* func;
    const char* datatype;
    std::size_t count;
    int nranks;
    std::uint64_t bytes;
  };
  const Case cases[] = {
      {"AllReduce", "ncclFloat64", 100, 4, 800},
      {"AlltoAll", "ncclInt8", 1000, 4, 4000},    // count per peer: 4 x 1000 each way
      {"ReduceScatter", "ncclUint64", 3, 4, 96},  // 3 received, 4 x 3 sent, 8 B each
      {"AllGather", "ncclFloat8e5m2", 16, 2, 32},
      {"Broadcast", "ncclFloat8e4m3", 7, 8, 7},
      {"Reduce", "ncclUint32", 5, 3, 20},
      {"AllReduce", "ncclInt32", 6, 2, 24},
      {"AllReduce", "Unknown", 10, 2, 0},      // what NCCL names a type it has no name for
      {"AllReduce", "ncclfloat32", 10, 2, 0},  // names are NCCL's, exactly
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.func) + " " + k.datatype);
    Clocks c;
    Process p(test_options(c));
    Comm* comm = p.init_comm({"w", 1, 1, k.nranks, 0});
    OpInfo op = allreduce(0, 1);
    op.func = k.func;
    op.datatype = k.datatype;
    op.count = k.count;
    complete_one(p, comm, op, c);
    const RankTimeline t = p.timeline();
    ASSERT_EQ(t.steps[0].ops.size(), 1u);
    EXPECT_EQ(t.steps[0].ops[0].bytes, k.bytes);
  }
}

// In place as NCCL defines it, from the buffers a call gives (nccl-tests' in-place loop: the same
// buffer for an all-reduce; an all-gather's send buffer at recvbuff + rank x count x element; a
// reduce-scatter's receive buffer at sendbuff + rank x count x element), worked by hand.
TEST(NcclProfilerCore, InPlaceIsOneBufferOrTheRanksShareOfTheOther) {
  alignas(8) static char buffer[1 << 16];
  char* const b = buffer;
  struct Case {
    const char* what;
    const char* func;
    const char* datatype;
    const void* send;
    const void* recv;
    int rank;
    int in_place;
  };
  const Case cases[] = {
      {"all-reduce, one buffer", "AllReduce", "ncclFloat32", b, b, 1, 1},
      {"all-reduce, two", "AllReduce", "ncclFloat32", b, b + 4096, 1, 0},
      {"broadcast, one buffer", "Broadcast", "ncclBfloat16", b, b, 0, 1},
      // count 1024 bf16: rank 3's share starts 3 x 2048 bytes into the receive buffer
      {"all-gather at its share", "AllGather", "ncclBfloat16", b + 3 * 2048, b, 3, 1},
      {"all-gather at another share", "AllGather", "ncclBfloat16", b + 2 * 2048, b, 3, 0},
      {"all-gather at rank 0's share", "AllGather", "ncclBfloat16", b, b, 0, 1},
      {"all-gather apart", "AllGather", "ncclBfloat16", b + 40000, b, 3, 0},
      {"reduce-scatter at its share", "ReduceScatter", "ncclFloat64", b, b + 2 * 8192, 2, 1},
      {"reduce-scatter apart", "ReduceScatter", "ncclFloat64", b + 8192, b, 2, 0},
      {"all-gather of an unknown type", "AllGather", "Unknown", b + 3 * 2048, b, 3, -1},
      {"no buffers given", "AllReduce", "ncclFloat32", nullptr, nullptr, 0, -1},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    OpInfo op = allreduce(0, 1);
    op.func = k.func;
    op.datatype = k.datatype;
    op.send_buff = k.send;
    op.recv_buff = k.recv;
    EXPECT_EQ(in_place_call(op, k.rank), k.in_place);
  }
  OpInfo send;
  send.p2p = true;
  send.func = "Send";
  send.send_buff = send.recv_buff = b;
  EXPECT_EQ(in_place_call(send, 0), -1);  // a transfer has no placement
}

// Each timed call's record and each counted kind say whether the call ran in place: nccl-tests
// runs an out-of-place loop, then an in-place one, of each size, and its two figures differ.
// Calls that differ only there are counted apart. A call without buffers says nothing.
TEST(NcclProfilerCore, RecordsAndCountedKindsSayInPlace) {
  alignas(8) static char buffer[8192];
  Clocks c;
  Options o = test_options(c);
  o.sample_period = 2;
  Process p(o);
  Comm* dp = p.init_comm({"dp0", 0xabc, 1, 2, 1});
  for (int i = 0; i < 8; ++i) {
    OpInfo op = allreduce(static_cast<std::uint64_t>(i), 1);
    op.send_buff = buffer;
    op.recv_buff = i < 4 ? buffer + 4096 : buffer;  // calls 0-3 out of place, 4-7 in place
    complete_one(p, dp, op, c);
  }
  complete_one(p, dp, allreduce(8, 1), c);  // timed (8 % 2 == 0), no buffers
  p.flush();
  // As a reader gets them (the reader cuts the capture into steps: any number here).
  const RankTimeline t = read_rank_file(p.path());
  std::vector<std::pair<std::int64_t, int>> timed;
  for (const StepRecord& s : t.steps) {
    for (const OpRecord& r : s.ops) timed.emplace_back(r.seq, r.in_place);
  }
  std::sort(timed.begin(), timed.end());
  EXPECT_EQ(timed,
            (std::vector<std::pair<std::int64_t, int>>{{0, 0}, {2, 0}, {4, 1}, {6, 1}, {8, -1}}));
  const auto& comm = t.config.json().at("communicators").at(0);
  const auto& groups = comm.at("untimed");
  ASSERT_EQ(groups.size(), 2u) << groups.dump();
  EXPECT_EQ(groups.at(0).at("in_place"), 0);
  EXPECT_EQ(groups.at(0).at("calls"), 2);
  EXPECT_EQ(groups.at(1).at("in_place"), 1);
  EXPECT_EQ(groups.at(1).at("calls"), 2);
  // The listed untimed calls name their group, so a reader knows each one's placement.
  const auto& listed = comm.at("untimed_calls");
  ASSERT_EQ(listed.size(), 4u);
  EXPECT_EQ(listed.at(0).at(2), 0);  // call 1
  EXPECT_EQ(listed.at(3).at(2), 1);  // call 7
}

// 9eceb07: NCCL may report a kernel channel under an operation the plugin has already completed
// (one that reported no channels, then some; or one channel more than it announced). The
// operation's handle stays valid for the newest 4096 completed operations (before the fix it was
// freed: ASan reports the use after free, and the asan preset runs this test), and the late
// channel, or a second stop of the operation, changes nothing.
TEST(NcclProfilerCore, AChannelReportedAfterItsOperationCompletedChangesNothing) {
  Clocks c;
  Process p(test_options(c));
  Comm* dp = p.init_comm({"dp0", 1, 1, 2, 0});
  Event* bare = p.start_op(dp, allreduce(0, 0));  // no channels: complete at NCCL's stop
  p.op_enqueued(bare);
  Event* timed = p.start_op(dp, allreduce(1, 1));
  p.op_enqueued(timed);
  Channel* ch = p.start_channel(timed, static_cast<std::uint64_t>(c.gpu(1'000'100)));
  c.steady += 1'000;
  p.channel_stopped(ch, static_cast<std::uint64_t>(c.gpu(1'000'900)));
  // 4094 operations more complete: `bare` is the oldest of the newest 4096.
  for (int i = 0; i < 4094; ++i) p.op_enqueued(p.start_op(dp, allreduce(2 + i, 0)));

  c.steady += 10'000;
  for (Event* parent : {bare, timed}) {
    Channel* late = p.start_channel(parent, static_cast<std::uint64_t>(c.gpu(1'005'000)));
    c.steady += 1'000;
    p.channel_stopped(late, static_cast<std::uint64_t>(c.gpu(1'006'000)));
    p.op_enqueued(parent);
  }
  const RankTimeline t = p.timeline();
  ASSERT_EQ(t.steps[0].ops.size(), 1u);
  const OpRecord& r = t.steps[0].ops[0];
  EXPECT_EQ(r.seq, 1);
  EXPECT_EQ(r.start_ns, 1'000'100);
  EXPECT_EQ(r.end_ns, 1'000'900);
  EXPECT_EQ(r.channels, 1);
  EXPECT_EQ(t.config.json().at("without_kernel_records"), 1 + 4094);
  EXPECT_EQ(t.config.json().at("unfinished").size(), 0u);
}

// Reading the timeline is a query: the next flush still writes what changed.
TEST(NcclProfilerCore, ReadingTheTimelineLeavesTheWriteToTheNextFlush) {
  Clocks c;
  Options o = test_options(c);
  o.out_dir = own_dir("query");
  Process p(o);
  Comm* dp = p.init_comm({"dp0", 1, 1, 2, 0});
  complete_one(p, dp, allreduce(0, 1), c);
  ASSERT_EQ(p.timeline().steps[0].ops.size(), 1u);
  p.flush();
  EXPECT_EQ(read_rank_file(p.path()).steps.at(0).ops.size(), 1u);
}

// A write that fails (here: a file where the directory should be) is tried again by the next
// flush, although nothing changed in between.
TEST(NcclProfilerCore, AFailedWriteIsWrittenByTheNextFlush) {
  Clocks c;
  Options o = test_options(c);
  const std::string blocker = own_dir("blocked");
  std::ofstream(blocker) << "not a directory\n";
  o.out_dir = blocker + "/out";
  Process p(o);
  Comm* dp = p.init_comm({"dp0", 1, 1, 2, 0});
  complete_one(p, dp, allreduce(0, 1), c);
  EXPECT_ANY_THROW(p.flush());
  std::filesystem::remove(blocker);
  p.flush();
  EXPECT_EQ(read_rank_file(p.path()).steps.at(0).ops.size(), 1u);
}

// A flush with nothing new still moves the file's time on (a live job stuck in a collective
// writes nothing new; diagnose --watch tells it from a dead one by the time), and changes
// nothing in it. Before the process wrote its file, a flush touches nothing there.
TEST(NcclProfilerCore, AFlushWithNothingNewMovesTheFilesTimeOnly) {
  Clocks c;
  Options o = test_options(c);
  o.out_dir = own_dir("heartbeat");
  Process p(o);
  Comm* dp = p.init_comm({"dp0", 1, 1, 2, 0});
  std::filesystem::create_directories(o.out_dir);
  std::ofstream(p.path()) << "another job's file\n";
  const auto past = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::filesystem::last_write_time(p.path(), past);
  Event* stuck = p.start_op(dp, allreduce(0, 1));
  p.op_enqueued(stuck);
  p.flush();  // the first write: the operation in flight
  const std::string written = test::file_bytes(p.path());
  ASSERT_NE(written.find("\"unfinished\":[{"), std::string::npos) << "the call in flight listed";
  std::filesystem::last_write_time(p.path(), past);
  p.flush();  // nothing changed
  EXPECT_GT(std::filesystem::last_write_time(p.path()), past + std::chrono::minutes(59));
  EXPECT_EQ(test::file_bytes(p.path()), written);
}

// Before this process wrote its file, a flush with nothing to write leaves a file of that name
// (an earlier job's) as it is.
TEST(NcclProfilerCore, AFlushBeforeTheFirstWriteTouchesNoFile) {
  Clocks c;
  Options o = test_options(c);
  o.out_dir = own_dir("no_heartbeat");
  Process p(o);
  std::filesystem::create_directories(o.out_dir);
  const std::string file = o.out_dir + "/rank-3.json";
  std::ofstream(file) << "another job's file\n";
  const auto past = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::filesystem::last_write_time(file, past);
  p.flush();
  EXPECT_EQ(std::filesystem::last_write_time(file), past);
}

}  // namespace
}  // namespace commprof::nccl_profiler
