// SPDX-License-Identifier: MIT
// The transformer a mock workload stands in for, and what follows from it by formula: each
// layer's GEMM shapes and FLOPs, parameter, gradient and activation bytes (Megatron's formulas,
// docs/workloads.md, "Model shape").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/access_pattern.hpp"
#include "src/core/dtype.hpp"

namespace commprof {

/// Megatron-LM's default --make-vocab-size-divisible-by: the embedding and LM head hold the
/// vocabulary padded up to a multiple of this times the TP degree, so every TP rank holds the same
/// rows (and cuBLAS gets aligned shapes).
inline constexpr int kVocabPadding = 128;

struct ModelShape {
  std::string name = "custom";
  int layers = 2;
  int hidden = 256;  ///< h
  int heads = 4;     ///< a
  /// Key/value heads (grouped-query attention: Llama 3, Mistral); 0: as many as heads (MHA).
  int kv_heads = 0;
  int ffn = 1024;          ///< f: FFN hidden size
  bool gated_ffn = false;  ///< SwiGLU (Llama): three FFN matrices instead of two
  int seq = 128;           ///< s
  int micro_batch = 1;     ///< b
  int micro_batches = 1;   ///< m: per step and DP replica
  DType dtype = DType::kBFloat16;
  /// V: the vocabulary. 0: no ends (no embedding, final norm, LM head or loss: the layers alone,
  /// the plan of earlier versions, kept for comparison).
  int vocab = 0;
  /// The LM head multiplies by the embedding's weight (GPT-2 and GPT-3 do; Llama 3 does not).
  bool tie_embeddings = false;
  /// Mixture of experts (workloads/moe.hpp): `experts` routed experts of FFN size `moe_ffn`,
  /// each token to `top_k` of them, `shared_experts` more every token goes through, the first
  /// `dense_layers` layers dense (ffn). 0 experts: every layer dense.
  int experts = 0;
  int top_k = 0;
  int moe_ffn = 0;
  int shared_experts = 0;
  int dense_layers = 0;
  /// Rows per (source rank, expert) over the mean T·K/E; 0: dropless (Megatron's default).
  double capacity_factor = 0;
  /// Megatron-LM's --make-vocab-size-divisible-by: V is padded up to a multiple of this times
  /// the TP degree (1: a multiple of tp only, which the TP split needs; Hugging Face models keep
  /// V as it is on one rank).
  int vocab_divisible_by = kVocabPadding;

