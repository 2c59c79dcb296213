// SPDX-License-Identifier: MIT
// `commprof run`: mock training steps of a parallel layout and model shape on the backend's
// three streams; one rank-<R>.json per rank and a summary on rank 0.
#include "workloads/commands/run_command.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <tuple>

#include "analysis/commands/finding_gates.hpp"
#include "src/backend/backend.hpp"
#include "src/cli/command.hpp"
#include "src/cli/common_options.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/output_dir.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/timeline/rank_file.hpp"
#include "workloads/commands/link_probe.hpp"
#include "workloads/commands/mock_run.hpp"
#include "workloads/commands/run_report.hpp"
#include "workloads/execution/executor.hpp"
#include "workloads/model_parameters.hpp"
#include "workloads/moe.hpp"
#include "workloads/run_config_json.hpp"
#include "workloads/workload.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

struct RunConfig {
  WorkloadConfig workload;
  int tp = 0, dp = 0, pp = 0;   // 0: inferred from the workload and the world size
  int cp = 1, ep = 1, etp = 0;  // context and expert parallelism; etp 0: as tp
  int steps = 10;
  int warmup_steps = 2;
  OpTimingMode timing = OpTimingMode::kAuto;
  int sample_every = 4;
  bool dry_run = false;
  int dry_run_rank = 0;
  int test_hang_rank = -1;
  TestFault test_fault;
  int test_no_activity_rank = -1;
  std::string out_dir;
  RankFileFormat rank_file_format = RankFileFormat::kJson;
  bool link_probe = true;      // --no-link-probe clears it
  FindingGates findings;       // --target-overlap, --fail-if finding:RULE
  bool attention_auto = true;  // --attention auto: fused where every rank's backend can
  std::string attention_note;  // why auto chose GEMMs, for the summary
};

// Degrees the user left at 0 are inferred: the workload's own axis takes the whole world (dp,
// tp, pp); for hybrid, one missing degree takes what the others leave, the rest are 1.
ParallelLayout resolve_layout(const RunConfig& c, int world_size) {
  ParallelLayout l{c.tp, c.dp, c.pp};
  l.cp = c.cp;
  l.ep = c.ep;
  l.etp = c.etp;
  // What the other axes share (at least 1: --dry-run infers from a world of one).
  const int world = std::max(1, world_size / std::max(c.cp, 1));
  auto only = [&](int& axis, const char* name) {
    const int others = (l.tp > 0 ? l.tp : 1) * (l.dp > 0 ? l.dp : 1) * (l.pp > 0 ? l.pp : 1) /
                       (axis > 0 ? axis : 1);
    if (others != 1) {
      throw ConfigError(log::cat("--workload ", workload_name(c.workload.kind), " uses only --",
                                 name, "; use --workload hybrid to combine"));
    }
    if (axis == 0) axis = world;
    if (l.tp == 0) l.tp = 1;
    if (l.dp == 0) l.dp = 1;
    if (l.pp == 0) l.pp = 1;
  };
  switch (c.workload.kind) {
    case WorkloadKind::kDp:
      only(l.dp, "dp");
      break;
    case WorkloadKind::kTp:
      only(l.tp, "tp");
      break;
    case WorkloadKind::kPp:
      only(l.pp, "pp");
      break;
    case WorkloadKind::kHybrid: {
      // One degree left out takes the ranks the others leave; several: --tp and --pp are 1 and
      // --dp takes the rest, as Megatron-LM infers its data-parallel size.
      const int missing = (l.tp == 0) + (l.dp == 0) + (l.pp == 0);
      if (missing > 1) {
        if (l.tp == 0) l.tp = 1;
        if (l.pp == 0) l.pp = 1;
      }
      const int known = std::max(l.tp, 1) * std::max(l.dp, 1) * std::max(l.pp, 1);
      for (int* axis : {&l.dp, &l.tp, &l.pp}) {
        if (*axis == 0) *axis = world % known == 0 ? world / known : 1;
      }
      break;
    }
  }
  return l;
}

