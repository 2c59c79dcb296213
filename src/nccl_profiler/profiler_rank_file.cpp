// SPDX-License-Identifier: MIT
// The process's rank file: what a flush or a query copies out under the lock (Snapshot), the
// records and counted calls made of it outside the lock, and the file written (or only touched)
// at each flush. The bookkeeping that feeds it (communicators, calls, channels, the activation
// mask) is profiler_core.cpp's.
#include "src/nccl_profiler/profiler_core.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/collective/collective_spec.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_file.hpp"
#include "src/timeline/step_detection.hpp"

namespace commprof::nccl_profiler {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The collectives NCCL names in its events (ncclFuncToString, src/collectives.cc) that commprof has
// a spec for; Gather and Scatter (NCCL 2.28+) have none.
struct NcclFunc {
  const char* name;
  CollectiveKind kind;
};
constexpr NcclFunc kNcclFuncs[] = {{"AllReduce", CollectiveKind::kAllReduce},
                                   {"AllGather", CollectiveKind::kAllGather},
                                   {"ReduceScatter", CollectiveKind::kReduceScatter},
                                   {"Broadcast", CollectiveKind::kBroadcast},
                                   {"Reduce", CollectiveKind::kReduce},
                                   {"AlltoAll", CollectiveKind::kAllToAll},
                                   {"Send", CollectiveKind::kSendRecv},
                                   {"Recv", CollectiveKind::kSendRecv},
                                   {"SendRecv", CollectiveKind::kSendRecv}};

// S of nccl-tests' bus-bandwidth formulas from NCCL's count: the collective's spec gives the
// elements of its larger buffer (all-gather: n x count received; reduce-scatter: n x count
// sent; all-to-all: n x count each way; the others: count), NCCL's type their size. The spec's
// element counts do not depend on the type it is given. A call without a spec moves count.
std::uint64_t s_bytes(const std::string& func, const std::string& datatype, std::uint64_t count,
                      int nranks) {
  const std::uint64_t bytes = nccl_element_bytes(datatype);
  for (const NcclFunc& f : kNcclFuncs) {
    if (func != f.name) continue;
    const CollectiveSizes sizes =
        collective_spec(f.kind).sizes_for_count(count, DType::kFloat32, nranks);
    return std::max(sizes.send_count, sizes.recv_count) * bytes;
  }
  return count * bytes;
}

// A transfer's communicator as both its ends name it: "<comm>/<from>><to>".
std::string pair_name(const std::string& comm, int from, int to) {
  return comm + "/" + std::to_string(from) + ">" + std::to_string(to);
}

}  // namespace

// What a flush or a query needs of the shared state, copied (or, for a flush, taken) under the
// lock; everything else of the rank file is made outside it.
struct Process::Snapshot {
  std::vector<Done> done;
  std::vector<std::string> names;
  std::vector<std::vector<UntimedCall>> untimed;  // per communicator: listed since the last flush
  nlohmann::ordered_json comms = nlohmann::ordered_json::array();
  nlohmann::ordered_json unfinished = nlohmann::ordered_json::array();
  std::int64_t without_kernel_records = 0, clock_fallbacks = 0, offset = 0, budget = 0;
  std::int64_t taken_ns = 0;  // when, on the clock of the unfinished ones' enqueue_ns
  bool offset_read = false;
  int rank = -1, world = -1;
};

std::string Process::path() const {
  std::lock_guard<HotMutex> lock(mutex_);
  return rank_file_path(options_.out_dir, std::max(rank_, 0), options_.format);
}

namespace {

// A communicator's calls counted, not recorded, one entry per kind: what was called, its S (as
// its records would have it) and what NCCL chose, and how many times. Calls beyond the budget's
// groups are one entry with its calls only.
nlohmann::ordered_json counted_groups(const Comm& c, const std::vector<std::string>& names) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Comm::Group& g : c.groups) {
    const std::string& func = names[g.func];
    out.push_back({{"collective", g.p2p ? std::string("sendrecv") : lower(func)},
                   {"function", func},
                   {"dtype", names[g.datatype]},
                   {"count", g.count},
                   {"bytes", s_bytes(func, names[g.datatype], g.count, c.info.nranks)},
                   {"algo", names[g.algo]},
                   {"proto", names[g.proto]},
                   {"channels", g.channels},
                   {"graph", g.graph},
                   {"calls", g.calls}});
    if (g.in_place >= 0) out.back()["in_place"] = g.in_place;
  }
  if (c.ungrouped > 0) out.push_back({{"collective", ""}, {"calls", c.ungrouped}});
  return out;
}

}  // namespace

