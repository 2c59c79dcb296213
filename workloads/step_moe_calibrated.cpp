// SPDX-License-Identifier: MIT
// StepBuilder under --compute-from with MoE layers: how a traced layer's kernel time divides
// among layers of different weight and, in an MoE layer, among attention, the MoE block's dense
// work and its routed experts (docs/workloads.md, "Calibrated from a trace").
//
// The trace is of one GPU (EP 1): every token's top-k rows ran there. An MoE layer's time in one
// direction splits by the one-GPU FLOPs of one micro-batch: attention's GEMMs A, the router's R,
// the shared experts' S and the routed experts' X = 2·T·k·h·(up + down) (T tokens, k per token):
// attention A/F, the dense part (R + S)/F, the experts X/F, F = A + R + S + X. The experts' part
// is a rate per routed row, X/F over T·k rows, so a rank at EP > 1 runs its experts for as long
// as the rows the run's router sends it (its own routing, uniform or Zipf, step by step), with
// the dispatch and combine all-to-allvs real; expert TP divides it, TP divides attention and
// the shared experts. Across layers the traced time per layer is the mean, except where the
// model mixes dense and MoE layers (dense_layers): then each layer's share is its FLOPs' share.
#include <algorithm>
#include <numeric>

#include "workloads/step_builder.hpp"

