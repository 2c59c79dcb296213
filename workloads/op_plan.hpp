// SPDX-License-Identifier: MIT
// An op plan: one rank's step as plain data. Ops in one list; each runs on its category's
// stream in list order, and waits for the ops named in `deps` on other streams (events). The
// executor runs any plan on any backend; `commprof run --dry-run` prints it; tests read it.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "src/collective/collective_kind.hpp"
#include "src/collective/p2p_transfer.hpp"
#include "src/collective/peer_splits.hpp"
#include "src/core/access_pattern.hpp"
#include "src/core/attention_shape.hpp"
#include "src/core/copy_kind.hpp"
#include "src/core/dtype.hpp"
#include "src/core/name_table.hpp"
#include "src/timeline/category.hpp"
#include "workloads/model_shape.hpp"

namespace commprof {

/// The communicator an op runs on, resolved by the executor from the rank's layout
/// (workloads/layout.hpp): kDp is the dense gradients' group (DP × CP); kEmbedding the first and
/// last pipeline stage of one TP and DP place (tied embeddings); kCp the context-parallel ranks;
/// the MoE layers' kEp (the all-to-alls), kEtp (expert TP), kEdp (the experts' gradients) and
/// kTpEp (expert TP × EP: the routing counts' all-gather).
enum class Group : std::uint8_t { kNone, kTp, kDp, kPp, kEmbedding, kCp, kEp, kEtp, kEdp, kTpEp };
/// Every group by its name in plans and reports, kNone ("-") first: the one list of them.
inline constexpr NamedValue<Group> kGroupNames[] = {{Group::kNone, "-"},
                                                    {Group::kTp, "tp"},
                                                    {Group::kDp, "dp"},
                                                    {Group::kPp, "pp"},
                                                    {Group::kEmbedding, "embedding"},
                                                    {Group::kCp, "cp"},
                                                    {Group::kEp, "ep"},
                                                    {Group::kEtp, "etp"},
                                                    {Group::kEdp, "edp"},
                                                    {Group::kTpEp, "tp_ep"}};
const char* group_name(Group g);

/// The planned calls, one per kind of Work the backends run (src/backend/work.hpp, which a plan
/// does not need): the executor turns each into its Work with the step's buffers. Adding a kind
/// means a struct here and its Work; every `std::visit` over PlannedCall (plan printing, buffer
/// sizing, submission, records) then fails to compile until it handles the new kind.
struct PlannedGemm {  ///< C = op(A)·op(B): op(A) m×k, op(B) k×n (GemmCall's layouts)
  int m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
};
struct PlannedCollective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  Group group = Group::kNone;
  std::uint64_t count = 0;  ///< NCCL's count; alltoallv: the elements this rank sends
  /// alltoallv: the rank's per-peer counts (shared: the work keeps them while it runs).
  std::shared_ptr<const PeerSplits> splits;
};
/// Up to two sends and two receives in one group (P2PCall); peers are ranks within the group.
struct PlannedP2P {
  Group group = Group::kNone;
  std::array<P2PTransfer, 2> sends{};
  std::array<P2PTransfer, 2> recvs{};
  std::uint64_t count = 0;  ///< elements per transfer
  /// The group's world ranks in group-rank order (shared by the group's ops): the records'
  /// send_to and recv_from, which the step graph matches transfers by. Null: not recorded.
  std::shared_ptr<const std::vector<int>> world;
  /// "sendrecv", "send" or "recv": how records and NVTX ranges name it.
  const char* name() const { return p2p_name(sends, recvs); }
};
struct PlannedCopy {  ///< PlannedOp::bytes bytes
  CopyKind kind = CopyKind::kDeviceToDevice;
};
struct PlannedElementwise {  ///< a memory-bound pass; PlannedOp::bytes = read + written
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  /// The part moved another way than the stream (ElementwiseCall's fields of the same names).
  AccessPattern pattern = AccessPattern::kStream;
  std::uint64_t pattern_read = 0;
  std::uint64_t pattern_write = 0;
  std::uint64_t row_bytes = 0;
};
struct PlannedCompute {  ///< arithmetic for a set time, learned from a real trace
  std::uint64_t ns = 0;
};
/// A fused AdamW step over parameter tensors (AdamwCall); PlannedOp::bytes = read + written
/// (adamw_bytes).
struct PlannedAdamw {
  std::vector<std::uint64_t> tensors;  ///< element counts, in the optimizer's order
  std::uint64_t parameters() const {
    std::uint64_t n = 0;
    for (std::uint64_t t : tensors) n += t;
    return n;
  }
};
/// Fused scaled-dot-product attention of one layer and micro-batch (AttentionCall): forward, or
/// backward; PlannedOp::flops its matrix FLOPs, PlannedOp::bytes what it reads and writes. heads
/// and kv_heads are the rank's (divided by TP).
struct PlannedAttention : AttentionShape {};
/// One micro-batch's attention of a layer of `shape` on a rank of `tp` TP ranks: its query and
/// key/value heads (TP splits both), causal.
PlannedAttention layer_attention(const ModelShape& shape, int tp, bool backward);
/// " sharing K key/value heads" under grouped-query attention, "" otherwise (dry-run lines).
std::string kv_heads_note(const AttentionShape& a);
using PlannedCall =
    std::variant<PlannedGemm, PlannedCollective, PlannedP2P, PlannedCopy, PlannedElementwise,
                 PlannedCompute, PlannedAdamw, PlannedAttention>;

