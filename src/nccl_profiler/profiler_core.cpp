// SPDX-License-Identifier: MIT
#include "src/nccl_profiler/profiler_core.hpp"
#include "src/nccl_profiler/nccl_profiler_abi.hpp"
#include "src/timeline/step_detection.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/collective/collective_spec.hpp"
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
std::uint64_t s_bytes(const std::string& func, const std::string& datatype, std::uint64_t count,
                      int nranks) {
  const std::uint64_t bytes = element_bytes(datatype);
  for (const NcclFunc& f : kNcclFuncs) {
    if (func != f.name) continue;
    const CollectiveSizes sizes =
        collective_spec(f.kind).sizes_for_count(count, DType::kFloat32, nranks);
    return std::max(sizes.send_count, sizes.recv_count) * bytes;
  }
  return count * bytes;
}

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 30) return std::nullopt;
  return static_cast<int>(x);
}

// A transfer's communicator as both its ends name it: "<comm>/<from>><to>".
std::string pair_name(const std::string& comm, int from, int to) {
  return comm + "/" + std::to_string(from) + ">" + std::to_string(to);
}

std::string comm_name(const CommInfo& c) {
  if (!c.name.empty()) return c.name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "comm-%016llx", static_cast<unsigned long long>(c.hash));
  return buf;
}

// The counter of transfers with `peer` (NCCL's peers are ranks of the communicator; anything
// below -1 shares -1's counter).
std::int64_t& transfers_with(std::vector<std::int64_t>& counters, int peer) {
  const std::size_t i = static_cast<std::size_t>(std::max(peer, -1) + 1);
  if (i >= counters.size()) counters.resize(i + 1, 0);
  return counters[i];
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
  if (const char* m = std::getenv(kStepMarkerVariable); m != nullptr && *m != '\0') {
    try {
      parse_step_marker(m);
      o.step_marker = m;
    } catch (const Error& e) {
      // As above: the capture goes on, its steps detected instead.
      log::warn(std::string(e.what()) + "; detecting the steps instead");
    }
  }
  if (const char* e = std::getenv("COMMPROF_PLUGIN_EVENTS"); e != nullptr && *e != '\0') {
    const std::string v = e;
    if (v == "calls") {
      o.events = EventSet::kCalls;
    } else if (v == "none") {
      o.events = EventSet::kNone;
    } else if (v != "kernels") {
      log::warn("COMMPROF_PLUGIN_EVENTS: '" + v +
                "' is none of kernels, calls, none; asking for kernels");
    }
  }
  o.sample_period = kDefaultSamplePeriod;
  if (const char* k = std::getenv("COMMPROF_PLUGIN_SAMPLE"); k != nullptr && *k != '\0') {
    const auto v = env_int("COMMPROF_PLUGIN_SAMPLE");
    if (v && *v >= 1) {
      o.sample_period = *v;
    } else {
      log::warn(std::string("COMMPROF_PLUGIN_SAMPLE: '") + k +
                "' is no whole number from 1 up; timing one call in " +
                std::to_string(kDefaultSamplePeriod));
    }
  }
  if (const char* m = std::getenv("COMMPROF_PLUGIN_MEMORY_MIB"); m != nullptr && *m != '\0') {
    char* end = nullptr;
    const double mib = std::strtod(m, &end);
    if (*end == '\0' && mib > 0 && mib <= 1 << 20) {
      o.memory_budget_bytes = static_cast<std::int64_t>(mib * 1024 * 1024);
    } else {
      log::warn(std::string("COMMPROF_PLUGIN_MEMORY_MIB: '") + m +
                "' is no number of MiB above 0; keeping 64 MiB");
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
  in_flight_.prev = in_flight_.next = &in_flight_;
  retired_.reserve(kRetiredHandles);
  if (options_.flush_thread) flusher_ = std::thread([this] { flush_loop(); });
}

Process::~Process() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
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
  std::unique_lock<std::mutex> lock(stop_mutex_);
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
  auto comm = std::make_unique<Comm>();
  comm->process = this;
  comm->info = info;
  comm->name = comm_name(info);
  std::lock_guard<HotMutex> lock(mutex_);
  if (rank_ < 0) rank_ = info.rank;
  if (world_ < 0) world_ = info.nranks;
  ++due_;  // its collective #0
  comms_.push_back(std::move(comm));
  dirty_ = true;
  return comms_.back().get();
}

void Process::finalize_comm(Comm* comm) {
  {
    std::lock_guard<HotMutex> lock(mutex_);
    comm->finalized = true;
    // Its counters are due no more.
    const std::int64_t k = options_.sample_period;
    due_ -= comm->collectives % k == 0 ? 1 : 0;
    for (const auto* counters : {&comm->sends, &comm->recvs}) {
      for (const std::int64_t c : *counters) due_ -= c > 0 && c % k == 0 ? 1 : 0;
    }
    dirty_ = true;
  }
  flush();  // a rank that finalizes early leaves its file whole
}

// The pool: handles in slabs that live as long as the process, handed out from a free list.
Event* Process::take_event_locked() {
  if (free_ == nullptr) {
    constexpr std::size_t kSlab = 256;
    slabs_.push_back(std::make_unique<Event[]>(kSlab));
    Event* slab = slabs_.back().get();
    for (std::size_t i = 0; i < kSlab; ++i) free_event_locked(&slab[i]);
  }
  Event* e = free_;
  free_ = e->next;
  *e = Event{};
  return e;
}

void Process::free_event_locked(Event* e) {
  e->next = free_;
  free_ = e;
}

// NCCL's names (of functions, types, algorithms, protocols) are a few dozen: each is kept once,
// and an event holds its index.
std::uint16_t Process::name_locked(std::string_view name, std::uint16_t& hint) {
  if (names_[hint] == name) return hint;  // the same as this field's last, mostly
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return hint = static_cast<std::uint16_t>(i);
  }
  if (names_.size() > 0xffff) return 0;  // not NCCL's: no more names are kept
  names_.emplace_back(name);
  return hint = static_cast<std::uint16_t>(names_.size() - 1);
}

