// SPDX-License-Identifier: MIT
#include "workloads/model_shape.hpp"

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {

namespace {

// A preset's shape, one row each: a new preset is one line here.
struct Preset {
  const char* name;
  int layers, hidden, heads, kv_heads, ffn;
  bool gated_ffn;
  int seq, micro_batch, micro_batches;
  DType dtype;
  int vocab;
  bool tie_embeddings;
};

constexpr DType kBf16 = DType::kBFloat16;
// GPT-2's BPE vocabulary, which GPT-3 kept; Megatron pads it (vocab_per_rank).
constexpr int kGpt2Vocab = 50257;
constexpr Preset kPresets[] = {
    // Small enough for 4 ranks on 2 CPU cores in CI, large enough to have several DDP buckets;
    // no ends (the CI runs that want them give --vocab).
    {"tiny", 4, 128, 4, 0, 512, false, 64, 1, 4, DType::kFloat32, 0, false},
    // GPT-3 XL: 24 layers, h 2048, 16 heads; embeddings tied.
    {"gpt-1.3b", 24, 2048, 16, 0, 8192, false, 2048, 1, 4, kBf16, kGpt2Vocab, true},
    // GPT-3 6.7B: 32 layers, h 4096, 32 heads; embeddings tied.
    {"gpt-7b", 32, 4096, 32, 0, 16384, false, 2048, 1, 4, kBf16, kGpt2Vocab, true},
    // Llama 3.2 1B: 16 layers, h 2048, 32 query heads sharing 8 key/value heads, SwiGLU,
    // 128,256 tokens, tied: the ends are a quarter of its step.
    {"llama-1b", 16, 2048, 32, 8, 8192, true, 4096, 1, 4, kBf16, 128256, true},
    // Llama 3 8B: 32 query heads sharing 8 key/value heads, SwiGLU, 128,256 tokens, untied.
    {"llama-8b", 32, 4096, 32, 8, 14336, true, 8192, 1, 4, kBf16, 128256, false},
    // The MoE presets (their experts in kMoePresets). CI's: 4 layers of 8 experts, the first
    // dense.
    {"tiny-moe", 4, 128, 4, 0, 512, true, 64, 1, 2, DType::kFloat32, 0, false},
    // Mixtral 8x7B: Mistral 7B's attention (32 query heads sharing 8), 32,000 tokens, untied.
    {"mixtral-8x7b", 32, 4096, 32, 8, 14336, true, 4096, 1, 4, kBf16, 32000, false},
    // DeepSeek-V3's sizes (61 layers, h 7168, 128 heads, the first 3 layers dense with ffn
    // 18432, 129,280 tokens, untied) with grouped-query attention of 8 key/value heads in place
    // of its multi-head latent attention, which commprof does not model (--dry-run says so).
    {"deepseek-v3-gqa", 61, 7168, 128, 8, 18432, true, 4096, 1, 4, kBf16, 129280, false},
};

// The experts of the MoE presets: routed experts, top-k, expert FFN, shared experts, dense
// layers first.
struct MoePreset {
  const char* name;
  int experts, top_k, moe_ffn, shared_experts, dense_layers;
};
constexpr MoePreset kMoePresets[] = {
    {"tiny-moe", 8, 2, 256, 0, 1},
    {"mixtral-8x7b", 8, 2, 14336, 0, 0},      // every layer MoE, top-2 of 8
    {"deepseek-v3-gqa", 256, 8, 2048, 1, 3},  // fine-grained: top-8 of 256, one shared
};

}  // namespace

std::vector<std::string> model_presets() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

ModelShape model_preset(const std::string& name) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    ModelShape s;
    s.name = p.name;
    s.layers = p.layers;
    s.hidden = p.hidden;
    s.heads = p.heads;
    s.kv_heads = p.kv_heads;
    s.ffn = p.ffn;
    s.gated_ffn = p.gated_ffn;
    s.seq = p.seq;
    s.micro_batch = p.micro_batch;
    s.micro_batches = p.micro_batches;
    s.dtype = p.dtype;
    s.vocab = p.vocab;
    s.tie_embeddings = p.tie_embeddings;
    for (const MoePreset& m : kMoePresets) {
      if (name != m.name) continue;
      s.experts = m.experts;
      s.top_k = m.top_k;
      s.moe_ffn = m.moe_ffn;
      s.shared_experts = m.shared_experts;
      s.dense_layers = m.dense_layers;
    }
    return s;
  }
  std::string names;
  for (const auto& p : model_presets()) names += (names.empty() ? "" : ", ") + p;
  throw ConfigError("unknown model preset '" + name + "': expected " + names);
}