struct PlannedOp {
  int id = 0;
  std::string name;
  Category stream = Category::kComp;
  PlannedCall call;
  std::uint64_t bytes = 0;  ///< S of the busbw formula (collective); bytes moved otherwise
  double flops = 0.0;
  std::vector<int> deps;  ///< ops on other streams that must finish first
  /// Nanoseconds the op's stream stays idle before the op (Backend::idle_for): a gap of a traced
  /// step (the host launching, or waiting) replayed where it occurred (--compute-from). Not part
  /// of the op's time.
  std::uint64_t host_gap_ns = 0;
  /// The host waits for the op's stream to finish it before issuing the next op
  /// (Backend::wait_for): a framework reading a device value on the host.
  bool host_waits = false;

  template <class Call>
  bool is() const {
    return std::holds_alternative<Call>(call);
  }
  template <class Call>
  const Call& as() const {
    return std::get<Call>(call);
  }
  /// The group of a collective or P2P op; Group::kNone otherwise.
  Group group() const;
};

struct OpPlan {
  DType dtype = DType::kFloat32;
  std::vector<PlannedOp> ops;

  /// Appends `op` with the next id and returns it. Dependencies on the op's own stream are
  /// dropped (streams run in order), and of several on one stream only the latest is kept.
  int add(PlannedOp op, const std::vector<int>& deps);
  int gemm(const std::string& name, int m, int n, int k, const std::vector<int>& deps);
  /// The same with A or B stored transposed (GemmCall::trans_a, trans_b).
  int gemm(const std::string& name, PlannedGemm shape, const std::vector<int>& deps);
  int collective(const std::string& name, CollectiveKind kind, Group group, std::uint64_t count,
                 std::uint64_t bytes, const std::vector<int>& deps);
  int p2p(const std::string& name, Group group, const std::array<P2PTransfer, 2>& sends,
          const std::array<P2PTransfer, 2>& recvs, std::uint64_t count,
          const std::vector<int>& deps);
  int copy(const std::string& name, CopyKind kind, std::uint64_t bytes,
           const std::vector<int>& deps);
  /// A memory-bound op on the COMP stream that reads `bytes.read` and writes `bytes.write`, the
  /// pattern's part as it says.
  int elementwise(const std::string& name, const PassBytes& bytes, const std::vector<int>& deps);

  /// A fused AdamW step on the COMP stream over `tensors` (element counts) of the plan's dtype.
  int adamw(const std::string& name, std::vector<std::uint64_t> tensors,
            const std::vector<int>& deps);

  /// Fused attention on the COMP stream (AttentionCall of the plan's dtype).
  int attention(const std::string& name, const PlannedAttention& call,
                const std::vector<int>& deps);

  /// Compute on the COMP stream lasting about `ns` nanoseconds (ComputeCall).
  int compute(const std::string& name, std::uint64_t ns, const std::vector<int>& deps);

  /// Ops of one kind, for tests and summaries.
  template <class Call>
  std::vector<const PlannedOp*> of_kind() const {
    std::vector<const PlannedOp*> out;
    for (const PlannedOp& op : ops) {
      if (op.is<Call>()) out.push_back(&op);
    }
    return out;
  }
};

/// The same ops, each also waiting for the one before it: every category serialised, the
/// baseline overlap is measured against (--no-overlap).
OpPlan serialized(const OpPlan& plan);

/// The same plan with every op of the COMP stream doing `factor` times its work (run
/// --slow-rank): a GEMM's rows, a pass's bytes, AdamW's elements, a calibrated op's time, and
/// attention's heads in whole key/value groups (or its batch where it has one group), each
/// rounded, at least 1. Real work on the real device, so the rank is slow as a slower GPU or a
/// throttled one is, and its records carry the FLOPs and bytes it did. `factor` > 0.
OpPlan slowed(const OpPlan& plan, double factor);

/// One line per op: id, stream, name, shape or size, dependencies.
void print_plan(std::ostream& os, const OpPlan& plan);

}  // namespace commprof
