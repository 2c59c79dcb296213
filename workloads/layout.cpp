// SPDX-License-Identifier: MIT
#include "workloads/layout.hpp"

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {

RankPlace place_rank(const ParallelLayout& l, int rank) {
  RankPlace p;
  p.rank = rank;
  p.tp_rank = rank % l.tp;
  p.dp_rank = (rank / l.tp) % l.dp;
  p.pp_rank = rank / (l.tp * l.dp);
  auto world_of = [&](int t, int d, int q) { return t + l.tp * (d + l.dp * q); };
  for (int t = 0; t < l.tp; ++t) p.tp_group.push_back(world_of(t, p.dp_rank, p.pp_rank));
  for (int d = 0; d < l.dp; ++d) p.dp_group.push_back(world_of(p.tp_rank, d, p.pp_rank));
  for (int q = 0; q < l.pp; ++q) p.pp_group.push_back(world_of(p.tp_rank, p.dp_rank, q));
  p.tp_group_id = p.dp_rank + l.dp * p.pp_rank;
  p.dp_group_id = p.tp_rank + l.tp * p.pp_rank;
  p.pp_group_id = p.tp_rank + l.tp * p.dp_rank;
  if (l.pp > 1 && (p.pp_rank == 0 || p.pp_rank == l.pp - 1)) {
    p.embedding_group = {p.pp_group.front(), p.pp_group.back()};
  }
  return p;
}

void validate_layout(const ParallelLayout& l, int world_size, const ModelShape& shape) {
  if (l.tp < 1 || l.dp < 1 || l.pp < 1) {
    throw ConfigError(log::cat("--tp, --dp and --pp must be at least 1 (got ", describe(l), ")"));
  }
  if (l.world() != world_size) {
    throw ConfigError(log::cat("--tp ", l.tp, " x --dp ", l.dp, " x --pp ", l.pp, " = ", l.world(),
                               " ranks, but the job has ", world_size));
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
}

std::string describe(const ParallelLayout& l) {
  return log::cat("tp", l.tp, " x dp", l.dp, " x pp", l.pp);
}

}  // namespace commprof
