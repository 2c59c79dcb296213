// SPDX-License-Identifier: MIT
// The step graph: one measured step of every rank as a graph of its ops. An op follows the op
// before it on its stream, the ops its stream waited for (the rank file's "after", written by
// commprof's executor), and, for a collective (or a send/receive pair the file matches as one),
// the arrival of every member: a matched collective ends on all its ranks together, no earlier
// than its last arrival; a send and its receive (the files' send_to and recv_from) likewise wait
// for each other. The critical path (critical_path.hpp) and the replay (replay.hpp) walk
// it; `commprof report` and `commprof whatif` build it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph/wait_list.hpp"
#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

/// One op of one rank's step. Times in ns on rank 0's clock (the rank's clock offset applied).
/// The shared critical path's unpacking (critical_path_across.cpp) reuses ops step after step
/// and sets every field: a field added here is set there too.
struct GraphOp {
  int rank = 0;
  int index = 0;  ///< its place among the ops of the rank's step, as the file lists them
  Category category = Category::kComp;
  std::string name, stream, collective, comm;
  int comm_size = 0;
  std::int64_t seq = -1;
  std::uint64_t bytes = 0;  ///< as the rank file records it (OpRecord::bytes)
  double flops = 0.0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  /// Ops of the same rank that must end before this one starts: the op before it on its stream
  /// (first), then the ops its stream waited for.
  WaitList preds;
  int collective_id = -1;  ///< its matched collective in StepGraph::collectives, or -1
  /// A send or receive: the world ranks it sent to and received from (the rank file's send_to
  /// and recv_from), and the ops of other ranks its transfers pair with: the k-th transfer from
  /// rank A to rank B is A's k-th op sending to B and B's k-th op receiving from A. It ends no
  /// earlier than the last of it and its partners arrives (a sender waits for its receiver, a
  /// receiver for its sender; a grouped send and receive for both).
  std::vector<std::int32_t> send_to, recv_from;
  std::vector<int> partners;
};

/// A collective matched across the ranks of one step (CollectiveMatcher): its members start as
/// each rank reaches it and all end together.
struct GraphCollective {
  std::string comm, collective;
  std::int64_t seq = -1;
  int comm_size = 0;
  std::vector<int> members;  ///< ops, one per rank that recorded it
  /// The time it takes once every member has arrived: its shortest member's duration (the
  /// last to arrive barely waits), as the report's collective time.
  std::int64_t time_ns = 0;
};

/// One rank's share of a step: where its step began (rank 0's clock), its ops in the graph.
struct GraphRank {
  int rank = 0;
  std::int64_t start_ns = 0;
  int first_op = 0;  ///< its ops are [first_op, first_op + ops) of StepGraph::ops
  int ops = 0;
};

struct StepGraph {
  int step = 0;
  std::vector<GraphRank> ranks;  ///< by rank
  std::vector<GraphOp> ops;      ///< rank by rank, each rank's ops as its file lists them
  std::vector<GraphCollective> collectives;
  /// Ops that carried recorded waits ("after"). 0 for imports and earlier files: the graph then
  /// holds stream order and matching alone.
  std::int64_t ops_with_waits = 0;
  /// Collectives fewer ranks recorded than their communicator has (their members still end
  /// together).
  std::int64_t incomplete = 0;
  /// Transfers whose other side no rank recorded (a send without its receive, or the reverse).
  std::int64_t unmatched_transfers = 0;
  /// Sends and receives that did not record their peers (imports, earlier files): they order
  /// nothing across ranks.
  std::int64_t transfers_without_peers = 0;
  /// The ops of `rank`'s entry in `ranks`.
  const GraphRank& rank_of(const GraphOp& op) const;
};

/// Pairs the sends of `g` with their receives (GraphOp::partners): per (sender, receiver), the
/// k-th op of the sender that sends to the receiver with the k-th op of the receiver that receives
/// from the sender, each rank's ops in their order in `g`. Counts the sides left without a
/// partner in `unmatched_transfers`. StepGraphBuilder::finish calls it; a graph built otherwise
/// (a projection's plans) calls it once its ops hold their send_to and recv_from.
void match_transfers(StepGraph& g);

/// What each op of one rank's step must wait for, as indices among the step's ops: the op
/// before it on its stream (first), then the ops its stream waited for (the file's "after").
/// Op i's are list[first[i], first[i + 1]). Buffers reused from step to step.
struct RankStepPreds {
  std::vector<int> first;
  std::vector<int> list;
  std::int64_t ops_with_waits = 0;           ///< ops that carried recorded waits
  std::int64_t transfers_without_peers = 0;  ///< as StepGraph counts them
  // The streams' and the sort's, kept for their storage.
  std::vector<std::string_view> streams;
  std::vector<int> order;
};

/// Fills `out` for one rank's step (ops not empty). Throws Error naming the rank, step and op
/// when an "after" index is not another op of the step.
void rank_step_preds(int rank, const StepView& step, RankStepPreds& out);

/// Adds one rank's measured step with its ops (not empty) to `g`, as StepGraphBuilder::add does
/// (which first checks that the rank is not in `g` yet): its ops after those in `g`, each with
/// its stream predecessor and waits. Throws Error naming the rank, step and op when an "after"
/// index is not another op of the step.
void append_rank_step(StepGraph& g, int rank, std::int64_t clock_offset_ns, const StepView& step);

/// Matches the collectives and transfers of `g` once every rank's ops are in (sorting its ranks),
/// as StepGraphBuilder::finish does for each of its graphs.
void complete_step_graph(StepGraph& g);

/// Builds the graphs of the measured steps with per-op timing, rank by rank.
class StepGraphBuilder {
 public:
  /// Adds one step of one rank; warm-up steps and steps without ops are skipped. Throws Error
  /// naming the rank, step and op when an "after" index is not another op of the step.
  void add(int rank, std::int64_t clock_offset_ns, const StepView& step);
  void add(const RankTimeline& timeline);
  /// The graphs, by step index, collectives matched.
  std::vector<StepGraph> finish();

 private:
  std::map<int, StepGraph> steps_;
};

/// Reads rank files one at a time and builds the graph of every measured step with per-op
/// timing. Throws Error naming a file that cannot be read, or, given `skipped`, leaves it out
/// and adds its error there.
std::vector<StepGraph> load_step_graphs(const std::vector<std::string>& files,
                                        std::vector<std::string>* skipped = nullptr);

}  // namespace commprof
