// SPDX-License-Identifier: MIT
// commprof_plugin_bench: what the NCCL profiler plugin itself costs per collective, on the CPU,
// without NCCL or a GPU. It opens the built plugin with dlopen and drives its ncclProfiler_v5
// table with the calls NCCL 2.28 makes for one collective under the plugin's activation mask:
//  - the calling thread: Group API start, Coll API start and stop, Group start, Coll start, Coll
//    stop (the enqueue);
//  - NCCL's proxy thread: per kernel channel, KernelCh start, its KernelChStop state, stop.
// With --threads 2 the channels are driven from a second thread, up to --in-flight collectives
// behind the calls (a host that runs ahead of its GPU), as NCCL's proxy thread does; with
// --threads 1 each collective's channels follow its call on the one thread. It prints the
// nanoseconds per collective each thread spent inside the plugin, then checks that the rank
// file the plugin wrote at the end holds every collective (no measurement lost), each as driven:
// its sequence number, kernel time and bytes (every_record_as_driven). Each of
// --rounds rounds drives --ops collectives; the figures are the round of median wall time's.
//
//   commprof_plugin_bench [--plugin PATH] [--ops N] [--channels C] [--threads 1|2]
//                         [--in-flight D] [--kind allreduce|alltoall] [--ranks R] [--rounds N]
//                         [--sample K] [--budget-kib B]
//
// --sample K sets COMMPROF_PLUGIN_SAMPLE (default 1: every call timed) and --budget-kib B the
// plugin's memory budget (COMMPROF_PLUGIN_MEMORY_MIB = B / 1024): the check then expects one call
// in K recorded, and the records beyond the budget dropped and counted, exactly.
// --kind alltoall: each call is a group of R-1 sends and R-1 receives, one channel each (how
// NCCL reports all-to-all). COMMPROF_PLUGIN_FLUSH_S sets how often the plugin rewrites its file
// while it runs (default 5 s); the file goes to a fresh temporary directory, removed at the end.
#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/nccl_profiler/nccl_profiler_abi.hpp"
#include "src/timeline/rank_file.hpp"

namespace {

struct Args {
  std::string plugin = COMMPROF_PLUGIN_PATH;
  long ops = 200'000;
  int channels = 8;
  int threads = 2;
  long in_flight = 64;
  bool alltoall = false;
  int ranks = 4;
  int rounds = 5;
  long sample = 1;      // COMMPROF_PLUGIN_SAMPLE: one call in K timed
  long budget_kib = 0;  // COMMPROF_PLUGIN_MEMORY_MIB in KiB; 0: the plugin's default
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "commprof_plugin_bench: %s\nusage: commprof_plugin_bench [--plugin PATH] [--ops N] "
               "[--channels C] [--threads 1|2] [--in-flight D] [--kind allreduce|alltoall] "
               "[--ranks R] [--rounds N] [--sample K] [--budget-kib B]\n",
               why);
  std::exit(2);
}

long number(const char* flag, const char* v, long lo, long hi) {
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || x < lo || x > hi) {
    usage((std::string(flag) + ": not a whole number from " + std::to_string(lo) + " to " +
           std::to_string(hi) + ": '" + v + "'")
              .c_str());
  }
  return x;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(("no value after " + flag).c_str());
    const char* v = argv[++i];
    if (flag == "--plugin") {
      a.plugin = v;
    } else if (flag == "--ops") {
      a.ops = number("--ops", v, 1, 100'000'000);
    } else if (flag == "--channels") {
      a.channels = static_cast<int>(number("--channels", v, 1, 64));
    } else if (flag == "--threads") {
      a.threads = static_cast<int>(number("--threads", v, 1, 2));
    } else if (flag == "--in-flight") {
      a.in_flight = number("--in-flight", v, 1, 1'000'000);
    } else if (flag == "--kind") {
      if (std::strcmp(v, "allreduce") != 0 && std::strcmp(v, "alltoall") != 0) {
        usage("--kind: allreduce or alltoall");
      }
      a.alltoall = std::strcmp(v, "alltoall") == 0;
    } else if (flag == "--rounds") {
      a.rounds = static_cast<int>(number("--rounds", v, 1, 1000));
    } else if (flag == "--sample") {
      a.sample = number("--sample", v, 1, 1'000'000);
    } else if (flag == "--budget-kib") {
      a.budget_kib = number("--budget-kib", v, 1, 1 << 30);
    } else if (flag == "--ranks") {
      a.ranks = static_cast<int>(number("--ranks", v, 2, 1024));
    } else {
      usage(("unknown option " + flag).c_str());
    }
  }
  return a;
}

