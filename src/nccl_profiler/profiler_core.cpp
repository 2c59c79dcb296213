// SPDX-License-Identifier: MIT
#include "src/nccl_profiler/profiler_core.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include <unistd.h>

#include "collectives/collective_spec.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof::nccl_profiler {
namespace {

std::int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The element types NCCL names in its events (ncclDatatypeToString, src/collectives.cc, the same
// from NCCL 2.27 to 2.30) and the bytes of one element. Some are no commprof DType (int8,
// unsigned, fp8), so the sizes are NCCL's own; any other name ("Unknown") has none.
struct NcclType {
  const char* name;
  std::size_t bytes;
};
constexpr NcclType kNcclTypes[] = {{"ncclInt8", 1},       {"ncclInt32", 4},     {"ncclUint32", 4},
                                   {"ncclInt64", 8},      {"ncclUint64", 8},    {"ncclFloat16", 2},
                                   {"ncclFloat32", 4},    {"ncclFloat64", 8},   {"ncclBfloat16", 2},
                                   {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};

std::size_t element_bytes(const std::string& datatype) {
  for (const NcclType& t : kNcclTypes) {
    if (datatype == t.name) return t.bytes;
  }
  return 0;
}

// The collectives NCCL names in its events (ncclFuncToString, as above) that commprof has a spec
// for; Gather and Scatter (NCCL 2.28+) have none.
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
std::uint64_t s_bytes(const OpInfo& op, int nranks) {
  const std::uint64_t bytes = element_bytes(op.datatype);
  for (const NcclFunc& f : kNcclFuncs) {
    if (op.func != f.name) continue;
    const CollectiveSizes sizes =
        collective_spec(f.kind).sizes_for_count(op.count, DType::kFloat32, nranks);
    return std::max(sizes.send_count, sizes.recv_count) * bytes;
  }
  return op.count * bytes;
}

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 30) return std::nullopt;
  return static_cast<int>(x);
}

std::string log_pair(const std::string& comm, int from, int to) {
  return comm + "/" + std::to_string(from) + ">" + std::to_string(to);
}

std::string comm_name(const CommInfo& c) {
  if (!c.name.empty()) return c.name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "comm-%016llx", static_cast<unsigned long long>(c.hash));
  return buf;
}

}  // namespace

Options options_from_environment() {
  Options o;
  if (const char* out = std::getenv("COMMPROF_PLUGIN_OUT"); out != nullptr && *out != '\0')
    o.out_dir = out;
  if (const char* s = std::getenv("COMMPROF_PLUGIN_FLUSH_S"); s != nullptr && *s != '\0') {
    const double v = std::atof(s);
    if (v > 0) o.flush_seconds = v;
  }
  if (const char* f = std::getenv("COMMPROF_PLUGIN_RANK_FILE_FORMAT"); f != nullptr && *f != '\0') {
    try {
      o.format = parse_rank_file_format(f);
    } catch (const Error& e) {
      // Inside NCCL, nothing to refuse to: say so and keep the readable default.
      log::warn(std::string("COMMPROF_PLUGIN_RANK_FILE_FORMAT: ") + e.what() + "; writing json");
    }
  }
  for (const char* v : {"RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const auto r = env_int(v)) {
      o.global_rank = *r;
      break;
    }
  }
  for (const char* v : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"}) {
    if (const auto n = env_int(v)) {
      o.world_size = *n;
      break;
    }
  }
  return o;
}

Process::Process(Options options) : options_(std::move(options)) {
  if (!options_.steady_ns) options_.steady_ns = [] { return clock_ns(CLOCK_MONOTONIC); };
  if (!options_.realtime_ns) options_.realtime_ns = [] { return clock_ns(CLOCK_REALTIME); };
  rank_ = options_.global_rank;
  world_ = options_.world_size;
  if (options_.flush_thread) flusher_ = std::thread([this] { flush_loop(); });
}

Process::~Process() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  try {
    flush();
  } catch (...) {
    // Nothing to report to at exit; the last periodic write stays.
  }
}

void Process::flush_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::chrono::duration<double> period(options_.flush_seconds);
  while (!stopping_) {
    wake_.wait_for(lock, period, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    const auto began = std::chrono::steady_clock::now();
    try {
      flush();
    } catch (...) {
      // A full disk must not take the training job down: the next period tries again.
    }
    // Each write rewrites the whole file, which grows with the job: the wait after it is at
    // least 20 times what it took, so the writer never takes more than 5% of one core.
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
    period = std::max(std::chrono::duration<double>(options_.flush_seconds), 20 * took);
    lock.lock();
  }
}

Comm* Process::init_comm(const CommInfo& info) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto comm = std::make_unique<Comm>();
  comm->process = this;
  comm->info = info;
  if (rank_ < 0) rank_ = info.rank;
  if (world_ < 0) world_ = info.nranks;
  comms_.push_back(std::move(comm));
  dirty_ = true;
  return comms_.back().get();
}

