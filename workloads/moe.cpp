// SPDX-License-Identifier: MIT
#include "workloads/moe.hpp"

#include <algorithm>
#include <cmath>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {

MoeDispatch moe_dispatch(const ModelShape& s, const Routing& routing, int layer, int ep,
                         int ep_rank, std::uint64_t tokens, std::uint64_t step, int etp,
                         int etp_rank) {
  if (ep < 1 || s.experts % ep != 0) {
    throw ConfigError(log::cat("--ep ", ep, " does not divide --experts ", s.experts));
  }
  using U = std::uint64_t;
  const int local = s.experts / ep;
  const auto n = static_cast<std::size_t>(ep);
  const auto t = static_cast<std::size_t>(etp);
  const U h = static_cast<U>(s.hidden);
  // rows[source][expert]: what each rank of the expert TP × EP group routes to each expert at
  // this step; the rank at (etp rank a, ep rank e) is source a + etp·e.
  std::vector<std::vector<U>> rows(n * t);
  auto source = [&](std::size_t a, std::size_t e) { return a + t * e; };
  MoeDispatch d;
  if (s.capacity_factor > 0) {
    const double mean = static_cast<double>(tokens) * s.top_k / s.experts;
    d.capacity = static_cast<U>(std::ceil(s.capacity_factor * mean));
  }
  const std::size_t mine =
      source(static_cast<std::size_t>(etp_rank), static_cast<std::size_t>(ep_rank));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    rows[r] = routing.expert_counts(tokens, s.top_k, step, layer, static_cast<int>(r));
    if (d.capacity == 0) continue;
    for (U& c : rows[r]) {
      if (r == mine && c > d.capacity) d.dropped += c - d.capacity;
      c = d.capacity;  // padded or cut: every pair the same size
    }
  }
  // Rows the rank at `from` sends to EP rank `dest` (its local experts).
  auto block = [&](std::size_t from, std::size_t dest) {
    U total = 0;
    for (int e = 0; e < local; ++e)
      total += rows[from][dest * static_cast<std::size_t>(local) + static_cast<std::size_t>(e)];
    return total;
  };
  const auto a = static_cast<std::size_t>(etp_rank);
  const auto me = static_cast<std::size_t>(ep_rank);
  auto out = std::make_shared<PeerSplits>();
  auto back = std::make_shared<PeerSplits>();
  U send_at = 0, recv_at = 0;
  std::vector<U> received(n, 0);
  for (std::size_t p = 0; p < n; ++p) {
    out->send_counts.push_back(block(source(a, me), p) * h);
    out->send_displs.push_back(send_at);
    send_at += block(source(a, me), p) * h;
    out->recv_counts.push_back(block(source(a, p), me) * h);
    out->recv_displs.push_back(recv_at);
    recv_at += block(source(a, p), me) * h;
    for (std::size_t q = 0; q < n; ++q) received[p] += block(source(a, q), p);
  }
  back->send_counts = out->recv_counts;  // the experts' results go back where they came from
  back->send_displs = out->recv_displs;
  back->recv_counts = out->send_counts;
  back->recv_displs = out->send_displs;
  d.dispatch = out;
  d.combine = back;
  d.send_elements = send_at;
  d.recv_elements = recv_at;
  for (std::size_t b = 0; b < t; ++b) {  // what each ETP rank of this EP rank received
    U r = 0;
    for (std::size_t q = 0; q < n; ++q) r += block(source(b, q), me);
    d.etp_rows.push_back(r);
    d.gathered_elements += r * h;
  }
  for (int e = 0; e < local; ++e) {
    U r = 0;
    for (const auto& from : rows)
      r += from[me * static_cast<std::size_t>(local) + static_cast<std::size_t>(e)];
    d.expert_rows.push_back(r);
  }
  U most = 0, all = 0;
  for (U r : received) {
    most = std::max(most, r);
    all += r;
  }
  d.imbalance =
      all > 0 ? static_cast<double>(most) * static_cast<double>(n) / static_cast<double>(all) : 1.0;
  return d;
}

MoeGemms moe_gemms(const ModelShape& s, int tp, std::uint64_t tokens, int etp) {
  MoeGemms g;
  g.router_m = static_cast<int>(tokens);
  g.router_n = s.experts;
  g.router_k = s.hidden;
  const int gate = s.gated_ffn ? 2 : 1;  // up and gate fused into one GEMM
  g.expert_up_n = s.moe_ffn / etp * gate;
  g.expert_down_k = s.moe_ffn / etp;
  if (s.shared_experts > 0) {
    g.shared_up_n = s.shared_experts * s.moe_ffn / tp * gate;
    g.shared_down_k = s.shared_experts * s.moe_ffn / tp;
  }
  return g;
}