namespace commprof {
namespace {

// One micro-batch's FLOPs on one GPU of an MoE layer's parts (T tokens), as the trace ran them.
struct MoeFlops {
  double router = 0, shared = 0, experts = 0;
};
MoeFlops moe_flops(const ModelShape& s, std::uint64_t tokens) {
  const MoeGemms g = moe_gemms(s, 1, tokens, 1);
  const double t = static_cast<double>(tokens);
  MoeFlops f;
  f.router = 2.0 * t * g.router_n * g.router_k;
  f.shared = 2.0 * t * s.hidden * (g.shared_up_n + g.shared_down_k);
  f.experts = 2.0 * t * s.top_k * s.hidden * (g.expert_up_n + g.expert_down_k);
  return f;
}

}  // namespace

void StepBuilder::calibrate_layers() {
  // The traced GPU's layer: the whole sequence and every head (not this rank's s/cp tokens over
  // TP, whose score and context GEMMs shrink with the square of the CP degree).
  const std::vector<LayerGemm> traced = layer_forward_gemms(c_.shape, 1);
  double attn = 0, ffn = 0;
  for (const LayerGemm& g : traced) (is_ffn(g) ? ffn : attn) += g.flops();
  traced_attn_share_ = attn / (attn + ffn);
  for (const LayerGemm& g : traced) {
    if (is_ffn(g)) continue;
    const double share = g.flops() / attn;
    if (g.name == "qkv") {
      attn_parts_.qkv += share;
    } else if (g.name == "out_proj") {
      attn_parts_.out += share;
    } else {
      attn_parts_.core += share;  // the score and context GEMMs
    }
  }
  const std::uint64_t tokens = static_cast<std::uint64_t>(c_.shape.micro_batch) * c_.shape.seq;
  const MoeFlops m = moe_flops(c_.shape, tokens);
  const double moe_layer = attn + m.router + m.shared + m.experts;
  moe_shares_ = {attn / moe_layer, (m.router + m.shared / t_) / moe_layer, m.experts / moe_layer};
  moe_traced_rows_ = static_cast<double>(tokens) * c_.shape.top_k;
  std::vector<double> flops;
  for (int l = 0; l < c_.shape.layers; ++l)
    flops.push_back(c_.shape.moe_layer(l) ? moe_layer : attn + ffn);
  const double mean =
      std::accumulate(flops.begin(), flops.end(), 0.0) / static_cast<double>(flops.size());
  if (std::all_of(flops.begin(), flops.end(), [&](double f) { return f == flops.front(); })) return;
  for (double f : flops) layer_weight_.push_back(f / mean);
}

double StepBuilder::traced_layer_ns(int l, bool backward) const {
  const double mean = backward ? c_.compute->layer_backward_ns() : c_.compute->layer_forward_ns();
  return layer_weight_.empty() ? mean : mean * layer_weight_.at(static_cast<std::size_t>(l));
}

// The traced time of the rows this rank's experts run: the rate per routed row times its rows,
// over expert TP.
std::uint64_t StepBuilder::expert_ns(int l, bool backward, const MoeDispatch& d) const {
  const double rows = std::accumulate(d.expert_rows.begin(), d.expert_rows.end(), 0.0);
  const double rate = traced_layer_ns(l, backward) * moe_shares_.experts / moe_traced_rows_;
  return static_cast<std::uint64_t>(rate * rows / c_.layout.expert_tp());
}

// The MoE block's forward under --compute-from: its dense part (router, top-k, permutation,
// shared experts), the routing counts read on the host, the dispatch all-to-allv (and expert
// TP's gather), the experts, expert TP's scatter and the combine all-to-allv.
int StepBuilder::moe_forward_calibrated(int l, int mb, int x, int params) {
  const MoeDispatch& d = dispatch_of(l);
  const auto dense = static_cast<std::uint64_t>(traced_layer_ns(l, false) * moe_shares_.dense);
  int y = plan_.compute(lname(l, "moe_dense", mb) + ".fwd", dense, {x, params});
  y = routing_counts(l, mb, y);
  y = alltoallv(lname(l, "dispatch", mb), d.dispatch, d.send_elements, y);
  y = etp_exchange(lname(l, "etp_gather", mb), true, d, y);
  y = plan_.compute(lname(l, "experts", mb) + ".fwd", expert_ns(l, false, d),
                    {y, expert_params(l)});
  y = etp_exchange(lname(l, "etp_scatter", mb), false, d, y);
  return alltoallv(lname(l, "combine", mb), d.combine, d.recv_elements, y);
}

// Its backward: the combine's and expert TP's backward, the experts (each local expert's
// gradients then ready for expert DP), the dispatch's backward, the dense part (the router's and
// shared experts' gradients then ready).
int StepBuilder::moe_backward_calibrated(int l, int mb, int dy, int h2d, bool last_pass) {
  const MoeDispatch& d = dispatch_of(l);
  int y = alltoallv(lname(l, "combine.bwd", mb), d.dispatch, d.send_elements, dy);
  y = etp_exchange(lname(l, "etp_scatter.bwd", mb), true, d, y);
  y = plan_.compute(lname(l, "experts", mb) + ".bwd", expert_ns(l, true, d),
                    {y, expert_params(l), h2d});
  replay_gap(y, ComputePart::kBackward, traced_layer_passes());
  if (last_pass) {
    const int first = place_.ep_rank * static_cast<int>(d.expert_rows.size());
    for (std::size_t i = d.expert_rows.size(); i-- > 0;) {
      const std::string ex = log::cat("l", l, ".expert", first + static_cast<int>(i));
      expert_grad_ready(ex + ".down", y);
      expert_grad_ready(ex + ".up", y);
    }
  }
  y = etp_exchange(lname(l, "etp_gather.bwd", mb), false, d, y);
  y = alltoallv(lname(l, "dispatch.bwd", mb), d.combine, d.recv_elements, y);
  const auto dense = static_cast<std::uint64_t>(traced_layer_ns(l, true) * moe_shares_.dense);
  y = plan_.compute(lname(l, "moe_dense", mb) + ".bwd", dense, {y});
  if (last_pass) {
    grad_ready(log::cat("l", l, ".router"), y);
    if (moe_gemms(c_.shape, t_, 1).shared_up_n > 0) {
      grad_ready(log::cat("l", l, ".shared_down"), y);
      grad_ready(log::cat("l", l, ".shared_up"), y);
    }
  }
  return y;
}

}  // namespace commprof
