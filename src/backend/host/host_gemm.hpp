// SPDX-License-Identifier: MIT
// Real arithmetic for the host backend's COMP stream: a cache-blocked GEMM and the memory-bound
// pass of element-wise ops, and compute for a set time.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "src/backend/work.hpp"

namespace commprof {

/// Where host_gemm puts a transposed operand in its plain layout. Kept by the caller between
/// calls, grown to the largest operand seen and never shrunk, so a step's GEMMs allocate nothing
/// after the first step. Not shared between threads: the backend keeps one per stream, whose
/// worker runs one piece of work at a time.
class GemmScratch {
 public:
  /// Room for `count` elements of operand `slot` (0: A, 1: B); what it held before is not kept.
  template <class T>
  T* room(int slot, std::size_t count) {
    std::vector<T>& v = storage<T>().at(static_cast<std::size_t>(slot));
    if (v.size() < count) v.resize(count);
    return v.data();
  }
  /// The bytes held: grows only when a call needs more room than any before it.
  std::size_t bytes() const;

 private:
  template <class T>
  std::array<std::vector<T>, 2>& storage() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "the host GEMM computes in float or double");
    if constexpr (std::is_same_v<T, float>) {
      return floats_;
    } else {
      return doubles_;
    }
  }

  std::array<std::vector<float>, 2> floats_;
  std::array<std::vector<double>, 2> doubles_;
};

/// C = op(A)·op(B), column-major, float or double; throws ConfigError for other types. A
/// transposed operand is first copied into `scratch`.
void host_gemm(const GemmCall& call, GemmScratch& scratch);

/// ElementwiseCall's pass over real memory: reads its input and writes its output in 8-byte
/// words, each output word the XOR of the words read so far (as the CUDA kernel does per thread);
/// the part of a pattern other than the stream first (host_access_patterns.hpp).
void host_elementwise(const ElementwiseCall& call);

/// ComputeCall on a CPU core: fused multiply-adds until `call.ns` nanoseconds have passed on the
/// steady clock (read every few thousand operations). A stream thread is one core, so the time
/// is the work: no rate to measure, and no GPU's SMs to share.
void host_compute(const ComputeCall& call);

}  // namespace commprof