  int key_value_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  bool moe() const { return experts > 0; }
  bool moe_layer(int layer) const { return experts > 0 && layer >= dense_layers; }
  int head_dim() const { return hidden / heads; }
};

/// Names of the presets: tiny (CI), gpt-1.3b, gpt-7b, llama-1b, llama-8b, tiny-moe (CI),
/// mixtral-8x7b, deepseek-v3-gqa.
std::vector<std::string> model_presets();
/// A preset by name; throws ConfigError listing the presets.
ModelShape model_preset(const std::string& name);

/// One GEMM of a layer, already divided by the tensor-parallel degree where Megatron shards it.
struct LayerGemm {
  std::string name;  ///< "qkv", "attn_scores", "attn_context", "out_proj", "ffn_up", "ffn_down"
  int m = 0;
  int n = 0;
  int k = 0;
  bool has_weight = true;  ///< attention score and context GEMMs multiply activations only
  double flops() const { return 2.0 * m * n * k; }
};

/// The forward GEMMs of one layer for one micro-batch on one TP rank, in execution order. The
/// QKV projection's width is (a + 2·kv)·h/a over t (h/t·3 without GQA). The attention GEMMs
/// (batched per head in frameworks) are one GEMM each with the same FLOPs: scores b·s × s × h/t
/// and context b·s × h/t × s (every query head multiplies, whichever K/V head it shares).
std::vector<LayerGemm> layer_forward_gemms(const ModelShape& shape, int tp);

/// Parameters of one layer on one TP rank (weights only: norms and biases are < 0.1%).
std::uint64_t layer_parameters(const ModelShape& shape, int tp);
/// The parameter tensors of one layer on one TP rank, element counts in the order a PyTorch
/// pre-norm layer registers them (scripts/fidelity/torch_step.py): the two norms' weights (and
/// biases: LayerNorm), then qkv, out, up and down weights, each followed by its bias where the
/// preset has biases (not the gated, llama presets). Row-parallel layers' biases and the norms
/// are whole on every TP rank. What a fused AdamW step iterates over. Without `with_ffn`, the up
/// and down weights are left out (an MoE layer's FFN is its experts').
std::vector<std::uint64_t> layer_parameter_tensors(const ModelShape& shape, int tp,
                                                   bool with_ffn = true);
/// Bytes of one micro-batch's activations between layers: b·s·h·E (what a pipeline sends).
std::uint64_t activation_bytes(const ModelShape& shape);
/// Forward FLOPs of one layer and micro-batch on one TP rank (backward is twice that).
double layer_forward_flops(const ModelShape& shape, int tp);

/// Bytes a memory-bound op reads and writes; of them, `pattern_read` and `pattern_write` are
/// moved the way `pattern` says (ElementwiseCall, src/backend/work.hpp: the real op's kernels
/// reach them more slowly than a stream), in rows of `row_bytes` where the pattern has rows.
struct PassBytes {
  std::uint64_t read = 0;
  std::uint64_t write = 0;
  AccessPattern pattern = AccessPattern::kStream;
  std::uint64_t pattern_read = 0;
  std::uint64_t pattern_write = 0;
  std::uint64_t row_bytes = 0;
};

/// V padded as Megatron-LM pads it (up to a multiple of vocab_divisible_by·tp), divided over the
/// TP ranks: the rows of the embedding and of the LM head on one TP rank. 0 without ends.
std::uint64_t vocab_per_rank(const ModelShape& shape, int tp);

/// The parameters of the model's ends on one TP rank: the vocab-parallel embedding (V/t·h), the
/// final norm (h; and its bias for LayerNorm), the LM head (V/t·h, none where tied: it is the
/// embedding's weight).
struct EndParameters {
  std::uint64_t embedding = 0;
  std::uint64_t final_norm = 0;
  std::uint64_t head = 0;
};
EndParameters end_parameters(const ModelShape& shape, int tp);

/// The LM head's forward GEMM of one micro-batch on one TP rank: b·s × V/t × h (column-parallel
/// over the vocabulary, as Megatron's output layer).
LayerGemm head_gemm(const ModelShape& shape, int tp);

/// The memory-bound ops of the model's ends, per micro-batch on one TP rank, as PyTorch's eager
/// kernels move their bytes (docs/workloads.md gives each formula). N = b·s tokens, A = N·h·E
/// (N·h/t·E for the final norm under sequence parallelism), R = V/t·h·E the rank's embedding
/// rows, L = N·V/t the rank's logits.
struct EndPasses {
  PassBytes embed_fwd;  ///< F.embedding: read the N int64 ids and N rows, write A
  /// TP > 1: Megatron's mask of the tokens outside the rank's rows (ids shifted and masked, the
  /// output rows of foreign tokens zeroed): read 16N + A, write 16N + A; none at tp 1.
  PassBytes embed_mask;
  /// embedding_dense_backward: R zeroed, the ids sorted (radix sort, ~4 passes of 16N), the
  /// gradient rows summed per id in fp32 and scattered: read A + 64N + 4N·h, write R + 64N + 4N·h
  PassBytes embed_bwd;
  PassBytes final_norm_fwd;  ///< as a layer's norm: read A, write A
  PassBytes final_norm_bwd;  ///< read 4A, write A
  /// F.cross_entropy(logits.float(), labels): the logits to fp32 (read L·E, write 4L),
  /// log_softmax (read 4L, write 4L), nll_loss (read the N labels and N values)
  PassBytes loss_fwd;
  /// nll_loss's gradient (4L zeroed, N scattered), log_softmax's (read 8L, write 4L), back to
  /// the logits' type (read 4L, write L·E)
  PassBytes loss_bwd;
  PassBytes embed_grad_accum;  ///< micro-batches after the first: read 2R, write R
  PassBytes head_grad_accum;   ///< the untied head's likewise; none where tied
};
EndPasses end_passes(const ModelShape& shape, int tp, bool sequence_parallel);

/// The memory-bound ops of one layer and micro-batch on one TP rank, as PyTorch's eager kernels
/// move their bytes (docs/workloads.md gives each formula). A = b·s·h·E (b·s·h/t·E under sequence
/// parallelism: the norms and residuals then run on the rank's part of the sequence),
/// H = b·s·h/t·E (the rank's heads), K = H·kv/a (its key or value heads: H without GQA),
/// F = b·s·ffn/t·E, P = the layer's parameters on the rank (layer_parameters) times E.
struct LayerPasses {
  PassBytes norm_fwd;      ///< LayerNorm (RMSNorm for gated presets): read A, write A
  PassBytes norm_bwd;      ///< input gradient and the weight's: read 4A, write A
  PassBytes residual_fwd;  ///< x + f(x): read 2A, write A
  PassBytes residual_bwd;  ///< the two gradients of x summed: read 2A, write A
  PassBytes act_fwd;       ///< GELU: read F, write F; SwiGLU (silu, then ·up): read 3F, write 2F
  PassBytes act_bwd;       ///< GELU: read 2F, write F; SwiGLU: read 8F, write 5F (ffn_act_bwd)
  PassBytes attn_layout_fwd;  ///< the heads' context into the token-major layout: read H, write H
  PassBytes attn_layout_bwd;  ///< Q, K, V gradients joined for the qkv GEMM: read, write H + 2K
  /// Biases' gradients (GPT presets; none without biases): read b·s·(q + h + ffn/t + h)·E with
  /// q the QKV projection's width on the rank.
  PassBytes bias_grad;
  PassBytes grad_accum;  ///< gradient accumulation after the first micro-batch: read 2P, write P
};
LayerPasses layer_passes(const ModelShape& shape, int tp, bool sequence_parallel);

/// An FFN's activation over `f` bytes of its hidden values (rows of `row` bytes), as PyTorch's
/// kernels move them: GELU read f, write f; SwiGLU (silu, then ·up) read 3f, write 2f.
/// Backward: GELU read 2f, write f; SwiGLU read 8f, write 5f. SwiGLU's gate and up are the two
/// halves of one GEMM's rows (`chunk(2, dim=-1)`), views PyTorch's element-wise kernels read
/// unvectorised (AccessPattern::kStrided, halves of `row` bytes): all of the forward (silu on
/// the gate, its product with up), and of the backward the gradient times up and silu's
/// gradient (read 4f, write 2f); the gradient times silu(gate) (contiguous) and chunk's
/// gradient, the two halves' gradients concatenated, stream.
PassBytes ffn_act_fwd(bool gated, std::uint64_t f, std::uint64_t row);
PassBytes ffn_act_bwd(bool gated, std::uint64_t f, std::uint64_t row);

/// A fused AdamW step over `params` parameters of `dtype` (moments in the same type, as
/// torch.optim.AdamW keeps them for bf16 parameters): reads parameters, gradients and both
/// moments, writes parameters and moments: read 4·params·E, write 3·params·E.
PassBytes adamw_bytes(std::uint64_t params, DType dtype);

/// Checks the shape (positive sizes, heads dividing hidden, key/value heads dividing heads, a
/// vocabulary not negative); throws ConfigError naming the field.
void validate_shape(const ModelShape& shape);

}  // namespace commprof