void Process::finalize_comm(Comm* comm) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    comm->finalized = true;
    dirty_ = true;
  }
  flush();  // a rank that finalizes early leaves its file whole
}

Event* Process::start_op(Comm* comm, const OpInfo& op) {
  auto e = std::make_unique<Event>();
  e->kind = Event::Kind::kOp;
  e->comm = comm;
  e->op = op;
  e->enqueue_ns = options_.steady_ns();
  std::lock_guard<std::mutex> lock(mutex_);
  if (op.p2p) {
    // A transfer is matched across its two ranks as a collective of the pair: the k-th send from
    // s to d on this communicator with the k-th receive at d from s.
    const bool send = lower(op.func) == "send";
    const int self = comm->info.rank;
    e->pair_comm = log_pair(comm_name(comm->info), send ? self : op.peer, send ? op.peer : self);
    e->op.seq = static_cast<std::uint64_t>(p2p_seq_[e->pair_comm]++);
  }
  in_flight_.push_back(std::move(e));
  dirty_ = true;
  return in_flight_.back().get();
}

void Process::op_enqueued(Event* op) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (op->done) return;
  op->enqueued = true;
  if (op->channels_stopped >= std::max(op->op.channels, op->channels_started) &&
      (op->op.channels == 0 || op->channels_stopped > 0)) {
    complete_locked(op);
  }
}

std::int64_t Process::realtime_minus_steady() const {
  // Read between two steady readings, keeping the closest of three pairs: a thread preempted
  // between the reads would otherwise shift the offset by the time it was away.
  std::int64_t best_gap = 0, offset = 0;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t before = options_.steady_ns();
    const std::int64_t real = options_.realtime_ns();
    const std::int64_t after = options_.steady_ns();
    if (i == 0 || after - before < best_gap) {
      best_gap = after - before;
      offset = real - (before + (after - before) / 2);
    }
  }
  return offset;
}

Event* Process::start_channel(Event* parent, std::uint64_t ptimer) {
  auto e = std::make_unique<Event>();
  e->kind = Event::Kind::kChannel;
  e->parent = parent;
  e->start_ptimer = static_cast<std::int64_t>(ptimer);
  std::lock_guard<std::mutex> lock(mutex_);
  if (parent != nullptr && parent->done) {
    e->parent = nullptr;  // a channel reported after its operation was complete: nothing to add
  } else if (parent != nullptr) {
    ++parent->channels_started;
  }
  in_flight_.push_back(std::move(e));
  return in_flight_.back().get();
}

void Process::channel_stopped(Event* channel, std::uint64_t ptimer) {
  std::lock_guard<std::mutex> lock(mutex_);
  Event* op = channel->parent;
  if (op == nullptr || op->done) return;
  // The GPU's globaltimer counts ns on the host's realtime clock (the driver keeps them in step):
  // on the steady clock a timer is its value minus the clocks' difference. That is read again
  // once a second (NTP slews the realtime clock by microseconds per second at most), so the
  // channels of one operation all see the same difference.
  if (offset_read_ns_ == 0 || options_.steady_ns() - offset_read_ns_ > 1'000'000'000) {
    offset_ = realtime_minus_steady();
    offset_read_ns_ = options_.steady_ns();
  }
  const std::int64_t offset = offset_;
  std::int64_t start = channel->start_ptimer - offset;
  std::int64_t end = static_cast<std::int64_t>(ptimer) - offset;
  const std::int64_t now = options_.steady_ns();
  // A timer that does not fall between the call and now (a GPU whose globaltimer is not on the
  // host's clock) is replaced by what the host saw: the call and the stop's arrival.
  if (start < op->enqueue_ns - 1'000'000'000 || end > now + 1'000'000'000 || end < start) {
    ++clock_fallbacks_;
    start = op->enqueue_ns;
    end = now;
  }
  if (op->channels_stopped == 0 || start < op->gpu_start_ns) op->gpu_start_ns = start;
  if (op->channels_stopped == 0 || end > op->gpu_end_ns) op->gpu_end_ns = end;
  ++op->channels_stopped;
  dirty_ = true;
  if (op->enqueued && op->channels_stopped >= std::max(op->op.channels, op->channels_started)) {
    complete_locked(op);
  }
}

void Process::release_channel(Event* channel) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                         [&](const std::unique_ptr<Event>& e) { return e.get() == channel; });
  if (it != in_flight_.end()) in_flight_.erase(it);
}

