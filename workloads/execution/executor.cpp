// SPDX-License-Identifier: MIT
#include "workloads/execution/executor.hpp"

#include <algorithm>
#include <csignal>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "src/backend/annotation.hpp"
#include "src/backend/backend.hpp"
#include "src/collective/collective_spec.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/name_table.hpp"
#include "src/runtime/mpi_check.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/runtime/stop_signals.hpp"

namespace commprof {

OpTimingMode resolve_op_timing(OpTimingMode requested, Backend& backend, const RankContext& ctx) {
  if (!needs_activity(requested)) return requested;  // nothing of the backend to agree on
  const bool missing = backend.activity() == nullptr;
  const OpTimingChoice choice = choose_op_timing(requested, !ctx.any(missing));
  if (choice.refused) {
    ctx.agree(!missing,
              log::cat("--op-timing ", op_timing_name(requested), " is unavailable on ",
                       log::identity(), ": ", backend.unavailable_reason(Capability::kActivity)));
  }
  if (choice.fell_back && ctx.rank() == 0) {
    log::warn(log::cat("op timing: activity records unavailable (",
                       missing ? backend.unavailable_reason(Capability::kActivity)
                               : std::string("on another rank"),
                       "); timing each op with a pair of stamps instead (--op-timing pair)"));
  }
  return choice.mode;
}

/// One set of buffers per kind of op, each as large as the largest op of that kind. Ops of one
/// stream run in order, so they can share; ops of different streams never share a buffer.
struct PlanExecutor::Buffers {
  // What each buffer holds (elements, or bytes for those made by size), so that a plan that
  // needs no more reuses it.
  std::map<const Buffer*, std::uint64_t> held;
  Buffer gemm_a, gemm_b, gemm_c;  // COMP
  Buffer pass_src, pass_dst;      // COMP, memory-bound passes
  Buffer coll_send, coll_recv;    // COMM
  Buffer p2p_send, p2p_recv;      // COMM
  Buffer copy_src, copy_dst;      // MEM, device side
  Buffer host_pinned;             // MEM, host side of H2D and D2H
  Buffer attn_qkv, attn_o, attn_do, attn_dq, attn_dk, attn_dv, attn_stats;  // COMP, attention
};

namespace {

// What each buffer holds, with the statistics of training (the speed of the arithmetic depends
// on the values: docs/workloads.md): activations of unit scale, weights as initialised (0.02, as
// GPT-2 and Megatron do), gradients small. GEMM results are sums of k products of an activation
// and a weight, of standard deviation 0.02·sqrt(k) (under 2 for k ≤ 8192): finite in every type.
constexpr double kActivationScale = 1.0;
constexpr double kWeightScale = 0.02;
constexpr double kGradientScale = 1e-3;

}  // namespace

PlanExecutor::PlanExecutor(Backend& backend, RankContext& ctx, OpPlan first, StepPlans plan_of,
                           GroupComms comms, OpTimingMode timing, int sample_every)
    : PlanExecutor(backend, ctx, first, comms, timing, sample_every) {
  owned_ = std::move(first);
  plan_of_ = std::move(plan_of);
  plan_ = &owned_;
}

PlanExecutor::PlanExecutor(Backend& backend, RankContext& ctx, const OpPlan& plan, GroupComms comms,
                           OpTimingMode timing, int sample_every)
    : backend_(backend),
      ctx_(ctx),
      plan_(&plan),
      comms_(comms),
      timing_(timing),
      sample_every_(sample_every),
      step_timing_(timing),
      buffers_(std::make_unique<Buffers>()) {
  if (timing == OpTimingMode::kAuto)
    throw Error("PlanExecutor needs a resolved op timing, not auto");
  if (needs_activity(timing) && backend.activity() == nullptr) {
    throw ConfigError(std::string("--op-timing ") + op_timing_name(timing) +
                      " is unavailable: " + backend.unavailable_reason(Capability::kActivity));
  }
  if (sample_every < 1) throw ConfigError("--sample-every must be at least 1");
  fit(plan);
}

void PlanExecutor::fit(const OpPlan& plan) {
  const std::size_t elem = dtype_size(plan.dtype);
  std::uint64_t a = 1, b = 1, c = 1, pass_read = 16, pass_write = 16, send = 1, recv = 1, p2p = 1,
                copy = 1, host = 1, attention = 0, attention_kv = 0, attention_qkv = 0,
                attention_rows = 0, p2p_recvs = 1;
  needs_event_.assign(plan.ops.size(), false);
  for (const PlannedOp& op : plan.ops) {
    for (int d : op.deps) needs_event_[static_cast<std::size_t>(d)] = true;
    std::visit(
        [&](const auto& call) {
          using Call = std::decay_t<decltype(call)>;
          if constexpr (std::is_same_v<Call, PlannedGemm>) {
            const auto m = static_cast<std::uint64_t>(call.m);
            const auto n = static_cast<std::uint64_t>(call.n);
            const auto k = static_cast<std::uint64_t>(call.k);
            a = std::max(a, m * k);
            b = std::max(b, k * n);
            c = std::max(c, m * n);
          } else if constexpr (std::is_same_v<Call, PlannedElementwise>) {
            pass_read = std::max(pass_read, elementwise_span(call.read_bytes));
            pass_write = std::max(pass_write, elementwise_span(call.write_bytes));
          } else if constexpr (std::is_same_v<Call, PlannedAdamw>) {
            // Four regions read, three written, each at least one group of four elements.
            const std::uint64_t region = std::max<std::uint64_t>(call.parameters(), 4) * elem;
            pass_read = std::max(pass_read, elementwise_span(4 * region));
            pass_write = std::max(pass_write, elementwise_span(3 * region));
          } else if constexpr (std::is_same_v<Call, PlannedCollective>) {
            if (call.splits) {  // alltoallv: what the rank's splits send and receive
              std::uint64_t in = 0, out = 0;
              for (std::size_t n : call.splits->send_counts) out += n;
              for (std::size_t n : call.splits->recv_counts) in += n;
              send = std::max(send, out);
              recv = std::max(recv, in);
            } else {
              const CollectiveSizes sz = collective_spec(call.kind).sizes_for_count(
                  call.count, plan.dtype, comm_of(call.group)->size());
              send = std::max(send, sz.send_count);
              recv = std::max(recv, sz.recv_count);
            }
          } else if constexpr (std::is_same_v<Call, PlannedP2P>) {
            p2p = std::max(p2p, call.count);
            p2p_recvs = std::max<std::uint64_t>(p2p_recvs, used(call.recvs));
          } else if constexpr (std::is_same_v<Call, PlannedCompute>) {
            // registers only
          } else if constexpr (std::is_same_v<Call, PlannedAttention>) {
            attention = std::max(attention, call.elements());
            attention_kv = std::max(attention_kv, call.kv_elements());
            attention_qkv = std::max(attention_qkv, call.qkv_elements());
            attention_rows = std::max(
                attention_rows, static_cast<std::uint64_t>(call.batch) * call.heads * call.seq);
          } else {
            static_assert(std::is_same_v<Call, PlannedCopy>, "every planned call has buffers");
            copy = std::max(copy, op.bytes);
            if (call.kind != CopyKind::kDeviceToDevice) host = std::max(host, op.bytes);
          }
        },
        op.call);
  }
  Buffers& B = *buffers_;
  // A buffer is (re)made only where this plan needs more than it holds; each has its own number,
  // so its values are the same whenever it is made.
  auto device = [&](Buffer& buf, std::uint64_t elems, std::uint64_t number, double scale) {
    std::uint64_t& held = B.held[&buf];
    if (elems <= held) return;
    buf = backend_.allocate(elems * elem, MemorySpace::kDevice);
    held = elems;
    if (scale > 0) {
      backend_.fill(buf.data(), plan.dtype, elems, normal_fill(ctx_.rank(), number, scale));
    }
  };
  auto sized = [&](Buffer& buf, std::uint64_t n, MemorySpace space) {
    std::uint64_t& held = B.held[&buf];
    if (n <= held) return;
    buf = backend_.allocate(n, space);
    held = n;
  };
  device(B.gemm_a, a, 1, kActivationScale);
  device(B.gemm_b, b, 2, kWeightScale);
  device(B.gemm_c, c, 3, 0);
  // A pass wraps around buffers smaller than itself (the optimizer streams tens of GB); 256 MiB
  // is larger than any GPU's L2 cache, so every byte of it still comes from memory.
  constexpr std::uint64_t kPassBufferCap = std::uint64_t{256} << 20;
  pass_read = std::min(pass_read, kPassBufferCap);
  pass_write = std::min(pass_write, kPassBufferCap);
  device(B.pass_src, (pass_read + elem - 1) / elem, 4, kActivationScale);
  device(B.pass_dst, (pass_write + elem - 1) / elem, 5, 0);
  device(B.coll_send, send, 6, kGradientScale);
  device(B.coll_recv, recv, 7, 0);
  device(B.p2p_send, p2p, 8, kActivationScale);
  device(B.p2p_recv, p2p * p2p_recvs, 9, 0);  // each receive of a group into its own part
  if (attention > 0) {
    // Q, K and V of one projection side by side; O and dO with activation-like values (the
    // forward's O is overwritten by each forward, which the backward then reads with the
    // statistics that forward wrote: the backward's softmax is that of real scores).
    device(B.attn_qkv, attention_qkv, 10, kActivationScale);
    device(B.attn_o, attention, 11, kActivationScale);
    device(B.attn_do, attention, 12, kGradientScale);
    device(B.attn_dq, attention, 13, 0);
    device(B.attn_dk, attention_kv, 14, 0);
    device(B.attn_dv, attention_kv, 15, 0);
    sized(B.attn_stats, attention_rows * sizeof(float), MemorySpace::kDevice);
  }
  sized(B.copy_src, copy, MemorySpace::kDevice);
  sized(B.copy_dst, copy, MemorySpace::kDevice);
  sized(B.host_pinned, host, MemorySpace::kHostPinned);
}

PlanExecutor::~PlanExecutor() = default;

std::map<std::string, GroupEstimate> PlanExecutor::estimate_collectives(CostModel& model) const {
  std::map<std::string, GroupEstimate> out;
  for (const PlannedOp& op : plan_->ops) {
    const auto* planned = std::get_if<PlannedCollective>(&op.call);
    if (planned == nullptr) continue;
    const Work work = work_of(op);
    GroupEstimate& e = out[group_name(planned->group)];
    e.ranks = comm_of(planned->group)->size();
    ++e.calls;
    if (const std::optional<double> ns = model.estimate_ns(std::get<CollectiveCall>(work))) {
      ++e.estimated;
      e.ns += *ns;
    }
  }
  return out;
}

Communicator* PlanExecutor::comm_of(Group g) const {
  Communicator* c = nullptr;
  switch (g) {
    case Group::kNone:
      break;
    case Group::kTp:
      c = comms_.tp;
      break;
    case Group::kDp:
      c = comms_.dp;
      break;
    case Group::kPp:
      c = comms_.pp;
      break;
    case Group::kEmbedding:
      c = comms_.embedding;
      break;
    case Group::kCp:
      c = comms_.cp;
      break;
    case Group::kEp:
      c = comms_.ep;
      break;
    case Group::kEtp:
      c = comms_.etp;
      break;
    case Group::kEdp:
      c = comms_.edp;
      break;
    case Group::kTpEp:
      c = comms_.tp_ep;
      break;
  }
  if (c == nullptr)
    throw Error(log::cat("op plan uses group ", group_name(g), " but it has no communicator"));
  return c;
}

std::vector<StepRecord> PlanExecutor::run(
    int steps, int warmup, const std::function<void(const std::vector<StepRecord>&)>& after_step) {
  std::vector<StepRecord> out;
  // One NVTX range from the first measured step to the last (or to a stop): nsys can start and
  // stop its capture on it, so warm-up and setup stay out of the report.
  std::optional<MeasuredStepsRange> measured;
  for (int i = 0; i < warmup + steps; ++i) {
    // The step's own plan, built before the ranks meet for it (so its building is in no step).
    if (plan_of_ && i > 0) {
      owned_ = plan_of_(i);
      fit(owned_);
    }
    // One small allreduce per step: a signal seen by any rank stops every rank at the same
    // step boundary, so none is left waiting in the next step's collectives.
    int mine = stop_signal();
    int any = 0;
    COMMPROF_MPI_CHECK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, ctx_.comm()));
    if (any != 0) {
      stopped_by_ = any;
      log::warn(log::cat("signal ", any, " received: stopping after ", out.size(), " of ",
                         warmup + steps, " steps"));
      break;
    }
    if (i == warmup) measured.emplace();
    step_timing_ = timing_of_step(i, warmup);
    if (timing_ == OpTimingMode::kSampled) {
      // Between steps the streams are idle: the device's recording stops or resumes here.
      const bool pause = step_timing_ == OpTimingMode::kStep;
      if (pause != recording_paused_) backend_.activity()->pause(pause);
      recording_paused_ = pause;
    }
    out.push_back(run_step(i, i < warmup));
    if (after_step) after_step(out);
  }
  if (recording_paused_) {
    backend_.activity()->pause(false);
    recording_paused_ = false;
  }
  return out;
}