Process::Snapshot Process::snapshot_locked(bool take_done) {
  Snapshot s;
  if (take_done) {
    s.done.swap(done_);
    done_.swap(spare_);  // empty, with the room (and the memory) a flush period needed before
  } else {
    s.done = done_;
  }
  s.names = names_;
  for (const auto& c : comms_) {
    s.comms.push_back({{"name", c->name},
                       {"hash", c->info.hash},
                       {"nranks", c->info.nranks},
                       {"rank", c->info.rank},
                       {"nnodes", c->info.nnodes},
                       {"finalized", c->finalized},
                       {"sample_period", options_.sample_period},
                       {"calls", c->calls},
                       {"collectives", c->collectives},
                       {"timed", c->timed},
                       {"dropped", c->dropped},
                       {"untimed", counted_groups(*c, names_)},
                       {"untimed_unlisted", c->untimed_unlisted}});
    s.untimed.emplace_back();
    if (take_done) {
      s.untimed.back().swap(c->untimed_calls);
    } else {
      s.untimed.back() = c->untimed_calls;
    }
  }
  // Operations enqueued that have not finished: at the end of a hung job, what it waits for.
  for (const Event* e = in_flight_.next; e != &in_flight_; e = e->next) {
    const std::string func = lower(names_[e->func]);
    const int self = e->comm->info.rank;
    s.unfinished.push_back({{"comm", e->p2p ? pair_name(e->comm->name, e->send ? self : e->peer,
                                                        e->send ? e->peer : self)
                                            : e->comm->name},
                            {"collective", e->p2p ? std::string("sendrecv") : func},
                            {"seq", e->seq},
                            {"nccl_seq", e->nccl_seq},
                            {"enqueue_ns", e->enqueue_ns},
                            {"graph", e->graph},
                            {"channels_started", e->channels_started},
                            {"channels_stopped", e->channels_stopped},
                            {"channels", e->channels}});
  }
  s.without_kernel_records = without_kernel_records_;
  s.clock_fallbacks = clock_fallbacks_;
  s.taken_ns = options_.steady_ns();
  s.budget = options_.memory_budget_bytes;
  s.offset_read = offset_read_ns_ != 0;
  s.offset = offset_;
  s.rank = rank_;
  s.world = world_;
  return s;
}

OpRecord Process::record(const Done& d, const std::vector<std::string>& names) const {
  OpRecord r;
  const std::string f = lower(names[d.func]);
  const int self = d.comm->info.rank;
  r.name = f;
  r.category = Category::kComm;
  r.stream = "nccl";
  r.collective = d.p2p ? "sendrecv" : f;
  r.comm = d.p2p ? pair_name(d.comm->name, d.send ? self : d.peer, d.send ? d.peer : self)
                 : d.comm->name;
  r.comm_size = d.p2p ? 2 : d.comm->info.nranks;
  r.seq = d.seq;
  r.bytes = s_bytes(names[d.func], names[d.datatype], d.count, d.comm->info.nranks);
  r.start_ns = d.start_ns;
  r.end_ns = d.end_ns;
  r.dtype = names[d.datatype];
  r.count = d.count;
  r.algo = names[d.algo];
  r.proto = names[d.proto];
  r.channels = d.channels;
  r.enqueue_ns = d.enqueue_ns;
  r.graph = d.graph;
  r.in_place = d.in_place;
  return r;
}

// The rank file from a snapshot and every recorded operation (by start).
RankTimeline Process::build(Snapshot& s, std::vector<OpRecord>& ops,
                            const std::vector<std::vector<UntimedCall>>& untimed) const {
  // Each communicator's untimed collectives, as [number, enqueue_ns, group] (the group an index
  // into its "untimed" list): what a sampled capture's steps are cut from.
  for (std::size_t i = 0; i < untimed.size() && i < s.comms.size(); ++i) {
    nlohmann::ordered_json calls = nlohmann::ordered_json::array();
    for (const UntimedCall& u : untimed[i]) calls.push_back({u.seq, u.enqueue_ns, u.group});
    s.comms[i]["untimed_calls"] = std::move(calls);
  }
  RankTimeline t;
  // The offset the kernels' times were moved by, so that start + offset is their globaltimer
  // reading less the epoch; read now if no kernel has been seen yet.
  t.clock_offset_ns = (s.offset_read ? s.offset : realtime_minus_steady()) - kRealtimeEpochNs;
  t.rank = std::max(s.rank, 0);
  t.world_size = std::max({s.world, t.rank + 1, 1});
  t.backend = "nccl-profiler";
  t.device = "";
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) t.host = host;
  t.config = JsonObject(nlohmann::ordered_json{{"command", "nccl-profiler-plugin"},
                                               {"communicators", std::move(s.comms)},
                                               {"unfinished", std::move(s.unfinished)},
                                               // How old each unfinished one was when written
                                               // (commprof watch's stalls): taken − enqueue_ns.
                                               {"snapshot_ns", s.taken_ns},
                                               {"without_kernel_records", s.without_kernel_records},
                                               {"clock_fallbacks", s.clock_fallbacks},
                                               {"memory_budget_bytes", s.budget},
                                               {"record_bytes", kRecordBytes},
                                               {"group_bytes", kGroupBytes}});
  // The call that ends each step, for the reader that cuts the capture (step_detection.hpp).
  if (!options_.step_marker.empty()) {
    nlohmann::ordered_json with = t.config.json();
    with["step_marker"] = options_.step_marker;
    t.config = JsonObject(std::move(with));
  }
  StepRecord step;
  step.index = 0;
  if (!ops.empty()) {
    step.start_ns = ops.front().start_ns;
    step.end_ns = ops.front().end_ns;
    for (const OpRecord& op : ops) step.end_ns = std::max(step.end_ns, op.end_ns);
  }
  step.ops = std::move(ops);
  t.steps.push_back(std::move(step));
  return t;
}

