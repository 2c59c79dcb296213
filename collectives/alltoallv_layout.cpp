// SPDX-License-Identifier: MIT
#include "collectives/alltoallv_layout.hpp"

#include <algorithm>

#include "src/core/errors.hpp"

namespace commprof {

AllToAllvLayout::AllToAllvLayout(const Routing& routing, const MoeShape& shape, int n,
                                 std::uint64_t tokens)
    : n_(n), tokens_(tokens) {
  if (n < 1) throw ConfigError("an alltoallv needs at least 1 rank");
  const auto nn = static_cast<std::size_t>(n);
  matrix_.assign(nn * nn, 0);
  for (int source = 0; source < n; ++source) {
    const std::vector<std::uint64_t> per_rank = counts_per_rank(
        routing.expert_counts(tokens, shape.top_k, shape.step, shape.layer, source), n);
    for (std::size_t dest = 0; dest < nn; ++dest) {
      matrix_[static_cast<std::size_t>(source) * nn + dest] = per_rank[dest] * shape.hidden;
    }
  }
  per_rank_elements_ = tokens * static_cast<std::uint64_t>(shape.top_k) * shape.hidden;
}

std::uint64_t AllToAllvLayout::tokens_for(const MoeShape& shape, std::uint64_t requested_bytes,
                                          DType dtype) {
  const std::uint64_t row_bytes =
      static_cast<std::uint64_t>(shape.top_k) * shape.hidden * dtype_size(dtype);
  return row_bytes == 0 ? 0 : requested_bytes / row_bytes;
}

std::uint64_t AllToAllvLayout::elements(int source, int dest) const {
  return matrix_[static_cast<std::size_t>(source) * static_cast<std::size_t>(n_) +
                 static_cast<std::size_t>(dest)];
}

std::uint64_t AllToAllvLayout::send_offset(int source, int dest) const {
  std::uint64_t offset = 0;
  for (int p = 0; p < dest; ++p) offset += elements(source, p);
  return offset;
}

std::uint64_t AllToAllvLayout::recv_offset(int dest, int source) const {
  std::uint64_t offset = 0;
  for (int q = 0; q < source; ++q) offset += elements(q, dest);
  return offset;
}

std::uint64_t AllToAllvLayout::send_total(int rank) const { return send_offset(rank, n_); }

std::uint64_t AllToAllvLayout::recv_total(int rank) const { return recv_offset(rank, n_); }

CollectiveSizes AllToAllvLayout::sizes(DType dtype) const {
  CollectiveSizes s;
  s.count = s.send_count = per_rank_elements_;
  for (int r = 0; r < n_; ++r) s.recv_count = std::max(s.recv_count, recv_total(r));
  s.bytes = per_rank_elements_ * dtype_size(dtype);
  return s;
}

std::uint64_t AllToAllvLayout::busiest_offrank_elements() const {
  std::uint64_t busiest = 0;
  for (int r = 0; r < n_; ++r) {
    const std::uint64_t self = elements(r, r);
    busiest = std::max({busiest, send_total(r) - self, recv_total(r) - self});
  }
  return busiest;
}

std::uint64_t AllToAllvLayout::busiest_offrank_bytes(DType dtype) const {
  return busiest_offrank_elements() * dtype_size(dtype);
}

double AllToAllvLayout::busbw_factor() const {
  if (per_rank_elements_ == 0) return 0.0;
  return static_cast<double>(busiest_offrank_elements()) / static_cast<double>(per_rank_elements_);
}

double AllToAllvLayout::imbalance() const {
  std::vector<std::uint64_t> received;
  for (int r = 0; r < n_; ++r) received.push_back(recv_total(r));
  return load_stats(received).max_over_mean;
}

FillPattern AllToAllvLayout::input(int rank, DType dtype, std::uint64_t seed) const {
  return collective_spec(CollectiveKind::kAllToAllV).input(rank, n_, dtype, seed);
}

ExpectPattern AllToAllvLayout::expected(int rank, int source, DType dtype,
                                        std::uint64_t seed) const {
  ExpectPattern e;
  e.kind = ExpectKind::kData;
  e.nranks = n_;
  e.rank = rank;
  e.source = source;
  e.seed = seed;
  e.modulus = data_modulus(dtype);
  e.first_index = send_offset(source, rank);
  return e;
}

}  // namespace commprof
