// SPDX-License-Identifier: MIT
// The process's bookkeeping: options, communicators, each call counted or recorded (the budget,
// the sampling), its channels' times and the activation mask NCCL reads. What is written of it,
// and when, is profiler_rank_file.cpp's.
#include "src/nccl_profiler/profiler_core.hpp"
#include "src/nccl_profiler/nccl_profiler_abi.hpp"
#include "src/timeline/step_detection.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>

#include <unistd.h>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof::nccl_profiler {
namespace {

std::int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 30) return std::nullopt;
  return static_cast<int>(x);
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

}  // namespace

std::size_t nccl_element_bytes(std::string_view datatype) {
  for (const NcclType& t : kNcclTypes) {
    if (datatype == t.name) return t.bytes;
  }
  return 0;
}

namespace {
// Never dereferenced: only its address is a handle.
Event untimed;
}  // namespace

Event* untimed_call() { return &untimed; }

int in_place_call(const OpInfo& op, int rank) {
  if (op.p2p || (op.send_buff == nullptr && op.recv_buff == nullptr)) return -1;
  if (op.send_buff == op.recv_buff) return 1;
  // Only these two have buffers of different sizes, one within the other when in place.
  const bool gather = op.func == "AllGather";
  if (!gather && op.func != "ReduceScatter") return 0;
  const std::size_t element = nccl_element_bytes(op.datatype);
  if (element == 0 || rank < 0) return -1;
  const auto* whole = static_cast<const char*>(gather ? op.recv_buff : op.send_buff);
  const auto* share = static_cast<const char*>(gather ? op.send_buff : op.recv_buff);
  const auto offset = static_cast<std::uintptr_t>(rank) * op.count * element;
  return whole != nullptr && reinterpret_cast<std::uintptr_t>(share) ==
                                 reinterpret_cast<std::uintptr_t>(whole) + offset
             ? 1
             : 0;
}

int Process::count_locked(Comm* comm, const Comm::Group& g) {
  const auto same = [&g](const Comm::Group& x) {
    return x.p2p == g.p2p && x.graph == g.graph && x.func == g.func && x.datatype == g.datatype &&
           x.algo == g.algo && x.proto == g.proto && x.channels == g.channels &&
           x.count == g.count && x.in_place == g.in_place;
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
  const int in_place = in_place_call(op, comm->info.rank);  // outside the lock: the call's own
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
    g.in_place = in_place;
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
  e->in_place = in_place;
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
                              op->channels, op->count, 0, op->in_place});
    } else {
      kept_bytes_ += kRecordBytes;
      done_.push_back({op->comm, op->p2p, op->send, op->graph, op->func, op->datatype, op->algo,
                       op->proto, op->peer, std::max(op->channels, op->channels_stopped), op->count,
                       op->seq, start, end, op->enqueue_ns, op->in_place});
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

Process& process() {
  static Process instance(options_from_environment());
  return instance;
}

}  // namespace commprof::nccl_profiler
