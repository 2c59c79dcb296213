// SPDX-License-Identifier: MIT
// What a real training step's compute weighs, learned from rank files of a one-GPU trace of it
// (`commprof import-nsys … --step-range`): the forward and backward kernel time per layer and
// micro-batch, and the optimizer's. `commprof run --compute-from DIR` then issues compute of
// those durations where the preset's GEMMs and passes would run, and keeps the collectives real.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "src/timeline/op_record.hpp"

namespace commprof {

struct ComputeProfile {
  std::string source;          ///< where it was learned (the directory)
  int layers = 0;              ///< transformer layers of the traced model (the run's --layers)
  int micro_batches = 0;       ///< forward passes found in a step
  int samples = 0;             ///< steps learned from, over every rank file
  bool split_by_names = true;  ///< false: no backward kernel recognised (forward : backward 1 : 2)
  // Kernel time per step (ns), mean over the samples. forward_ns and backward_ns are the layers';
  // the model's ends, where the trace has them, are apart (ends below).
  double forward_ns = 0;
  double backward_ns = 0;
  double optimizer_ns = 0;
  /// The model's ends per step, told apart by their kernels (see classify_compute): the
  /// embedding's lookup and gradient, the LM head's GEMMs with the loss forward and backward.
  struct Ends {
    double embedding_forward_ns = 0;
    double embedding_backward_ns = 0;
    double head_forward_ns = 0;   ///< the head GEMM and the cross-entropy forward
    double head_backward_ns = 0;  ///< the cross-entropy backward and the head's two GEMMs
    double total() const {
      return embedding_forward_ns + embedding_backward_ns + head_forward_ns + head_backward_ns;
    }
  } ends;
  /// Mean time per step in which no kernel or copy of the trace ran (launch gaps of a host-bound
  /// step, waits on the host).
  double idle_ns = 0;
  /// The traced step's gaps per step, by the part of the compute op that came after each (see
  /// gaps_of): time in which no compute or communication op of the trace ran, so the idle time
  /// and the time the trace's own copies and memsets ran alone. A calibrated run replays each as
  /// idle time before the op of that part (WorkloadConfig::host_gaps). Indexed by
  /// ComputePart; the gap after the step's last op (the host finishing the step and starting the
  /// next) goes to the step's first op, where the next step's wait for it falls.
  std::array<double, 7> gap_ns{};

  bool has_ends() const { return ends.head_forward_ns > 0 || ends.embedding_forward_ns > 0; }
  double gaps_total() const {
    double t = 0;
    for (double g : gap_ns) t += g;
    return t;
  }
  double layer_forward_ns() const { return forward_ns / (layers * micro_batches); }
  double layer_backward_ns() const { return backward_ns / (layers * micro_batches); }
  double kernel_ns() const { return forward_ns + backward_ns + optimizer_ns + ends.total(); }
};

/// How a step's COMP ops divide, by their names (case-insensitive substrings):
/// - optimizer: "adam", "optimizer", "multi_tensor" (PyTorch's fused and foreach optimizers,
///   Apex's and Megatron's multi-tensor kernels);
/// - backward: "bwd", "backward", "bprop", "grad" (flash attention's and cuDNN's backward
///   kernels, PyTorch's norm and activation gradients; commprof's own .bwd, .dgrad, .wgrad);
/// - forward: the other ops in a run of unmarked ops at least half as long (in ops) as the
///   step's longest such run: a forward pass through every layer, with no backward kernel in it.
///   A backward pass holds a recognised kernel every few ops (each layer's norm and attention
///   gradients), so its unmarked runs are short. What is neither is backward (the loss, GEMMs
///   of the weight gradients).
///
/// Then the model's ends, where the names show them (PyTorch's kernels):
/// - loss forward: "softmaxforward", "log_softmax", "nll_loss_forward", "cross_entropy"; the
///   head's forward is the GEMM before the first of them and what runs between, the loss's what
///   runs from there to its backward;
/// - loss backward: "softmaxbackward", "nll_loss_backward", "cross_entropy_backward", then what
///   runs up to and including the head's two GEMMs (input and weight gradients);
/// - embedding forward: a "gather", "index_select", "indexselect" or "embedding" kernel before a
///   forward pass's first GEMM;
/// - embedding backward: "embedding_backward", "embedding_dense", "sum_and_scatter",
///   "krn_partial", "partial_segment", "compute_grad_weight", "radixsort",
///   "elementwise_kernel_with_index" (the sort-and-segment-sum of the rows' gradients).
/// A GEMM is a kernel named "gemm", "nvjet", "cutlass" or "xmma".
enum class ComputePart {
  kForward,
  kBackward,
  kOptimizer,
  kEmbeddingForward,
  kEmbeddingBackward,
  kHeadForward,
  kHeadBackward
};
/// The profile's gap per step before ops of `part`.
inline double gap_of(const ComputeProfile& p, ComputePart part) {
  return p.gap_ns[static_cast<std::size_t>(part)];
}

/// The part of each op of `comp_ops` (COMP ops of one step in start order), as above. Without a
/// backward-marked op, every non-optimizer op is forward and *split_by_names is set false.
std::vector<ComputePart> classify_compute(const std::vector<const OpRecord*>& comp_ops,
                                          int* forward_passes, bool* split_by_names);

/// Learns from the measured steps of `ranks` (warm-up steps left out), each step's COMP ops
/// classified as above. `layers` is the traced model's layer count. Without a recognised
/// backward kernel the forward : backward split is 1 : 2 (twice the forward FLOPs) of the
/// non-optimizer time, over one micro-batch. Throws ConfigError when there is nothing to learn
/// from (no measured step, no COMP op) or `layers` is not positive.
ComputeProfile learn_compute_profile(const std::vector<RankTimeline>& ranks, int layers,
                                     const std::string& source);

/// One line: what was learned, per step and per layer and micro-batch, in ms.
std::string describe(const ComputeProfile& profile);

}  // namespace commprof