MoePasses moe_passes(const ModelShape& s, std::uint64_t tokens) {
  using U = std::uint64_t;
  const U t = tokens;
  const U k = static_cast<U>(s.top_k);
  const U x = static_cast<U>(s.experts);
  const U row = static_cast<U>(s.hidden) * dtype_size(s.dtype);
  const U rows = t * k * row;  // the routed copies' rows
  const U e = dtype_size(s.dtype);
  MoePasses p;
  p.topk_fwd = {4 * t * x, 4 * t * x + 12 * t * k};
  p.topk_bwd = {4 * t * x + 4 * t * k, 4 * t * x};
  // tokens.index_select(0, token of each routed copy): a gather of whole rows, vectorised.
  p.permute_fwd = {t * row + 8 * t * k, rows};
  // index_select's gradient is an index_add_ into zeros: the zeros written (T·h·E), then each
  // copy's row added into its token's row with atomic adds (PyTorch's index_add_).
  p.permute_bwd = {rows + 8 * t * k, 2 * t * row, AccessPattern::kScatterAdd, rows, t * row, row};
  // The experts' rows times their probabilities (a broadcast of one value a row: PyTorch's
  // unvectorised kernel), the probabilities first gathered into the rows' order (4·T·K).
  p.unpermute_probs_fwd = {rows + 4 * t * k, rows, AccessPattern::kStrided, rows, rows, 0};
  // The weighted rows added into zeros per token: zeros(T·h·E), then index_add_ (Megatron-Core's
  // unpermute: scatter_add_; both atomic adds of one element each).
  p.unpermute_fwd = {rows + 8 * t * k, 2 * t * row, AccessPattern::kScatterAdd, rows, t * row, row};
  // index_add_'s gradient for its source: the token rows' gradients gathered per copy.
  p.unpermute_bwd = {t * row + 8 * t * k, rows};
  // The product's gradients: grad · probabilities (broadcast: unvectorised), grad · rows
  // (vectorised), summed over h into the probabilities' gradient (read T·K·h·E, write T·K·E).
  p.unpermute_probs_bwd = {4 * rows + e * t * k,
                           2 * rows + e * t * k,
                           AccessPattern::kStrided,
                           rows + e * t * k,
                           rows,
                           0};
  return p;
}

PassBytes expert_act_fwd(const ModelShape& s, std::uint64_t rows, int etp) {
  const std::uint64_t row = static_cast<std::uint64_t>(s.moe_ffn / etp) * dtype_size(s.dtype);
  return ffn_act_fwd(s.gated_ffn, rows * row, row);
}

PassBytes expert_act_bwd(const ModelShape& s, std::uint64_t rows, int etp) {
  const std::uint64_t row = static_cast<std::uint64_t>(s.moe_ffn / etp) * dtype_size(s.dtype);
  return ffn_act_bwd(s.gated_ffn, rows * row, row);
}

std::vector<std::uint64_t> moe_layer_dense_tensors(const ModelShape& s, int tp) {
  using U = std::uint64_t;
  const bool biases = !s.gated_ffn;
  const U h = static_cast<U>(s.hidden);
  std::vector<U> out = layer_parameter_tensors(s, tp, false);  // the FFN is the experts'
  out.push_back(static_cast<U>(s.experts) * h);  // the router: no bias (Megatron-Core)
  if (s.shared_experts > 0) {
    const MoeGemms g = moe_gemms(s, tp, 1);
    out.push_back(static_cast<U>(g.shared_up_n) * h);
    if (biases) out.push_back(static_cast<U>(g.shared_up_n));
    out.push_back(h * static_cast<U>(g.shared_down_k));
    if (biases) out.push_back(h);
  }
  return out;
}

std::vector<std::uint64_t> moe_layer_expert_tensors(const ModelShape& s, int ep, int etp) {
  using U = std::uint64_t;
  const bool biases = !s.gated_ffn;
  const U h = static_cast<U>(s.hidden);
  const U up = static_cast<U>(s.moe_ffn / etp) * (s.gated_ffn ? 2 : 1);
  const U down = static_cast<U>(s.moe_ffn / etp);
  std::vector<U> out;
  for (int e = 0; e < s.experts / ep; ++e) {
    out.push_back(up * h);
    if (biases) out.push_back(up);
    out.push_back(h * down);
    if (biases) out.push_back(h);
  }
  return out;
}

}  // namespace commprof
