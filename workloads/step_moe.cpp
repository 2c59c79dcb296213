// SPDX-License-Identifier: MIT
// StepBuilder: an MoE layer's forward and backward, Megatron-Core's MoELayer with the alltoall
// token dispatcher (docs/workloads.md, "Mixture of experts").
#include "workloads/step_builder.hpp"

namespace commprof {

const MoeDispatch& StepBuilder::dispatch_of(int l) {
  auto it = dispatch_.find(l);
  if (it == dispatch_.end()) {
    it =
        dispatch_
            .emplace(l, moe_dispatch(c_.shape, *routing_, l, c_.layout.ep, place_.ep_rank,
                                     moe_tokens(c_), step_, c_.layout.expert_tp(), place_.etp_rank))
            .first;
  }
  return it->second;
}

// An all-to-allv over EP with `splits`; its bytes: what this rank sends. None at EP 1: there,
// as Megatron-Core's all-to-all over one rank, the input is the output.
int StepBuilder::alltoallv(const std::string& name, const std::shared_ptr<const PeerSplits>& splits,
                           std::uint64_t send_elements, int after) {
  if (c_.layout.ep == 1) return after;
  const int id = plan_.collective(name, CollectiveKind::kAllToAllV, Group::kEp, send_elements,
                                  send_elements * elem_, {after});
  std::get<PlannedCollective>(plan_.ops[static_cast<std::size_t>(id)].call).splits = splits;
  return id;
}

// The rows an EP rank's expert-TP ranks received, brought together (`gather`) before the experts
// or their partial outputs summed and handed back (the scatter), over expert TP with each
// rank's own size: Megatron-Core's dispatcher gathers with output_split_sizes and
// reduce-scatters with input_split_sizes = output_splits_tp (ProcessGroupNCCL runs them as
// coalesced broadcasts and reduces). The backward of one is the other, with the same sizes. With
// a capacity factor every rank's rows are the same (Megatron's drop-and-pad leaves the split
// sizes unset): the even all-gather and reduce-scatter. None at expert TP 1. Its bytes: the
// whole gathered buffer, the same on every rank.
int StepBuilder::etp_exchange(const std::string& name, bool gather, const MoeDispatch& d,
                              int after) {
  const int etp = c_.layout.expert_tp();
  if (etp == 1) return after;
  const auto h = static_cast<std::uint64_t>(c_.shape.hidden);
  const std::uint64_t count = d.etp_rows[static_cast<std::size_t>(place_.etp_rank)] * h;
  const bool even = d.capacity > 0;
  const CollectiveKind kind =
      even ? (gather ? CollectiveKind::kAllGather : CollectiveKind::kReduceScatter)
           : (gather ? CollectiveKind::kAllGatherV : CollectiveKind::kReduceScatterV);
  const int id =
      plan_.collective(name, kind, Group::kEtp, count, d.gathered_elements * elem_, {after});
  if (!even) {
    std::vector<std::size_t> counts;
    for (const std::uint64_t r : d.etp_rows) counts.push_back(r * h);
    std::get<PlannedCollective>(plan_.ops[static_cast<std::size_t>(id)].call).splits =
        std::make_shared<const PeerSplits>(gather ? uneven_gather_splits(counts, place_.etp_rank)
                                                  : uneven_scatter_splits(counts, place_.etp_rank));
  }
  return id;
}

// Forward of the MoE block on the normed input `x` (the rank's tokens: its part of the
// sequence under sequence parallelism): shared experts, router and top-k, the per-expert
// counts all-gathered over expert TP x EP and read on the host (a device-to-host copy the host
// waits for: Megatron-Core's dispatcher needs the counts to size the all-to-all), permutation,
// the dispatch all-to-allv, under expert TP the gather of the expert-TP ranks' rows, each local
// expert's FFN (its columns over expert TP) on its rows, under expert TP the scatter of their
// outputs, the combine all-to-allv, unpermutation (Megatron-Core's MoEAlltoAllTokenDispatcher:
// permute, all-to-all over EP, all-gather over expert TP; reduce-scatter over expert TP,
// all-to-all over EP, unpermute).
int StepBuilder::moe_forward(int l, int mb, int x, int params) {
  const ModelShape& s = c_.shape;
  const std::uint64_t tokens = moe_tokens(c_);
  const int etp = c_.layout.expert_tp();
  const MoeGemms g = moe_gemms(s, t_, tokens, etp);
  const MoePasses p = moe_passes(s, tokens);
  const MoeDispatch& d = dispatch_of(l);
  int shared = -1;
  if (g.shared_up_n > 0) {  // a dense FFN over TP on every token, as the layer's own would be
    int y = tp_gather(lname(l, "shared", mb), x);
    y = plan_.gemm(lname(l, "shared_up", mb) + ".fwd", static_cast<int>(tokens_), g.shared_up_n,
                   s.hidden, {y, params});
    y = pass(lname(l, "shared_act", mb) + ".fwd", shared_act(false), y);
    y = plan_.gemm(lname(l, "shared_down", mb) + ".fwd", static_cast<int>(tokens_), s.hidden,
                   g.shared_down_k, {y});
    shared = tp_reduce(lname(l, "shared", mb), y);
  }
  int y =
      plan_.gemm(lname(l, "router", mb) + ".fwd", g.router_m, g.router_n, g.router_k, {x, params});
  y = pass(lname(l, "topk", mb) + ".fwd", p.topk_fwd, y);
  y = routing_counts(l, mb, y);
  y = pass(lname(l, "permute", mb) + ".fwd", p.permute_fwd, y);
  y = alltoallv(lname(l, "dispatch", mb), d.dispatch, d.send_elements, y);
  y = etp_exchange(lname(l, "etp_gather", mb), true, d, y);
  const int first_expert = place_.ep_rank * static_cast<int>(d.expert_rows.size());
  const int experts = expert_params(l);
  for (std::size_t e = 0; e < d.expert_rows.size(); ++e) {
    const auto rows = d.expert_rows[e];
    if (rows == 0) continue;  // no token routed here: no kernel, as a grouped GEMM skips it
    const std::string ex = log::cat("expert", first_expert + static_cast<int>(e));
    y = plan_.gemm(lname(l, (ex + ".up").c_str(), mb) + ".fwd", gemm_rows(rows), g.expert_up_n,
                   s.hidden, {y, experts});
    y = pass(lname(l, (ex + ".act").c_str(), mb) + ".fwd", expert_act_fwd(s, rows, etp), y);
    y = plan_.gemm(lname(l, (ex + ".down").c_str(), mb) + ".fwd", gemm_rows(rows), s.hidden,
                   g.expert_down_k, {y});
  }
  y = etp_exchange(lname(l, "etp_scatter", mb), false, d, y);
  y = alltoallv(lname(l, "combine", mb), d.combine, d.recv_elements, y);
  y = pass(lname(l, "unpermute_probs", mb) + ".fwd", p.unpermute_probs_fwd, y);
  return pass(lname(l, "unpermute", mb) + ".fwd", p.unpermute_fwd, y, shared);
}

// The tokens per expert of every rank of the expert TP x EP group, all-gathered (E int64 each),
// copied to the host, which waits for them before it issues the rest of the step.
int StepBuilder::routing_counts(int l, int mb, int after) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(c_.shape.experts) * 8;
  const std::uint64_t count = (bytes + elem_ - 1) / elem_;
  const int group = c_.layout.expert_tp() * c_.layout.ep;
  int y = after;
  if (group > 1) {
    y = plan_.collective(lname(l, "routing_counts", mb) + ".ag", CollectiveKind::kAllGather,
                         Group::kTpEp, count, count * elem_ * static_cast<std::uint64_t>(group),
                         {after});
  }
  y = plan_.copy(lname(l, "routing_counts", mb) + ".d2h", CopyKind::kDeviceToHost,
                 bytes * static_cast<std::uint64_t>(group), {y});
  plan_.ops[static_cast<std::size_t>(y)].host_waits = true;
  return y;
}

