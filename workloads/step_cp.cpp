// SPDX-License-Identifier: MIT
// StepBuilder: a layer's attention under context parallelism, in TransformerEngine's modes p2p,
// a2a and allgather (docs/workloads.md, "Context parallelism").
#include "workloads/step_builder.hpp"

#include <array>

namespace commprof {

// One layer's attention of one micro-batch: one fused kernel at cp 1; under context
// parallelism the CP mode's kernels with the CP group's communication around them. Returns
// the op the layer's next op waits for.
int StepBuilder::attention_forward(int l, int mb, int after) {
  if (cp_ == 1)
    return attention_op(l, lname(l, "attention", mb) + ".fwd", attention(false), {after});
  switch (c_.cp_mode) {
    case CpMode::kP2p:
      return ring_forward(l, mb, after);
    case CpMode::kA2a:
      return ulysses(l, mb, after, -1, false);
    case CpMode::kAllGather:
      return gathered(l, mb, after, -1, false);
  }
  return after;
}

int StepBuilder::attention_backward(int l, int mb, int dy, int h2d) {
  if (cp_ == 1) {
    return attention_op(l, lname(l, "attention", mb) + ".bwd", attention(true), {dy, h2d});
  }
  switch (c_.cp_mode) {
    case CpMode::kP2p:
      return ring_backward(l, mb, dy, h2d);
    case CpMode::kA2a:
      return ulysses(l, mb, dy, h2d, true);
    case CpMode::kAllGather:
      return gathered(l, mb, dy, h2d, true);
  }
  return dy;
}

// An attention kernel of the CP schedule, or under --compute-from its traced time: the traced
// attention core's share of layer l (the score and context GEMMs' FLOPs within the layer's
// attention, as the trace of one GPU ran them) times this kernel's FLOPs over the whole
// sequence's on one GPU (its heads, its blocks' lengths and masks).
int StepBuilder::attention_op(int l, const std::string& name, const PlannedAttention& call,
                              const std::vector<int>& deps) {
  if (!c_.compute) return plan_.attention(name, call, deps);
  const double whole = layer_attention(c_.shape, 1, call.backward).flops();
  const double ns = attention_ns(l, call.backward) * attn_parts_.core * call.flops() / whole;
  return plan_.compute(name, static_cast<std::uint64_t>(ns), deps);
}

// --compute-from under context parallelism: a layer's attention as its QKV projection, the CP
// schedule's kernels (attention_op) with their communication, and its output projection; the
// projections on the rank's s/cp tokens over TP.
int StepBuilder::attention_calibrated_cp(int l, int mb, int x, int params) {
  const double attn = attention_ns(l, false) / t_ / cp_;
  int y = plan_.compute(lname(l, "qkv", mb) + ".fwd",
                        static_cast<std::uint64_t>(attn * attn_parts_.qkv), {x, params});
  replay_gap(y, ComputePart::kForward, traced_layer_passes());
  y = attention_forward(l, mb, y);
  return plan_.compute(lname(l, "out_proj", mb) + ".fwd",
                       static_cast<std::uint64_t>(attn * attn_parts_.out), {y});
}

// Its backward: the output projection's, the schedule's kernels, the QKV projection's; each
// projection's weight gradient ready after its op. Returns the last op; *first: the first.
int StepBuilder::attention_backward_calibrated_cp(int l, int mb, int dy, int params, int h2d,
                                                  bool last_pass, int* first) {
  const double attn = attention_ns(l, true) / t_ / cp_;
  int y = plan_.compute(lname(l, "out_proj", mb) + ".bwd",
                        static_cast<std::uint64_t>(attn * attn_parts_.out), {dy, params, h2d});
  *first = y;
  if (last_pass) grad_ready(log::cat("l", l, ".out_proj"), y);
  y = attention_backward(l, mb, y, h2d);
  y = plan_.compute(lname(l, "qkv", mb) + ".bwd",
                    static_cast<std::uint64_t>(attn * attn_parts_.qkv), {y});
  if (last_pass) grad_ready(log::cat("l", l, ".qkv"), y);
  return y;
}

// The kernel of one CP block: the layer's heads on this TP rank, the block's lengths.
PlannedAttention StepBuilder::block(const CpBlock& b, bool backward) const {
  PlannedAttention a = attention(backward);
  a.seq = b.q_seq;
  a.kv_seq = b.kv_seq;
  a.causal = b.causal;
  return a;
}

// One ring step's transfer on the CP group: send to the next CP rank, receive from the
// previous (TE's flash_attn_p2p_communicate); K and V (or dK and dV) of the rank's tokens in
// one buffer.
int StepBuilder::ring_transfer(const std::string& name, bool gradient,
                               const std::vector<int>& deps) {
  const int next = (place_.cp_rank + 1) % cp_, prev = (place_.cp_rank + cp_ - 1) % cp_;
  const std::array<P2PTransfer, 2> sends{P2PTransfer{next, !gradient}, P2PTransfer{}};
  const std::array<P2PTransfer, 2> recvs{P2PTransfer{prev, !gradient}, P2PTransfer{}};
  const int id =
      plan_.p2p(name, Group::kCp, sends, recvs, 2 * cp_kv_elements(c_.shape, t_, cp_), deps);
  with_world(id, place_.cp_group);
  return id;
}

// p2p forward: at step i the attention of the K/V held (own at step 0, then received) while
// the ring passes it on: step i+1's transfer is issued before step i's attention, on COMM
// beside it, and step i+1's attention waits for its receive.
int StepBuilder::ring_forward(int l, int mb, int after) {
  const std::vector<CpBlock> steps = cp_ring_steps(c_.shape.seq, cp_, place_.cp_rank);
  int held = -1;  // the receive that brought this step's K/V (none at step 0: the rank's own)
  int y = after;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const int next = i + 1 < steps.size() ? ring_transfer(step_name(l, "cp.kv", mb, false, i + 1),
                                                          false, {after, held})
                                          : -1;
    y = attention_op(l, step_name(l, "attention", mb, false, i), block(steps[i], false), {y, held});
    held = next;
  }
  return y;
}

