// SPDX-License-Identifier: MIT
// The vocabulary of work a backend runs: plain data, so an op plan can be printed, tested and
// replayed on any backend.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "src/collective/collective_kind.hpp"
#include "src/collective/p2p_transfer.hpp"
#include "src/collective/peer_splits.hpp"
#include "src/core/access_pattern.hpp"
#include "src/core/attention_shape.hpp"
#include "src/core/copy_kind.hpp"
#include "src/core/dtype.hpp"

namespace commprof {

class Communicator;

/// A collective over `comm` with NCCL's argument semantics (see CollectiveSpec for what
/// `count` means per kind). Out-of-place unless send == recv.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  Communicator* comm = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  /// alltoallv: the elements this rank sends, over all peers; allgatherv: this rank's share;
  /// reducescatterv: this rank's block of the result.
  std::size_t count = 0;
  DType dtype = DType::kFloat32;
  int root = 0;  ///< broadcast and reduce
  /// alltoallv, allgatherv, reducescatterv: the per-peer counts. Shared, not borrowed: the host
  /// backend runs the call later on its stream's thread, after the submitter may have moved on.
  std::shared_ptr<const PeerSplits> splits = nullptr;
};

/// Up to two sends and two receives of `count` elements each, as one group (ncclGroupStart/End,
/// or MPI Isend/Irecv + Waitall): how Megatron's pipeline schedules pair their transfers without
/// deadlock. 1F1B sends an activation while it receives a gradient; interleaved 1F1B sends and
/// receives both at once (an activation to the next stage, a gradient to the previous). Every
/// send reads `send`; receive i writes `count` elements at recv + i·count (the buffer holds as
/// many as there are receives). Sends are posted before receives, each in array order, on every
/// rank alike, so NCCL pairs the transfers between two ranks in order.
struct P2PCall {
  Communicator* comm = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DType dtype = DType::kFloat32;
  std::array<P2PTransfer, 2> sends{};
  std::array<P2PTransfer, 2> recvs{};
};

/// A memory-bound pass: reads `read_bytes` from `src` and writes `write_bytes` to `dst`, each in
/// order, with no more arithmetic than moving them needs (the values read are folded into what
/// is written, so no read can be skipped). What an element-wise op, a normalisation or an
/// optimizer step costs on a GPU is the bytes it moves: the planner gives each such op the bytes
/// PyTorch's kernels for it move (docs/workloads.md). Byte counts are rounded up to 16 (the
/// vector width). The buffers may be smaller than the bytes moved (an optimizer step streams
/// every parameter, gradient and moment: tens of GB): the pass then wraps around them, which
/// costs the same memory traffic as long as a buffer is larger than the GPU's L2 cache. Their
/// sizes are multiples of 16.
///
/// Where the real op reaches part of its bytes in a way slower than a stream (AccessPattern),
/// `pattern_read` of the bytes read and `pattern_write` of those written are moved by a kernel
/// of that pattern, over elements of `dtype` (rows of `row_bytes`, as the pattern says); the
/// rest streams as above. The default, kStream with no pattern bytes, is the plain pass.
struct ElementwiseCall {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  const void* src = nullptr;
  std::uint64_t src_bytes = 0;
  void* dst = nullptr;
  std::uint64_t dst_bytes = 0;
  AccessPattern pattern = AccessPattern::kStream;
  std::uint64_t pattern_read = 0;   ///< of read_bytes; at most read_bytes
  std::uint64_t pattern_write = 0;  ///< of write_bytes; at most write_bytes
  /// kStrided: a half-row of the chunk view read (0: reads in order); kScatterAdd: a row.
  std::uint64_t row_bytes = 0;
  DType dtype = DType::kFloat32;
};

/// The vector width of an ElementwiseCall: byte counts are rounded up to a multiple of it.
inline constexpr std::uint64_t kElementwiseVector = 16;
inline constexpr std::uint64_t elementwise_span(std::uint64_t bytes) {
  return (bytes + kElementwiseVector - 1) / kElementwiseVector * kElementwiseVector;
}

