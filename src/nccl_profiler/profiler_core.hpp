// SPDX-License-Identifier: MIT
// What commprof's NCCL profiler plugin keeps, independent of the plugin ABI's version: every
// collective and point-to-point operation of every communicator of the process, timed by its
// kernel channels (the GPU's own start and stop times), written as the process's rank file.
// The ABI functions (nccl_profiler_plugin.cpp) translate NCCL's calls into these; tests drive
// them directly with event sequences.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
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

/// A collective or point-to-point call as NCCL's Coll or P2p event describes it.
struct OpInfo {
  bool p2p = false;
  std::string func;       ///< "AllReduce", "Send", ...
  std::uint64_t seq = 0;  ///< the collective's sequence number in its communicator
  std::size_t count = 0;
  std::string datatype;  ///< "ncclBfloat16", ...
  int root = -1;
  int peer = -1;
  int channels = 0;  ///< nChannels: kernel channel events to expect
  std::string algo, proto;
  bool graph_captured = false;
};

struct Options {
  std::string out_dir = ".";
  double flush_seconds = 5.0;  ///< how often the rank file is rewritten while the job runs
  RankFileFormat format = RankFileFormat::kJson;
  int global_rank = -1;  ///< from the launcher's environment; -1: the first communicator's
  int world_size = -1;
  /// Host steady-clock and realtime clock readings (ns); tests replace them.
  std::function<std::int64_t()> steady_ns;
  std::function<std::int64_t()> realtime_ns;
  bool flush_thread = true;  ///< tests flush by hand
};

class Process;

/// A communicator's context (init's `context`).
struct Comm {
  Process* process = nullptr;
  CommInfo info;
  bool finalized = false;
};

/// An event handle: a collective or p2p operation, or one of its kernel channels.
struct Event {
  enum class Kind { kOp, kChannel } kind = Kind::kOp;
  Comm* comm = nullptr;
  OpInfo op;
  std::int64_t enqueue_ns = 0;                    ///< host steady clock
  std::int64_t gpu_start_ns = 0, gpu_end_ns = 0;  ///< host steady clock, from the channels
  int channels_started = 0, channels_stopped = 0;
  bool enqueued = false;          ///< NCCL's stopEvent on the op: its host call has returned
  bool done = false;              ///< recorded (or counted); the handle is kept a while, then freed
  Event* parent = nullptr;        ///< a channel's operation
  std::string pair_comm;          ///< point-to-point: "<comm>/<from>><to>", what both ends match on
  std::int64_t start_ptimer = 0;  ///< a channel's GPU start, as the GPU's globaltimer gave it
};

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
  void finalize_comm(Comm* comm);

  Event* start_op(Comm* comm, const OpInfo& op);
  /// NCCL's stopEvent of an operation: enqueued (its end is its channels' last stop).
  void op_enqueued(Event* op);
  /// A kernel channel of `parent` started at `ptimer` (the GPU's globaltimer, ns).
  Event* start_channel(Event* parent, std::uint64_t ptimer);
  void channel_stopped(Event* channel, std::uint64_t ptimer);
  /// NCCL's stopEvent of a channel: the handle is released.
  void release_channel(Event* channel);

  /// Writes the rank file now (atomically) if anything changed since the last write; after a
  /// failed write, the next flush tries again.
  void flush();
  /// The rank file as it would be written now (tests); changes nothing.
  RankTimeline timeline() const;
  std::string path() const;

 private:
  void complete_locked(Event* op);
  RankTimeline timeline_locked() const;
  std::int64_t realtime_minus_steady() const;
  void flush_loop();

  Options options_;
  mutable std::mutex mutex_;
  std::mutex write_mutex_;  // held by flush() around its snapshot and write; taken before mutex_
  std::vector<std::unique_ptr<Comm>> comms_;
  std::vector<std::unique_ptr<Event>> in_flight_;
  static constexpr std::size_t kRetiredHandles = 4096;
  std::deque<std::unique_ptr<Event>> retired_;  // completed operations, newest last
  std::vector<OpRecord> done_;
  std::map<std::string, std::int64_t> p2p_seq_;  // transfers so far per (communicator, from, to)
  std::int64_t without_kernel_records_ = 0;
  std::int64_t clock_fallbacks_ = 0;
  std::int64_t offset_ = 0;          // realtime minus steady clock (ns)
  std::int64_t offset_read_ns_ = 0;  // when it was read (steady clock; 0: never)
  int rank_ = -1;
  int world_ = -1;
  bool dirty_ = false;
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread flusher_;
};

/// The process-wide instance the ABI functions use, created at the first init with options from
/// the environment: COMMPROF_PLUGIN_OUT (default: the working directory),
/// COMMPROF_PLUGIN_FLUSH_S (default 5), COMMPROF_PLUGIN_RANK_FILE_FORMAT (json, the default, or
/// zstd: rank_file.hpp's RankFileFormat), the rank from RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK,
/// PMI_RANK or SLURM_PROCID and the world size from WORLD_SIZE, OMPI_COMM_WORLD_SIZE or
/// SLURM_NTASKS.
Process& process();
Options options_from_environment();

}  // namespace commprof::nccl_profiler