// p2p backward (TE's AttnFuncWithCPAndKVP2P.backward): the same ring of K/V, and a dK/dV
// accumulator travelling with it: after step i's attention backward the rank adds its part to
// the accumulator received from the previous rank and sends it on; after cp transfers it is
// back at the rank that owns those K/V.
int StepBuilder::ring_backward(int l, int mb, int dy, int h2d) {
  const std::vector<CpBlock> steps = cp_ring_steps(c_.shape.seq, cp_, place_.cp_rank);
  const std::uint64_t dkv_bytes = 2 * cp_kv_elements(c_.shape, t_, cp_) * elem_;
  int held = -1, dkv = -1;
  int y = dy;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const int next = i + 1 < steps.size()
                         ? ring_transfer(step_name(l, "cp.kv", mb, true, i + 1), false, {dy, held})
                         : -1;
    y = attention_op(l, step_name(l, "attention", mb, true, i), block(steps[i], true),
                     {y, held, h2d});
    if (dkv >= 0) {
      y = pass(step_name(l, "cp.dkv_add", mb, true, i), {2 * dkv_bytes, dkv_bytes}, y, dkv);
    }
    dkv = ring_transfer(step_name(l, "cp.dkv", mb, true, i), true, {y});
    held = next;
  }
  return dkv;
}

// a2a (DeepSpeed-Ulysses, TE's AttnFuncWithCPAndQKVOA2A): all-to-alls over CP turn Q, K and V
// from the rank's tokens of every head into every token of its heads / cp; attention runs over
// the whole sequence on those heads; an all-to-all turns the output back. The backward
// mirrors it: dO in, dQ, dK and dV out.
int StepBuilder::ulysses(int l, int mb, int after, int h2d, bool backward) {
  const std::uint64_t q = cp_q_elements(c_.shape, t_, cp_), kv = cp_kv_elements(c_.shape, t_, cp_);
  const std::string dir = backward ? ".bwd" : ".fwd";
  auto a2a = [&](const char* what, std::uint64_t elements, int dep) {
    return plan_.collective(lname(l, what, mb) + dir, CollectiveKind::kAllToAll, Group::kCp,
                            elements / static_cast<std::uint64_t>(cp_), elements * elem_, {dep});
  };
  PlannedAttention a = attention(backward);
  a.heads /= cp_;
  a.kv_heads /= cp_;
  if (!backward) {
    a2a("cp.a2a_q", q, after);
    a2a("cp.a2a_k", kv, after);
    const int in = a2a("cp.a2a_v", kv, after);
    const int y = attention_op(l, lname(l, "attention", mb) + dir, a, {after, in});
    return a2a("cp.a2a_o", q, y);
  }
  const int in = a2a("cp.a2a_do", q, after);
  const int y = attention_op(l, lname(l, "attention", mb) + dir, a, {after, in, h2d});
  a2a("cp.a2a_dq", q, y);
  a2a("cp.a2a_dk", kv, y);
  return a2a("cp.a2a_dv", kv, y);
}

// allgather (TE's AttnFuncWithCPAndKVAllGather, Megatron's cp_comm_type "all_gather"): K and V
// all-gathered over CP, then one kernel per local Q chunk over the keys up to it. The backward
// gathers K and V again (TE saves only the rank's own) and reduce-scatters dK and dV.
int StepBuilder::gathered(int l, int mb, int after, int h2d, bool backward) {
  const std::uint64_t kv = cp_kv_elements(c_.shape, t_, cp_);
  const std::uint64_t bytes = kv * static_cast<std::uint64_t>(cp_) * elem_;
  const std::string dir = backward ? ".bwd" : ".fwd";
  auto collective = [&](const char* what, CollectiveKind kind, int dep) {
    return plan_.collective(lname(l, what, mb) + dir, kind, Group::kCp, kv, bytes, {dep});
  };
  collective("cp.ag_k", CollectiveKind::kAllGather, after);
  const int in = collective("cp.ag_v", CollectiveKind::kAllGather, after);
  const std::vector<CpBlock> blocks = cp_allgather_blocks(c_.shape.seq, cp_, place_.cp_rank);
  int y = after;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    y = attention_op(l, lname(l, "attention", mb) + dir + log::cat(".chunk", i),
                     block(blocks[i], backward), {y, in, h2d});
  }
  if (!backward) return y;
  collective("cp.rs_dk", CollectiveKind::kReduceScatter, y);
  return collective("cp.rs_dv", CollectiveKind::kReduceScatter, y);
}

}  // namespace commprof