void validate_shape(const ModelShape& s) {
  auto positive = [](int v, const char* what) {
    if (v <= 0) throw ConfigError(log::cat("--", what, " must be positive, got ", v));
  };
  positive(s.layers, "layers");
  positive(s.hidden, "hidden");
  positive(s.heads, "heads");
  positive(s.ffn, "ffn");
  positive(s.seq, "seq");
  positive(s.micro_batch, "micro-batch");
  positive(s.micro_batches, "micro-batches");
  positive(s.vocab_divisible_by, "make-vocab-size-divisible-by");
  if (s.hidden % s.heads != 0) {
    throw ConfigError(log::cat("--hidden ", s.hidden, " is not divisible by --heads ", s.heads));
  }
  if (s.vocab < 0) throw ConfigError(log::cat("--vocab must not be negative, got ", s.vocab));
  if (s.experts < 0) throw ConfigError(log::cat("--experts must not be negative, got ", s.experts));
  if (s.experts > 0) {
    if (s.top_k < 1 || s.top_k > s.experts) {
      throw ConfigError(log::cat("--top-k ", s.top_k, " must be within 1..--experts ", s.experts));
    }
    positive(s.moe_ffn, "moe-ffn");
    if (s.shared_experts < 0 || s.dense_layers < 0 || s.dense_layers > s.layers) {
      throw ConfigError(
          log::cat("--shared-experts must not be negative and --dense-layers within "
                   "0..--layers ",
                   s.layers, " (got ", s.shared_experts, ", ", s.dense_layers, ")"));
    }
    if (s.capacity_factor < 0) {
      throw ConfigError(log::cat("--moe-capacity-factor must not be negative (0: dropless), got ",
                                 s.capacity_factor));
    }
  }
  if (s.kv_heads < 0 || s.heads % s.key_value_heads() != 0) {
    throw ConfigError(log::cat("--kv-heads ", s.kv_heads, " must divide --heads ", s.heads,
                               " (0: as many as heads)"));
  }
}

std::vector<LayerGemm> layer_forward_gemms(const ModelShape& s, int tp) {
  const int bs = s.micro_batch * s.seq;
  const int h = s.hidden;
  const int ht = s.hidden / tp;
  const int qkv = (s.heads + 2 * s.key_value_heads()) * s.head_dim() / tp;
  const int ft = s.ffn / tp * (s.gated_ffn ? 2 : 1);  // up and gate fused into one GEMM
  return {
      {"qkv", bs, qkv, h, true},               // column-parallel
      {"attn_scores", bs, s.seq, ht, false},   // Q·Kᵀ over the rank's heads
      {"attn_context", bs, ht, s.seq, false},  // softmax(QKᵀ)·V
      {"out_proj", bs, h, ht, true},           // row-parallel
      {"ffn_up", bs, ft, h, true},             // column-parallel
      {"ffn_down", bs, h, s.ffn / tp, true},   // row-parallel
  };
}

std::uint64_t layer_parameters(const ModelShape& s, int tp) {
  std::uint64_t total = 0;
  for (const LayerGemm& g : layer_forward_gemms(s, tp)) {
    if (g.has_weight) total += static_cast<std::uint64_t>(g.n) * static_cast<std::uint64_t>(g.k);
  }
  return total;
}

std::vector<std::uint64_t> layer_parameter_tensors(const ModelShape& s, int tp, bool with_ffn) {
  using U = std::uint64_t;
  const bool biases = !s.gated_ffn;
  const U h = static_cast<U>(s.hidden);
  std::vector<U> out;
  for (int norm = 0; norm < 2; ++norm) {
    out.push_back(h);              // weight
    if (biases) out.push_back(h);  // LayerNorm's bias; RMSNorm has none
  }
  for (const LayerGemm& g : layer_forward_gemms(s, tp)) {
    if (!g.has_weight || (!with_ffn && g.name.rfind("ffn", 0) == 0)) continue;
    out.push_back(static_cast<U>(g.n) * static_cast<U>(g.k));
    if (biases) out.push_back(static_cast<U>(g.n));  // n: the GEMM's output width on the rank
  }
  return out;
}

std::uint64_t activation_bytes(const ModelShape& s) {
  return static_cast<std::uint64_t>(s.micro_batch) * static_cast<std::uint64_t>(s.seq) *
         static_cast<std::uint64_t>(s.hidden) * dtype_size(s.dtype);
}

LayerPasses layer_passes(const ModelShape& s, int tp, bool sequence_parallel) {
  using U = std::uint64_t;
  const U e = dtype_size(s.dtype);
  const U tokens = static_cast<U>(s.micro_batch) * static_cast<U>(s.seq);
  const U t = static_cast<U>(tp);
  const U a = tokens * static_cast<U>(s.hidden) / (sequence_parallel ? t : 1) * e;
  const U f = tokens * static_cast<U>(s.ffn) / t * e;
  const U heads = tokens * static_cast<U>(s.hidden) / t * e;
  const U kv = tokens * static_cast<U>(s.key_value_heads() * s.head_dim()) / t * e;
  const U p = layer_parameters(s, tp) * e;
  LayerPasses x;
  x.norm_fwd = {a, a};
  x.norm_bwd = {4 * a, a};
  x.residual_fwd = {2 * a, a};
  x.residual_bwd = {2 * a, a};
  x.attn_layout_fwd = {heads, heads};
  x.attn_layout_bwd = {heads + 2 * kv, heads + 2 * kv};
  const U row = static_cast<U>(s.ffn) / t * e;  // a half of the up projection's rows
  x.act_fwd = ffn_act_fwd(s.gated_ffn, f, row);
  x.act_bwd = ffn_act_bwd(s.gated_ffn, f, row);
  if (!s.gated_ffn) {
    const U h = static_cast<U>(s.hidden);
    const U qkv = static_cast<U>((s.heads + 2 * s.key_value_heads()) * s.head_dim()) / t;
    const U out_widths = qkv + h + static_cast<U>(s.ffn) / t + h;
    x.bias_grad = {tokens * out_widths * e, out_widths * e};
  }
  x.grad_accum = {2 * p, p};
  return x;
}

