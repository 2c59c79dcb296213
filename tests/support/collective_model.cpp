// SPDX-License-Identifier: MIT
#include "support/collective_model.hpp"

#include <cmath>
#include <cstddef>

namespace commprof::testing {

RankBuffers simulate_collective(CollectiveKind kind, const CollectiveSizes& sizes, int root,
                                const RankBuffers& sends) {
  const std::size_t n = sends.size();
  const std::size_t count = sizes.count;
  RankBuffers recv(n, std::vector<double>(sizes.recv_count, kUndefined));
  auto sum_at = [&](std::size_t index) {
    double total = 0;
    for (const auto& send : sends) total += send.at(index);
    return total;
  };
  for (std::size_t r = 0; r < n; ++r) {
    auto& out = recv[r];
    switch (kind) {
      case CollectiveKind::kAllReduce:
        for (std::size_t i = 0; i < count; ++i) out[i] = sum_at(i);
        break;
      case CollectiveKind::kReduce:
        if (r == static_cast<std::size_t>(root)) {
          for (std::size_t i = 0; i < count; ++i) out[i] = sum_at(i);
        }
        break;
      case CollectiveKind::kReduceScatter:  // rank r gets block r of the element-wise sum
        for (std::size_t i = 0; i < count; ++i) out[i] = sum_at(r * count + i);
        break;
      case CollectiveKind::kAllGather:  // block q of every result is rank q's send buffer
        for (std::size_t q = 0; q < n; ++q) {
          for (std::size_t i = 0; i < count; ++i) out[q * count + i] = sends[q].at(i);
        }
        break;
      case CollectiveKind::kAllToAll:  // block q of rank r's result is block r of rank q's send
        for (std::size_t q = 0; q < n; ++q) {
          for (std::size_t i = 0; i < count; ++i) out[q * count + i] = sends[q].at(r * count + i);
        }
        break;
      case CollectiveKind::kBroadcast:
        for (std::size_t i = 0; i < count; ++i)
          out[i] = sends[static_cast<std::size_t>(root)].at(i);
        break;
      case CollectiveKind::kSendRecv:  // ring: receive from the previous rank
        for (std::size_t i = 0; i < count; ++i) out[i] = sends[(r + n - 1) % n].at(i);
        break;
      case CollectiveKind::kAllToAllV:   // per-peer counts: simulate_alltoallv
      case CollectiveKind::kAllGatherV:  // per-rank counts: simulate_allgatherv
      case CollectiveKind::kReduceScatterV:
        break;
    }
  }
  return recv;
}

RankBuffers simulate_alltoallv(const std::vector<std::vector<std::size_t>>& counts,
                               const RankBuffers& sends) {
  const std::size_t n = sends.size();
  RankBuffers recv(n);
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t q = 0; q < n; ++q) {
      std::size_t start = 0;  // q's block for p starts after its blocks for ranks before p
      for (std::size_t before = 0; before < p; ++before) start += counts[q][before];
      for (std::size_t i = 0; i < counts[q][p]; ++i) recv[p].push_back(sends[q].at(start + i));
    }
  }
  return recv;
}

RankBuffers simulate_allgatherv(const std::vector<std::size_t>& counts, const RankBuffers& sends) {
  const std::size_t n = sends.size();
  RankBuffers recv(n);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t q = 0; q < n; ++q) {
      for (std::size_t i = 0; i < counts.at(q); ++i) recv[r].push_back(sends[q].at(i));
    }
  }
  return recv;
}

RankBuffers simulate_reduce_scatterv(const std::vector<std::size_t>& counts,
                                     const RankBuffers& sends) {
  const std::size_t n = sends.size();
  RankBuffers recv(n);
  std::size_t start = 0;  // rank r's block follows the blocks of the ranks before it
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < counts.at(r); ++i) {
      double total = 0;
      for (const auto& send : sends) total += send.at(start + i);
      recv[r].push_back(total);
    }
    start += counts.at(r);
  }
  return recv;
}

RankBuffers make_inputs(const CollectiveSpec& spec, int n, DType dtype, std::uint64_t seed,
                        const CollectiveSizes& sizes) {
  RankBuffers sends(static_cast<std::size_t>(n), std::vector<double>(sizes.send_count));
  for (int r = 0; r < n; ++r) {
    const FillPattern p = spec.input(r, n, dtype, seed);
    auto& send = sends[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = fill_value(p, i);
  }
  return sends;
}

double round_to_bits(double x, int bits) {
  if (x == 0 || !std::isfinite(x)) return x;
  int exponent = 0;
  std::frexp(x, &exponent);  // x = f · 2^exponent, 0.5 <= |f| < 1
  const double scaled = std::ldexp(x, bits - exponent);
  return std::ldexp(std::nearbyint(scaled), exponent - bits);  // default mode: ties to even
}

int significand_bits(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16:
      return 8;
    case DType::kFloat16:
      return 11;
    case DType::kFloat32:
      return 24;
    case DType::kFloat64:
      return 53;
    default:
      return 64;
  }
}

}  // namespace commprof::testing
