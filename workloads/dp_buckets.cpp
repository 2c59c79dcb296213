// SPDX-License-Identifier: MIT
#include "workloads/dp_buckets.hpp"

namespace commprof {

std::vector<Bucket> assign_buckets(const std::vector<GradParam>& params,
                                   std::uint64_t first_bucket_bytes, std::uint64_t cap_bytes) {
  std::vector<Bucket> buckets;
  Bucket current;
  for (std::size_t i = 0; i < params.size(); ++i) {
    current.params.push_back(i);
    current.bytes += params[i].bytes;
    const std::uint64_t limit = buckets.empty() ? first_bucket_bytes : cap_bytes;
    if (current.bytes >= limit) {
      buckets.push_back(std::move(current));
      current = Bucket{};
    }
  }
  if (!current.params.empty()) buckets.push_back(std::move(current));
  return buckets;
}

}  // namespace commprof
