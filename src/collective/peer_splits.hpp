// SPDX-License-Identifier: MIT
// The per-peer counts of the uneven collectives (alltoallv, allgatherv, reducescatterv): plain
// data below the backend, so that plans can carry them without one.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace commprof {

/// One rank's side of an alltoallv, in elements, indexed by peer (a rank of the communicator):
/// it sends send_counts[p] elements from send + send_displs[p] to p and receives recv_counts[p]
/// elements from p into recv + recv_displs[p] (MPI_Alltoallv's arguments). The ranks' splits
/// must agree: rank r's send_counts[p] is p's recv_counts[r].
///
/// The uneven all-gather and reduce-scatter take the same struct, read as the data they move:
///  - allgatherv: this rank's send_counts[p] elements (every entry the same, its `count`) go to
///    each p from `send`; p's recv_counts[p] elements arrive at recv + recv_displs[p].
///  - reducescatterv: the block send + send_displs[p] of send_counts[p] elements goes to p, the
///    blocks laid out in rank order without gaps; this rank's recv_counts[p] (every entry its
///    `count`) is what p's block for it adds to the sum in `recv`.
/// uneven_gather_splits and uneven_scatter_splits build them from the per-rank counts.
struct PeerSplits {
  std::vector<std::size_t> send_counts;
  std::vector<std::size_t> send_displs;
  std::vector<std::size_t> recv_counts;
  std::vector<std::size_t> recv_displs;
};

/// The splits of an allgatherv on rank `rank` whose ranks contribute `counts` elements each.
inline PeerSplits uneven_gather_splits(const std::vector<std::size_t>& counts, int rank) {
  PeerSplits s;
  std::size_t at = 0;
  for (const std::size_t c : counts) {
    s.send_counts.push_back(counts[static_cast<std::size_t>(rank)]);
    s.send_displs.push_back(0);
    s.recv_counts.push_back(c);
    s.recv_displs.push_back(at);
    at += c;
  }
  return s;
}

/// The splits of a reducescatterv on rank `rank` whose ranks keep `counts` elements each.
inline PeerSplits uneven_scatter_splits(const std::vector<std::size_t>& counts, int rank) {
  PeerSplits s = uneven_gather_splits(counts, rank);
  std::swap(s.send_counts, s.recv_counts);
  std::swap(s.send_displs, s.recv_displs);
  return s;
}

}  // namespace commprof