/// C = op(A)·op(B), column-major as cuBLAS: op(A) is m×k, op(B) k×n, C m×n. A is stored m×k
/// (leading dimension m), or k×m (leading dimension k) where trans_a says op(A) = Aᵀ; B is k×n
/// (k), or n×k (n) with trans_b. The layout matters beyond the arithmetic: a framework's linear
/// layer runs its forward with the weight transposed, and cuBLAS serves a leading dimension that
/// is no multiple of 8 elements (a vocabulary of 50,257) with much slower kernels. The buffers'
/// sizes travel with them: a backend refuses a call whose operands do not fit (bounds_problem),
/// before any arithmetic.
struct GemmCall {
  int m = 0;
  int n = 0;
  int k = 0;
  DType dtype = DType::kFloat32;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  std::uint64_t a_bytes = 0;
  std::uint64_t b_bytes = 0;
  std::uint64_t c_bytes = 0;
  bool trans_a = false;
  bool trans_b = false;
  int lda() const { return trans_a ? k : m; }
  int ldb() const { return trans_b ? n : k; }
  double flops() const { return 2.0 * m * n * k; }
  /// Why the operands do not fit their buffers ("" when they do): A needs m·k elements, B k·n,
  /// C m·n. A dimension below zero is a problem too; an empty product needs no memory.
  std::string bounds_problem() const {
    if (m < 0 || n < 0 || k < 0) return "GEMM with negative dimension";
    if (m == 0 || n == 0) return "";  // no output: cuBLAS allows null operands then
    const auto need = [&](int rows, int cols) {
      return static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) *
             dtype_size(dtype);
    };
    const auto short_of = [](const char* what, std::uint64_t needed, std::uint64_t has) {
      return std::string("GEMM operand ") + what + " needs " + std::to_string(needed) +
             " B, its buffer has " + std::to_string(has) + " B";
    };
    if (need(m, k) > a_bytes) return short_of("A (m x k)", need(m, k), a_bytes);
    if (need(k, n) > b_bytes) return short_of("B (k x n)", need(k, n), b_bytes);
    if (need(m, n) > c_bytes) return short_of("C (m x n)", need(m, n), c_bytes);
    return "";
  }
};

/// Arithmetic for a set time, where only a step's compute time is known, not its shapes (a mock
/// calibrated from a real trace): the backend runs fused multiply-adds on all its compute units
/// for about `ns` nanoseconds. On a GPU the work is fixed when the op is issued (iterations from
/// the backend's own measurement of its rate), so a kernel that shares the SMs with NCCL's takes
/// longer, as a real layer's would.
struct ComputeCall {
  std::uint64_t ns = 0;
};

struct CopyCall {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  CopyKind kind = CopyKind::kDeviceToDevice;
};

/// One AdamW step as PyTorch's fused AdamW (torch._fused_adamw_, ATen's
/// multi_tensor_apply_for_fused_optimizer, depth 4) runs it over a model's parameter tensors:
/// per element it reads the parameter, its gradient and both moments and writes the parameter
/// and both moments, all of `dtype`, computing in fp32 with the kAdamw* constants at step 1:
///   p ← p·(1 − lr·wd);  m ← β₁m + (1 − β₁)g;  v ← β₂|v| + (1 − β₂)g²;
///   p ← p − lr/(1 − β₁) · m / (√v / √(1 − β₂) + eps)
/// (the second moment read as |v|: a real one is never negative, the executor's buffers hold
/// normal values). `src` holds four equal regions (parameters, gradients, first and
/// second moments) and `dst` three (the results); element i of the flat parameter list is
/// element i modulo a region's length there, so buffers smaller than the model still stream
/// every byte from memory. Backends that model launch structure cut the tensors into chunks
/// and launches as multi_tensor_apply does (see kAdamwChunk).
struct AdamwCall {
  std::vector<std::uint64_t> tensors;  ///< element counts, in the optimizer's order
  DType dtype = DType::kFloat32;
  const void* src = nullptr;
  std::uint64_t src_bytes = 0;
  void* dst = nullptr;
  std::uint64_t dst_bytes = 0;
};

