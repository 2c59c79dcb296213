// SPDX-License-Identifier: MIT
// ASTRA-sim's analytical network configuration (a YAML of topology, npus_count, bandwidth in
// ASTRA-sim's "GB/s", which it reads as GiB/s, and latency in ns, one entry per dimension, as
// astra-sim's examples/network/analytical/*.yml) and its communicator-group file, from a run's own
// measurements: the dimensions are the communicator kinds whose groups tile the ranks (tp, then cp,
// dp, pp, as Megatron lays ranks out), each fitted from its measured collectives.
// write_network_yaml takes any dimensions: a link model fitted elsewhere replaces the measured
// figures there.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analysis/graph/step_graph.hpp"
#include "workloads/prediction/chakra/chakra_trace.hpp"

namespace commprof {

/// One dimension of the network.
struct NetworkDim {
  std::string kind;  ///< the communicator kind it carries ("tp", "dp"); "all" for one dimension
  /// Other kinds whose groups are the same runs of ranks (an MoE run's dp, ep and tp_ep on two
  /// ranks): their collectives run on this dimension too, and their samples fit it.
  std::vector<std::string> alike;
  int npus = 0;
  std::string topology = "Ring";
  double bandwidth_gbps = 0.0;  ///< per link, GB/s (10⁹ B/s)
  double latency_ns = 0.0;      ///< per step of the ring algorithm
  std::string how;              ///< how the two figures were obtained (the YAML's comment)
};

/// The dimensions of the network `exported` (the step written) implies: the communicator kinds
/// whose groups are runs of ranks with strides 1, n0, n0·n1, … up to the world (the kind with
/// most ops first among kinds of one stride). Kinds that do not tile the ranks (an
/// embedding group, a communicator of every rank) get none; one dimension "all" of every rank
/// when no set of kinds tiles the world. Bandwidth and latency are left 0: fit_measured_links,
/// or a link model fitted elsewhere, fills them in.
std::vector<NetworkDim> network_dimensions(const StepGraph& exported);

/// Fills each dimension's bandwidth and latency from its kind's matched collectives over
/// `graphs` (every measured step): time = L·steps + S·busbw factor / B by least squares (steps:
/// the ring algorithm's, 2(n−1) for an all-reduce, n−1 otherwise; S·factor: the bytes each link
/// carries), L the latency and B the bandwidth; with one size (or a fit that is not positive)
/// B = Σ S·factor / Σ time (the busbw) and L = 0. Point-to-point kinds (no matched
/// collectives): the shortest transfer of each size, one step each. "all", and a kind without
/// a sample: every kind's samples.
void fit_measured_links(const std::vector<StepGraph>& graphs, std::vector<NetworkDim>& dims);

/// network_dimensions, then fit_measured_links.
std::vector<NetworkDim> measured_network(const std::vector<StepGraph>& graphs,
                                         const StepGraph& exported);

/// The kinds of `dims` for involved_dim (ChakraExport).
ChakraDims dims_of(const std::vector<NetworkDim>& dims);

/// `gbps` (10⁹ B/s) in the unit of the YAML's bandwidth: ASTRA-sim's analytical backend reads
/// "GB/s" as 2^30 B/s (common/NetworkFunction.cpp of astra-network-analytical: bw · 2^30 / 10⁹
/// B/ns), so the file holds GiB/s; 10⁹ B/s written as such would run every link 7.4% fast.
double astra_bandwidth(double gbps);

/// The YAML ASTRA-sim's analytical backends read (bandwidth in GiB/s, astra_bandwidth; six
/// significant digits, so slow host links keep their figure), `header` lines first as comments,
/// each dimension's `how` after them.
void write_network_yaml(std::ostream& os, const std::vector<NetworkDim>& dims,
                        const std::vector<std::string>& header);

/// ASTRA-sim's communicator-group file: {"<id>": [ranks], ...}.
void write_comm_groups_json(std::ostream& os, const std::vector<ChakraGroup>& groups);

}  // namespace commprof
