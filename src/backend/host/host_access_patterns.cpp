// SPDX-License-Identifier: MIT
#include "src/backend/host/host_access_patterns.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "src/backend/access_slices.hpp"
#include "src/backend/host/uninstrumented.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using U = std::uint64_t;

// Uninstrumented: every index stays within the slice, which fits both buffers.
template <class T>
COMMPROF_UNINSTRUMENTED void strided(const ElementwiseCall& c) {
  const StridedSlices g = strided_slices(c, sizeof(T));
  const auto* in = static_cast<const T*>(c.src);
  auto* out = static_cast<T*>(c.dst);
  for (U base = 0; base < g.total; base += g.slice) {
    const U len = std::min(g.slice, g.total - base);
    const U in_len = base < g.in_total ? std::min(len, g.in_total - base) : 0;
    const U out_len = base < g.out_total ? std::min(len, g.out_total - base) : 0;
    T acc = 0;
    for (U i = 0; i < len; ++i) {
      if (i < in_len) acc |= in[i + i / g.half * g.half];  // row i / h, column i mod h, of 2h
      if (i < out_len) out[i] = acc;
    }
  }
}

template <class T>
COMMPROF_UNINSTRUMENTED void scatter_add(const ElementwiseCall& c) {
  const ScatterRows g = scatter_rows(c, sizeof(T));
  const auto* src = static_cast<const T*>(c.src);
  auto* dst = static_cast<T*>(c.dst);
  for (U first = 0; first < g.rows_in; first += g.slice_rows) {
    const U n = std::min(g.slice_rows, g.rows_in - first);
    for (U r = 0; r < n; ++r) {
      T* to = dst + (first + r) % g.rows_out * g.row;
      const T* from = src + r * g.row;
      for (U j = 0; j < g.row; ++j) to[j] += from[j];
    }
  }
}

}  // namespace

void host_access_pattern(const ElementwiseCall& call) {
  switch (call.pattern) {
    case AccessPattern::kStream:
      return;
    case AccessPattern::kStrided:
      switch (dtype_size(call.dtype)) {
        case 2:
          return strided<std::uint16_t>(call);
        case 4:
          return strided<std::uint32_t>(call);
        default:
          return strided<std::uint64_t>(call);
      }
    case AccessPattern::kScatterAdd:
      switch (call.dtype) {
        case DType::kFloat32:
          return scatter_add<float>(call);
        case DType::kFloat64:
          return scatter_add<double>(call);
        case DType::kInt32:
          return scatter_add<std::int32_t>(call);
        case DType::kInt64:
          return scatter_add<std::int64_t>(call);
        default:
          break;
      }
      throw ConfigError(std::string("the host backend's scatter-add cannot add ") +
                        dtype_name(call.dtype));
  }
}

}  // namespace commprof