// --compute-from DIR: every rank reads the directory (it must be readable everywhere, as --out's
// parent is) and learns the same profile from it.
ComputeProfile read_compute_profile(const std::string& dir, int layers) {
  std::vector<RankTimeline> ranks;
  try {
    for (const std::string& file : expand_rank_inputs({dir})) ranks.push_back(read_rank_file(file));
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {  // a missing directory or a damaged file: the user's input
    throw ConfigError(log::cat("--compute-from ", dir, ": ", e.what()));
  }
  return learn_compute_profile(ranks, layers, dir);
}

// --slow-rank R:FACTOR.
std::pair<int, double> parse_slow_rank(const std::string& text) {
  const std::string what = "--slow-rank " + text + ": ";
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw ConfigError(what + "give R:FACTOR, e.g. 3:1.5");
  int rank = -1;
  double factor = 0.0;
  try {
    std::size_t used = 0;
    rank = std::stoi(text.substr(0, colon), &used);
    if (used != colon) throw std::invalid_argument("rank");
    const std::string f = text.substr(colon + 1);
    factor = std::stod(f, &used);
    if (used != f.size()) throw std::invalid_argument("factor");
  } catch (const std::logic_error&) {
    throw ConfigError(what + "R must be a rank and FACTOR a number, e.g. 3:1.5");
  }
  if (rank < 0) throw ConfigError(what + "the rank must not be negative");
  if (!(factor > 0.0) || !std::isfinite(factor) || factor > 1000.0) {
    throw ConfigError(what + "FACTOR must be above 0 and at most 1000");
  }
  return {rank, factor};
}

void check_slow_rank(const WorkloadConfig& w, int world) {
  if (w.slow_rank >= world) {
    throw ConfigError(log::cat("--slow-rank ", w.slow_rank, ":", w.slow_factor, ": there are ",
                               world, " ranks (0 to ", world - 1, ")"));
  }
}

// --attention auto becomes fused where every rank's backend can run it in the model's type
// (else GEMMs, and the summary says why); fused asked for and impossible is a usage error.
void resolve_attention(RankContext& ctx, Backend& backend, RunConfig& c) {
  if (c.workload.compute) return;  // calibrated compute: no attention op of its own
  const std::string problem = attention_problem(backend, c.workload.shape.dtype);
  if (!c.attention_auto) {
    if (c.workload.attention == AttentionMode::kFused) {
      ctx.agree(problem.empty(), "--attention fused: " + problem +
                                     " (--attention gemm computes attention as GEMMs)");
    }
    return;
  }
  const bool somewhere = ctx.any(!problem.empty());
  // Context parallelism's schedules are fused kernels on blocks: no GEMM fallback to take.
  if (c.workload.layout.cp > 1) {
    ctx.agree(!somewhere, cp_needs_fused_attention() + ", which " +
                              (problem.empty() ? "another rank's backend" : "this backend") +
                              " cannot run" + (problem.empty() ? "" : ": " + problem));
  }
  c.workload.attention = somewhere ? AttentionMode::kGemm : AttentionMode::kFused;
  if (somewhere) {
    c.attention_note = problem.empty() ? " (fused attention unavailable on another rank)"
                                       : " (fused attention unavailable: " + problem + ")";
  }
}

// The MoE layers: experts, routing, this rank's dispatch per layer (nothing for a dense model).
void print_moe(std::ostream& os, const RunConfig& c, const ParallelLayout& l,
               const RankPlace& place) {
  const ModelShape& s = c.workload.shape;
  if (!s.moe()) return;
  os << "# experts: layers " << s.dense_layers << ".." << s.layers - 1 << " are MoE: " << s.experts
     << " routed experts of FFN " << s.moe_ffn << ", top-" << s.top_k;
  if (s.shared_experts > 0) os << ", " << s.shared_experts << " shared";
  os << "; " << s.experts / l.ep << " per EP rank (ep " << l.ep << ", etp " << l.expert_tp()
     << ", edp " << l.expert_dp() << "); routing " << c.workload.routing.text();
  if (s.capacity_factor > 0) os << ", capacity factor " << s.capacity_factor;
  os << "\n#   experts' GEMMs: one per expert with its own rows (cuBLAS has grouped GEMMs, "
        "cublasGemmGroupedBatchedEx; commprof's GEMM work is one GEMM, so a layer runs its "
        "local experts back to back and skips those no token reached)\n";
  if (s.name == "deepseek-v3-gqa") {
    os << "#   attention: grouped-query (" << s.heads << " heads sharing " << s.key_value_heads()
       << "), in place of DeepSeek-V3's multi-head latent attention, which is not modelled\n";
  }
  const Routing routing(c.workload.routing, s.experts);
  const std::uint64_t tokens = moe_tokens(c.workload);
  const std::uint64_t row = static_cast<std::uint64_t>(s.hidden) * dtype_size(s.dtype);
  for (int layer = s.dense_layers; layer < s.layers; ++layer) {
    const MoeDispatch d = moe_dispatch(s, routing, layer, l.ep, place.ep_rank, tokens, 0,
                                       l.expert_tp(), place.etp_rank);
    std::uint64_t fewest = ~std::uint64_t{0}, most = 0;
    for (std::uint64_t r : d.expert_rows) {
      fewest = std::min(fewest, r);
      most = std::max(most, r);
    }
    os << "#   layer " << layer << ": dispatch sends " << d.send_elements * dtype_size(s.dtype)
       << " B, receives " << d.recv_elements * dtype_size(s.dtype) << " B (" << tokens
       << " tokens x top-" << s.top_k << " rows of " << row << " B out); local experts' rows "
       << fewest << ".." << most << "; EP imbalance (max/mean received) " << d.imbalance;
    if (d.capacity > 0) os << "; capacity " << d.capacity << " rows, " << d.dropped << " dropped";
    if (l.expert_tp() > 1) {
      os << "; expert TP gathers " << d.gathered_elements * dtype_size(s.dtype) << " B (rows";
      for (const std::uint64_t r : d.etp_rows) os << ' ' << r;
      os << " per ETP rank)";
    }
    os << '\n';
    if (layer - s.dense_layers == 3 && s.layers - layer > 2) {
      os << "#   ... (" << s.layers - layer - 2 << " more layers)\n";
      layer = s.layers - 2;
    }
  }
}

// The embedding, LM head and loss of the model (nothing without --vocab).
void print_ends(std::ostream& os, const RunConfig& c, const ParallelLayout& l) {
  const ModelShape& s = c.workload.shape;
  if (s.vocab <= 0) {
    os << "# ends: none (--vocab 0: no embedding, final norm, LM head or loss)\n";
    return;
  }
  const std::uint64_t rows = vocab_per_rank(s, l.tp);
  os << "# ends: vocabulary " << s.vocab << ", padded to "
     << rows * static_cast<std::uint64_t>(l.tp) << " (a multiple of " << s.vocab_divisible_by
     << " x tp " << l.tp << ", --make-vocab-size-divisible-by; " << rows
     << " rows per TP rank), embeddings " << (s.tie_embeddings ? "tied" : "untied")
     << "; the model's parameters " << model_parameters(s, 1) << " (" << model_parameters(s, l.tp)
     << " on a TP rank of a pipeline of one stage)\n";
  // The head, loss and embedding work on the rank's s/cp tokens.
  const ModelShape local = cp_local_shape(s, l.cp);
  const LayerGemm h = head_gemm(local, l.tp);
  os << "#   head: " << h.m << " x " << h.n << " x " << h.k << ", " << h.flops() / 1e9
     << " GFLOP forward, " << 2 * h.flops() / 1e9 << " GFLOP backward\n";
  const EndPasses e = end_passes(local, l.tp, l.tp > 1 && c.workload.sequence_parallel);
  auto rw = [](const PassBytes& b) {
    return log::cat("read ", b.read, " B, write ", b.write, " B");
  };
  os << "#   embedding: forward " << rw(e.embed_fwd) << "; backward " << rw(e.embed_bwd) << '\n';
  os << "#   loss (cross-entropy over fp32 logits): forward " << rw(e.loss_fwd) << "; backward "
     << rw(e.loss_bwd) << '\n';
}

// Layers of every pipeline stage (virtual stage with interleaving), and where the ends lie.
void print_stages(std::ostream& os, const RunConfig& c, const ParallelLayout& l, int stage) {
  const WorkloadConfig& w = c.workload;
  if (l.pp == 1) return;
  const std::vector<int> per =
      virtual_stage_layers(w.shape.layers, l.pp, w.virtual_stages, w.split);
  os << "# layers per " << (w.virtual_stages > 1 ? "virtual stage" : "stage") << ":";
  for (int n : per) os << ' ' << n;
  os << '\n';
  for (const ModelChunk& ch :
       stage_chunks(w.shape.layers, l.pp, w.virtual_stages, stage, w.shape.vocab > 0, w.split)) {
    os << "#   stage " << stage << ": layers " << ch.first_layer << ".."
       << ch.first_layer + ch.layers - 1 << (ch.embedding ? " after the embedding" : "")
       << (ch.head ? ", then the final norm, LM head and loss" : "") << '\n';
  }
}

void print_dry_run(std::ostream& os, const RunConfig& c, const ParallelLayout& l, int rank) {
  const ModelShape& s = c.workload.shape;
  const RankPlace place = place_rank(l, rank);
  os << "# commprof run --dry-run: workload " << workload_name(c.workload.kind) << ", "
     << describe(l) << ", model " << s.name << " (" << s.layers << " layers, h " << s.hidden << ", "
     << s.heads << " heads"
     << (s.key_value_heads() != s.heads ? log::cat(" sharing ", s.key_value_heads(), " K/V") : "")
     << ", ffn " << s.ffn << (s.gated_ffn ? " gated" : "") << ", seq " << s.seq << ", micro-batch "
     << s.micro_batch << " x " << s.micro_batches << ", " << dtype_name(s.dtype) << ")\n";
  // Outside attention a CP rank works on its s/cp tokens (cp_local_shape).
  const ModelShape local = cp_local_shape(s, l.cp);
  os << "# per layer and micro-batch on one TP rank (tp " << l.tp << ")"
     << (l.cp > 1 ? log::cat(" and its ", local.seq, " tokens (cp ", l.cp, ")") : "") << ":\n";
  const bool fused = c.workload.attention == AttentionMode::kFused && !c.workload.compute;
  for (const LayerGemm& g : layer_forward_gemms(local, l.tp)) {
    if (fused && (g.name == "attn_scores" || g.name == "attn_context")) continue;
    os << "#   " << g.name << ": " << g.m << " x " << g.n << " x " << g.k << ", " << g.flops() / 1e9
       << " GFLOP forward, " << 2 * g.flops() / 1e9 << " GFLOP backward\n";
  }
  if (fused) {
    AttentionCall a = attention_call(layer_attention(s, l.tp, false), s.dtype);
    const double fwd = a.flops();
    a.backward = true;
    os << "#   attention (fused, causal): " << a.heads << " heads of " << a.head_dim
       << kv_heads_note(a) << ", seq " << a.seq << ", batch " << a.batch << ", " << fwd / 1e9
       << " GFLOP forward, " << a.flops() / 1e9 << " GFLOP backward (--attention "
       << (c.attention_auto ? "auto" : "fused") << ")"
       << (l.cp > 1 ? "; the whole sequence's, which the CP ranks share (below)" : "") << "\n";
  }
  const std::uint64_t params = layer_parameters(s, l.tp);
  os << "#   parameters " << params << " per layer (" << params * dtype_size(s.dtype)
     << " B, as many gradient bytes); activations between layers " << activation_bytes(local)
     << " B per micro-batch\n";
  print_ends(os, c, l);
  print_moe(os, c, l, place);
  print_stages(os, c, l, place.pp_rank);
  if (c.workload.slow_rank >= 0) {
    os << "# --slow-rank: rank " << c.workload.slow_rank << "'s COMP ops do x"
       << c.workload.slow_factor
       << " their work (GEMM rows, bytes, attention heads, rounded); its plan shows them\n";
  }
  os << "# rank " << rank << ": tp rank " << place.tp_rank << ", dp rank " << place.dp_rank
     << ", pp stage " << place.pp_rank << "; groups tp" << place.tp_group_id << " {";
  for (int r : place.tp_group) os << ' ' << r;
  os << " }, dp" << place.dp_group_id << " {";
  for (int r : place.dp_group) os << ' ' << r;
  os << " }, pp" << place.pp_group_id << " {";
  for (int r : place.pp_group) os << ' ' << r;
  os << " }\n";
  auto group = [&os](const char* name, int id, const std::vector<int>& ranks) {
    os << ", " << name << id << " {";
    for (int r : ranks) os << ' ' << r;
    os << " }";
  };
  if (l.cp > 1) {
    os << "# rank " << rank << ": cp rank " << place.cp_rank;
    group("cp", place.cp_group_id, place.cp_group);
    os << "; dense gradients over dp x cp\n";
    os << cp_summary(s, l, c.workload.cp_mode, place.cp_rank);
  }
  if (l.ep > 1 || l.etp > 0) {
    os << "# rank " << rank << ": experts (folded onto the same ranks): ep rank " << place.ep_rank
       << ", etp rank " << place.etp_rank << ", edp rank " << place.edp_rank;
    group("ep", place.ep_group_id, place.ep_group);
    group("etp", place.etp_group_id, place.etp_group);
    group("edp", place.edp_group_id, place.edp_group);
    group("tp_ep", place.tp_ep_group_id, place.tp_ep_group);
    os << '\n';
  }
  if (l.pp > 1 || s.micro_batches > 1) {
    os << "# pipeline order (" << schedule_name(c.workload.schedule) << "): "
       << compute_order(pipeline_schedule(c.workload.schedule, l.pp, place.pp_rank, s.micro_batches,
                                          c.workload.virtual_stages),
                        c.workload.virtual_stages > 1)
       << '\n';
  }
  const OpPlan plan = build_plan(c.workload, place);
  if (c.workload.compute) os << compute_line(*c.workload.compute, c.workload);
  os << "# op plan of rank " << rank << ": " << plan.ops.size() << " ops per step\n";
  print_plan(os, plan);
}

// --test-fault KIND:RANK.
TestFault parse_test_fault(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  TestFault f;
  if (kind == "skip-allreduce") f.kind = TestFault::Kind::kSkipAllReduce;
  if (kind == "count") f.kind = TestFault::Kind::kCount;
  if (kind == "no-recv") f.kind = TestFault::Kind::kNoRecv;
  if (kind == "stop-between-steps") f.kind = TestFault::Kind::kStopBetweenSteps;
  try {
    if (colon == std::string::npos || f.kind == TestFault::Kind::kNone)
      throw std::invalid_argument(text);
    f.rank = std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
    throw ConfigError(log::cat("--test-fault '", text,
                               "': expected skip-allreduce|count|no-recv|stop-between-steps:RANK"));
  }
  return f;
}

class RunCommand final : public Command {
 public:
  const char* name() const override { return "run"; }
  const char* summary() const override {
    return "mock training steps (dp, tp, pp, hybrid): COMP, COMM and MEM on their own streams";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    hidden.add_options()("test-hang-rank", po::value<int>()->default_value(-1),
                         "test hook: this rank stops taking part in communication after warm-up")(
        "test-no-activity-rank", po::value<int>()->default_value(-1),
        "test hook: this rank's backend offers no activity records (as under another profiler)")(
        "test-fault", po::value<std::string>(),
        "test hook KIND:RANK, in the first measured step: skip-allreduce (the rank skips the "
        "step's last all-reduce), count (calls it with half the count), no-recv (never posts "
        "its first receive), stop-between-steps (SIGSTOPs itself before the step starts)");
    visible.add_options()("workload", po::value<std::string>()->default_value("dp"),
                          "dp | tp | pp | hybrid")("tp", po::value<int>()->default_value(0),
                                                   "tensor-parallel degree (0: inferred)")(
        "dp", po::value<int>()->default_value(0), "data-parallel degree (0: inferred)")(
        "pp", po::value<int>()->default_value(0), "pipeline-parallel degree (0: inferred)")(
        "cp", po::value<int>()->default_value(1),
        "context-parallel degree: each rank holds 1/cp of the sequence (ranks tp, then cp, then "
        "dp, then pp, as Megatron-Core orders them; the inferred degree shares world/cp)")(
        "cp-mode", po::value<std::string>()->default_value("p2p"),
        "p2p | a2a | allgather: how attention meets the other CP ranks (TransformerEngine's "
        "cp_comm_type): a ring of K/V overlapped with attention, DeepSpeed-Ulysses' all-to-alls, "
        "or an all-gather of K/V")(
        "ep", po::value<int>()->default_value(1),
        "expert-parallel degree of the MoE layers, folded onto the same ranks (Megatron-Core's "
        "MoE parallel folding: expert TP x EP x expert DP = tp x cp x dp)")(
        "etp", po::value<int>()->default_value(0), "the experts' tensor-parallel degree (0: --tp)")(
        "model", po::value<std::string>()->default_value("tiny"),
        "preset: tiny, gpt-1.3b, gpt-7b, llama-1b, llama-8b, and with mixtures of experts "
        "tiny-moe, mixtral-8x7b, deepseek-v3-gqa; the options below override its fields")(
        "layers", po::value<int>(), "transformer layers")(
        "hidden", po::value<int>(), "hidden size h")("heads", po::value<int>(),
                                                     "attention heads (query heads)")(
        "kv-heads", po::value<int>(),
        "key/value heads: grouped-query attention where fewer than --heads (0: as many)")(
        "ffn", po::value<int>(), "FFN hidden size")("seq", po::value<int>(), "sequence length s")(
        "micro-batch", po::value<int>(), "sequences per micro-batch b")(
        "micro-batches", po::value<int>(), "micro-batches per step m")(
        "vocab", po::value<int>(),
        "vocabulary V: embedding, final norm, LM head and loss (0: the layers alone, no ends)")(
        "make-vocab-size-divisible-by", po::value<int>(),
        "pad V up to a multiple of this times --tp, as Megatron-LM does (default 128; 1: no "
        "padding beyond --tp, as Hugging Face models keep V); the LM head's GEMMs run at that "
        "shape")(
        "tie-embeddings", po::value<bool>()->implicit_value(true),
        "the LM head multiplies by the embedding's weight (true | false; GPT presets: true)")(
        "dtype", po::value<std::string>(), "bfloat16, half, float, double")(
        "experts", po::value<int>(),
        "routed experts of each MoE layer (0: dense; Megatron-Core's alltoall dispatcher)")(
        "top-k", po::value<int>(), "experts each token goes to")(
        "moe-ffn", po::value<int>(),
        "each expert's FFN hidden size (default: --ffn, as Megatron-Core)")(
        "shared-experts", po::value<int>(), "experts every token goes through (DeepSeek)")(
        "dense-layers", po::value<int>(), "the first layers are dense (ffn), the rest MoE")(
        "moe-capacity-factor", po::value<double>(),
        "rows per (rank, expert) over the mean, padded or cut: fixed-size all-to-alls as "
        "GShard and DeepSpeed-MoE send them, dropped tokens counted (0: dropless)")(
        "routing", po::value<std::string>()->default_value("zipf"),
        "uniform | zipf[:S] (the default's skew from real text: docs/collectives.md) | "
        "file:PATH (per-layer, per-expert counts of a real run)")(
        "steps", po::value<int>()->default_value(10), "measured steps")(
        "warmup-steps", po::value<int>()->default_value(2), "steps run first and left out")(
        "bucket-mb", po::value<double>()->default_value(25.0), "DDP gradient bucket cap (MiB)")(
        "dp-mode", po::value<std::string>()->default_value("ddp"),
        "ddp (bucketed all-reduce) | zero (ZeRO-3/FSDP: all-gather params, reduce-scatter grads)")(
        "sequence-parallel", po::bool_switch(), "TP with all-gather/reduce-scatter (Megatron SP)")(
        "schedule", po::value<std::string>()->default_value("1f1b"),
        "pipeline: gpipe | 1f1b | interleaved (Megatron's interleaved 1F1B; --virtual-stages)")(
        "virtual-stages", po::value<int>()->default_value(1),
        "model chunks per pipeline stage with --schedule interleaved (layers round-robin)")(
        "pp-layers", po::value<std::string>(),
        "layers of each pipeline stage, e.g. 3,5 (each virtual stage with interleaving); "
        "default: an even split")(
        "account-for-embedding", po::bool_switch(),
        "count the embedding as a layer of the first stage when splitting layers evenly")(
        "account-for-loss", po::bool_switch(),
        "count the LM head and loss as a layer of the last stage when splitting layers evenly")(
        "offload", po::bool_switch(), "activations to pinned host memory and back (MEM stream)")(
        "no-overlap", po::bool_switch(), "every op waits for the previous one: serial baseline")(
        "no-link-probe", po::bool_switch(),
        "skip the link probe at the start (a short sweep of all-reduce, all-gather, "
        "reduce-scatter, all-to-all and send/receive recorded in the rank files, from which "
        "`commprof project` times the layouts whose communication this run does not issue)")(
        "slow-rank", po::value<std::string>(),
        "R:FACTOR: world rank R's compute does FACTOR times its work (GEMM rows, bytes of its "
        "passes, attention heads), a slow GPU to check what the critical path and whatif say "
        "(e.g. 3:1.5)")(
        "attention", po::value<std::string>()->default_value("auto"),
        "auto | fused (one causal flash-attention kernel forward, one backward, as frameworks "
        "run it: cuDNN on cuda, bf16/fp16) | gemm (QKᵀ and PV as GEMMs over the whole s x s); "
        "auto: fused where every rank's backend can")(
        "compute-from", po::value<std::string>(),
        "rank files of a one-GPU trace of the real step (commprof import-nsys ... --step-range): "
        "each layer's compute takes the forward and backward time learned from them, the "
        "optimizer its time; the model options must give the traced model's layers; the "
        "traced step's gaps (no compute or communication running: launch gaps of a host-bound "
        "job, the trace's copies) are replayed as idle time before the ops they preceded")(
        "no-host-gaps", po::bool_switch(),
        "with --compute-from: leave the traced step's gaps out (its kernels back to back)")(
        "op-timing", po::value<std::string>()->default_value("auto"),
        "auto (sampled where activity records exist, else pair) | sampled (activity on every "
        "--sample-every-th measured step, the others uninstrumented: their step time is "
        "reported) | activity (the device's own record of each op's work on every step: CUPTI "
        "on cuda, nothing added to the streams) | pair (events before and after every op) | "
        "shared (one event between ops) | step (no per-op timing: the uninstrumented "
        "baseline)")(
        "sample-every", po::value<int>()->default_value(4),
        "with sampled op timing: one measured step in this many carries per-op timing")(
        "dry-run", po::bool_switch(),
        "print shapes, FLOPs, bytes, groups and the op plan; run nothing")(
        "dry-run-rank", po::value<int>()->default_value(0), "whose plan --dry-run prints")(
        "out,o", po::value<std::string>(), "write rank-<R>.json of every rank here")(
        "rank-file-format", po::value<std::string>()->default_value("json"),
        "json (rank-<R>.json) or zstd (the same JSON lines as zstd frames, rank-<R>.json.zst: "
        "about a tenth of the bytes; every reader reads both)");
    define_finding_gates(visible);
    add_runtime_options(visible);
  }

  void configure(const po::variables_map& vm) override {
    runtime_ = read_runtime_options(vm);
    RunConfig& c = config_;
    c.workload.kind = parse_workload(vm["workload"].as<std::string>());
    c.tp = vm["tp"].as<int>();
    c.dp = vm["dp"].as<int>();
    c.pp = vm["pp"].as<int>();
    c.cp = vm["cp"].as<int>();
    c.workload.cp_mode = parse_cp_mode(vm["cp-mode"].as<std::string>());
    c.ep = vm["ep"].as<int>();
    c.etp = vm["etp"].as<int>();
    if (c.tp < 0 || c.dp < 0 || c.pp < 0)
      throw ConfigError("--tp, --dp and --pp must not be negative");
    if (c.cp < 1 || c.ep < 1 || c.etp < 0)
      throw ConfigError("--cp and --ep must be at least 1, --etp not negative");
    ModelShape& s = c.workload.shape;
    s = model_preset(vm["model"].as<std::string>());
    auto override_int = [&](const char* key, int& field) {
      if (vm.count(key) != 0) {
        field = vm[key].as<int>();
        s.name = "custom";
      }
    };
    override_int("layers", s.layers);
    override_int("hidden", s.hidden);
    override_int("heads", s.heads);
    override_int("kv-heads", s.kv_heads);
    override_int("ffn", s.ffn);
    override_int("seq", s.seq);
    override_int("micro-batch", s.micro_batch);
    override_int("micro-batches", s.micro_batches);
    override_int("vocab", s.vocab);
    override_int("make-vocab-size-divisible-by", s.vocab_divisible_by);
    override_int("experts", s.experts);
    override_int("top-k", s.top_k);
    override_int("moe-ffn", s.moe_ffn);
    override_int("shared-experts", s.shared_experts);
    override_int("dense-layers", s.dense_layers);
    if (vm.count("moe-capacity-factor") != 0) {
      s.capacity_factor = vm["moe-capacity-factor"].as<double>();
      s.name = "custom";
    }
    c.workload.routing = parse_routing(vm["routing"].as<std::string>());
    if (vm.count("tie-embeddings") != 0) {
      s.tie_embeddings = vm["tie-embeddings"].as<bool>();
      s.name = "custom";
    }
    if (vm.count("dtype") != 0) s.dtype = parse_dtype(vm["dtype"].as<std::string>());
    // Megatron-Core: the experts' FFN size (--moe-ffn-hidden-size) defaults to the model's.
    if (s.experts > 0 && s.moe_ffn == 0) s.moe_ffn = s.ffn;
    validate_shape(s);
    c.steps = vm["steps"].as<int>();
    c.warmup_steps = vm["warmup-steps"].as<int>();
    if (c.steps < 1) throw ConfigError("--steps must be at least 1");
    if (c.warmup_steps < 0) throw ConfigError("--warmup-steps must not be negative");
    c.workload.bucket_mb = vm["bucket-mb"].as<double>();
    if (!(c.workload.bucket_mb > 0)) throw ConfigError("--bucket-mb must be positive");
    c.workload.dp_mode = parse_dp_mode(vm["dp-mode"].as<std::string>());
    c.workload.sequence_parallel = vm["sequence-parallel"].as<bool>();
    c.workload.schedule = parse_schedule(vm["schedule"].as<std::string>());
    c.workload.virtual_stages = vm["virtual-stages"].as<int>();
    if (vm.count("pp-layers") != 0) {
      c.workload.split.layers = parse_layer_list(vm["pp-layers"].as<std::string>());
    }
    c.workload.split.account_for_embedding = vm["account-for-embedding"].as<bool>();
    c.workload.split.account_for_loss = vm["account-for-loss"].as<bool>();
    c.workload.offload = vm["offload"].as<bool>();
    c.workload.no_overlap = vm["no-overlap"].as<bool>();
    c.link_probe = !vm["no-link-probe"].as<bool>();
    c.findings = read_finding_gates(vm);
    if (vm.count("slow-rank") != 0) {
      std::tie(c.workload.slow_rank, c.workload.slow_factor) =
          parse_slow_rank(vm["slow-rank"].as<std::string>());
    }
    const std::string attention = vm["attention"].as<std::string>();
    c.attention_auto = attention == "auto";
    if (!c.attention_auto) c.workload.attention = parse_attention_mode(attention);
    c.timing = parse_op_timing(vm["op-timing"].as<std::string>());
    c.sample_every = vm["sample-every"].as<int>();
    if (c.sample_every < 1) throw ConfigError("--sample-every must be at least 1");
    if (vm.count("compute-from") != 0) {
      c.workload.compute = read_compute_profile(vm["compute-from"].as<std::string>(), s.layers);
    }
    c.workload.host_gaps = !vm["no-host-gaps"].as<bool>();
    if (!c.workload.host_gaps && !c.workload.compute) {
      throw ConfigError("--no-host-gaps needs --compute-from (only a traced step has gaps)");
    }
    c.dry_run = vm["dry-run"].as<bool>();
    c.dry_run_rank = vm["dry-run-rank"].as<int>();
    if (vm.count("out") != 0) c.out_dir = vm["out"].as<std::string>();
    c.rank_file_format = parse_rank_file_format(vm["rank-file-format"].as<std::string>());
    c.test_hang_rank = vm["test-hang-rank"].as<int>();
    c.test_no_activity_rank = vm["test-no-activity-rank"].as<int>();
    if (vm.count("test-fault") != 0)
      c.test_fault = parse_test_fault(vm["test-fault"].as<std::string>());
  }

  std::string backend_name() const override { return config_.dry_run ? "" : runtime_.backend; }
  BackendOptions backend_options() const override {
    BackendOptions options = runtime_.backend_options;
    options.activity_timing = needs_activity(config_.timing);
    options.test_no_activity_rank = config_.test_no_activity_rank;
    return options;
  }

  int run(RankContext& ctx, Backend* backend, const BackendChoice&) override {
    RunConfig c = config_;
    if (c.dry_run) {
      ParallelLayout l = resolve_layout(c, 1);
      validate_layout(l, l.world(), c.workload.shape);
      c.workload.layout = l;
      validate_workload(c.workload);
      check_slow_rank(c.workload, l.world());
      if (c.dry_run_rank < 0 || c.dry_run_rank >= l.world()) {
        throw ConfigError(
            log::cat("--dry-run-rank ", c.dry_run_rank, " is not a rank of ", describe(l)));
      }
      if (ctx.rank() == 0) print_dry_run(std::cout, c, l, c.dry_run_rank);
      return kExitOk;
    }
    // Deterministic on every rank (same options, same world size), so every rank agrees.
    const ParallelLayout layout = resolve_layout(c, ctx.size());
    validate_layout(layout, ctx.size(), c.workload.shape);
    c.workload.layout = layout;
    validate_workload(c.workload);
    check_slow_rank(c.workload, ctx.size());
    ctx.agree(backend->supports(c.workload.shape.dtype),
              std::string("the ") + backend->name() + " backend cannot run " +
                  dtype_name(c.workload.shape.dtype) + " (try --dtype float)");
    resolve_attention(ctx, *backend, c);
    if (!c.out_dir.empty()) {
      // Before measuring: a bad --out must not cost the whole run.
      prepare_output_directory(ctx, c.out_dir, runtime_.force);
    }

    RunSettings settings{c.steps, c.warmup_steps, c.timing, c.sample_every, std::nullopt};
    MockRun mock;
    mock.workload = c.workload;
    mock.settings = settings;
    mock.out_dir = c.out_dir;
    mock.rank_file_format = c.rank_file_format;
    mock.test_hang_rank = c.test_hang_rank;
    mock.test_fault = c.test_fault;
    mock.step_timeout_s = backend_options().timeout_s;
    mock.link_probe = c.link_probe;
    mock.on_probe = [&ctx](const LinkProbe& probe) {
      if (ctx.rank() == 0) std::cout << link_probe_line(probe) << '\n' << std::flush;
    };
    MockRunResult result = run_mock(ctx, *backend, mock);
    c.timing = result.timing;
    const OpPlan& plan = result.plan;
    RankTimeline& timeline = result.timeline;
    const bool measured = std::any_of(timeline.steps.begin(), timeline.steps.end(),
                                      [](const StepRecord& s) { return !s.warmup; });
    // Said before the summary and report: a launcher that passes a signal on may kill the ranks
    // a while later (Open MPI after Ctrl-C), and the reason must be on record by then.
    if (result.stopped_by != 0 && ctx.rank() == 0) {
      log::error(log::cat("stopped by signal ", result.stopped_by, " after ", timeline.steps.size(),
                          " of ", c.warmup_steps + c.steps, " steps",
                          c.out_dir.empty() ? "" : "; the steps measured are in " + c.out_dir,
                          measured ? "; the report follows" : ""));
    }
    int gates_code = kExitOk;
    if (measured) {
      RunSummaryHeader h;
      h.workload = &c.workload;
      // The steps run, not those asked for: a run stopped by a signal measured fewer.
      const auto warmups = std::count_if(timeline.steps.begin(), timeline.steps.end(),
                                         [](const StepRecord& s) { return s.warmup; });
      h.steps = static_cast<int>(timeline.steps.size()) - static_cast<int>(warmups);
      h.warmup_steps = static_cast<int>(warmups);
      h.timing = c.timing;
      h.sample_every = c.sample_every;
      h.attention_note = c.attention_note;
      print_run_summary(ctx, h, timeline, plan);
      gates_code = report_across_ranks(ctx, timeline, c.out_dir, c.rank_file_format, c.findings);
    }
    if (result.stopped_by != 0) return 128 + result.stopped_by;  // the shell's "ended by a signal"
    return gates_code;
  }

 private:
  RuntimeOptions runtime_;
  RunConfig config_;
};

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace commprof