PassBytes StepBuilder::shared_act(bool backward) const {
  const std::uint64_t row =
      static_cast<std::uint64_t>(moe_gemms(c_.shape, t_, 1).shared_down_k) * elem_;
  const std::uint64_t f = tokens_ * row;
  return backward ? ffn_act_bwd(c_.shape.gated_ffn, f, row)
                  : ffn_act_fwd(c_.shape.gated_ffn, f, row);
}

// Backward of the MoE block: unpermutation's gradient, the combine's all-to-allv backward (the
// rows' gradients to the experts' ranks: the dispatch's splits), under expert TP the scatter's
// backward (an all-gather of the expert-TP ranks' rows' gradients), each local expert's input
// and weight gradients (its gradients then ready for expert DP), under expert TP the gather's
// backward (a reduce-scatter of the input gradients' partial sums), the dispatch's backward (the
// combine's splits), permutation's and the router's gradients, the shared experts'.
int StepBuilder::moe_backward(int l, int mb, int dy, int h2d, bool last_pass) {
  const ModelShape& s = c_.shape;
  const std::uint64_t tokens = moe_tokens(c_);
  const int etp = c_.layout.expert_tp();
  const MoeGemms g = moe_gemms(s, t_, tokens, etp);
  const MoePasses p = moe_passes(s, tokens);
  const MoeDispatch& d = dispatch_of(l);
  int y = pass(lname(l, "unpermute", mb) + ".bwd", p.unpermute_bwd, dy, h2d);
  y = pass(lname(l, "unpermute_probs", mb) + ".bwd", p.unpermute_probs_bwd, y);
  y = alltoallv(lname(l, "combine.bwd", mb), d.dispatch, d.send_elements, y);
  y = etp_exchange(lname(l, "etp_scatter.bwd", mb), true, d, y);
  const int experts = expert_params(l);
  const int first_expert = place_.ep_rank * static_cast<int>(d.expert_rows.size());
  for (std::size_t i = d.expert_rows.size(); i-- > 0;) {
    const auto rows = d.expert_rows[i];
    const int e = first_expert + static_cast<int>(i);
    const std::string ex = log::cat("expert", e);
    if (rows == 0) {
      if (last_pass) expert_grad_ready(log::cat("l", l, ".", ex, ".up"), y);
      continue;
    }
    const int m = gemm_rows(rows);
    y = plan_.gemm(lname(l, (ex + ".down").c_str(), mb) + ".dgrad", m, g.expert_down_k, s.hidden,
                   {y, experts});
    int w = plan_.gemm(lname(l, (ex + ".down").c_str(), mb) + ".wgrad", g.expert_down_k, s.hidden,
                       m, {y});
    if (last_pass) expert_grad_ready(log::cat("l", l, ".", ex, ".down"), w);
    y = pass(lname(l, (ex + ".act").c_str(), mb) + ".bwd", expert_act_bwd(s, rows, etp), w);
    y = plan_.gemm(lname(l, (ex + ".up").c_str(), mb) + ".dgrad", m, s.hidden, g.expert_up_n, {y});
    w = plan_.gemm(lname(l, (ex + ".up").c_str(), mb) + ".wgrad", s.hidden, g.expert_up_n, m, {y});
    if (last_pass) expert_grad_ready(log::cat("l", l, ".", ex, ".up"), w);
    y = w;
  }
  y = etp_exchange(lname(l, "etp_gather.bwd", mb), false, d, y);
  y = alltoallv(lname(l, "dispatch.bwd", mb), d.combine, d.recv_elements, y);
  y = pass(lname(l, "permute", mb) + ".bwd", p.permute_bwd, y);
  y = pass(lname(l, "topk", mb) + ".bwd", p.topk_bwd, y);
  const int dgrad =
      plan_.gemm(lname(l, "router", mb) + ".dgrad", g.router_m, g.router_k, g.router_n, {y});
  const int wgrad =
      plan_.gemm(lname(l, "router", mb) + ".wgrad", g.router_k, g.router_n, g.router_m, {dgrad});
  if (last_pass) grad_ready(log::cat("l", l, ".router"), wgrad);
  y = wgrad;
  if (g.shared_up_n > 0) {
    const int n = static_cast<int>(tokens_);
    int z = tp_gather(lname(l, "shared.bwd", mb), dy);
    z = plan_.gemm(lname(l, "shared_down", mb) + ".dgrad", n, g.shared_down_k, s.hidden, {z});
    int w = plan_.gemm(lname(l, "shared_down", mb) + ".wgrad", g.shared_down_k, s.hidden, n, {z});
    if (last_pass) grad_ready(log::cat("l", l, ".shared_down"), w);
    z = pass(lname(l, "shared_act", mb) + ".bwd", shared_act(true), w);
    z = plan_.gemm(lname(l, "shared_up", mb) + ".dgrad", n, s.hidden, g.shared_up_n, {z});
    const int reduced = tp_reduce(lname(l, "shared.bwd", mb), z);
    w = plan_.gemm(lname(l, "shared_up", mb) + ".wgrad", s.hidden, g.shared_up_n, n, {z});
    if (last_pass) grad_ready(log::cat("l", l, ".shared_up"), w);
    y = reduced == z ? w : reduced;
  }
  return y;
}

// DDP's hook for an expert's gradient: its bucket all-reduced over expert DP when complete.
void StepBuilder::expert_grad_ready(const std::string& param, int wgrad) {
  bucket_ready(param, wgrad, expert_closing_, expert_buckets_, "edp", Group::kEdp);
}

}  // namespace commprof
