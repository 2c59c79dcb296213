// SPDX-License-Identifier: MIT
#include "src/backend/host/host_adamw.hpp"

#include <cmath>

#include "src/backend/host/uninstrumented.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

// Uninstrumented (uninstrumented.hpp): every index wraps within the regions taken from the
// buffers' sizes.
template <class T>
COMMPROF_UNINSTRUMENTED void update(const AdamwCall& call) {
  const std::uint64_t in_len = adamw_region(call.src_bytes, 4, sizeof(T));
  const std::uint64_t out_len = adamw_region(call.dst_bytes, 3, sizeof(T));
  if (in_len == 0 || out_len == 0) throw Error("AdamW buffers too small for one group of four");
  const T* in = static_cast<const T*>(call.src);
  T* out = static_cast<T*>(call.dst);
  constexpr float kBias1 = 1.0f - kAdamwBeta1, kBias2 = 1.0f - kAdamwBeta2;  // step 1
  const float bias2_sqrt = std::sqrt(kBias2);
  std::uint64_t offset = 0;  // tensors start at multiples of four, as on the GPU
  for (const std::uint64_t n : call.tensors) {
    // Where element offset + i falls in the wrapping regions: read r, written w. Counted rather
    // than divided per element (two 64-bit divisions cost more than the update itself).
    std::uint64_t r = offset % in_len;
    std::uint64_t w = offset % out_len;
    for (std::uint64_t i = 0; i < n; ++i) {
      const float g = static_cast<float>(in[in_len + r]);
      float p = static_cast<float>(in[r]) * (1.0f - kAdamwLr * kAdamwWeightDecay);
      const float m =
          kAdamwBeta1 * static_cast<float>(in[2 * in_len + r]) + (1.0f - kAdamwBeta1) * g;
      const float v = kAdamwBeta2 * std::fabs(static_cast<float>(in[3 * in_len + r])) +
                      (1.0f - kAdamwBeta2) * g * g;
      p -= kAdamwLr / kBias1 * m / (std::sqrt(v) / bias2_sqrt + kAdamwEps);
      out[w] = static_cast<T>(p);
      out[out_len + w] = static_cast<T>(m);
      out[2 * out_len + w] = static_cast<T>(v);
      if (++r == in_len) r = 0;
      if (++w == out_len) w = 0;
    }
    offset += (n + 3) / 4 * 4;
  }
}

}  // namespace

void host_adamw(const AdamwCall& call) {
  if (call.dtype == DType::kFloat32) return update<float>(call);
  if (call.dtype == DType::kFloat64) return update<double>(call);
  throw Error(std::string("the host backend computes AdamW in float or double, not ") +
              dtype_name(call.dtype));
}

}  // namespace commprof
