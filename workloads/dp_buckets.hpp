// SPDX-License-Identifier: MIT
// PyTorch DDP's gradient buckets (torch/csrc/distributed/c10d/reducer.cpp,
// compute_bucket_assignment_by_size): parameters in reverse definition order, since gradients
// become ready backwards; a bucket closes as soon as its size reaches the current limit; limits
// are [1 MiB, cap, cap, …] (the 1 MiB first bucket applies while the cap is the default 25 MiB).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace commprof {

struct GradParam {
  std::string name;         ///< e.g. "l3.ffn_down"
  std::uint64_t bytes = 0;  ///< gradient bytes
};

struct Bucket {
  std::vector<std::size_t> params;  ///< indices into the reversed parameter list
  std::uint64_t bytes = 0;
};

inline constexpr std::uint64_t kDdpFirstBucketBytes = 1ull << 20;
inline constexpr std::uint64_t kDdpDefaultCapBytes = 25ull << 20;

/// Buckets over `reversed_params` (already in gradient-ready order). `first_bucket_bytes` is
/// the first limit (kDdpFirstBucketBytes under the default cap, else the cap itself).
std::vector<Bucket> assign_buckets(const std::vector<GradParam>& reversed_params,
                                   std::uint64_t first_bucket_bytes, std::uint64_t cap_bytes);

}  // namespace commprof