/// multi_tensor_apply's cut of a fused optimizer step (ATen's MultiTensorApply.cuh, PyTorch
/// 2.x, depth 4): chunks of 65536 elements, one block of 512 threads each, at most 320 blocks
/// and 36 tensors per launch.
inline constexpr std::uint64_t kAdamwChunk = 65536;
inline constexpr int kAdamwMaxBlocks = 320;
inline constexpr int kAdamwMaxTensors = 36;

/// Elements per region of an AdamwCall's source (four regions) or destination (three), a
/// multiple of 4 so that groups of four stay within a region.
inline std::uint64_t adamw_region(std::uint64_t bytes, int regions, std::uint64_t elem) {
  return bytes / static_cast<std::uint64_t>(regions) / elem / 4 * 4;
}

/// The update's constants, which every backend and the tests use.
inline constexpr float kAdamwLr = 1e-3f, kAdamwBeta1 = 0.9f, kAdamwBeta2 = 0.999f,
                       kAdamwEps = 1e-8f, kAdamwWeightDecay = 0.01f;

/// Scaled dot-product attention of one layer and micro-batch as frameworks run it in training:
/// one fused flash-attention kernel forward, one backward (PyTorch's SDPA on cuDNN,
/// FlashAttention), never materialising the seq × kv_seq scores. `batch` sequences of `seq`
/// query tokens attending to `kv_seq` key/value tokens (0: as many as `seq`; context parallelism
/// runs blocks of its sequence chunks, where they differ), `heads` query heads of `head_dim`,
/// scale 1/√head_dim, causal unless `causal` is false. Causal with kv_seq ≥ seq is aligned
/// bottom-right, as cuDNN's and FlashAttention's (≥ 2.1) kernels align it: query i attends to
/// keys j ≤ i + kv_seq − seq (the queries are the last `seq` of the keys' positions; i ≥ j when
/// the lengths are equal); causal with kv_seq < seq would leave rows without keys and is refused.
/// Grouped-query attention (Llama 3, Mistral): `kv_heads` key/value heads, each shared by heads /
/// kv_heads consecutive query heads; 0 means as many as `heads` (multi-head attention). Layouts
/// are PyTorch's after a fused QKV projection viewed per head: `qkv` holds
/// [batch][rows][heads + 2·kv][head_dim] with rows = max(seq, kv_seq) (a token's query heads, then
/// its key heads, then its value heads; [batch][seq][3][heads][head_dim] without GQA); queries
/// read its first `seq` rows, keys and values its first `kv_seq`. O, dO and dQ are
/// [batch][seq][heads][head_dim], dK and dV [batch][kv_seq][kv][head_dim]; `stats`, the forward's
/// softmax log-sum-exp per row that the backward reads, is fp32 [batch][heads][seq]. Forward
/// reads qkv, writes o and stats. Backward reads qkv, o, d_o and stats, writes dq, dk, dv.
struct AttentionCall : AttentionShape {
  DType dtype = DType::kBFloat16;
  const void* qkv = nullptr;
  void* o = nullptr;
  void* stats = nullptr;
  const void* d_o = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
};

/// The call of an attention of this shape in `dtype`, its buffers still to be set.
inline AttentionCall attention_call(const AttentionShape& shape, DType dtype) {
  AttentionCall a;
  static_cast<AttentionShape&>(a) = shape;
  a.dtype = dtype;
  return a;
}

struct MemsetCall {
  void* dst = nullptr;
  int value = 0;
  std::size_t bytes = 0;
};

using Work = std::variant<GemmCall, CollectiveCall, P2PCall, CopyCall, MemsetCall, ElementwiseCall,
                          ComputeCall, AdamwCall, AttentionCall>;

/// What tools see of an op: the NVTX range name and payload, the log and error lines.
struct OpLabel {
  std::string name;
  std::uint64_t bytes = 0;
  double flops = 0.0;
  std::int64_t seq = -1;  ///< the collective's per-communicator sequence number, if any
  /// Non-zero: the backend records when this op's work runs (ActivityRecorder::span). Unique
  /// within the run, so late records of an earlier step can never be taken for this op's.
  std::uint64_t activity_tag = 0;
};

}  // namespace commprof
