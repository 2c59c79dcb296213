// SPDX-License-Identifier: MIT
#include "workloads/workload_config.hpp"

#include "src/core/name_table.hpp"
#include "workloads/moe.hpp"

namespace commprof {

namespace {
constexpr NamedValue<WorkloadKind> kWorkloadNames[] = {{WorkloadKind::kDp, "dp"},
                                                       {WorkloadKind::kTp, "tp"},
                                                       {WorkloadKind::kPp, "pp"},
                                                       {WorkloadKind::kHybrid, "hybrid"}};
constexpr NamedValue<DpMode> kDpModeNames[] = {{DpMode::kDdp, "ddp"}, {DpMode::kZero, "zero"}};
constexpr NamedValue<AttentionMode> kAttentionNames[] = {{AttentionMode::kFused, "fused"},
                                                         {AttentionMode::kGemm, "gemm"}};
}  // namespace

AttentionMode parse_attention_mode(const std::string& text) {
  return parse_name(kAttentionNames, text, "unknown --attention");
}

const char* attention_mode_name(AttentionMode m) { return name_of(kAttentionNames, m); }

WorkloadKind parse_workload(const std::string& text) {
  return parse_name(kWorkloadNames, text, "unknown workload");
}

const char* workload_name(WorkloadKind k) { return name_of(kWorkloadNames, k); }

DpMode parse_dp_mode(const std::string& text) {
  return parse_name(kDpModeNames, text, "unknown --dp-mode");
}

std::uint64_t moe_tokens(const WorkloadConfig& c) {
  const auto tokens = static_cast<std::uint64_t>(c.shape.micro_batch) * c.shape.seq /
                      static_cast<std::uint64_t>(c.layout.cp);
  return c.layout.tp > 1 && c.sequence_parallel ? tokens / static_cast<std::uint64_t>(c.layout.tp)
                                                : tokens;
}

std::vector<ModelChunk> chunks_of(const WorkloadConfig& c, int pp_rank) {
  return stage_chunks(c.shape.layers, c.layout.pp, c.virtual_stages, pp_rank, c.shape.vocab > 0,
                      c.split);
}

bool tied_across_stages(const WorkloadConfig& c) {
  return c.shape.vocab > 0 && c.shape.tie_embeddings && c.layout.pp > 1;
}

std::vector<GradParam> stage_gradients_reversed(const WorkloadConfig& c, int pp_rank) {
  std::vector<GradParam> out;
  const auto gemms = layer_forward_gemms(c.shape, c.layout.tp);
  const std::size_t elem = dtype_size(c.shape.dtype);
  const EndParameters e = end_parameters(c.shape, c.layout.tp);
  const std::vector<ModelChunk> chunks = chunks_of(c, pp_rank);
  // Chunks in reverse: gradients become ready from the last layer backwards.
  for (auto ch = chunks.rbegin(); ch != chunks.rend(); ++ch) {
    if (ch->head && (!c.shape.tie_embeddings || tied_across_stages(c))) {
      out.push_back({"head", (tied_across_stages(c) ? e.embedding : e.head) * elem});
    }
    for (int l = ch->first_layer + ch->layers - 1; l >= ch->first_layer; --l) {
      for (auto g = gemms.rbegin(); g != gemms.rend(); ++g) {
        if (!g->has_weight) continue;
        if (c.shape.moe_layer(l) && g->name.rfind("ffn", 0) == 0) {
          // The MoE block's dense parameters, as its backward finishes them; the experts' are
          // stage_expert_gradients_reversed's.
          if (g->name != "ffn_down") continue;
          const MoeGemms m = moe_gemms(c.shape, c.layout.tp, 1);
          const auto h = static_cast<std::uint64_t>(c.shape.hidden);
          out.push_back({log::cat("l", l, ".router"),
                         static_cast<std::uint64_t>(c.shape.experts) * h * elem});
          if (m.shared_up_n > 0) {
            out.push_back({log::cat("l", l, ".shared_down"),
                           static_cast<std::uint64_t>(m.shared_down_k) * h * elem});
            out.push_back({log::cat("l", l, ".shared_up"),
                           static_cast<std::uint64_t>(m.shared_up_n) * h * elem});
          }
          continue;
        }
        out.push_back({log::cat("l", l, ".", g->name),
                       static_cast<std::uint64_t>(g->n) * static_cast<std::uint64_t>(g->k) * elem});
      }
    }
    if (ch->embedding) out.push_back({"embedding", e.embedding * elem});
  }
  return out;
}

std::vector<GradParam> stage_expert_gradients_reversed(const WorkloadConfig& c, int pp_rank,
                                                       int ep_rank) {
  std::vector<GradParam> out;
  if (!c.shape.moe()) return out;
  const std::size_t elem = dtype_size(c.shape.dtype);
  const MoeGemms g = moe_gemms(c.shape, c.layout.tp, 1, c.layout.expert_tp());
  const auto h = static_cast<std::uint64_t>(c.shape.hidden);
  const int local = c.shape.experts / c.layout.ep;
  const std::vector<ModelChunk> chunks = chunks_of(c, pp_rank);
  for (auto ch = chunks.rbegin(); ch != chunks.rend(); ++ch) {
    for (int l = ch->first_layer + ch->layers - 1; l >= ch->first_layer; --l) {
      if (!c.shape.moe_layer(l)) continue;
      for (int e = local - 1; e >= 0; --e) {
        const int expert = ep_rank * local + e;
        out.push_back({log::cat("l", l, ".expert", expert, ".down"),
                       static_cast<std::uint64_t>(g.expert_down_k) * h * elem});
        out.push_back({log::cat("l", l, ".expert", expert, ".up"),
                       static_cast<std::uint64_t>(g.expert_up_n) * h * elem});
      }
    }
  }
  return out;
}

}  // namespace commprof