namespace {
// Never dereferenced: only its address is a handle.
Event untimed;
}  // namespace

Event* untimed_call() { return &untimed; }

int Process::count_locked(Comm* comm, const Comm::Group& g) {
  const auto same = [&g](const Comm::Group& x) {
    return x.p2p == g.p2p && x.graph == g.graph && x.func == g.func && x.datatype == g.datatype &&
           x.algo == g.algo && x.proto == g.proto && x.channels == g.channels && x.count == g.count;
  };
  auto& groups = comm->groups;
  if (comm->last_group < groups.size() && same(groups[comm->last_group])) {
    ++groups[comm->last_group].calls;
    return static_cast<int>(comm->last_group);
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (same(groups[i])) {
      ++groups[i].calls;
      comm->last_group = i;
      return static_cast<int>(i);
    }
  }
  if (kept_bytes_ + kGroupBytes > options_.memory_budget_bytes) {
    ++comm->ungrouped;  // counted in calls; its kind is not kept
    return -1;
  }
  kept_bytes_ += kGroupBytes;
  groups.push_back(g);
  groups.back().calls = 1;
  comm->last_group = groups.size() - 1;
  return static_cast<int>(comm->last_group);
}

Event* Process::start_op(Comm* comm, const OpInfo& op) {
  const std::int64_t now = options_.steady_ns();
  std::lock_guard<HotMutex> lock(mutex_);
  ++comm->calls;
  // Timed: a call whose number on its communicator (or pair, for transfers) is a multiple of K,
  // which every rank gives the same call.
  const bool send = op.p2p && op.func.size() == 4 && (op.func[0] == 'S' || op.func[0] == 's');
  const std::int64_t seq =
      op.p2p ? transfers_with(send ? comm->sends : comm->recvs, op.peer)++ : comm->collectives++;
  // A collective counter is due from its communicator's start; a pair's once it was used (an
  // unused peer's counter would keep KernelCh on for good).
  count_due_locked(seq, !op.p2p || seq > 0);
  // Due, and appended while KernelCh was on (else NCCL reports no channel of it: timing it would
  // leave it unfinished). A CUDA graph's replay keeps the mask of its capture, which no GroupApi
  // start says: under the control its calls are counted only.
  const bool kernels = !mask_on_ || (kernels_seen_ && !op.graph_captured);
  write_mask_locked();
  if (seq % options_.sample_period != 0 || !kernels) {
    Comm::Group g;
    g.p2p = op.p2p;
    g.graph = op.graph_captured;
    g.func = name_locked(op.func, hints_[0]);
    g.datatype = name_locked(op.datatype, hints_[1]);
    g.algo = name_locked(op.algo, hints_[2]);
    g.proto = name_locked(op.proto, hints_[3]);
    g.channels = op.channels;
    g.count = op.count;
    const int group = count_locked(comm, g);
    if (!op.p2p && group >= 0) {
      if (kept_bytes_ + kUntimedCallBytes <= options_.memory_budget_bytes) {
        kept_bytes_ += kUntimedCallBytes;
        comm->untimed_calls.push_back({seq, now, static_cast<std::uint32_t>(group)});
      } else {
        ++comm->untimed_unlisted;
      }
    }
    dirty_ = true;
    return untimed_call();
  }
  ++comm->timed;
  Event* e = take_event_locked();
  e->comm = comm;
  e->p2p = op.p2p;
  e->graph = op.graph_captured;
  e->func = name_locked(op.func, hints_[0]);
  e->datatype = name_locked(op.datatype, hints_[1]);
  e->algo = name_locked(op.algo, hints_[2]);
  e->proto = name_locked(op.proto, hints_[3]);
  e->count = op.count;
  e->peer = op.peer;
  e->channels = op.channels;
  e->nccl_seq = op.seq;
  e->enqueue_ns = now;
  // A transfer is matched across its two ranks as a collective of the pair: the k-th send from
  // s to d on this communicator with the k-th receive at d from s. Every rank starts a
  // communicator's collectives in the same order (NCCL requires it).
  e->send = send;
  e->seq = seq;
  // In flight: the list's tail.
  e->prev = in_flight_.prev;
  e->next = &in_flight_;
  in_flight_.prev->next = e;
  in_flight_.prev = e;
  dirty_ = true;
  if (options_.events == EventSet::kCalls) e->channels = 0;  // none will be reported
  return e;
}