// SwiGLU as PyTorch eager and Megatron-Core's unfused glu() run it: gate, up = x.chunk(2, -1),
// then F.silu(gate) * up. Every kernel with a chunk half among its operands runs unvectorised
// (AccessPattern::kStrided); their bytes are the pattern's.
PassBytes ffn_act_fwd(bool gated, std::uint64_t f, std::uint64_t row) {
  if (!gated) return {f, f};
  // silu(gate): read f, write f; silu(gate) · up: read 2f, write f. Both on a chunk view.
  return {3 * f, 2 * f, AccessPattern::kStrided, 3 * f, 2 * f, row};
}

PassBytes ffn_act_bwd(bool gated, std::uint64_t f, std::uint64_t row) {
  if (!gated) return {2 * f, f};
  // MulBackward: grad · up (a chunk view: unvectorised) and grad · silu(gate) (contiguous);
  // SiluBackward: from grad and the gate (a chunk view: unvectorised); chunk's backward: cat of
  // the two gradients (read 2f, write 2f). Each of the first three reads 2f and writes f.
  return {8 * f, 5 * f, AccessPattern::kStrided, 4 * f, 2 * f, row};
}

PassBytes adamw_bytes(std::uint64_t params, DType dtype) {
  const std::uint64_t e = dtype_size(dtype);
  return {4 * params * e, 3 * params * e};
}

double layer_forward_flops(const ModelShape& s, int tp) {
  double total = 0;
  for (const LayerGemm& g : layer_forward_gemms(s, tp)) total += g.flops();
  return total;
}

std::uint64_t vocab_per_rank(const ModelShape& s, int tp) {
  if (s.vocab <= 0) return 0;
  const auto multiple =
      static_cast<std::uint64_t>(s.vocab_divisible_by) * static_cast<std::uint64_t>(tp);
  const auto padded = (static_cast<std::uint64_t>(s.vocab) + multiple - 1) / multiple * multiple;
  return padded / static_cast<std::uint64_t>(tp);
}

EndParameters end_parameters(const ModelShape& s, int tp) {
  EndParameters p;
  if (s.vocab <= 0) return p;
  const auto h = static_cast<std::uint64_t>(s.hidden);
  p.embedding = vocab_per_rank(s, tp) * h;
  p.final_norm = s.gated_ffn ? h : 2 * h;  // RMSNorm has no bias, LayerNorm has one
  p.head = s.tie_embeddings ? 0 : vocab_per_rank(s, tp) * h;
  return p;
}

LayerGemm head_gemm(const ModelShape& s, int tp) {
  return {"head", s.micro_batch * s.seq, static_cast<int>(vocab_per_rank(s, tp)), s.hidden, true};
}

EndPasses end_passes(const ModelShape& s, int tp, bool sequence_parallel) {
  using U = std::uint64_t;
  EndPasses x;
  if (s.vocab <= 0) return x;
  const U e = dtype_size(s.dtype);
  const U n = static_cast<U>(s.micro_batch) * static_cast<U>(s.seq);
  const U h = static_cast<U>(s.hidden);
  const U a = n * h * e;
  const U norm_a = sequence_parallel ? a / static_cast<U>(tp) : a;
  const U rows = vocab_per_rank(s, tp) * h * e;
  const U logits = n * vocab_per_rank(s, tp);
  x.embed_fwd = {8 * n + a, a};
  if (tp > 1) x.embed_mask = {16 * n + a, 16 * n + a};
  x.embed_bwd = {a + 64 * n + 4 * n * h, rows + 64 * n + 4 * n * h};
  x.final_norm_fwd = {norm_a, norm_a};
  x.final_norm_bwd = {4 * norm_a, norm_a};
  x.loss_fwd = {logits * e + 4 * logits + 8 * n + 4 * n, 4 * logits + 4 * logits};
  x.loss_bwd = {8 * logits + 4 * logits + 8 * n, 4 * logits + 4 * logits + logits * e};
  x.embed_grad_accum = {2 * rows, rows};
  if (!s.tie_embeddings) x.head_grad_accum = {2 * rows, rows};
  return x;
}

}  // namespace commprof
