// SPDX-License-Identifier: MIT
// What commprof's NCCL profiler plugin keeps, independent of the plugin ABI's version: every
// collective and point-to-point operation of every communicator of the process, timed by its
// kernel channels (the GPU's own start and stop times), written as the process's rank file.
// The ABI functions (nccl_profiler_plugin.cpp) translate NCCL's calls into these; tests drive
// them directly with event sequences.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof::nccl_profiler {

/// One communicator as NCCL's init describes it.
struct CommInfo {
  std::string name;  ///< ncclConfig_t.commName ("" when unnamed: then "comm-<hash>")
  std::uint64_t hash = 0;
  int nnodes = 1;
  int nranks = 1;
  int rank = 0;  ///< in the communicator
};

/// A collective or point-to-point call as NCCL's Coll or P2p event describes it. The names
/// are read during start_op only (NCCL's own strings, or the caller's).
struct OpInfo {
  bool p2p = false;
  std::string_view func;  ///< "AllReduce", "Send", ...
  /// NCCL's sequence number: NCCL counts each communicator's collectives per function (its
  /// first all-gather and its first broadcast are both #0), so the plugin numbers them itself.
  std::uint64_t seq = 0;
  std::size_t count = 0;
  std::string_view datatype;  ///< "ncclBfloat16", ...
  int root = -1;
  int peer = -1;
  int channels = 0;  ///< nChannels: kernel channel events to expect
  std::string_view algo, proto;
  bool graph_captured = false;
  /// A collective's buffers as the call gave them: whether it runs in place (in_place_call).
  const void* send_buff = nullptr;
  const void* recv_buff = nullptr;
};

/// The bytes of one element of NCCL's type as its events name it ("ncclBfloat16": 2); 0 for a
/// name NCCL 2.27-2.30 does not give.
std::size_t nccl_element_bytes(std::string_view datatype);

/// Whether a collective runs in place, as NCCL defines it (and nccl-tests' in-place loop calls
/// it): one buffer for an all-reduce, broadcast or reduce; an all-gather's send buffer at this
/// rank's share of its receive buffer; a reduce-scatter's receive buffer at this rank's share of
/// its send buffer. 1 in place, 0 out of place, -1 not known (a transfer, no buffers given, or
/// an all-gather or reduce-scatter of a type of unknown size whose buffers differ).
int in_place_call(const OpInfo& op, int rank);

/// Which of NCCL's events the plugin asks for (COMMPROF_PLUGIN_EVENTS).
enum class EventSet {
  kKernels,  ///< calls and their kernel channels: the GPU's times (the default)
  kCalls,    ///< calls only: no GPU times, nothing recorded (what NCCL's delivery costs)
  kNone,     ///< nothing: the plugin loaded and idle (what loading it costs)
};

struct Options {
  std::string out_dir = ".";
  double flush_seconds = 5.0;  ///< how often the rank file is rewritten while the job runs
  RankFileFormat format = RankFileFormat::kJson;
  int global_rank = -1;  ///< from the launcher's environment; -1: the first communicator's
  int world_size = -1;
  EventSet events = EventSet::kKernels;
  /// COMMPROF_PLUGIN_STEP_MARKER, recorded in the file for the reader that cuts it into steps.
  std::string step_marker;
  /// Host steady-clock and realtime clock readings (ns); tests replace them.
  std::function<std::int64_t()> steady_ns;
  std::function<std::int64_t()> realtime_ns;
  bool flush_thread = true;  ///< tests flush by hand
  /// K: the kernel channels of one call in K per communicator are timed (its calls numbered 0,
  /// K, 2K, ...: the same calls on every rank); the others are counted, not timed. 1: every
  /// call (what Options{} gives; the environment's default is kDefaultSamplePeriod).
  std::int64_t sample_period = 1;
  /// What the kept records may take, in bytes (kRecordBytes each, kGroupBytes per counted
  /// group); a timed call whose record would go beyond it is dropped and counted.
  std::int64_t memory_budget_bytes = std::int64_t{64} << 20;
};

/// COMMPROF_PLUGIN_SAMPLE's default: at 1 MiB, timing every call's kernel channels costs NCCL
/// about half its time (46-59% on H200s); one call in 128 brings that under 0.5%, below the 1%
/// a job left profiled may lose, and still times a call every few steps of a training loop.
inline constexpr std::int64_t kDefaultSamplePeriod = 128;

