// SPDX-License-Identifier: MIT
// Runs an op plan on a backend, step after step, and records every op's times.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/backend/backend.hpp"
#include "src/timeline/op_record.hpp"
#include "workloads/op_plan.hpp"
#include "workloads/op_timing.hpp"

namespace commprof {

class Backend;
class Communicator;
class RankContext;

/// Collective. auto becomes sampled where every rank's backend has activity records, else pair
/// (rank 0 says why); activity or sampled where some rank lacks them is an error on every rank;
/// the rest stay as they are.
OpTimingMode resolve_op_timing(OpTimingMode requested, Backend& backend, const RankContext& ctx);

/// The communicators the plan's groups resolve to.
struct GroupComms {
  Communicator* tp = nullptr;
  Communicator* dp = nullptr;
  Communicator* pp = nullptr;
  Communicator* embedding = nullptr;  ///< first and last pipeline stage (tied embeddings)
  /// Made only where the layout uses them (degree above 1); null otherwise.
  Communicator* cp = nullptr;
  Communicator* ep = nullptr;
  Communicator* etp = nullptr;
  Communicator* edp = nullptr;
  Communicator* tp_ep = nullptr;
};

/// What a cost model (Backend::cost_model) says of one group's collectives in a plan's step.
struct GroupEstimate {
  int ranks = 0;               ///< the group's communicator's
  std::int64_t calls = 0;      ///< the plan's collectives on the group
  std::int64_t estimated = 0;  ///< of them, those the model estimated
  double ns = 0.0;             ///< Σ of its estimates, each call on its own
};

/// A fault a test injects on one rank, in its first measured step (`run --test-fault`).
struct TestFault {
  enum class Kind { kNone, kSkipAllReduce, kCount, kNoRecv, kStopBetweenSteps };
  Kind kind = Kind::kNone;
  int rank = -1;
};

/// Builds the plan of step `index` of a run (counted from the first warm-up step).
using StepPlans = std::function<OpPlan(int index)>;

/// Owns the buffers a plan needs (sized to its largest op of each kind) and runs it. Not copyable.
class PlanExecutor {
 public:
  /// Every step runs `plan`. `sample_every`: with kSampled, every how many measured steps one
  /// carries per-op timing.
  PlanExecutor(Backend& backend, RankContext& ctx, const OpPlan& plan, GroupComms comms,
               OpTimingMode timing, int sample_every = 4);
  /// Each step runs a plan of its own (MoE layers route each step anew): `first` is step 0's,
  /// `plan_of` builds each later one between steps, outside any step's time; a buffer grows there
  /// where a step's plan needs more than the steps before.
  PlanExecutor(Backend& backend, RankContext& ctx, OpPlan first, StepPlans plan_of,
               GroupComms comms, OpTimingMode timing, int sample_every = 4);
  ~PlanExecutor();
  PlanExecutor(const PlanExecutor&) = delete;
  PlanExecutor& operator=(const PlanExecutor&) = delete;

  /// Collective over the world: `warmup + steps` steps, each started together (barrier) and
  /// completed before the next. Returns one record per step run. Before each step the ranks
  /// agree whether any of them received SIGTERM or SIGINT; if so all stop there, together, and
  /// stopped_by() says which signal.
  /// `after_step`, if set, sees the steps so far after each one (to save them as they come).
  std::vector<StepRecord> run(
      int steps, int warmup,
      const std::function<void(const std::vector<StepRecord>&)>& after_step = {});
  int stopped_by() const { return stopped_by_; }

  /// The cost model's estimate of each collective of the last step's plan, one call at a time,
  /// by group name ("dp", "tp", …). Collective on each group, as the model may need: every rank
  /// asks for its plan's collectives in plan order, as it issued them. Call after run().
  std::map<std::string, GroupEstimate> estimate_collectives(CostModel& model) const;