OpTimingMode PlanExecutor::timing_of_step(int index, int warmup) const {
  if (timing_ != OpTimingMode::kSampled) return timing_;
  // The last warm-up step is timed, so the first timed measured step finds the recording warm.
  const bool timed = index >= warmup ? (index - warmup) % sample_every_ == 0 : index == warmup - 1;
  return timed ? OpTimingMode::kActivity : OpTimingMode::kStep;
}

Work PlanExecutor::work_of(const PlannedOp& op) const {
  const Buffers& B = *buffers_;
  const DType dtype = plan_->dtype;
  return std::visit(
      [&](const auto& call) -> Work {
        using Call = std::decay_t<decltype(call)>;
        if constexpr (std::is_same_v<Call, PlannedGemm>) {
          GemmCall g{call.m,           call.n,          call.k,          dtype,
                     B.gemm_a.data(),  B.gemm_b.data(), B.gemm_c.data(), B.gemm_a.bytes(),
                     B.gemm_b.bytes(), B.gemm_c.bytes()};
          g.trans_a = call.trans_a;
          g.trans_b = call.trans_b;
          return g;
        } else if constexpr (std::is_same_v<Call, PlannedElementwise>) {
          ElementwiseCall e{call.read_bytes,    call.write_bytes,  B.pass_src.data(),
                            B.pass_src.bytes(), B.pass_dst.data(), B.pass_dst.bytes()};
          e.pattern = call.pattern;
          e.pattern_read = call.pattern_read;
          e.pattern_write = call.pattern_write;
          e.row_bytes = call.row_bytes;
          e.dtype = dtype;
          return e;
        } else if constexpr (std::is_same_v<Call, PlannedCollective>) {
          CollectiveCall c;
          c.kind = call.kind;
          c.comm = comm_of(call.group);
          c.send = B.coll_send.data();
          c.recv = B.coll_recv.data();
          c.count = call.count;
          c.dtype = dtype;
          c.splits = call.splits;
          return c;
        } else if constexpr (std::is_same_v<Call, PlannedP2P>) {
          return P2PCall{
              comm_of(call.group), B.p2p_send.data(), B.p2p_recv.data(), call.count, dtype,
              call.sends,          call.recvs};
        } else if constexpr (std::is_same_v<Call, PlannedCompute>) {
          return ComputeCall{call.ns};
        } else if constexpr (std::is_same_v<Call, PlannedAttention>) {
          AttentionCall a = attention_call(call, dtype);
          a.qkv = B.attn_qkv.data();
          a.o = B.attn_o.data();
          a.stats = B.attn_stats.data();
          a.d_o = B.attn_do.data();
          a.dq = B.attn_dq.data();
          a.dk = B.attn_dk.data();
          a.dv = B.attn_dv.data();
          return a;
        } else if constexpr (std::is_same_v<Call, PlannedAdamw>) {
          return AdamwCall{call.tensors,      dtype,
                           B.pass_src.data(), B.pass_src.bytes(),
                           B.pass_dst.data(), B.pass_dst.bytes()};
        } else {
          static_assert(std::is_same_v<Call, PlannedCopy>, "every planned call becomes work");
          CopyCall copy{B.copy_dst.data(), B.copy_src.data(), op.bytes, call.kind};
          if (call.kind == CopyKind::kHostToDevice) copy.src = B.host_pinned.data();
          if (call.kind == CopyKind::kDeviceToHost) copy.dst = B.host_pinned.data();
          return copy;
        }
      },
      op.call);
}

