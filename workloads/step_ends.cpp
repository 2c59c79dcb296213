// SPDX-License-Identifier: MIT
// StepBuilder: the model's ends, the embedding before the first layer and the final norm, LM head
// and loss after the last (docs/workloads.md, "The model's ends").
#include "workloads/step_builder.hpp"

namespace commprof {

// Megatron's VocabParallelEmbedding: each TP rank looks up the tokens of its vocabulary rows,
// zeroes the others' rows, and the ranks' outputs are summed (all-reduce of b·s·h; under
// sequence parallelism reduce-scattered onto the ranks' parts of the sequence).
int StepBuilder::embedding_forward(int mb, int after) {
  int params = -1;
  if (zero()) params = zero_gather("embedding", embedding_params(), "fwd", mb);
  int y = -1;
  if (calibrated_ends()) {
    y = plan_.compute(ename("embedding", mb) + ".fwd",
                      ends_ns(c_.compute->ends.embedding_forward_ns, 1), {after, params});
    replay_gap(y, ComputePart::kEmbeddingForward, c_.compute->micro_batches);
  } else {
    y = pass(ename("embedding", mb) + ".fwd", ends_.embed_fwd, after, params);
    if (t_ > 1) y = pass(ename("embedding.mask", mb) + ".fwd", ends_.embed_mask, y);
  }
  return tp_reduce(ename("embedding", mb), y);
}

// One micro-batch's share of a traced end's time per step, divided by `divide` (the TP degree
// where Megatron splits the work over the vocabulary: the head's GEMMs and the loss's logits;
// each TP rank looks up and sums the gradients of every token's row, so the embedding is not).
std::uint64_t StepBuilder::ends_ns(double per_step, int divide) const {
  return static_cast<std::uint64_t>(per_step / c_.compute->micro_batches / divide);
}

// The final norm, the LM head (column-parallel over the vocabulary: each rank's V/t logits) and
// the cross-entropy. Megatron's VocabParallelCrossEntropy all-reduces over TP the logits' row
// maxima, the target logits and the sums of exponentials, b·s fp32 values each.
int StepBuilder::head_forward(int mb, int x) {
  int params = -1;
  if (zero()) params = zero_gather("head", head_params(), "fwd", mb);
  int y = x;
  if (calibrated_ends()) {  // the final norm's kernels are among the layers' learned time
    y = tp_gather(ename("head", mb), y);
    y = plan_.compute(ename("head", mb) + ".fwd", ends_ns(c_.compute->ends.head_forward_ns, t_),
                      {y, params});
    replay_gap(y, ComputePart::kHeadForward, c_.compute->micro_batches);
  } else {
    y = pass(ename("final_norm", mb) + ".fwd", ends_.final_norm_fwd, y, params);
    y = tp_gather(ename("head", mb), y);
    // As PyTorch's F.linear runs it: logits (V×tokens, column-major) = Wᵀ·x, the weight stored
    // h×V and transposed (TN). The logits' leading dimension is the vocabulary: unpadded (50,257)
    // it is no multiple of 8 and cuBLAS takes far slower kernels, as in PyTorch.
    y = plan_.gemm(ename("head", mb) + ".fwd", PlannedGemm{head_.n, head_.m, head_.k, true, false},
                   {y, params});
    y = pass(ename("loss", mb) + ".fwd", ends_.loss_fwd, y);
  }
  if (t_ > 1) {
    for (const char* what : {"max", "target", "sum_exp"}) {
      y = plan_.collective(log::cat("loss.", what, ".mb", mb, ".ar"), CollectiveKind::kAllReduce,
                           Group::kTp, tokens_, tokens_ * 4, {y});
    }
  }
  return y;
}

// The loss's gradient, the LM head's two GEMMs (the input gradient's TP reduction overlapping
// the weight gradient's, as Megatron's column-parallel layer does), the final norm's gradient.
int StepBuilder::head_backward(int mb, int dy, bool last_pass) {
  int params = -1;
  if (zero()) params = zero_gather("head", head_params(), "bwd", mb);
  if (calibrated_ends()) {  // the loss's and the head's backward kernels as one op
    const int g = plan_.compute(ename("head", mb) + ".bwd",
                                ends_ns(c_.compute->ends.head_backward_ns, t_), {dy, params});
    replay_gap(g, ComputePart::kHeadBackward, c_.compute->micro_batches);
    if (last_pass) head_gradient_done(g);
    return tp_reduce(ename("head.bwd", mb), g);
  }
  dy = pass(ename("loss", mb) + ".bwd", ends_.loss_bwd, dy, params);
  // Autograd's two GEMMs of F.linear, in its layouts: dx (h×tokens) = W·dy (NN, dy's leading
  // dimension the vocabulary) and dW (h×V) = x·dyᵀ (NT).
  const int dgrad = plan_.gemm(ename("head", mb) + ".dgrad",
                               PlannedGemm{head_.k, head_.m, head_.n, false, false}, {dy, params});
  const int reduced = tp_reduce(ename("head.bwd", mb), dgrad);
  int wgrad = plan_.gemm(ename("head", mb) + ".wgrad",
                         PlannedGemm{head_.k, head_.n, head_.m, false, true}, {dgrad});
  if (mb > 0 && ends_.head_grad_accum.read > 0) {
    wgrad = pass(ename("head.grad_accum", mb), ends_.head_grad_accum, wgrad);
  } else if (mb > 0 && tied_across_stages(c_)) {
    wgrad = pass(ename("head.grad_accum", mb), ends_.embed_grad_accum, wgrad);
  }
  if (last_pass) head_gradient_done(wgrad);
  dy = reduced == dgrad ? wgrad : reduced;
  return pass(ename("final_norm", mb) + ".bwd", ends_.final_norm_bwd, dy);
}

// The head's weight gradient complete after the last backward pass: DDP's bucket hook and
// ZeRO's reduce-scatter. With tied embeddings on one stage the head's gradient is part of the
// embedding's, ready once the embedding's backward has added its own: no hook of its own.
void StepBuilder::head_gradient_done(int grad) {
  if (!c_.shape.tie_embeddings || tied_across_stages(c_)) grad_ready("head", grad);
  if (zero()) zero_reduce("head", head_params(), grad);
}

// embedding_dense_backward: the rows of the tokens seen, summed into the rank's gradient of its
// vocabulary rows; after the first micro-batch added to the gradient accumulated so far.
int StepBuilder::embedding_backward(int mb, int dy, bool last_pass) {
  int params = -1;
  if (zero()) params = zero_gather("embedding", embedding_params(), "bwd", mb);
  int g = -1;
  if (calibrated_ends()) {  // the trace's gradient accumulation is in its learned time
    g = plan_.compute(ename("embedding", mb) + ".bwd",
                      ends_ns(c_.compute->ends.embedding_backward_ns, 1), {dy, params});
    replay_gap(g, ComputePart::kEmbeddingBackward, c_.compute->micro_batches);
  } else {
    g = pass(ename("embedding", mb) + ".bwd", ends_.embed_bwd, dy, params);
    if (mb > 0) g = pass(ename("embedding.grad_accum", mb), ends_.embed_grad_accum, g);
  }
  if (last_pass) grad_ready("embedding", g);
  if (zero() && last_pass) zero_reduce("embedding", embedding_params(), g);
  return g;
}

}  // namespace commprof
