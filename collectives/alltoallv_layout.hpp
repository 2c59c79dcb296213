// SPDX-License-Identifier: MIT
// The counts of one alltoallv as a mixture-of-experts dispatch makes them, its bytes, its bus
// bandwidth and the data that checks it.
//
// Every one of n ranks routes `tokens` tokens to `top_k` of `experts` experts (a Routing);
// rank p holds experts [p·E/n, (p+1)·E/n), so source rank r sends p its tokens routed to those
// experts, each routed copy a row of `hidden` elements. Every rank computes the whole n×n matrix
// itself from the routing, which is a pure function of (step, layer, rank): no exchange of counts
// before the call (Megatron all-gathers them; here that would be one more collective in every
// timed call, and the counts are known anyway), and every rank's view of it agrees.
//
// Bytes (docs/collectives.md): every rank sends tokens·top_k rows, so S = tokens·top_k·hidden·
// element size is both the mean and every rank's send total; what differs is what ranks
// receive (the experts' load). busbw counts the busiest rank: the most bytes any rank sends to or
// receives from other ranks, over the time; its factor is that over S.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/routing.hpp"
#include "src/collective/collective_spec.hpp"

namespace commprof {

/// The MoE shape behind an alltoallv: `--experts`, `--top-k`, `--hidden`, and which step and
/// layer of the routing the call is.
struct MoeShape {
  int experts = 64;
  int top_k = 6;
  std::uint64_t hidden = 1;  ///< elements per routed token (1: every element routed alone)
  std::uint64_t step = 0;
  int layer = 0;
};

class AllToAllvLayout {
 public:
  /// The dispatch of `tokens` tokens per rank over `n` ranks. Throws ConfigError when n does
  /// not divide the experts, or top_k is not within 1..experts.
  AllToAllvLayout(const Routing& routing, const MoeShape& shape, int n, std::uint64_t tokens);

  /// As many whole tokens per rank as fit `requested_bytes` of sends (tokens·top_k·hidden
  /// elements of `dtype`): 0 when not one does, as divided collectives give count 0.
  static std::uint64_t tokens_for(const MoeShape& shape, std::uint64_t requested_bytes,
                                  DType dtype);

  int ranks() const { return n_; }
  std::uint64_t tokens() const { return tokens_; }
  /// Elements rank `source` sends to rank `dest`.
  std::uint64_t elements(int source, int dest) const;
  /// Where in `source`'s send buffer its block for `dest` starts (elements).
  std::uint64_t send_offset(int source, int dest) const;
  /// Where in `dest`'s receive buffer its block from `source` starts (elements).
  std::uint64_t recv_offset(int dest, int source) const;
  std::uint64_t send_total(int rank) const;
  std::uint64_t recv_total(int rank) const;

  /// Sizes as the bench reports them: count = send_count = elements every rank sends;
  /// recv_count = the most any rank receives; bytes = S.
  CollectiveSizes sizes(DType dtype) const;
  /// The most bytes any rank sends to, or receives from, the other ranks.
  std::uint64_t busiest_offrank_bytes(DType dtype) const;
  /// busbw / algbw: busiest_offrank_bytes / S ((n−1)/n for equal splits); 0 without bytes.
  double busbw_factor() const;
  /// Max over mean of what ranks receive: the dispatch's load imbalance over EP ranks (1 when
  /// equal); 0 without bytes.
  double imbalance() const;

  /// What `rank` writes into its send buffer: the data pattern, block p at send_offset(rank, p).
  FillPattern input(int rank, DType dtype, std::uint64_t seed) const;
  /// What `rank`'s block from `source` (recv_offset(rank, source), elements(source, rank) long)
  /// must hold: source's data at source's send offset for rank.
  ExpectPattern expected(int rank, int source, DType dtype, std::uint64_t seed) const;

 private:
  std::uint64_t busiest_offrank_elements() const;

  int n_ = 1;
  std::uint64_t tokens_ = 0;
  std::uint64_t per_rank_elements_ = 0;  ///< tokens·top_k·hidden: every rank's send total
  std::vector<std::uint64_t> matrix_;    ///< n×n, row = source
};

}  // namespace commprof
