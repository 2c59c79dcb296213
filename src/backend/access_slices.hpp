// SPDX-License-Identifier: MIT
// How both backends cut the pattern part of an ElementwiseCall (AccessPattern) into slices over
// its buffers, so that the host's loops and the CUDA kernels touch the same elements and leave
// the same result (the backend contract's tests compare them with one expectation).
#pragma once

#include <algorithm>
#include <cstdint>

#include "src/backend/work.hpp"

namespace commprof {

/// Elements per slice at most: every index and offset inside one stays in 32 bits, as PyTorch
/// keeps its element-wise kernels' (it splits larger tensors too).
inline constexpr std::uint64_t kPatternSliceItems = std::uint64_t{1} << 30;

/// kStrided over elements of `elem` bytes: `in_total` read and `out_total` written in all,
/// `total` the larger; `half` elements read from the first half of each row of 2·half (all of a
/// slice, in order, without rows); each slice `slice` elements (whole half-rows), read from the
/// source's beginning again.
struct StridedSlices {
  std::uint64_t in_total = 0, out_total = 0, total = 0, half = 1, slice = 1;
};
inline StridedSlices strided_slices(const ElementwiseCall& c, std::uint64_t elem) {
  using U = std::uint64_t;
  StridedSlices s;
  s.in_total = std::min(c.pattern_read, c.read_bytes) / elem;
  s.out_total = std::min(c.pattern_write, c.write_bytes) / elem;
  s.total = std::max(s.in_total, s.out_total);
  const U src_cap = c.src_bytes / elem;
  const U dst_cap = std::max<U>(c.dst_bytes / elem, 1);
  s.slice = std::max<U>(std::min({src_cap, dst_cap, kPatternSliceItems}), 1);
  if (c.row_bytes > 0) {
    // Half-rows no wider than half the source buffer; each slice whole rows of it.
    s.half = std::clamp<U>(c.row_bytes / elem, 1, std::max<U>(src_cap / 2, 1));
    s.slice = std::min({src_cap / (2 * s.half) * s.half, dst_cap, kPatternSliceItems});
    if (s.slice >= s.half) s.slice = s.slice / s.half * s.half;
    s.slice = std::max<U>(s.slice, 1);
  } else {
    s.half = s.slice;  // reads in order: one "row" as long as the slice
  }
  return s;
}

/// kScatterAdd over elements of `elem` bytes: rows of `row` elements, `rows_in` source rows
/// added into `rows_out` destination rows (source row s of a slice into row s mod rows_out),
/// `slice_rows` source rows a slice, each read from the source's beginning again.
struct ScatterRows {
  std::uint64_t row = 1, rows_in = 0, rows_out = 1, slice_rows = 1;
};
inline ScatterRows scatter_rows(const ElementwiseCall& c, std::uint64_t elem) {
  using U = std::uint64_t;
  ScatterRows s;
  const U src_cap = c.src_bytes / elem;
  const U dst_cap = c.dst_bytes / elem;
  s.row = std::clamp<U>(c.row_bytes / elem, 1, std::max<U>(std::min(src_cap, dst_cap), 1));
  s.rows_in = std::min(c.pattern_read, c.read_bytes) / elem / s.row;
  s.rows_out = std::clamp<U>(std::min(c.pattern_write, c.write_bytes) / elem / s.row, 1,
                             std::max<U>(dst_cap / s.row, 1));
  s.slice_rows = std::max<U>(std::min(src_cap, kPatternSliceItems) / s.row, 1);
  return s;
}

}  // namespace commprof