/// What one kept record is charged against the budget: its OpRecord once flushed (448 bytes on
/// x86-64 Linux with libstdc++, and its communicator's name on the heap: names are longer than
/// std::string keeps inline), its compact form until then, and the slack of the vector that
/// holds the records (it grows by doubling): 1 KiB, an upper bound rather than an estimate.
inline constexpr std::int64_t kRecordBytes = 1024;
/// A counted group (calls of one kind that were not timed): its entry and its share of the table.
inline constexpr std::int64_t kGroupBytes = 64;
/// An untimed collective's entry (its number, enqueue time and group), twice: new, then written
/// (and the written list's slack).
inline constexpr std::int64_t kUntimedCallBytes = 64;

/// A collective counted, not timed: where it falls in its communicator's calls and when its call
/// came, the host's steady clock. The steps of a sampled capture are cut from these and the
/// timed calls together (src/timeline/step_detection.hpp): the timed ones alone, one call in K,
/// repeat with a period that need not be the step's.
struct UntimedCall {
  std::int64_t seq = 0;
  std::int64_t enqueue_ns = 0;
  std::uint32_t group = 0;  ///< its index in the communicator's groups
};

class Process;

/// The lock NCCL's threads share in the plugin: a spin lock. Every hold on NCCL's path is a few
/// tens of nanoseconds, less than a system call, let alone the wake-up of a thread that went to
/// sleep on a mutex; a waiter that has spun a while yields its core (a holder may be preempted).
class HotMutex {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed);) {
        if (++spins == 128) {
          std::this_thread::yield();
          spins = 0;
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

/// A communicator's context (init's `context`).
struct Comm {
  Process* process = nullptr;
  CommInfo info;
  std::string name;  ///< as the rank file names it: info.name, or "comm-<hash>"
  bool finalized = false;
  std::int64_t collectives = 0;  ///< started so far: the next collective's sequence number
  std::int64_t calls = 0;        ///< every collective and transfer NCCL reported
  std::int64_t timed = 0;        ///< of those, chosen for timing (sequence number % K == 0)
  std::int64_t dropped = 0;      ///< timed, but their record went beyond the memory budget
  std::int64_t ungrouped = 0;    ///< untimed calls counted beyond the budget: no group kept
  /// Untimed collectives listed since the last flush (UntimedCall), and those counted beyond
  /// the budget without an entry.
  std::vector<UntimedCall> untimed_calls;
  std::int64_t untimed_unlisted = 0;
  /// Calls counted, not recorded (untimed, or dropped): one entry per kind of call, names as
  /// indices into the process's name table.
  struct Group {
    bool p2p = false, graph = false;
    std::uint16_t func = 0, datatype = 0, algo = 0, proto = 0;
    int channels = 0;
    std::uint64_t count = 0;
    std::int64_t calls = 0;
    int in_place = -1;  ///< in_place_call's answer: calls that differ only there are apart
  };
  std::vector<Group> groups;
  std::size_t last_group = 0;  ///< the group matched last: most calls repeat the last one's kind
  /// Transfers so far to (sends) and from (recvs) each peer, by peer rank + 1.
  std::vector<std::int64_t> sends, recvs;
};

/// An operation's handle: a collective or point-to-point call. Handles come from a pool and go
/// back to it 4096 completions after their own, so they stay valid memory for the life of the
/// process (NCCL may name a completed operation as a channel's parent).
struct Event {
  Comm* comm = nullptr;
  // The operation, as NCCL described it; names as indices into the process's name table.
  bool p2p = false;
  bool send = false;  ///< a point-to-point send (else a receive)
  bool graph = false;
  std::uint16_t func = 0, datatype = 0, algo = 0, proto = 0;
  std::uint64_t count = 0;
  int in_place = -1;  ///< in_place_call's answer
  int peer = -1;
  int channels = 0;             ///< NCCL's nChannels
  std::uint64_t nccl_seq = 0;   ///< NCCL's number (per communicator and function)
  std::int64_t seq = 0;         ///< the plugin's: per communicator, or per pair for transfers
  std::int64_t enqueue_ns = 0;  ///< host steady clock
  /// The channels' first start and last stop as the GPU's globaltimer gave them (moved onto the
  /// host's clock once, at completion).
  std::int64_t first_ptimer = 0, last_ptimer = 0;
  int channels_started = 0, channels_stopped = 0;
  bool enqueued = false;  ///< NCCL's stopEvent on the op: its host call has returned
  bool done = false;      ///< recorded (or counted); the handle is kept a while, then reused
  Event* prev = nullptr;  ///< in flight: the neighbours in Process's list; free: next
  Event* next = nullptr;
};

/// A kernel channel's handle, never dereferenced: its operation's address with the low bit set
/// (an Event is aligned to 8), or one fixed odd address for a channel reported after its
/// operation was complete. A channel so costs no allocation and nothing to release.
struct Channel;
inline bool is_channel(const void* handle) {
  return (reinterpret_cast<std::uintptr_t>(handle) & 1u) != 0;
}
/// The handle of every call not timed: its kernel channels get none (NCCL then reports nothing
/// more of them) and its stop needs nothing.
Event* untimed_call();

/// The plugin's ranks run in jobs commprof does not launch, so it cannot measure how far their
/// hosts' clocks are apart as `commprof run` does. Its files put every rank on its host's
/// realtime clock instead (UTC, which NTP or PTP keeps together across hosts, and which the GPU's
/// globaltimer already follows): clock_offset_ns is this host's realtime minus steady clock, less
/// this constant (2023-11-14 22:13:20 UTC), which keeps times within the rank file's domain.
inline constexpr std::int64_t kRealtimeEpochNs = 1'700'000'000'000'000'000;

/// Everything the plugin holds in one process (all communicators write one rank file).
class Process {
 public:
  explicit Process(Options options);
  ~Process();  ///< writes the file a last time
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  Comm* init_comm(const CommInfo& info);
  EventSet events() const { return options_.events; }

  /// Sampled timing that NCCL does not pay for on the calls left untimed. NCCL delivers a call's
  /// kernel channel events (what costs: a proxy operation per channel, the kernel's timestamps
  /// polled) only where the activation mask it read when the call was appended had KernelCh; it
  /// reads the plugin's `*eActivationMask` again at every call's append (NCCL 2.28,
  /// src/plugin/profiler.cc ncclProfilerStartGroupApiEvent loads it atomically; src/enqueue.cc
  /// copies it into each task), and appends a call before it launches it. So the plugin sets
  /// KernelCh only while a call is due (its number on its communicator, or pair, a multiple of
  /// K) and clears it otherwise, writing the mask when it starts a call (launch: after the
  /// group's appends). `mask`: the mask NCCL passed to init (one per process); `base`: what the
  /// plugin asks for besides KernelCh. Inactive for K = 1 or without kernel events.
  void control_mask(int* mask, int base);
  /// v5's GroupApi start: NCCL has just read the mask for a group's appends (the outermost
  /// group, or one call): the calls launched next saw what the plugin last wrote. Until the
  /// first one arrives (v4: never) the mask keeps KernelCh on every call, as before.
  void group_appended();
  void finalize_comm(Comm* comm);

  /// A timed call's handle, or untimed_call() for one only counted.
  Event* start_op(Comm* comm, const OpInfo& op);
  /// NCCL's stopEvent of an operation: enqueued (its end is its channels' last stop).
  void op_enqueued(Event* op);
  /// A kernel channel of `parent` started at `ptimer` (the GPU's globaltimer, ns); null for a
  /// channel of an untimed call.
  Channel* start_channel(Event* parent, std::uint64_t ptimer);
  /// Its KernelChStop state: stopped at `ptimer`. NCCL's stopEvent of a channel needs nothing.
  void channel_stopped(Channel* channel, std::uint64_t ptimer);

  /// Writes the rank file now (atomically) if anything changed since the last write, else only
  /// sets the file's time to now once this process has written it (a live job's heartbeat);
  /// after a failed write, the next flush tries again.
  void flush();
  /// The rank file as it would be written now (tests); changes nothing.
  RankTimeline timeline();
  std::string path() const;

 private:
  /// A completed operation, kept compact until a flush turns it into an OpRecord.
  struct Done {
    const Comm* comm;
    bool p2p, send, graph;
    std::uint16_t func, datatype, algo, proto;
    int peer, channels;
    std::uint64_t count;
    std::int64_t seq, start_ns, end_ns, enqueue_ns;
    int in_place;
  };
  /// What a flush or a query takes from the shared state under the lock; turned into the rank
  /// file outside it.
  struct Snapshot;

  Event* take_event_locked();
  void free_event_locked(Event* e);
  /// The index of `name` in names_, added if new; `hint`: where the same field's last name was.
  std::uint16_t name_locked(std::string_view name, std::uint16_t& hint);
  void complete_locked(Event* op);
  /// Counts a call that is not recorded in its communicator's groups (within the budget): its
  /// group's index, or -1 where no group could be kept.
  int count_locked(Comm* comm, const Comm::Group& g);
  Snapshot snapshot_locked(bool take_done);
  /// The file's timeline: `ops` and, per communicator (in comms_' order), its untimed calls.
  RankTimeline build(Snapshot& s, std::vector<OpRecord>& ops,
                     const std::vector<std::vector<UntimedCall>>& untimed) const;
  OpRecord record(const Done& d, const std::vector<std::string>& names) const;
  std::int64_t realtime_minus_steady() const;
  void flush_loop();

  Options options_;
  mutable HotMutex mutex_;  // the shared state below, held briefly by NCCL's threads
  std::mutex write_mutex_;  // held by flush() and timeline() around written_; before mutex_
  std::vector<std::unique_ptr<Comm>> comms_;
  std::vector<std::unique_ptr<Event[]>> slabs_;  // every event handle ever handed out
  Event* free_ = nullptr;                        // reusable handles, linked by `next`
  Event in_flight_;                              // the list's head: operations not yet complete
  static constexpr std::size_t kRetiredHandles = 4096;
  std::vector<Event*> retired_;  // completed operations, a ring: the oldest is reused next
  std::size_t retired_next_ = 0;
  std::vector<std::string> names_{""};     // functions, types, algorithms, protocols; 0: ""
  std::uint16_t hints_[4] = {0, 0, 0, 0};  // the last function, type, algorithm, protocol
  std::vector<Done> done_;                 // completed since the last flush
  std::vector<Done> spare_;                // done_'s other buffer: the flush gives it back emptied
  std::vector<OpRecord> written_;          // every recorded operation, by start (write_mutex_)
  bool written_once_ = false;  // this process wrote its file (write_mutex_): flush may touch it
  std::vector<std::vector<UntimedCall>> written_untimed_;  // per communicator (write_mutex_)
  std::int64_t without_kernel_records_ = 0;
  std::int64_t clock_fallbacks_ = 0;
  std::int64_t kept_bytes_ = 0;      // charged against options_.memory_budget_bytes
  std::int64_t offset_ = 0;          // realtime minus steady clock (ns)
  std::int64_t offset_read_ns_ = 0;  // when it was read (steady clock; 0: never)
  int rank_ = -1;
  int world_ = -1;
  bool dirty_ = false;
  // The mask control (control_mask): NCCL's mask, what else it asks for, whether the control is
  // on (a GroupApi start was seen), KernelCh as last written and as the launching calls saw it,
  // and how many counters (a communicator's collectives, a pair's transfers once used) are due.
  int* nccl_mask_ = nullptr;
  int mask_base_ = 0;
  bool mask_on_ = false;
  bool kernels_written_ = true;
  bool kernels_seen_ = true;
  std::int64_t due_ = 0;
  void count_due_locked(std::int64_t before, bool counted);
  void write_mask_locked();
  std::mutex stop_mutex_;  // the flush thread's sleep and its end
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread flusher_;
};

/// The process-wide instance the ABI functions use, created at the first init with options from
/// the environment: COMMPROF_PLUGIN_OUT (default: the working directory),
/// COMMPROF_PLUGIN_FLUSH_S (default 5), COMMPROF_PLUGIN_RANK_FILE_FORMAT (json, the default, or
/// zstd: rank_file.hpp's RankFileFormat), the rank from RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK,
/// PMI_RANK or SLURM_PROCID and the world size from WORLD_SIZE, OMPI_COMM_WORLD_SIZE or
/// SLURM_NTASKS, the events to ask NCCL for from COMMPROF_PLUGIN_EVENTS (kernels, the
/// default; calls; none), K from COMMPROF_PLUGIN_SAMPLE (default kDefaultSamplePeriod) and the
/// memory budget from COMMPROF_PLUGIN_MEMORY_MIB (default 64; fractions allowed).
Process& process();
Options options_from_environment();

}  // namespace commprof::nccl_profiler