bool PlanExecutor::silenced(const PlannedOp& op, bool warmup) const {
  return !warmup && ctx_.rank() == test_hang_rank_ &&
         (op.is<PlannedCollective>() || op.is<PlannedP2P>());
}

bool PlanExecutor::apply_fault(std::size_t i, bool warmup, Work& work) {
  if (warmup || fault_done_ || ctx_.rank() != test_fault_.rank) return true;
  using Kind = TestFault::Kind;
  if (auto* p2p = std::get_if<P2PCall>(&work); p2p && test_fault_.kind == Kind::kNoRecv) {
    if (used(p2p->recvs) == 0) return true;
    fault_done_ = true;
    p2p->recvs = {};  // the receive is never posted
    return used(p2p->sends) > 0;
  }
  auto* coll = std::get_if<CollectiveCall>(&work);
  if (coll == nullptr || coll->kind != CollectiveKind::kAllReduce) return true;
  // The step's last all-reduce: the ranks issue the same collectives before it, so only it is
  // missing (skip) or different (count), not every one after it.
  for (std::size_t j = i + 1; j < plan_->ops.size(); ++j) {
    const auto* later = std::get_if<PlannedCollective>(&plan_->ops[j].call);
    if (later != nullptr && later->kind == CollectiveKind::kAllReduce) return true;
  }
  if (test_fault_.kind == Kind::kSkipAllReduce) {
    fault_done_ = true;
    return false;
  }
  if (test_fault_.kind == Kind::kCount) {
    fault_done_ = true;
    coll->count = coll->count > 1 ? coll->count / 2 : 2;
  }
  return true;
}

