// SPDX-License-Identifier: MIT
#include "src/backend/host/host_access_patterns.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "src/backend/host/uninstrumented.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using U = std::uint64_t;
constexpr U kSliceItems = U{1} << 30;  // as the CUDA kernels' launches

// Uninstrumented: every index stays within the slice, which fits both buffers.
template <class T>
COMMPROF_UNINSTRUMENTED void strided(const ElementwiseCall& c) {
  const U e = sizeof(T);
  const U in_total = std::min(c.pattern_read, c.read_bytes) / e;
  const U out_total = std::min(c.pattern_write, c.write_bytes) / e;
  const U total = std::max(in_total, out_total);
  if (total == 0) return;
  const U src_cap = c.src_bytes / e;
  const U dst_cap = std::max<U>(c.dst_bytes / e, 1);
  U h = 0;
  U slice = std::max<U>(std::min({src_cap, dst_cap, kSliceItems}), 1);
  if (c.row_bytes > 0) {
    h = std::clamp<U>(c.row_bytes / e, 1, std::max<U>(src_cap / 2, 1));
    slice = std::min({src_cap / (2 * h) * h, dst_cap, kSliceItems});
    if (slice >= h) slice = slice / h * h;
    slice = std::max<U>(slice, 1);
  } else {
    h = slice;  // reads in order: one "row" as long as the slice
  }
  const auto* in = static_cast<const T*>(c.src);
  auto* out = static_cast<T*>(c.dst);
  for (U base = 0; base < total; base += slice) {
    const U len = std::min(slice, total - base);
    const U in_len = base < in_total ? std::min(len, in_total - base) : 0;
    const U out_len = base < out_total ? std::min(len, out_total - base) : 0;
    T acc = 0;
    for (U i = 0; i < len; ++i) {
      if (i < in_len) acc |= in[i + i / h * h];  // row i / h, column i mod h, of rows of 2h
      if (i < out_len) out[i] = acc;
    }
  }
}

template <class T>
COMMPROF_UNINSTRUMENTED void scatter_add(const ElementwiseCall& c) {
  const U e = sizeof(T);
  const U src_cap = c.src_bytes / e;
  const U dst_cap = c.dst_bytes / e;
  const U w = std::clamp<U>(c.row_bytes / e, 1, std::max<U>(std::min(src_cap, dst_cap), 1));
  const U rows_in = std::min(c.pattern_read, c.read_bytes) / e / w;
  if (rows_in == 0) return;
  const U rows_out = std::clamp<U>(std::min(c.pattern_write, c.write_bytes) / e / w, 1,
                                   std::max<U>(dst_cap / w, 1));
  const U slice_rows = std::max<U>(std::min(src_cap, kSliceItems) / w, 1);
  const auto* src = static_cast<const T*>(c.src);
  auto* dst = static_cast<T*>(c.dst);
  for (U first = 0; first < rows_in; first += slice_rows) {
    const U n = std::min(slice_rows, rows_in - first);
    for (U r = 0; r < n; ++r) {
      T* to = dst + (first + r) % rows_out * w;
      const T* from = src + r * w;
      for (U j = 0; j < w; ++j) to[j] += from[j];
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