void Process::control_mask(int* mask, int base) {
  std::lock_guard<HotMutex> lock(mutex_);
  if (options_.sample_period <= 1 || options_.events != EventSet::kKernels) return;
  nccl_mask_ = mask;
  mask_base_ = base;
  // A communicator made once calls have run (PyTorch makes groups lazily): its init has just
  // written the whole mask into NCCL's one int; put back what the calls are due.
  if (mask_on_) {
    const int now = mask_base_ | (kernels_written_ ? static_cast<int>(kNcclProfileKernelCh) : 0);
    __atomic_store_n(nccl_mask_, now, __ATOMIC_RELAXED);
  }
}

void Process::group_appended() {
  std::lock_guard<HotMutex> lock(mutex_);
  if (nccl_mask_ == nullptr) return;
  mask_on_ = true;
  kernels_seen_ = kernels_written_;
}

// A counter went from `before` to before + 1; `counted`: `before` was counted while due.
void Process::count_due_locked(std::int64_t before, bool counted) {
  const std::int64_t k = options_.sample_period;
  if (counted && before % k == 0) --due_;
  if ((before + 1) % k == 0) ++due_;
}

void Process::write_mask_locked() {
  if (!mask_on_) return;
  const bool want = due_ > 0;
  if (want == kernels_written_) return;
  kernels_written_ = want;
  const int mask = mask_base_ | (want ? static_cast<int>(kNcclProfileKernelCh) : 0);
  __atomic_store_n(nccl_mask_, mask, __ATOMIC_RELAXED);  // NCCL loads it atomically, relaxed
}