OpRecord PlanExecutor::issued_record(const PlannedOp& op, const Work& work,
                                     std::int64_t seq) const {
  OpRecord r;
  r.name = op.name;
  r.category = op.stream;
  r.stream = category_name(op.stream);
  r.seq = seq;
  r.dtype = dtype_name(plan_->dtype);
  if (const auto* c = std::get_if<CollectiveCall>(&work)) {
    r.collective = collective_name(c->kind);
    r.count = c->count;
    r.bytes = c->count == std::get<PlannedCollective>(op.call).count
                  ? op.bytes
                  : op.bytes /
                        std::max<std::uint64_t>(1, std::get<PlannedCollective>(op.call).count) *
                        c->count;
    r.comm = c->comm->name();
    r.comm_size = c->comm->size();
  } else if (const auto* p = std::get_if<P2PCall>(&work)) {
    const auto& planned = std::get<PlannedP2P>(op.call);
    r.collective = p2p_name(p->sends, p->recvs);
    r.count = p->count;
    r.bytes = op.bytes;
    r.comm = p->comm->name();
    r.comm_size = p->comm->size();
    if (planned.world) {
      for (const P2PTransfer& t : p->sends)
        if (t.peer >= 0) r.send_to.push_back(planned.world->at(static_cast<std::size_t>(t.peer)));
      for (const P2PTransfer& t : p->recvs)
        if (t.peer >= 0) r.recv_from.push_back(planned.world->at(static_cast<std::size_t>(t.peer)));
    }
  }
  return r;
}