std::uint64_t gpu_now() {  // the GPU's globaltimer reads the host's realtime clock
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What two clock readings around nothing take: taken off every timed section.
std::int64_t clock_pair_ns() {
  constexpr int kPairs = 100'000;
  const std::int64_t t0 = now_ns();
  std::int64_t sink = 0;
  for (int i = 0; i < kPairs; ++i) sink += now_ns() - now_ns();
  const std::int64_t took = now_ns() - t0;
  return (took + (sink & 0)) / kPairs;
}

// One collective's operations (one for an all-reduce, 2(R-1) transfers for an all-to-all) and
// how many channels each reports.
struct Call {
  std::vector<void*> ops;
  int channels = 0;
};

class Driver {
 public:
  Driver(NcclProfilerV5* p, void* ctx, const Args& a) : p_(p), ctx_(ctx), a_(a) {}

  // The calling thread's part of one collective: its handles, for the channels.
  void call(std::uint64_t seq, Call& out) {
    out.ops.clear();
    out.channels = a_.alltoall ? 1 : a_.channels;
    void* group_api = start(kNcclProfileGroupApi, nullptr);
    if (!a_.alltoall) {
      void* api = coll_api();
      p_->stopEvent(api);
      void* group = start(kNcclProfileGroup, nullptr);
      NcclEventDescrV5 d{};
      d.type = kNcclProfileColl;
      d.parentObj = api;
      d.coll.v4.seqNumber = seq;
      d.coll.v4.func = "AllReduce";
      d.coll.v4.count = 1 << 18;
      d.coll.v4.datatype = "ncclFloat32";
      d.coll.v4.nChannels = static_cast<std::uint8_t>(a_.channels);
      d.coll.v4.algo = "RING";
      d.coll.v4.proto = "SIMPLE";
      void* op = nullptr;
      p_->startEvent(ctx_, &op, &d);
      p_->stopEvent(op);
      if (group != nullptr) p_->stopEvent(group);
      out.ops.push_back(op);
    } else {
      std::vector<void*> apis;
      for (int peer = 1; peer < a_.ranks; ++peer) {
        for (const char* f : {"Send", "Recv"}) {
          NcclEventDescrV5 d{};
          d.type = kNcclProfileP2pApi;
          d.parentObj = group_api;
          d.p2pApi.func = f;
          d.p2pApi.count = 1 << 16;
          d.p2pApi.datatype = "ncclFloat32";
          void* api = nullptr;
          p_->startEvent(ctx_, &api, &d);
          p_->stopEvent(api);
          apis.push_back(api);
        }
      }
      void* group = start(kNcclProfileGroup, nullptr);
      std::size_t k = 0;
      for (int peer = 1; peer < a_.ranks; ++peer) {
        for (const char* f : {"Send", "Recv"}) {
          NcclEventDescrV5 d{};
          d.type = kNcclProfileP2p;
          d.parentObj = apis[k++];
          d.p2p.v4.func = f;
          d.p2p.v4.count = 1 << 16;
          d.p2p.v4.datatype = "ncclFloat32";
          d.p2p.v4.peer = peer;
          d.p2p.v4.nChannels = 1;
          void* op = nullptr;
          p_->startEvent(ctx_, &op, &d);
          p_->stopEvent(op);
          out.ops.push_back(op);
        }
      }
      if (group != nullptr) p_->stopEvent(group);
    }
    if (group_api != nullptr) p_->stopEvent(group_api);
  }

  // NCCL's proxy thread: each operation's channels start, then stop 10 µs later on the GPU.
  void channels(const Call& c) {
    const std::uint64_t t = gpu_now();
    for (void* op : c.ops) {
      for (int ch = 0; ch < c.channels; ++ch) {
        NcclEventDescrV5 k{};
        k.type = kNcclProfileKernelCh;
        k.parentObj = op;
        k.kernelCh.channelId = static_cast<std::uint8_t>(ch);
        k.kernelCh.pTimer = t;
        void* h = nullptr;
        p_->startEvent(ctx_, &h, &k);
        if (h == nullptr) continue;  // an untimed call's channel: NCCL reports no more of it
        NcclEventStateArgs s{};
        s.kernelCh.pTimer = t + 10'000;
        p_->recordEventState(h, kNcclProfilerKernelChStop, &s);
        p_->stopEvent(h);
      }
    }
  }

 private:
  void* start(std::uint64_t type, void* parent) {
    NcclEventDescrV5 d{};
    d.type = type;
    d.parentObj = parent;
    void* h = nullptr;
    p_->startEvent(ctx_, &h, &d);
    return h;
  }
  void* coll_api() {
    NcclEventDescrV5 d{};
    d.type = kNcclProfileCollApi;
    d.collApi.func = "AllReduce";
    d.collApi.count = 1 << 18;
    d.collApi.datatype = "ncclFloat32";
    void* h = nullptr;
    p_->startEvent(ctx_, &h, &d);
    return h;
  }

  NcclProfilerV5* p_;
  void* ctx_;
  const Args& a_;
};

struct Round {
  std::int64_t caller_ns = 0;  // inside the plugin, on each thread
  std::int64_t proxy_ns = 0;
  std::int64_t wall_ns = 0;
  long faults = 0;
};

// --ops collectives. Time inside the plugin per thread: each section between two clock
// readings, less what the readings take (`pair`); the waits for the other thread are left out.
Round run_round(Driver& d, const Args& a, std::int64_t pair) {
  const long ring = a.threads == 2 ? a.in_flight + 1 : 1;
  std::vector<Call> calls(static_cast<std::size_t>(ring));
  std::atomic<long> issued{0};
  std::atomic<long> consumed{0};
  Round r;
  const long faults0 = minor_faults();
  const std::int64_t wall0 = now_ns();
  std::thread proxy;
  if (a.threads == 2) {
    proxy = std::thread([&] {
      for (long i = 0; i < a.ops; ++i) {
        while (issued.load(std::memory_order_acquire) <= i) std::this_thread::yield();
        const std::int64_t t0 = now_ns();
        d.channels(calls[static_cast<std::size_t>(i % ring)]);
        r.proxy_ns += now_ns() - t0 - pair;
        consumed.store(i + 1, std::memory_order_release);
      }
    });
  }
  for (long i = 0; i < a.ops; ++i) {
    if (a.threads == 2) {
      while (i - consumed.load(std::memory_order_acquire) >= a.in_flight) {
        std::this_thread::yield();  // a host of few cores: the other thread needs this one's
      }
    }
    Call& c = calls[static_cast<std::size_t>(i % ring)];
    const std::int64_t t0 = now_ns();
    d.call(static_cast<std::uint64_t>(i), c);
    r.caller_ns += now_ns() - t0 - pair;
    if (a.threads == 2) {
      issued.store(i + 1, std::memory_order_release);
    } else {
      const std::int64_t t1 = now_ns();
      d.channels(c);
      r.proxy_ns += now_ns() - t1 - pair;
    }
  }
  if (proxy.joinable()) proxy.join();
  r.wall_ns = now_ns() - wall0;
  r.faults = minor_faults() - faults0;
  return r;
}

// What the records say against what the driver did: on each communicator (the all-reduces', or
// each direction of each pair for the transfers) the timed calls' sequence numbers, each once:
// 0, K, 2K, ... below n = ops x rounds, all of them, or under a --budget-kib the first ones
// (a record beyond the budget is dropped, and so is every later one); every record's kernel time
// exactly the 10 us its channels were given (start and stop read on one clock); the bytes of
// 2^18 floats per all-reduce, 2^16 per send or receive. Prints what is wrong and returns false.
bool every_record_as_driven(const std::vector<commprof::OpRecord>& ops, const Args& a) {
  std::map<std::string, std::vector<std::int64_t>> seqs;
  bool ok = true;
  const std::uint64_t bytes = a.alltoall ? (1u << 16) * 4u : (1u << 18) * 4u;
  for (const commprof::OpRecord& op : ops) {
    seqs[op.comm].push_back(op.seq);
    if (op.end_ns - op.start_ns != 10'000 || op.bytes != bytes) {
      std::fprintf(stderr, "%s #%lld on %s: %lld ns, %llu B; driven 10000 ns, %llu B\n",
                   op.name.c_str(), static_cast<long long>(op.seq), op.comm.c_str(),
                   static_cast<long long>(op.end_ns - op.start_ns),
                   static_cast<unsigned long long>(op.bytes),
                   static_cast<unsigned long long>(bytes));
      ok = false;
    }
  }
  const std::size_t comms = a.alltoall ? 2u * static_cast<std::size_t>(a.ranks - 1) : 1u;
  if (a.budget_kib == 0 && seqs.size() != comms) {
    std::fprintf(stderr, "records on %zu communicator(s), driven on %zu\n", seqs.size(), comms);
    ok = false;
  }
  const auto n = static_cast<std::int64_t>(a.ops) * a.rounds;
  const std::int64_t timed = (n + a.sample - 1) / a.sample;
  for (auto& [comm, s] : seqs) {
    std::sort(s.begin(), s.end());
    bool first = static_cast<std::int64_t>(s.size()) == timed ||
                 (a.budget_kib > 0 && static_cast<std::int64_t>(s.size()) < timed);
    for (std::size_t i = 0; first && i < s.size(); ++i) {
      first = s[i] == static_cast<std::int64_t>(i) * a.sample;
    }
    if (!first) {
      std::fprintf(stderr,
                   "%s: %zu records whose sequence numbers are not the first of 0, %ld, ... "
                   "below %lld, each once\n",
                   comm.c_str(), s.size(), a.sample, static_cast<long long>(n));
      ok = false;
    }
  }
  std::printf("checked:        sequence numbers, times and bytes of every record: %s\n",
              ok ? "as driven" : "NOT as driven");
  return ok;
}

// What the rank file counts against what was driven: every call (`calls`), the timed ones (one
// in K per communicator), the records dropped beyond the budget (timed - recorded, exactly; with
// K = 1, the records the budget holds: budget / record_bytes), and every call not recorded in
// the counted groups.
bool every_call_counted(const commprof::RankTimeline& t, std::size_t recorded, const Args& a) {
  const auto& config = t.config.json();
  std::int64_t calls = 0, timed = 0, dropped = 0, grouped = 0;
  for (const auto& c : config.at("communicators")) {
    calls += c.at("calls").get<std::int64_t>();
    timed += c.at("timed").get<std::int64_t>();
    dropped += c.at("dropped").get<std::int64_t>();
    for (const auto& g : c.at("untimed")) grouped += g.at("calls").get<std::int64_t>();
  }
  const std::int64_t n = static_cast<std::int64_t>(a.ops) * a.rounds;
  const std::int64_t per_call = a.alltoall ? 2 * (a.ranks - 1) : 1;
  const std::int64_t want_timed = per_call * ((n + a.sample - 1) / a.sample);
  std::int64_t want_kept = want_timed;
  if (a.budget_kib > 0 && a.sample == 1) {
    want_kept = std::min(want_kept, a.budget_kib * 1024 / config.at("record_bytes").get<long>());
  }
  const auto kept = static_cast<std::int64_t>(recorded);
  const bool ok = calls == per_call * n && timed == want_timed && dropped == timed - kept &&
                  kept == want_kept && grouped == calls - kept;
  std::printf(
      "counted:        %lld calls, %lld timed, %lld recorded, %lld dropped, %lld in groups: "
      "%s\n",
      static_cast<long long>(calls), static_cast<long long>(timed), static_cast<long long>(kept),
      static_cast<long long>(dropped), static_cast<long long>(grouped),
      ok ? "as driven" : "NOT as driven");
  if (!ok) {
    std::fprintf(stderr, "driven: %lld calls, %lld timed, %lld to keep\n",
                 static_cast<long long>(per_call * n), static_cast<long long>(want_timed),
                 static_cast<long long>(want_kept));
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  char tmpl[] = "/tmp/commprof-plugin-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("commprof_plugin_bench: mkdtemp");
    return 1;
  }
  const std::string dir = tmpl;
  setenv("COMMPROF_PLUGIN_OUT", dir.c_str(), 1);
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", std::to_string(a.ranks).c_str(), 1);
  setenv("COMMPROF_PLUGIN_SAMPLE", std::to_string(a.sample).c_str(), 1);
  if (a.budget_kib > 0) {
    char mib[64];
    std::snprintf(mib, sizeof mib, "%.17g", static_cast<double>(a.budget_kib) / 1024);
    setenv("COMMPROF_PLUGIN_MEMORY_MIB", mib, 1);
  }
  void* so = dlopen(a.plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (so == nullptr) {
    std::fprintf(stderr, "commprof_plugin_bench: cannot open the plugin %s: %s\n", a.plugin.c_str(),
                 dlerror());
    return 1;
  }
  auto* p = static_cast<NcclProfilerV5*>(dlsym(so, "ncclProfiler_v5"));
  if (p == nullptr) {
    std::fprintf(stderr, "commprof_plugin_bench: %s exports no ncclProfiler_v5\n",
                 a.plugin.c_str());
    return 1;
  }
  void* ctx = nullptr;
  int mask = 0;
  if (p->init(&ctx, 0x5eed, &mask, "bench", 1, a.ranks, 0, nullptr) != kNcclSuccess) {
    std::fprintf(stderr, "commprof_plugin_bench: the plugin's init failed\n");
    return 1;
  }
  Driver d(p, ctx, a);
  const std::int64_t pair = clock_pair_ns();
  std::vector<Round> rounds;
  for (int r = 0; r < a.rounds; ++r) rounds.push_back(run_round(d, a, pair));
  p->finalize(ctx);  // writes the file
  // The round of median wall time: the machine's other work (a shared host) moves single rounds.
  std::sort(rounds.begin(), rounds.end(),
            [](const Round& x, const Round& y) { return x.wall_ns < y.wall_ns; });
  const Round& m = rounds[rounds.size() / 2];

  const double n = static_cast<double>(a.ops);
  const int per_call = a.alltoall ? 2 * (a.ranks - 1) : 1;
  std::printf(
      "%ld %s calls (%d operation(s) of %d channel(s) each), %d thread(s), %ld in flight; "
      "the median of %d rounds\n",
      a.ops, a.alltoall ? "alltoall" : "allreduce", per_call, a.alltoall ? 1 : a.channels,
      a.threads, a.threads == 2 ? a.in_flight : 1, a.rounds);
  std::printf("calling thread: %.0f ns per collective in the plugin\n",
              static_cast<double>(m.caller_ns) / n);
  std::printf("proxy thread:   %.0f ns per collective in the plugin\n",
              static_cast<double>(m.proxy_ns) / n);
  std::printf("wall:           %.0f ns per collective, both threads and their waits\n",
              static_cast<double>(m.wall_ns) / n);
  // New memory first touched: each a page fault, which some virtual machines make costly.
  std::printf("page faults:    %.3f per collective\n", static_cast<double>(m.faults) / n);

  int rc = 0;
  try {
    // Every op of the capture, whatever steps the reader cut it into.
    const commprof::RankTimeline t = commprof::read_rank_file(dir + "/rank-0.json");
    std::vector<commprof::OpRecord> ops;
    for (const commprof::StepRecord& s : t.steps) ops.insert(ops.end(), s.ops.begin(), s.ops.end());
    const std::size_t recorded = ops.size();
    std::printf("recorded:       %zu operations\n", recorded);
    if (!every_call_counted(t, recorded, a)) rc = 1;
    if (!every_record_as_driven(ops, a)) rc = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commprof_plugin_bench: the plugin's file: %s\n", e.what());
    rc = 1;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