  /// Test hook: this rank stops taking part in collectives and send/recv from the first
  /// measured step on, as a hung or dead peer would; the others must time out, not hang.
  void set_test_hang_rank(int rank) { test_hang_rank_ = rank; }
  /// Test hook: one fault on one rank in the first measured step (TestFault), as `commprof
  /// diagnose` must classify it.
  void set_test_fault(TestFault fault) { test_fault_ = fault; }
  /// Bounds the start-of-step barrier (`--timeout`): a rank that does not arrive within it
  /// (stopped between steps) makes run() throw TimeoutError naming the step and, on rank 0,
  /// the ranks missing. 0: unbounded.
  void set_step_timeout(double seconds) { step_timeout_s_ = seconds; }

  /// The communication ops of the step that failed (run() threw): those this rank submitted in
  /// it, none known to have finished, each with its step, communicator, sequence number, size,
  /// count, type and peers (an OpRecord without times). Empty when no step failed.
  /// The step unfinished() belongs to (counted from the first warm-up step).
  int failed_step() const { return step_index_; }
  std::vector<OpRecord> unfinished() const {
    return step_failed_ ? in_flight_ : std::vector<OpRecord>{};
  }

 private:
  struct Buffers;
  /// Sizes the buffers for `plan` (growing those it needs larger) and marks the ops whose
  /// completion another stream waits for.
  void fit(const OpPlan& plan);
  /// What issuing one step left to read once it has run, per op.
  struct IssuedStep {
    std::vector<StampId> starts, ends;  // pair and shared timing
    std::vector<std::int64_t> seqs;     // collectives' sequence numbers
    std::vector<std::uint64_t> tags;    // activity timing
    // Per op: its record in in_flight_ (communication submitted), -1 (other work) or kDropped
    // (a test fault kept it from being submitted: no record).
    std::vector<std::int32_t> issued_at;
    static constexpr std::int32_t kDropped = -2;
  };
  /// The start-of-step barrier, bounded by the step timeout (and the stop hook before it).
  void start_together(int index, bool warmup);
  StepRecord run_step(int index, bool warmup);
  /// How step `index` of a run with `warmup` warm-up steps is timed (sampled: activity or step).
  OpTimingMode timing_of_step(int index, int warmup) const;
  /// Submits every op of the plan with its waits, stamps and events; does not wait.
  IssuedStep issue_step(bool warmup);
  /// Appends the ops' records to `step`, after the step has run.
  void record_ops(const IssuedStep& issued, std::int64_t origin, bool warmup, StepRecord& step);
  /// The backend's work for `op`, on this executor's buffers.
  Work work_of(const PlannedOp& op) const;
  /// Whether the test hook keeps this rank from issuing `op`.
  bool silenced(const PlannedOp& op, bool warmup) const;
  /// The test fault's change to `work` of plan op `i`: false when the rank must not submit it.
  bool apply_fault(std::size_t i, bool warmup, Work& work);
  /// `op`'s record as far as issuing it tells (no times): what unfinished() lists.
  OpRecord issued_record(const PlannedOp& op, const Work& work, std::int64_t seq) const;
  Communicator* comm_of(Group g) const;

  Backend& backend_;
  RankContext& ctx_;
  OpPlan owned_;        // the running step's plan, where each step has its own
  StepPlans plan_of_;   // builds them; empty: every step runs the plan given
  const OpPlan* plan_;  // the running step's
  GroupComms comms_;
  OpTimingMode timing_;
  int sample_every_ = 4;
  OpTimingMode step_timing_;  // the running step's: timing_, or under kSampled activity or step
  bool recording_paused_ = false;
  std::vector<bool> needs_event_;
  int stopped_by_ = 0;
  int test_hang_rank_ = -1;
  double step_timeout_s_ = 0.0;
  TestFault test_fault_;
  bool fault_done_ = false;
  int step_index_ = 0;
  std::vector<OpRecord> in_flight_;  // this step's submitted communication, until it ends
  bool step_failed_ = false;
  std::uint64_t next_activity_tag_ = 1;
  std::unique_ptr<Buffers> buffers_;
};

}  // namespace commprof