void PlanExecutor::start_together(int index, bool warmup) {
  // The test hook's rank stops (SIGSTOP) before its first measured step, as a rank stopped
  // between steps would; the launcher's SIGKILL after the others' MPI_Abort still ends it.
  if (!warmup && test_fault_.kind == TestFault::Kind::kStopBetweenSteps &&
      ctx_.rank() == test_fault_.rank) {
    std::raise(SIGSTOP);
  }
  std::vector<int> arrived;
  if (ctx_.barrier_within(step_timeout_s_, arrived)) return;
  std::string who;
  if (ctx_.rank() == 0 && arrived.empty()) {
    who =
        "; which ranks did not arrive is tracked up to 1,024 ranks only (commprof diagnose "
        "of the rank files names the ranks whose records end early)";
  } else if (ctx_.rank() == 0) {
    std::string missing;
    for (int r = 0, i = 0; r < ctx_.size(); ++r) {
      if (i < static_cast<int>(arrived.size()) && arrived[static_cast<std::size_t>(i)] == r) {
        ++i;
      } else {
        missing += log::cat(missing.empty() ? "" : ",", r);
      }
    }
    who = log::cat("; rank(s) ", missing, " did not arrive");
  } else {
    who = "; MPI does not tell this rank which ranks arrived (rank 0's line names them)";
  }
  throw TimeoutError(log::cat("step ", index, " did not start within --timeout ", step_timeout_s_,
                              " s on ", log::identity(), who,
                              " (a rank may have stopped between steps)"));
}