void Process::op_enqueued(Event* op) {
  if (op == untimed_call()) return;
  std::lock_guard<HotMutex> lock(mutex_);
  if (op->done) return;
  op->enqueued = true;
  if (op->channels_stopped >= std::max(op->channels, op->channels_started) &&
      (op->channels == 0 || op->channels_stopped > 0)) {
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

namespace {
// The handle of every channel reported after its operation was complete: odd, as channels' are.
alignas(8) char ignored_channels[2];
Channel* ignored_channel() { return reinterpret_cast<Channel*>(&ignored_channels[1]); }
}  // namespace

Channel* Process::start_channel(Event* parent, std::uint64_t ptimer) {
  if (parent == untimed_call()) return nullptr;  // not wanted: NCCL reports no more of it
  if (parent == nullptr) return ignored_channel();
  const auto start = static_cast<std::int64_t>(ptimer);
  std::lock_guard<HotMutex> lock(mutex_);
  // A channel reported after its operation was complete has nothing to add.
  if (parent->done) return ignored_channel();
  if (parent->channels_started == 0 || start < parent->first_ptimer) parent->first_ptimer = start;
  ++parent->channels_started;
  return reinterpret_cast<Channel*>(reinterpret_cast<std::uintptr_t>(parent) | 1u);
}

void Process::channel_stopped(Channel* channel, std::uint64_t ptimer) {
  if (channel == ignored_channel()) return;
  auto* op =
      reinterpret_cast<Event*>(reinterpret_cast<std::uintptr_t>(channel) & ~std::uintptr_t{1});
  const auto stop = static_cast<std::int64_t>(ptimer);
  std::lock_guard<HotMutex> lock(mutex_);
  // An operation completes only once every channel that started has stopped: one whose channel
  // stops is in flight (the check is for a stop NCCL would report twice).
  if (op->done) return;
  if (op->channels_stopped == 0 || stop > op->last_ptimer) op->last_ptimer = stop;
  ++op->channels_stopped;
  dirty_ = true;
  if (op->enqueued && op->channels_stopped >= std::max(op->channels, op->channels_started)) {
    complete_locked(op);
  }
}

void Process::complete_locked(Event* op) {
  if (op->channels_stopped == 0) {
    ++without_kernel_records_;  // enqueued, but its kernel's channels never reported
  } else {
    const std::int64_t now = options_.steady_ns();
    // The GPU's globaltimer counts ns on the host's realtime clock (the driver keeps them in
    // step): on the steady clock a timer is its value minus the clocks' difference. That is read
    // again once a second (NTP slews the realtime clock by microseconds per second at most), and
    // an operation's channels are moved by one reading.
    if (offset_read_ns_ == 0 || now - offset_read_ns_ > 1'000'000'000) {
      offset_ = realtime_minus_steady();
      offset_read_ns_ = now;
    }
    std::int64_t start = op->first_ptimer - offset_;
    std::int64_t end = op->last_ptimer - offset_;
    // Timers that do not fall between the call and now (a GPU whose globaltimer is not on the
    // host's clock) are replaced by what the host saw: the call and the last stop's arrival.
    if (end < start || start < op->enqueue_ns - 1'000'000'000 || end > now + 1'000'000'000) {
      ++clock_fallbacks_;
      start = op->enqueue_ns;
      end = now;
    }
    if (kept_bytes_ + kRecordBytes > options_.memory_budget_bytes) {
      // Beyond the budget: the record is dropped (counted), the call still counted by its kind.
      ++op->comm->dropped;
      count_locked(op->comm, {op->p2p, op->graph, op->func, op->datatype, op->algo, op->proto,
                              op->channels, op->count, 0});
    } else {
      kept_bytes_ += kRecordBytes;
      done_.push_back({op->comm, op->p2p, op->send, op->graph, op->func, op->datatype, op->algo,
                       op->proto, op->peer, std::max(op->channels, op->channels_stopped), op->count,
                       op->seq, start, end, op->enqueue_ns});
    }
  }
  op->done = true;
  op->prev->next = op->next;
  op->next->prev = op->prev;
  op->prev = op->next = nullptr;
  // The handle stays valid a while: NCCL may still name it as a channel's parent (an operation
  // that reported no channels, then some). The oldest retired handle is reused.
  if (retired_.size() < kRetiredHandles) {
    retired_.push_back(op);
  } else {
    free_event_locked(retired_[retired_next_]);
    retired_[retired_next_] = op;
    retired_next_ = (retired_next_ + 1) % kRetiredHandles;
  }
  dirty_ = true;
}

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

Process& process() {
  static Process instance(options_from_environment());
  return instance;
}

}  // namespace commprof::nccl_profiler