void Process::complete_locked(Event* op) {
  // Channels that are still to be released point at this op: detach them first.
  for (const auto& e : in_flight_) {
    if (e->parent == op) e->parent = nullptr;
  }
  if (op->channels_stopped == 0) {
    ++without_kernel_records_;  // enqueued, but its kernel's channels never reported
  } else {
    OpRecord r;
    const std::string f = lower(op->op.func);
    r.name = f;
    r.category = Category::kComm;
    r.stream = "nccl";
    r.collective = op->op.p2p ? "sendrecv" : f;
    r.comm = op->op.p2p ? op->pair_comm : comm_name(op->comm->info);
    r.comm_size = op->op.p2p ? 2 : op->comm->info.nranks;
    r.seq = static_cast<std::int64_t>(op->op.seq);
    r.bytes = s_bytes(op->op, op->comm->info.nranks);
    r.start_ns = op->gpu_start_ns;
    r.end_ns = op->gpu_end_ns;
    r.dtype = op->op.datatype;
    r.count = op->op.count;
    r.algo = op->op.algo;
    r.proto = op->op.proto;
    r.channels = std::max(op->op.channels, op->channels_stopped);
    r.enqueue_ns = op->enqueue_ns;
    r.graph = op->op.graph_captured;
    done_.push_back(std::move(r));
  }
  // The handle stays valid a while: NCCL may still name it as a channel's parent (an operation
  // that reported no channels, then some). The oldest retired handles go.
  op->done = true;
  auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                         [&](const std::unique_ptr<Event>& e) { return e.get() == op; });
  if (it != in_flight_.end()) {
    retired_.push_back(std::move(*it));
    in_flight_.erase(it);
    if (retired_.size() > kRetiredHandles) retired_.pop_front();
  }
  dirty_ = true;
}

std::string Process::path() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rank_file_path(options_.out_dir, std::max(rank_, 0), options_.format);
}

RankTimeline Process::timeline() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return timeline_locked();
}

RankTimeline Process::timeline_locked() const {
  RankTimeline t;
  // The offset the kernels' times were moved by, so that start + offset is their globaltimer
  // reading less the epoch; read now if no kernel has been seen yet.
  t.clock_offset_ns = (offset_read_ns_ != 0 ? offset_ : realtime_minus_steady()) - kRealtimeEpochNs;
  t.rank = std::max(rank_, 0);
  t.world_size = std::max({world_, t.rank + 1, 1});
  t.backend = "nccl-profiler";
  t.device = "";
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) t.host = host;
  nlohmann::ordered_json comms = nlohmann::ordered_json::array();
  for (const auto& c : comms_) {
    comms.push_back({{"name", comm_name(c->info)},
                     {"hash", c->info.hash},
                     {"nranks", c->info.nranks},
                     {"rank", c->info.rank},
                     {"nnodes", c->info.nnodes},
                     {"finalized", c->finalized}});
  }
  // Operations enqueued that have not finished: at the end of a hung job, what it waits for.
  nlohmann::ordered_json pending = nlohmann::ordered_json::array();
  for (const auto& e : in_flight_) {
    if (e->kind != Event::Kind::kOp) continue;
    pending.push_back({{"comm", e->op.p2p ? e->pair_comm : comm_name(e->comm->info)},
                       {"collective", e->op.p2p ? std::string("sendrecv") : lower(e->op.func)},
                       {"seq", static_cast<std::int64_t>(e->op.seq)},
                       {"enqueue_ns", e->enqueue_ns},
                       {"graph", e->op.graph_captured},
                       {"channels_stopped", e->channels_stopped},
                       {"channels", e->op.channels}});
  }
  t.config = JsonObject(nlohmann::ordered_json{{"command", "nccl-profiler-plugin"},
                                               {"communicators", comms},
                                               {"unfinished", pending},
                                               {"without_kernel_records", without_kernel_records_},
                                               {"clock_fallbacks", clock_fallbacks_}});
  StepRecord step;
  step.index = 0;
  std::vector<OpRecord> ops = done_;
  std::sort(ops.begin(), ops.end(),
            [](const OpRecord& a, const OpRecord& b) { return a.start_ns < b.start_ns; });
  if (!ops.empty()) {
    step.start_ns = ops.front().start_ns;
    step.end_ns = ops.front().end_ns;
    for (const OpRecord& op : ops) step.end_ns = std::max(step.end_ns, op.end_ns);
  }
  step.ops = std::move(ops);
  t.steps.push_back(std::move(step));
  return t;
}

void Process::flush() {
  // One flush at a time (the flusher and a communicator's finalize may both flush): otherwise an
  // older snapshot could be written over a newer one and stay, nothing being dirty any more.
  std::lock_guard<std::mutex> writing(write_mutex_);
  RankTimeline t;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!dirty_) return;
    t = timeline_locked();
    dirty_ = false;  // what changes from here on is written by the next flush
  }
  try {
    std::error_code ec;
    std::filesystem::create_directories(options_.out_dir, ec);  // a failure shows in the write
    write_rank_file(options_.out_dir, t, options_.format);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    dirty_ = true;  // not written: the next flush tries again
    throw;
  }
}

Process& process() {
  static Process instance(options_from_environment());
  return instance;
}

}  // namespace commprof::nccl_profiler