StepRecord PlanExecutor::run_step(int index, bool warmup) {
  start_together(index, warmup);  // steps start together: cross-rank waits are the step's own
  backend_.begin_epoch();
  step_index_ = index;
  in_flight_.clear();
  step_failed_ = true;  // until the step's work has finished
  ScopedAnnotation step_range(log::cat("step ", index, warmup ? " (warm-up)" : ""), 0);
  const std::int64_t origin = backend_.epoch_origin_host_ns();

  IssuedStep issued = issue_step(warmup);
  StampId tails[3];
  for (Category c : kAllCategories) tails[index_of(c)] = backend_.stamp(c);
  backend_.synchronize();
  step_failed_ = false;  // the step's work finished: none of its communication is left over

  StepRecord step;
  step.index = index;
  step.warmup = warmup;
  step.start_ns = origin;
  step.end_ns = origin;
  for (StampId t : tails) step.end_ns = std::max(step.end_ns, origin + backend_.stamp_ns(t));
  if (step_timing_ == OpTimingMode::kStep) return step;
  record_ops(issued, origin, warmup, step);
  return step;
}

PlanExecutor::IssuedStep PlanExecutor::issue_step(bool warmup) {
  const std::size_t n = plan_->ops.size();
  IssuedStep out{std::vector<StampId>(n, 0), std::vector<StampId>(n, 0),
                 std::vector<std::int64_t>(n, -1), std::vector<std::uint64_t>(n, 0),
                 std::vector<std::int32_t>(n, -1)};
  std::vector<EventId> events(n, 0);
  const bool per_op_stamps =
      step_timing_ == OpTimingMode::kPair || step_timing_ == OpTimingMode::kShared;
  // Per stream: the stamp that ended its last op, and whether a wait came after it.
  StampId last_end[3] = {0, 0, 0};
  bool fresh[3] = {true, true, true};

  for (const PlannedOp& op : plan_->ops) {
    const std::size_t i = static_cast<std::size_t>(op.id);
    const std::size_t s = index_of(op.stream);
    for (int d : op.deps) {
      backend_.wait_event(op.stream, events[static_cast<std::size_t>(d)]);
      fresh[s] = true;
    }
    if (op.host_gap_ns > 0) {  // before the op's start stamp: the gap is not the op's time
      backend_.idle_for(op.stream, op.host_gap_ns);
      fresh[s] = true;
    }
    if (step_timing_ == OpTimingMode::kPair ||
        (step_timing_ == OpTimingMode::kShared && fresh[s])) {
      out.starts[i] = backend_.stamp(op.stream);
    } else if (step_timing_ == OpTimingMode::kShared) {
      out.starts[i] = last_end[s];
    }
    OpLabel label{op.name, op.bytes, op.flops, -1};
    if (step_timing_ == OpTimingMode::kActivity)
      label.activity_tag = out.tags[i] = next_activity_tag_++;
    if (!silenced(op, warmup)) {  // the test hook's silent peer submits no communication
      Work work = work_of(op);
      if (apply_fault(i, warmup, work)) {
        if (const auto* coll = std::get_if<CollectiveCall>(&work)) {
          label.seq = out.seqs[i] = static_cast<std::int64_t>(coll->comm->next_sequence());
        }
        if (std::holds_alternative<CollectiveCall>(work) || std::holds_alternative<P2PCall>(work)) {
          out.issued_at[i] = static_cast<std::int32_t>(in_flight_.size());
          in_flight_.push_back(issued_record(op, work, label.seq));
        }
        backend_.submit(op.stream, work, label);
      } else {
        out.issued_at[i] = IssuedStep::kDropped;
      }
    }
    if (per_op_stamps) {
      out.ends[i] = last_end[s] = backend_.stamp(op.stream);
      fresh[s] = false;
    }
    if (needs_event_[i]) events[i] = backend_.record_event(op.stream);
    if (op.host_waits) backend_.wait_for(op.stream);
  }
  return out;
}

