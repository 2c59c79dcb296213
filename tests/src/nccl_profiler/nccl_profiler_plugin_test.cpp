// SPDX-License-Identifier: MIT
// The plugin as NCCL uses it: libnccl-profiler-commprof.so opened with dlopen, its exported
// ncclProfiler_v5 (and v4) tables driven with the event sequences NCCL sends, one child process
// per rank (the plugin keeps one state per process). Then the files it wrote, and what
// `commprof report` makes of them: collectives matched across ranks, and a hang named.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/reducer.hpp"
#include "analysis/report/report_writers.hpp"
#include "src/nccl_profiler/nccl_profiler_abi.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/temp_dir.hpp"

namespace commprof {
namespace {

// Every op of a capture, in start order (the reader cuts a plugin capture into its steps:
// src/timeline/step_detection.hpp).
std::vector<OpRecord> ops_of(const RankTimeline& t) {
  std::vector<OpRecord> ops;
  for (const StepRecord& s : t.steps) ops.insert(ops.end(), s.ops.begin(), s.ops.end());
  return ops;
}

std::uint64_t gpu_now() {  // the GPU's globaltimer reads the host's realtime clock
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = test::own_temp_path(name);
  std::filesystem::remove_all(dir);
  return dir;
}

// In a child: fail with a code the parent reports.
#define CHILD_CHECK(cond, code) \
  do {                          \
    if (!(cond)) _exit(code);   \
  } while (0)

void* open_plugin() {
  void* so = dlopen(COMMPROF_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  CHILD_CHECK(so != nullptr, 10);
  return so;
}

// `channels` kernel channels of `op` through the v5 table, all starting at `start` (the GPU's
// globaltimer) and, unless `hang`, stopping `ns` later.
void channels_v5(NcclProfilerV5* p, void* ctx, void* op, int channels, std::uint64_t start,
                 std::uint64_t ns, bool hang) {
  for (int c = 0; c < channels; ++c) {
    NcclEventDescrV5 k{};
    k.type = kNcclProfileKernelCh;
    k.parentObj = op;
    k.kernelCh.channelId = static_cast<std::uint8_t>(c);
    k.kernelCh.pTimer = start;
    void* ch = nullptr;
    CHILD_CHECK(p->startEvent(ctx, &ch, &k) == kNcclSuccess && ch != nullptr, 13);
    if (hang) continue;
    NcclEventStateArgs a{};
    a.kernelCh.pTimer = start + ns;
    CHILD_CHECK(p->recordEventState(ch, kNcclProfilerKernelChStop, &a) == kNcclSuccess, 14);
    CHILD_CHECK(p->stopEvent(ch) == kNcclSuccess, 15);
  }
}

// One collective through the v5 table: its Coll event (NCCL's function, count, type, its
// sequence number, which NCCL counts per communicator and function, and its buffers), NCCL's
// stop at enqueue, then `channels` kernel channels that start and (unless `hang`) stop 20 µs
// later.
void collective_v5(NcclProfilerV5* p, void* ctx, const char* func, std::size_t count,
                   const char* datatype, std::uint64_t nccl_seq, int channels, bool hang,
                   const void* send = nullptr, void* recv = nullptr) {
  NcclEventDescrV5 d{};
  d.type = kNcclProfileColl;
  d.coll.v4.seqNumber = nccl_seq;
  d.coll.v4.func = func;
  d.coll.v4.sendBuff = send;
  d.coll.v4.recvBuff = recv;
  d.coll.v4.count = count;
  d.coll.v4.datatype = datatype;
  d.coll.v4.nChannels = static_cast<std::uint8_t>(channels);
  d.coll.v4.algo = "RING";
  d.coll.v4.proto = "SIMPLE";
  void* op = nullptr;
  CHILD_CHECK(p->startEvent(ctx, &op, &d) == kNcclSuccess && op != nullptr, 11);
  CHILD_CHECK(p->stopEvent(op) == kNcclSuccess, 12);
  channels_v5(p, ctx, op, channels, gpu_now(), 20'000, hang);  // channels start with the kernel
}

void allreduce_v5(NcclProfilerV5* p, void* ctx, std::uint64_t seq, int channels, bool hang) {
  collective_v5(p, ctx, "AllReduce", 1 << 20, "ncclFloat32", seq, channels, hang);
}

// Rank `rank` of 3: dp0 all-reduces #0..#3; ranks 0 and 1 also start #4, whose kernel never
// ends, and a send/recv on pp0; rank 2 never reaches #4 and finalizes. Ranks 0 and 1 are then
// killed (SIGKILL) once the plugin's periodic write holds #4: a hung job's ranks end that way.
[[noreturn]] void rank_v5(int rank, const std::string& dir) {
  setenv("COMMPROF_PLUGIN_OUT", dir.c_str(), 1);
  setenv("COMMPROF_PLUGIN_SAMPLE", "1", 1);  // every call timed, as these tests expect
  setenv("COMMPROF_PLUGIN_FLUSH_S", "0.05", 1);
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", "3", 1);
  void* so = open_plugin();
  auto* p = static_cast<NcclProfilerV5*>(dlsym(so, "ncclProfiler_v5"));
  CHILD_CHECK(p != nullptr && std::string(p->name) == "commprof", 16);
  void* dp = nullptr;
  int mask = 0;
  CHILD_CHECK(p->init(&dp, 0x1234, &mask, "dp0", 1, 3, rank, nullptr) == kNcclSuccess, 17);
  CHILD_CHECK((mask & kNcclProfileColl) && (mask & kNcclProfileKernelCh), 18);
  for (std::uint64_t seq = 0; seq < 4; ++seq) allreduce_v5(p, dp, seq, 2, false);
  if (rank == 2) {
    CHILD_CHECK(p->finalize(dp) == kNcclSuccess, 19);
    _exit(0);
  }
  void* pp = nullptr;
  CHILD_CHECK(p->init(&pp, 0x99, &mask, "pp0", 1, 2, rank, nullptr) == kNcclSuccess, 20);
  NcclEventDescrV5 d{};
  d.type = kNcclProfileP2p;
  d.p2p.v4.func = rank == 0 ? "Send" : "Recv";
  d.p2p.v4.count = 4096;
  d.p2p.v4.datatype = "ncclBfloat16";
  d.p2p.v4.peer = 1 - rank;
  d.p2p.v4.nChannels = 1;
  void* op = nullptr;
  CHILD_CHECK(p->startEvent(pp, &op, &d) == kNcclSuccess && op != nullptr, 21);
  CHILD_CHECK(p->stopEvent(op) == kNcclSuccess, 22);
  NcclEventDescrV5 k{};
  k.type = kNcclProfileKernelCh;
  k.parentObj = op;
  k.kernelCh.pTimer = gpu_now();
  void* ch = nullptr;
  CHILD_CHECK(p->startEvent(pp, &ch, &k) == kNcclSuccess, 23);
  NcclEventStateArgs a{};
  a.kernelCh.pTimer = k.kernelCh.pTimer + 5'000;
  p->recordEventState(ch, kNcclProfilerKernelChStop, &a);
  p->stopEvent(ch);
  allreduce_v5(p, dp, 4, 2, true);
  // Wait (up to 20 s) for a periodic write that holds the hung #4, then die without a word.
  const std::string path = dir + "/rank-" + std::to_string(rank) + ".json";
  for (int i = 0; i < 2000; ++i) {
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    if (text.find("\"seq\":4") != std::string::npos &&
        text.find(rank == 0 ? "\"send\"" : "\"recv\"") != std::string::npos)
      raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  _exit(24);
}

int run_child(const std::function<void()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

TEST(NcclProfilerPlugin, ThreeRanksThroughV5AndAHangNamedByReport) {
  const std::string dir = fresh_dir("plugin_v5");
  for (int rank = 0; rank < 3; ++rank) {
    const int code = run_child([&] { rank_v5(rank, dir); });
    EXPECT_EQ(code, rank == 2 ? 0 : -SIGKILL) << "rank " << rank << " (child exit code)";
  }
  const std::vector<std::string> files = expand_rank_inputs({dir});
  ASSERT_EQ(files.size(), 3u);
  const RankTimeline r0 = read_rank_file(files[0]);
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.world_size, 3);
  EXPECT_EQ(r0.backend, "nccl-profiler");
  const std::vector<OpRecord> r0_ops = ops_of(r0);
  EXPECT_EQ(r0_ops.size(), 5u) << "dp0 #0..#3 and the send";
  for (const OpRecord& op : r0_ops) {
    EXPECT_EQ(op.category, Category::kComm);
    EXPECT_EQ(op.duration_ns(), op.name == "send" ? 5'000 : 20'000) << op.name;
  }
  // Every collective of the capture, warm-up included: the whole capture as one step.
  ::setenv("COMMPROF_PLUGIN_STEP_MARKER", "none", 1);
  const Report report = reduce_rank_files(files, ReduceOptions{});
  ::unsetenv("COMMPROF_PLUGIN_STEP_MARKER");
  EXPECT_TRUE(report.problems.empty());
  int dp0_matched = 0;
  for (const CollectiveInstance& in : report.instances) {
    if (in.comm == "dp0" && in.ranks_seen == 3 && in.consistent) ++dp0_matched;
  }
  EXPECT_EQ(dp0_matched, 4) << "dp0 #0..#3 matched on all three ranks";
  const auto transfer = std::find_if(
      report.instances.begin(), report.instances.end(),
      [](const CollectiveInstance& in) { return in.comm == "pp0/0>1" && in.seq == 0; });
  ASSERT_NE(transfer, report.instances.end()) << "rank 0's send matched with rank 1's recv";
  EXPECT_EQ(transfer->ranks_seen, 2);
  EXPECT_EQ(transfer->collective, "sendrecv");
  EXPECT_TRUE(transfer->consistent);
  // NCCL's algorithm and protocol reach the report's table of collectives.
  const auto allreduce =
      std::find_if(report.collectives.begin(), report.collectives.end(),
                   [](const CollectiveRow& c) { return c.collective == "allreduce"; });
  ASSERT_NE(allreduce, report.collectives.end());
  EXPECT_EQ(allreduce->algo, "RING/SIMPLE");
  EXPECT_EQ(allreduce->count, 4);
  std::ostringstream text;
  write_report_text(text, report);
  EXPECT_NE(text.str().find("nccl algo/proto"), std::string::npos) << text.str();
  const std::string hang =
      "hang: dp0 allreduce #4 unfinished on ranks 0 1; rank 2 never started it (its last on dp0: "
      "#3)";
  EXPECT_NE(std::find(report.warnings.begin(), report.warnings.end(), hang), report.warnings.end())
      << "warnings: " << ::testing::PrintToString(report.warnings);
}

// The first collectives of PyTorch DDP on its process group, with NCCL's numbers: the
// parameter count all-gathered (one int64 per rank, all-gather #0), the shapes and the module's
// state broadcast (broadcasts #0 and #1), the bucket order broadcast twice when DDP rebuilds its
// buckets (#2, #3), then the gradients' all-reduces (#0, #1, ...). A DDP job's report warned of
// "4 collectives that differ across ranks (the first an all-gather of 16 B on seq 0)": the
// files had numbered them NCCL's way, and each of #0..#3 met calls of two or three kinds.
TEST(NcclProfilerPlugin, DdpsFirstCollectivesMatchOnTwoRanks) {
  const std::string dir = fresh_dir("plugin_ddp");
  for (int rank = 0; rank < 2; ++rank) {
    const int code = run_child([&] {
      setenv("COMMPROF_PLUGIN_OUT", dir.c_str(), 1);
      setenv("COMMPROF_PLUGIN_SAMPLE", "1", 1);  // every call timed, as these tests expect
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", "2", 1);
      void* so = open_plugin();
      auto* p = static_cast<NcclProfilerV5*>(dlsym(so, "ncclProfiler_v5"));
      CHILD_CHECK(p != nullptr, 50);
      void* ctx = nullptr;
      int mask = 0;
      CHILD_CHECK(p->init(&ctx, 0xddb, &mask, nullptr, 1, 2, rank, nullptr) == kNcclSuccess, 51);
      collective_v5(p, ctx, "AllGather", 1, "ncclInt64", 0, 1, false);
      collective_v5(p, ctx, "Broadcast", 24, "ncclInt64", 0, 1, false);
      collective_v5(p, ctx, "Broadcast", 400'000, "ncclBfloat16", 1, 2, false);
      collective_v5(p, ctx, "Broadcast", 17, "ncclInt32", 2, 1, false);
      collective_v5(p, ctx, "Broadcast", 2, "ncclInt32", 3, 1, false);
      for (std::uint64_t seq = 0; seq < 6; ++seq) {
        collective_v5(p, ctx, "AllReduce", 200'000, "ncclBfloat16", seq, 2, false);
      }
      CHILD_CHECK(p->finalize(ctx) == kNcclSuccess, 52);
    });
    ASSERT_EQ(code, 0) << "rank " << rank;
  }
  // The first collectives are DDP's warm-up: read as one step, so that they are matched too.
  ::setenv("COMMPROF_PLUGIN_STEP_MARKER", "none", 1);
  const Report report = reduce_rank_files(expand_rank_inputs({dir}), ReduceOptions{});
  ::unsetenv("COMMPROF_PLUGIN_STEP_MARKER");
  for (const std::string& w : report.warnings) {
    EXPECT_EQ(w.find("differ across ranks"), std::string::npos) << w;
  }
  ASSERT_EQ(report.instances.size(), 11u);
  for (const CollectiveInstance& in : report.instances) {
    EXPECT_EQ(in.comm, "comm-0000000000000ddb");
    EXPECT_EQ(in.ranks_seen, 2) << "#" << in.seq;
    EXPECT_TRUE(in.consistent) << "#" << in.seq;
  }
  const auto at = [&](std::int64_t seq) {
    return std::find_if(report.instances.begin(), report.instances.end(),
                        [&](const CollectiveInstance& in) { return in.seq == seq; });
  };
  ASSERT_NE(at(0), report.instances.end());
  EXPECT_EQ(at(0)->collective, "allgather");
  EXPECT_EQ(at(0)->bytes, 16u) << "one int64 from each of 2 ranks";
  ASSERT_NE(at(4), report.instances.end());
  EXPECT_EQ(at(4)->collective, "broadcast");
  ASSERT_NE(at(10), report.instances.end());
  EXPECT_EQ(at(10)->collective, "allreduce");
}

// nccl-tests' two loops of an all-gather size through the v5 table on 2 ranks: 4 calls out of
// place (the send buffer apart), then 4 in place (each rank's send buffer at its own share of
// the receive buffer, as nccl-tests calls it). The report has a row for each loop, named by its
// placement, with its own instances; every instance says its placement on both ranks.
TEST(NcclProfilerPlugin, NcclTestsLoopsAreRowsOfTheirPlacement) {
  const std::string dir = fresh_dir("plugin_in_place");
  constexpr std::size_t kCount = 1024;  // int64 elements a rank sends
  for (int rank = 0; rank < 2; ++rank) {
    const int code = run_child([&] {
      setenv("COMMPROF_PLUGIN_OUT", dir.c_str(), 1);
      setenv("COMMPROF_PLUGIN_SAMPLE", "1", 1);
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", "2", 1);
      void* so = open_plugin();
      auto* p = static_cast<NcclProfilerV5*>(dlsym(so, "ncclProfiler_v5"));
      CHILD_CHECK(p != nullptr, 70);
      void* ctx = nullptr;
      int mask = 0;
      CHILD_CHECK(p->init(&ctx, 0x7e57, &mask, "world", 1, 2, rank, nullptr) == kNcclSuccess, 71);
      std::vector<std::int64_t> recv(2 * kCount), send(kCount);
      for (std::uint64_t seq = 0; seq < 8; ++seq) {
        const bool in_place = seq >= 4;
        const void* from = in_place ? recv.data() + rank * kCount : send.data();
        collective_v5(p, ctx, "AllGather", kCount, "ncclInt64", seq, 1, false, from, recv.data());
      }
      CHILD_CHECK(p->finalize(ctx) == kNcclSuccess, 72);
    });
    ASSERT_EQ(code, 0) << "rank " << rank;
  }
  ::setenv("COMMPROF_PLUGIN_STEP_MARKER", "none", 1);  // 8 calls, no steps: all of them
  const Report report = reduce_rank_files(expand_rank_inputs({dir}), ReduceOptions{});
  ::unsetenv("COMMPROF_PLUGIN_STEP_MARKER");
  ASSERT_EQ(report.instances.size(), 8u);
  for (const CollectiveInstance& in : report.instances) {
    EXPECT_EQ(in.ranks_seen, 2) << "#" << in.seq;
    EXPECT_EQ(in.in_place, in.seq >= 4 ? 1 : 0) << "#" << in.seq;
  }
  ASSERT_EQ(report.collectives.size(), 2u);
  EXPECT_EQ(report.collectives[0].placement, "out of place");
  EXPECT_EQ(report.collectives[1].placement, "in place");
  for (const CollectiveRow& row : report.collectives) {
    EXPECT_EQ(row.collective, "allgather");
    EXPECT_EQ(row.bytes, 2u * kCount * 8u);
    EXPECT_EQ(row.count, 4) << row.placement;
  }
}

// COMMPROF_PLUGIN_EVENTS: what the plugin asks NCCL for, to measure what NCCL's delivery of the
// events costs by difference. `calls`: the calls without their kernel channels (nothing timed:
// each call counted as without kernel records, none left unfinished); `none`: nothing.
TEST(NcclProfilerPlugin, EventsNarrowWhatNcclIsAskedFor) {
  struct Case {
    const char* events;
    int mask;
  };
  const int calls = static_cast<int>(kNcclProfileColl | kNcclProfileP2p | kNcclProfileCollApi |
                                     kNcclProfileP2pApi);
  const Case cases[] = {
      {"kernels", calls | static_cast<int>(kNcclProfileKernelCh)}, {"calls", calls}, {"none", 0}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.events);
    const std::string dir = fresh_dir(std::string("plugin_events_") + k.events);
    const int code = run_child([&] {
      setenv("COMMPROF_PLUGIN_OUT", dir.c_str(), 1);
      setenv("COMMPROF_PLUGIN_SAMPLE", "1", 1);  // every call timed, as these tests expect
      setenv("COMMPROF_PLUGIN_EVENTS", k.events, 1);
      setenv("RANK", "0", 1);
      void* so = open_plugin();
      auto* p = static_cast<NcclProfilerV5*>(dlsym(so, "ncclProfiler_v5"));
      CHILD_CHECK(p != nullptr, 60);
      void* ctx = nullptr;
      int mask = -1;
      CHILD_CHECK(p->init(&ctx, 0x3, &mask, "dp0", 1, 2, 0, nullptr) == kNcclSuccess, 61);
      CHILD_CHECK(mask == k.mask, 62);
      if ((mask & kNcclProfileKernelCh) != 0) {
        collective_v5(p, ctx, "AllReduce", 1024, "ncclFloat32", 0, 2, false);
      } else if (mask != 0) {  // the call on 2 channels, which NCCL then does not report
        NcclEventDescrV5 d{};
        d.type = kNcclProfileColl;
        d.coll.v4.func = "AllReduce";
        d.coll.v4.count = 1024;
        d.coll.v4.datatype = "ncclFloat32";
        d.coll.v4.nChannels = 2;
        void* op = nullptr;
        CHILD_CHECK(p->startEvent(ctx, &op, &d) == kNcclSuccess && op != nullptr, 64);
        CHILD_CHECK(p->stopEvent(op) == kNcclSuccess, 65);
      }
      CHILD_CHECK(p->finalize(ctx) == kNcclSuccess, 63);
    });
    ASSERT_EQ(code, 0);
    const RankTimeline t = read_rank_file(dir + "/rank-0.json");
    const std::string events = k.events;
    EXPECT_EQ(t.steps.at(0).ops.size(), events == "kernels" ? 1u : 0u);
    EXPECT_EQ(t.config.json().at("without_kernel_records"), events == "calls" ? 1 : 0);
    EXPECT_EQ(t.config.json().at("unfinished").size(), 0u);
  }
}

// The null plugin the `plugincost` phase measures NCCL's own delivery of the events with: it asks
// for the mask COMMPROF_NULL_PROFILER_MASK names (commprof's `calls` mask here), for nothing
// where unset, and takes every event without a handle or a file.
TEST(NcclProfilerPlugin, TheNullPluginAsksForTheMaskItIsGiven) {
  const int calls = static_cast<int>(kNcclProfileColl | kNcclProfileP2p | kNcclProfileCollApi |
                                     kNcclProfileP2pApi);
  for (const int want : {calls, 0}) {
    SCOPED_TRACE(want);
    const int code = run_child([&] {
      if (want != 0) {
        setenv("COMMPROF_NULL_PROFILER_MASK", std::to_string(want).c_str(), 1);
      } else {
        unsetenv("COMMPROF_NULL_PROFILER_MASK");
      }
      void* so = dlopen(COMMPROF_NULL_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
      CHILD_CHECK(so != nullptr, 70);
      auto* p = static_cast<NcclProfilerV5*>(dlsym(so, "ncclProfiler_v5"));
      CHILD_CHECK(p != nullptr && dlsym(so, "ncclProfiler_v4") == nullptr, 71);
      void* ctx = nullptr;
      int mask = -1;
      CHILD_CHECK(p->init(&ctx, 0x3, &mask, "dp0", 1, 2, 0, nullptr) == kNcclSuccess, 72);
      CHILD_CHECK(mask == want, 73);
      NcclEventDescrV5 d{};
      d.type = kNcclProfileColl;
      void* op = &d;
      CHILD_CHECK(p->startEvent(ctx, &op, &d) == kNcclSuccess && op == nullptr, 74);
      CHILD_CHECK(p->stopEvent(op) == kNcclSuccess && p->finalize(ctx) == kNcclSuccess, 75);
    });
    EXPECT_EQ(code, 0);
  }
}

// Sampled timing through the mask NCCL reads (issue #46): NCCL reads the plugin's mask at each
// call's append (its GroupApi start) and sets up kernel channel events only where KernelCh was
// in it. With COMMPROF_PLUGIN_SAMPLE=4 the mask must carry KernelCh for calls #0, #4, #8 of the
// communicator alone; every call is still counted, those three timed, none left unfinished.
TEST(NcclProfilerPlugin, SampledCallsAloneAreAppendedWithKernelChannels) {
  const std::string dir = fresh_dir("plugin_mask");
  const int code = run_child([&] {
    setenv("COMMPROF_PLUGIN_OUT", dir.c_str(), 1);
    setenv("COMMPROF_PLUGIN_SAMPLE", "4", 1);
    setenv("RANK", "0", 1);
    void* so = open_plugin();
    auto* p = static_cast<NcclProfilerV5*>(dlsym(so, "ncclProfiler_v5"));
    CHILD_CHECK(p != nullptr, 80);
    void* ctx = nullptr;
    static int nccl_mask = 0;  // NCCL's one mask of the process, which it hands to every init
    CHILD_CHECK(p->init(&ctx, 0x5, &nccl_mask, "dp0", 1, 2, 0, nullptr) == kNcclSuccess, 81);
    for (std::uint64_t call = 0; call < 12; ++call) {
      if (call == 6) {  // a communicator made mid-run: its init must not turn KernelCh back on
        void* late = nullptr;
        CHILD_CHECK(p->init(&late, 0x6, &nccl_mask, "tp0", 1, 2, 0, nullptr) == kNcclSuccess, 86);
        CHILD_CHECK((nccl_mask & kNcclProfileKernelCh) == 0, 87);
        CHILD_CHECK(p->finalize(late) == kNcclSuccess, 88);
      }
      const int seen = __atomic_load_n(&nccl_mask, __ATOMIC_RELAXED);  // NCCL's read, then:
      NcclEventDescrV5 g{};
      g.type = kNcclProfileGroupApi;
      void* group = nullptr;
      CHILD_CHECK(p->startEvent(ctx, &group, &g) == kNcclSuccess, 82);
      const bool kernels = (seen & kNcclProfileKernelCh) != 0;
      CHILD_CHECK(kernels == (call % 4 == 0), 83);
      CHILD_CHECK((seen & kNcclProfileColl) != 0, 84);  // every call still reported
      // Its launch: the Coll event; its channels only where KernelCh was in the mask.
      collective_v5(p, ctx, "AllReduce", 1 << 20, "ncclFloat32", call, kernels ? 2 : 0, false);
    }
    CHILD_CHECK(p->finalize(ctx) == kNcclSuccess, 85);
  });
  ASSERT_EQ(code, 0);
  const RankTimeline t = read_rank_file(dir + "/rank-0.json");
  EXPECT_EQ(ops_of(t).size(), 3u);
  const auto& comm = t.config.json().at("communicators").at(0);
  EXPECT_EQ(comm.at("calls"), 12);
  EXPECT_EQ(comm.at("timed"), 3);
  EXPECT_EQ(t.config.json().at("unfinished").size(), 0u);
  EXPECT_EQ(t.config.json().at("without_kernel_records"), 0);
}

TEST(NcclProfilerPlugin, V4TakesItsOwnInitOrder) {
  const std::string dir = fresh_dir("plugin_v4");
  const int code = run_child([&] {
    setenv("COMMPROF_PLUGIN_OUT", dir.c_str(), 1);
    setenv("COMMPROF_PLUGIN_SAMPLE", "1", 1);  // every call timed, as these tests expect
    unsetenv("RANK");
    void* so = open_plugin();
    auto* p = static_cast<NcclProfilerV4*>(dlsym(so, "ncclProfiler_v4"));
    CHILD_CHECK(p != nullptr, 30);
    void* ctx = nullptr;
    int mask = 0;
    // v4: the mask comes before the name, and the communicator's hash after it.
    CHILD_CHECK(p->init(&ctx, &mask, "tp1", 0xfeed, 1, 2, 1, nullptr) == kNcclSuccess, 31);
    // v4 has no API events: asking for bits it does not define is left to v5.
    CHILD_CHECK((mask & ~0xff) == 0, 34);
    NcclEventDescrV4 d{};
    d.type = static_cast<std::uint8_t>(kNcclProfileColl);
    d.coll.seqNumber = 9;
    d.coll.func = "AllGather";
    d.coll.count = 100;
    d.coll.datatype = "ncclBfloat16";
    d.coll.nChannels = 1;
    d.coll.algo = "RING";
    d.coll.proto = "LL";
    void* op = nullptr;
    CHILD_CHECK(p->startEvent(ctx, &op, &d) == kNcclSuccess && op != nullptr, 32);
    p->stopEvent(op);
    NcclEventDescrV4 k{};
    k.type = static_cast<std::uint8_t>(kNcclProfileKernelCh);
    k.parentObj = op;
    k.kernelCh.pTimer = gpu_now();
    void* ch = nullptr;
    p->startEvent(ctx, &ch, &k);
    NcclEventStateArgs a{};
    a.kernelCh.pTimer = k.kernelCh.pTimer + 1'000;
    p->recordEventState(ch, kNcclProfilerKernelChStop, &a);
    p->stopEvent(ch);
    CHILD_CHECK(p->finalize(ctx) == kNcclSuccess, 33);
  });
  ASSERT_EQ(code, 0);
  const RankTimeline t = read_rank_file(dir + "/rank-1.json");  // the communicator's rank
  ASSERT_EQ(t.steps.at(0).ops.size(), 1u);
  const OpRecord& op = t.steps[0].ops[0];
  EXPECT_EQ(op.comm, "tp1");
  EXPECT_EQ(op.seq, 0) << "tp1's first collective (NCCL's 9 counts its all-gathers alone)";
  EXPECT_EQ(op.bytes, 100u * 2 * 2);
  EXPECT_EQ(op.dtype, "ncclBfloat16");
  EXPECT_EQ(op.count, 100u);
  EXPECT_EQ(op.algo, "RING");
  EXPECT_EQ(op.proto, "LL");
  EXPECT_EQ(op.channels, 1);
  EXPECT_FALSE(op.graph);
  EXPECT_EQ(t.config.json().at("communicators").at(0).at("hash"), 0xfeed);
}

// A collective captured into a CUDA graph, as NCCL 2.28 reports it: its Coll API event once, at
// capture (graphCaptured set), stopped at once; then at every replay of the graph a Coll event
// whose parent is that long-stopped API handle, with the communicator's next sequence number,
// and its kernel channels. Beside it an ordinary call. Each replay is an op of its own, marked
// `graph`, with NCCL's algorithm, protocol, channels, count and type and its enqueue time.
TEST(NcclProfilerPlugin, GraphReplaysAreOpsOfTheirOwn) {
  const std::string dir = fresh_dir("plugin_graph");
  const int code = run_child([&] {
    setenv("COMMPROF_PLUGIN_OUT", dir.c_str(), 1);
    setenv("COMMPROF_PLUGIN_SAMPLE", "1", 1);  // every call timed, as these tests expect
    setenv("RANK", "0", 1);
    void* so = open_plugin();
    auto* p = static_cast<NcclProfilerV5*>(dlsym(so, "ncclProfiler_v5"));
    CHILD_CHECK(p != nullptr, 40);
    void* ctx = nullptr;
    int mask = 0;
    CHILD_CHECK(p->init(&ctx, 0x77, &mask, "dp0", 1, 2, 0, nullptr) == kNcclSuccess, 41);
    CHILD_CHECK((mask & kNcclProfileCollApi) && (mask & kNcclProfileP2pApi), 42);
    const auto api = [&](bool captured) {
      NcclEventDescrV5 d{};
      d.type = kNcclProfileCollApi;
      d.collApi.func = "AllReduce";
      d.collApi.count = 1 << 20;
      d.collApi.datatype = "ncclBfloat16";
      d.collApi.graphCaptured = captured;
      void* h = nullptr;
      CHILD_CHECK(p->startEvent(ctx, &h, &d) == kNcclSuccess && h != nullptr, 43);
      CHILD_CHECK(p->stopEvent(h) == kNcclSuccess, 44);  // before its operation even starts
      return h;
    };
    const auto run = [&](void* call, std::uint64_t seq) {
      NcclEventDescrV5 d{};
      d.type = kNcclProfileColl;
      d.parentObj = call;
      d.coll.v4.seqNumber = seq;
      d.coll.v4.func = "AllReduce";
      d.coll.v4.count = 1 << 20;
      d.coll.v4.datatype = "ncclBfloat16";
      d.coll.v4.nChannels = 4;
      d.coll.v4.algo = "RING";
      d.coll.v4.proto = "SIMPLE";
      void* op = nullptr;
      CHILD_CHECK(p->startEvent(ctx, &op, &d) == kNcclSuccess && op != nullptr, 45);
      p->stopEvent(op);
      channels_v5(p, ctx, op, 4, gpu_now() + 1'000, 30'000, false);
    };
    void* captured = api(true);
    run(api(false), 0);
    for (std::uint64_t replay = 1; replay <= 3; ++replay) run(captured, replay);
    CHILD_CHECK(p->finalize(ctx) == kNcclSuccess, 46);
  });
  ASSERT_EQ(code, 0);
  const RankTimeline t = read_rank_file(dir + "/rank-0.json");
  const std::vector<OpRecord> ops = ops_of(t);
  ASSERT_EQ(ops.size(), 4u);
  for (const OpRecord& op : ops) {
    EXPECT_EQ(op.graph, op.seq > 0) << "#" << op.seq << ": only the replays are graph work";
    EXPECT_EQ(op.algo, "RING");
    EXPECT_EQ(op.proto, "SIMPLE");
    EXPECT_EQ(op.channels, 4);
    EXPECT_EQ(op.count, 1u << 20);
    EXPECT_EQ(op.dtype, "ncclBfloat16");
    EXPECT_EQ(op.bytes, 2u << 20);
    EXPECT_EQ(op.duration_ns(), 30'000);
    EXPECT_GT(op.enqueue_ns, 0);
    EXPECT_LE(op.enqueue_ns, op.start_ns) << "enqueued before its kernel started";
  }
  EXPECT_EQ(ops[3].seq, 3);
}

}  // namespace
}  // namespace commprof
