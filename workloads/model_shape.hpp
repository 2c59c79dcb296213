// SPDX-License-Identifier: MIT
// The transformer a mock workload stands in for, and what follows from it by formula: each
// layer's GEMM shapes and FLOPs, parameter, gradient and activation bytes (Megatron's formulas,
// docs/workloads.md, "Model shape").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/dtype.hpp"

namespace commprof {

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

  int key_value_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  int head_dim() const { return hidden / heads; }
};

/// Names of the presets: tiny (CI), gpt-1.3b, gpt-7b, llama-8b.
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
/// are whole on every TP rank. What a fused AdamW step iterates over.
std::vector<std::uint64_t> layer_parameter_tensors(const ModelShape& shape, int tp);
/// Bytes of one micro-batch's activations between layers: b·s·h·E (what a pipeline sends).
std::uint64_t activation_bytes(const ModelShape& shape);
/// Forward FLOPs of one layer and micro-batch on one TP rank (backward is twice that).
double layer_forward_flops(const ModelShape& shape, int tp);

/// Bytes a memory-bound op reads and writes.
struct PassBytes {
  std::uint64_t read = 0;
  std::uint64_t write = 0;
};

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
  PassBytes act_bwd;       ///< GELU: read 2F, write F; SwiGLU: read 8F, write 5F
  PassBytes attn_layout_fwd;  ///< the heads' context into the token-major layout: read H, write H
  PassBytes attn_layout_bwd;  ///< Q, K, V gradients joined for the qkv GEMM: read, write H + 2K
  /// Biases' gradients (GPT presets; none without biases): read b·s·(q + h + ffn/t + h)·E with
  /// q the QKV projection's width on the rank.
  PassBytes bias_grad;
  PassBytes grad_accum;  ///< gradient accumulation after the first micro-batch: read 2P, write P
};
LayerPasses layer_passes(const ModelShape& shape, int tp, bool sequence_parallel);

/// A fused AdamW step over `params` parameters of `dtype` (moments in the same type, as
/// torch.optim.AdamW keeps them for bf16 parameters): reads parameters, gradients and both
/// moments, writes parameters and moments: read 4·params·E, write 3·params·E.
PassBytes adamw_bytes(std::uint64_t params, DType dtype);

/// Checks the shape (positive sizes, heads dividing hidden, key/value heads dividing heads);
/// throws ConfigError naming the field.
void validate_shape(const ModelShape& shape);

}  // namespace commprof