void PlanExecutor::record_ops(const IssuedStep& issued, std::int64_t origin, bool warmup,
                              StepRecord& step) {
  step.ops.reserve(plan_->ops.size());
  // Where each planned op landed among the step's records (-1: not recorded), for "after".
  std::vector<std::int32_t> recorded(plan_->ops.size(), -1);
  for (const PlannedOp& op : plan_->ops) {
    const std::size_t i = static_cast<std::size_t>(op.id);
    if (issued.issued_at[i] == IssuedStep::kDropped) continue;  // a test fault: never submitted
    OpRecord r;
    // The events issue_step waited on: what the step graph and the critical path follow.
    for (const int d : op.deps) {
      const std::int32_t at = recorded[static_cast<std::size_t>(d)];
      if (at >= 0) r.after.push_back(at);
    }
    r.name = op.name;
    r.category = op.stream;
    r.stream = category_name(op.stream);
    r.bytes = op.bytes;
    r.flops = op.flops;
    r.seq = issued.seqs[i];
    if (const auto* c = std::get_if<PlannedCollective>(&op.call)) {
      r.collective = collective_name(c->kind);
      // What an MoE dispatch delivers to this rank's experts (the report's all-to-all balance),
      // and its splits: the bytes to and from each peer.
      if (c->splits) {
        const std::uint64_t elem = dtype_size(plan_->dtype);
        for (const std::size_t n : c->splits->send_counts) r.peer_send_bytes.push_back(n * elem);
        for (const std::size_t n : c->splits->recv_counts) {
          r.peer_recv_bytes.push_back(n * elem);
          r.recv_bytes += n * elem;
        }
      }
    } else if (const auto* p = std::get_if<PlannedP2P>(&op.call)) {
      r.collective = p->name();
      if (p->world) {  // the peers' world ranks: how the step graph pairs sends with receives
        for (const P2PTransfer& t : p->sends) {
          if (t.peer >= 0) r.send_to.push_back(p->world->at(static_cast<std::size_t>(t.peer)));
        }
        for (const P2PTransfer& t : p->recvs) {
          if (t.peer >= 0) r.recv_from.push_back(p->world->at(static_cast<std::size_t>(t.peer)));
        }
      }
    }
    if (issued.issued_at[i] >= 0) {  // what was submitted: its count, type and the peers
      const OpRecord& sent = in_flight_[static_cast<std::size_t>(issued.issued_at[i])];
      r.count = sent.count;
      r.dtype = sent.dtype;
      r.bytes = sent.bytes;
      r.recv_from = sent.recv_from;
    }
    if (!r.collective.empty()) {
      Communicator* comm = comm_of(op.group());
      r.comm = comm->name();
      r.comm_size = comm->size();
      // Which of the peer bytes are this rank's own share: what the report's all-to-all busbw
      // leaves out.
      if (!r.peer_send_bytes.empty()) r.comm_rank = comm->rank();
    }
    if (step_timing_ == OpTimingMode::kActivity) {
      const std::optional<ActivitySpan> span = backend_.activity()->span(issued.tags[i]);
      if (!span) {
        if (silenced(op, warmup)) continue;  // the test hook never submitted it
        throw DeviceError(log::cat("no device activity was recorded for op '", op.name,
                                   "' in step ", step.index, " on ", log::identity()));
      }
      r.start_ns = origin + span->start_ns;
      r.end_ns = origin + span->end_ns;
      // Stamps (the step's end) and activity records are two reads of one clock, a few
      // microseconds apart; the step holds its ops.
      step.end_ns = std::max(step.end_ns, r.end_ns);
    } else {
      r.start_ns = origin + backend_.stamp_ns(issued.starts[i]);
      r.end_ns = origin + backend_.stamp_ns(issued.ends[i]);
    }
    recorded[i] = static_cast<std::int32_t>(step.ops.size());
    step.ops.push_back(std::move(r));
  }
}

}  // namespace commprof
