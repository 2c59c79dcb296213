// SPDX-License-Identifier: MIT
// `commprof diagnose`: for every collective or transfer that did not complete on every rank, one
// class and the ranks it names; for a job that finished but was slow, the straggler of each step.
//
// Every source's facts are joined on one key, (communicator, function, sequence): a collective's
// communicator name and per-communicator sequence number; a point-to-point transfer's
// "<communicator> A->B" (world ranks) and the k-th transfer from A to B in the rank's records
// (a pair's messages arrive in order). Sources say what they know of each key on each rank
// (KeySeen); what a source cannot know is said in the verdict, never guessed.
//
// Sources: commprof rank files, of runs (a failed step leaves its submitted and unfinished
// communication in the configuration's "unfinished" list, with "failed_step") and of the NCCL
// profiler plugin (its "unfinished" list); PyTorch Flight Recorder dumps (each entry of a
// process group's ring: scheduled / started / completed, by the group's sequence number, with
// its sizes and types); NCCL RAS status (`ncclras -f json`: collectives launched per
// communicator, rank and kind, no point-to-point, no sequence: said as notes)
// (docs/analysis.md, "Diagnosis").
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace commprof {

struct RankTimeline;
struct StepView;

namespace diagnosis {

struct Key {
  std::string comm;      ///< communicator; a transfer: "<comm> A->B"
  std::string function;  ///< "allreduce", ...; "p2p" for a transfer
  std::int64_t seq = 0;  ///< per-communicator sequence; a transfer: the k-th from A to B
  bool operator<(const Key& o) const {
    return std::tie(comm, seq, function) < std::tie(o.comm, o.seq, o.function);
  }
  template <class IO>
  friend void transfer(IO& io, Key& k) {
    io(k.comm, k.function, k.seq);
  }
};

/// What a call's arguments were on one rank: ranks must agree on all of them.
struct Args {
  std::string function;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  ///< 0: not known
  std::string dtype;        ///< "": not known
  bool operator<(const Args& o) const {
    return std::tie(function, bytes, count, dtype) <
           std::tie(o.function, o.bytes, o.count, o.dtype);
  }
  bool operator==(const Args& o) const { return !(*this < o) && !(o < *this); }
  template <class IO>
  friend void transfer(IO& io, Args& a) {
    io(a.function, a.bytes, a.count, a.dtype);
  }
};

/// What the sources say of one key: who finished it, who submitted it and had not finished it
/// when they last wrote, and with which arguments.
struct KeyState {
  std::string name;  ///< the op's name (e.g. "dp.bucket1.allreduce"), as first seen
  int step = -1;     ///< the step it belongs to, as first seen
  int comm_size = 0;
  std::set<int> finished, unfinished;
  std::map<Args, std::set<int>> args;  ///< -> the ranks that called it so
  // Straggling: the latest start among the ranks that finished it, who, and the starts' sum.
  std::int64_t latest_start = INT64_MIN;
  int latest_rank = -1;
  double sum_start =
      0;  ///< of the finished ranks' starts (ns; a double: 16,384 of them overflow 64 bits)
  /// Flight Recorder's wall clock (ns since the epoch, 0: none): the latest creation of the call
  /// over the ranks and the earliest completion, with their ranks. No rank creates a collective
  /// after another completed it, so dumps where one did are of different jobs.
  std::int64_t latest_created = 0;
  int latest_created_rank = -1;
  std::int64_t earliest_completed = 0;
  int earliest_completed_rank = -1;
  /// Of the unfinished ranks, those whose source says the GPU started the call (the plugin's
  /// kernel channels began; Flight Recorder's "started") and those whose source says it did
  /// not (no channel began in a capture with kernel records; "scheduled" in a dump with start
  /// times). A rank in neither: its source cannot tell.
  std::set<int> gpu_started, gpu_not_started;
  /// A CUDA graph's replay of a captured call, as some rank's capture says (the plugin's
  /// "graph"): the CPU that did not reach it skipped the graph's launch, not the call.
  bool graph = false;
  template <class IO>
  friend void transfer(IO& io, KeyState& s) {
    io(s.name, s.step, s.comm_size, s.finished, s.unfinished, s.args, s.latest_start, s.latest_rank,
       s.sum_start, s.latest_created, s.latest_created_rank, s.earliest_completed,
       s.earliest_completed_rank, s.gpu_started, s.gpu_not_started, s.graph);
  }
};

/// What the sources say of one rank as a whole.
struct RankFacts {
  std::string host;
  std::string source;      ///< "run", "nccl-profiler", ...
  int last_step = -1;      ///< the last step it recorded whole
  int failed_step = -1;    ///< the step it recorded as failed (its stop record); -1: none
  int planned_steps = -1;  ///< a run's steps with its warm-up, as configured; -1: not known
  std::string error;       ///< what ended that step, where recorded
  std::string last_op;     ///< its last op recorded as finished, with its step
  std::map<std::string, std::int64_t> last_seq;  ///< per communicator: its last finished seq
  std::map<std::string, std::string> last_name;  ///< per communicator: that op's name
  std::set<std::string> comms;                   ///< communicators it is a member of
  /// Per communicator: the collectives it launched (the plugin's count, untimed calls too; the
  /// next one's sequence number), where the source counts them.
  std::map<std::string, std::int64_t> launched;
  /// Per step recorded with per-op timing: busy time of COMP, COMM, MEM (ns) and the longest
  /// op of each; and the step's length.
  struct Step {
    std::int64_t busy[3] = {0, 0, 0};
    std::int64_t longest[3] = {0, 0, 0};
    std::string longest_name[3];
    std::int64_t length = 0;
    bool warmup = false;
    template <class IO>
    friend void transfer(IO& io, Step& s) {
      io(s.busy[0], s.busy[1], s.busy[2], s.longest[0], s.longest[1], s.longest[2],
         s.longest_name[0], s.longest_name[1], s.longest_name[2], s.length, s.warmup);
    }
  };
  std::map<int, Step> steps;
  template <class IO>
  friend void transfer(IO& io, RankFacts& r) {
    io(r.host, r.source, r.last_step, r.failed_step, r.planned_steps, r.error, r.last_op,
       r.last_seq, r.last_name, r.comms, r.launched, r.steps);
  }
};

/// What one process gathered from its share of the inputs; parts merge (mpirun sharing).
struct Part {
  int world_size = 0;
  std::map<Key, KeyState> keys;
  std::map<int, RankFacts> ranks;
  /// The files that could not be read, each with the reason.
  std::vector<std::string> unreadable;
  /// Per (communicator, op name): the arguments its calls had, over every rank and step: a call
  /// that differs from its earlier calls when the other ranks left no record of this one.
  std::map<std::pair<std::string, std::string>, std::map<Args, std::set<int>>> usual;
  /// What a source says beside the keys (RAS's launch counts, what a dump cannot tell).
  std::vector<std::string> source_notes;
  void merge(Part&& other);
  template <class IO>
  friend void transfer(IO& io, Part& p) {
    io(p.world_size, p.keys, p.ranks, p.unreadable, p.usual, p.source_notes);
  }
};

/// Adds one rank file (a run's or a plugin capture's) to `part`.
void add_rank_timeline(const RankTimeline& timeline, Part& part);

/// Adds rank `rank`'s Flight Recorder dump (its pickle or JSON form, as a JSON value) to `part`:
/// each entry a key (communicator "pg<name>:<desc>", the function of its profiling name,
/// collective_seq_id; a point-to-point entry "<communicator> p2p", p2p_seq_id), completed as
/// finished, scheduled or started as unfinished, input sizes and types as its arguments. Throws
/// Error naming `source` where a field it needs is missing or mistyped.
void add_flight_recorder(int rank, const nlohmann::json& dump, const std::string& source,
                         Part& part);

/// Adds NCCL RAS's status (`-f json`) as notes: per communicator and collective kind, the ranks
/// that launched fewer than the most (RAS counts launches only: no sequence, no transfers).
void add_ras_status(const nlohmann::json& status, const std::string& source, Part& part);

/// Where the Flight Recorder dumps cannot be of one job: a rank created a collective more than
/// `tolerance_ns` (the hosts' clocks may differ) after another rank had completed it. The
/// message names the call, both ranks and the gap; empty when none.
std::string different_jobs(const Part& part, std::int64_t tolerance_ns = 5'000'000'000);

/// Ranks as the verdicts name them, ascending: runs of three or more consecutive ranks as
/// "first-last" ("0-516 518-1023"), so 16,384 ranks stay one short line.
std::string rank_ranges(const std::vector<int>& ascending);

/// What the inputs cannot tell, said beside the verdicts: runs whose ranks' records end before
/// their planned steps with no failure recorded (stopped on purpose, or killed: under Open MPI a
/// rank killed outright ends the others before they can record a failure), ranks missing.
std::vector<std::string> notes(const Part& part);

/// One problem: its class, the key, the ranks it names, the verdict line and its evidence.
struct Problem {
  std::string kind;  ///< never_launched, no_record, arguments_differ, launched_not_finished,
                     ///< straggler
  std::string comm, function, name;
  std::int64_t seq = -1;
  int step = -1;
  std::string ranks;    ///< the ranks the verdict names ("2", "0 1 3", "0-516 518-1023")
  std::string waiting;  ///< the ranks left waiting on it, where any
  std::string verdict;
  std::string evidence;
  double cost_ns = 0;  ///< a straggler: the wait it caused the others per step (mean per rank)
};

struct Options {
  /// A step's slowest rank is named when the mean wait it caused the others at its collectives
  /// is at least this share of the step.
  double straggler_share = 0.25;
};

/// The problems in `part`, most basic first: what did not complete (per communicator, the first
/// key that did not), then the stragglers of steps that did.
std::vector<Problem> diagnose(const Part& part, const Options& options = {});

}  // namespace diagnosis
}  // namespace commprof
