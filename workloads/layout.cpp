// SPDX-License-Identifier: MIT
#include "workloads/layout.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {

RankPlace place_rank(const ParallelLayout& l, int rank) {
  RankPlace p;
  p.rank = rank;
  const int stage = l.tp * l.cp * l.dp;  // ranks of one pipeline stage
  const int local = rank % stage;
  p.pp_rank = rank / stage;
  p.tp_rank = local % l.tp;
  p.cp_rank = (local / l.tp) % l.cp;
  p.dp_rank = local / (l.tp * l.cp);
  auto dense = [&](int t, int c, int d, int q) { return t + l.tp * (c + l.cp * (d + l.dp * q)); };
  for (int t = 0; t < l.tp; ++t) p.tp_group.push_back(dense(t, p.cp_rank, p.dp_rank, p.pp_rank));
  for (int c = 0; c < l.cp; ++c) p.cp_group.push_back(dense(p.tp_rank, c, p.dp_rank, p.pp_rank));
  for (int d = 0; d < l.dp; ++d) {
    for (int c = 0; c < l.cp; ++c) p.dp_group.push_back(dense(p.tp_rank, c, d, p.pp_rank));
  }
  for (int q = 0; q < l.pp; ++q) p.pp_group.push_back(dense(p.tp_rank, p.cp_rank, p.dp_rank, q));
  p.tp_group_id = p.cp_rank + l.cp * (p.dp_rank + l.dp * p.pp_rank);
  p.cp_group_id = p.tp_rank + l.tp * (p.dp_rank + l.dp * p.pp_rank);
  p.dp_group_id = p.tp_rank + l.tp * p.pp_rank;
  p.pp_group_id = p.tp_rank + l.tp * (p.cp_rank + l.cp * p.dp_rank);
  if (l.pp > 1 && (p.pp_rank == 0 || p.pp_rank == l.pp - 1)) {
    p.embedding_group = {p.pp_group.front(), p.pp_group.back()};
  }

  // The experts' groups, folded onto the same stage's ranks.
  const int etp = l.expert_tp();
  const int edp = stage / (etp * l.ep);
  p.etp_rank = local % etp;
  p.ep_rank = (local / etp) % l.ep;
  p.edp_rank = local / (etp * l.ep);
  const int base = p.pp_rank * stage;
  auto expert = [&](int t, int e, int d) { return base + t + etp * (e + l.ep * d); };
  for (int t = 0; t < etp; ++t) p.etp_group.push_back(expert(t, p.ep_rank, p.edp_rank));
  for (int e = 0; e < l.ep; ++e) p.ep_group.push_back(expert(p.etp_rank, e, p.edp_rank));
  for (int d = 0; d < edp; ++d) p.edp_group.push_back(expert(p.etp_rank, p.ep_rank, d));
  for (int e = 0; e < l.ep; ++e) {
    for (int t = 0; t < etp; ++t) p.tp_ep_group.push_back(expert(t, e, p.edp_rank));
  }
  p.etp_group_id = p.ep_rank + l.ep * (p.edp_rank + edp * p.pp_rank);
  p.ep_group_id = p.etp_rank + etp * (p.edp_rank + edp * p.pp_rank);
  p.edp_group_id = p.etp_rank + etp * (p.ep_rank + l.ep * p.pp_rank);
  p.tp_ep_group_id = p.edp_rank + edp * p.pp_rank;
  return p;
}

void validate_layout(const ParallelLayout& l, int world_size, const ModelShape& shape) {
  if (l.tp < 1 || l.dp < 1 || l.pp < 1 || l.cp < 1 || l.ep < 1 || l.etp < 0) {
    throw ConfigError(
        log::cat("--tp, --dp, --pp, --cp and --ep must be at least 1 (got ", describe(l), ")"));
  }
  if (l.world() != world_size) {
    const std::string cp = l.cp > 1 ? log::cat(" x --cp ", l.cp) : "";
    throw ConfigError(log::cat("--tp ", l.tp, cp, " x --dp ", l.dp, " x --pp ", l.pp, " = ",
                               l.world(), " ranks, but the job has ", world_size));
  }
  if (shape.heads % l.tp != 0) {
    throw ConfigError(log::cat("--heads ", shape.heads, " is not divisible by --tp ", l.tp));
  }
  if (shape.key_value_heads() % l.tp != 0) {  // Megatron: each rank holds whole K/V heads
    throw ConfigError(
        log::cat("--kv-heads ", shape.key_value_heads(), " is not divisible by --tp ", l.tp));
  }
  if (shape.ffn % l.tp != 0)
    throw ConfigError(log::cat("--ffn ", shape.ffn, " is not divisible by --tp ", l.tp));
  if (shape.seq % (2 * l.cp) != 0 && l.cp > 1) {  // the causal split: 2·cp chunks
    throw ConfigError(
        log::cat("--seq ", shape.seq, " is not divisible by 2 x --cp ", l.cp, " (", 2 * l.cp,
                 " chunks: each CP rank takes one from each end, for causal balance)"));
  }
  const int stage = l.tp * l.cp * l.dp;
  const int expert_ranks = l.expert_tp() * l.ep;
  if (stage % expert_ranks != 0) {
    throw ConfigError(log::cat("the experts' --etp ", l.expert_tp(), " x --ep ", l.ep, " = ",
                               expert_ranks, " ranks do not divide a pipeline stage's --tp ", l.tp,
                               " x --cp ", l.cp, " x --dp ", l.dp, " = ", stage, " ranks"));
  }
}

std::string describe(const ParallelLayout& l) {
  std::string s = log::cat("tp", l.tp, " x dp", l.dp, " x pp", l.pp);
  if (l.cp > 1) s += log::cat(" x cp", l.cp);
  if (l.ep > 1 || l.etp > 0) {
    s += log::cat(" x ep", l.ep, " (etp", l.expert_tp(), ", edp", l.expert_dp(), ")");
  }
  return s;
}

ParallelLayout parse_layout(const std::string& text) {
  ParallelLayout l;
  std::set<std::string> seen;
  std::istringstream in(text);
  std::string item;
  auto bad = [&](const std::string& why) {
    throw ConfigError("invalid --layout '" + text + "': " + why +
                      " (expected tp=N,pp=N,dp=N[,cp=N,ep=N,etp=N], e.g. tp=2,pp=2,dp=2)");
  };
  while (std::getline(in, item, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) bad("'" + item + "' has no '='");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (value.empty() || value.size() > 6 || !std::all_of(value.begin(), value.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        })) {
      bad("'" + value + "' is not a whole number");
    }
    const int n = std::stoi(value);
    if (n < 1) bad(key + " must be at least 1");
    if (!seen.insert(key).second) bad(key + " given twice");
    if (key == "tp") {
      l.tp = n;
    } else if (key == "pp") {
      l.pp = n;
    } else if (key == "dp") {
      l.dp = n;
    } else if (key == "cp") {
      l.cp = n;
    } else if (key == "ep") {
      l.ep = n;
    } else if (key == "etp") {
      l.etp = n;
    } else {
      bad("unknown degree '" + key + "'");
    }
  }
  if (seen.empty()) bad("no degree given");
  return l;
}

std::string layout_text(const ParallelLayout& l) {
  std::string s = log::cat("tp=", l.tp, ",pp=", l.pp, ",dp=", l.dp);
  if (l.cp > 1) s += log::cat(",cp=", l.cp);
  if (l.ep > 1) s += log::cat(",ep=", l.ep);
  if (l.etp > 0) s += log::cat(",etp=", l.etp);
  return s;
}

}  // namespace commprof