namespace {

// Appends `more` to `ops`, keeping them ordered by start.
void merge_by_start(std::vector<OpRecord>& ops, std::vector<OpRecord> more) {
  const auto by_start = [](const OpRecord& a, const OpRecord& b) {
    return a.start_ns < b.start_ns;
  };
  std::stable_sort(more.begin(), more.end(), by_start);
  const auto middle = static_cast<std::ptrdiff_t>(ops.size());
  ops.insert(ops.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  std::inplace_merge(ops.begin(), ops.begin() + middle, ops.end(), by_start);
}

}  // namespace

RankTimeline Process::timeline() {
  std::lock_guard<std::mutex> writing(write_mutex_);
  Snapshot s;
  {
    std::lock_guard<HotMutex> lock(mutex_);
    s = snapshot_locked(false);
  }
  std::vector<OpRecord> more;
  more.reserve(s.done.size());
  for (const Done& d : s.done) more.push_back(record(d, s.names));
  std::vector<OpRecord> ops = written_;
  merge_by_start(ops, std::move(more));
  std::vector<std::vector<UntimedCall>> untimed = written_untimed_;
  untimed.resize(s.untimed.size());
  for (std::size_t i = 0; i < s.untimed.size(); ++i)
    untimed[i].insert(untimed[i].end(), s.untimed[i].begin(), s.untimed[i].end());
  return build(s, ops, untimed);
}

void Process::flush() {
  // One flush at a time (the flusher and a communicator's finalize may both flush): otherwise an
  // older snapshot could be written over a newer one and stay, nothing being dirty any more.
  // NCCL's threads wait for the lock only while the new operations are taken (a swap) and the
  // few in flight listed; they are made into records and written outside it.
  std::lock_guard<std::mutex> writing(write_mutex_);
  Snapshot s;
  {
    std::unique_lock<HotMutex> lock(mutex_);
    if (!dirty_) {
      // Nothing new: the file is only touched. A live job whose collectives are stuck changes
      // nothing either, and a reader (diagnose --watch) tells it from a job that ended or died
      // by the file's time moving on: a heartbeat at the cost of one syscall.
      const std::string file =
          rank_file_path(options_.out_dir, std::max(rank_, 0), options_.format);
      lock.unlock();
      if (written_once_) ::utimensat(AT_FDCWD, file.c_str(), nullptr, 0);
      return;
    }
    s = snapshot_locked(true);
    dirty_ = false;  // what changes from here on is written by the next flush
  }
  std::vector<OpRecord> more;
  more.reserve(s.done.size());
  for (const Done& d : s.done) more.push_back(record(d, s.names));
  merge_by_start(written_, std::move(more));
  // Kept whatever the write does: a failed write's calls go into the next one.
  written_untimed_.resize(std::max(written_untimed_.size(), s.untimed.size()));
  for (std::size_t i = 0; i < s.untimed.size(); ++i) {
    written_untimed_[i].insert(written_untimed_[i].end(), s.untimed[i].begin(), s.untimed[i].end());
  }
  RankTimeline t = build(s, written_, written_untimed_);  // lends written_ to the timeline
  try {
    std::error_code ec;
    std::filesystem::create_directories(options_.out_dir, ec);  // a failure shows in the write
    write_rank_file(options_.out_dir, t, options_.format);
  } catch (...) {
    written_ = std::move(t.steps[0].ops);
    std::lock_guard<HotMutex> lock(mutex_);
    dirty_ = true;  // not written: the next flush tries again
    s.done.clear();
    spare_.swap(s.done);
    throw;
  }
  written_ = std::move(t.steps[0].ops);
  written_once_ = true;
  s.done.clear();
  std::lock_guard<HotMutex> lock(mutex_);
  spare_.swap(s.done);
}

}  // namespace commprof::nccl_profiler
