// SPDX-License-Identifier: MIT
// How a memory-bound pass (ElementwiseCall, src/backend/work.hpp) reaches its bytes.
#pragma once

#include <cstdint>

namespace commprof {

/// Most of a training step's memory-bound kernels stream contiguous tensors in wide vectors and
/// run near the memory's bandwidth, but some real ops reach their bytes in a way that costs more
/// than the bytes do. A pass names the part of its bytes that the real op moves that way; the
/// backends run that part with a kernel that does the same access.
enum class AccessPattern : std::uint8_t {
  /// Every byte in 16-byte vectors, in order: PyTorch's vectorised element-wise kernels on
  /// contiguous tensors.
  kStream,
  /// Element at a time, each element's offsets from its index by integer division: PyTorch's
  /// unvectorised element-wise kernel (elementwise_kernel: 128 threads a block, 4 elements a
  /// thread), which TensorIterator runs instead of the vectorised one as soon as an operand is
  /// not contiguous: a half of `x.chunk(2, dim=-1)` (a gated FFN's up projection), a broadcast
  /// (MoE's rows times their probabilities). With `row_bytes`, the reads come from the first
  /// half of rows of two halves of `row_bytes` each (the chunk view); without, in order.
  kStrided,
  /// Rows of `row_bytes` added, element at a time with atomic adds, into the rows of the output
  /// an index gives: PyTorch's index_add_ and scatter_add_ (which MoE token unpermutation and
  /// the gradient of a row gather run).
  kScatterAdd,
};

/// "stream", "strided" or "scatter-add": how a printed plan names the pattern.
inline const char* access_pattern_name(AccessPattern p) {
  switch (p) {
    case AccessPattern::kStrided:
      return "strided";
    case AccessPattern::kScatterAdd:
      return "scatter-add";
    case AccessPattern::kStream:
      break;
  }
  return "stream";
}

}  // namespace commprof
