// SPDX-License-Identifier: MIT
// ComputeCall (src/backend/work.hpp) as one CUDA kernel of fused multiply-adds whose length is
// set by an iteration count, measured once per device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "src/backend/work.hpp"

namespace commprof {

/// How long the compute kernel runs for a given iteration count on this device: ns = fixed +
/// per_iteration · iterations, fitted from timed launches.
class ComputeRate {
 public:
  /// Measures the kernel on `stream` (idle GPU expected: the caller waits for its streams first).
  static ComputeRate measure(int sm_count, cudaStream_t stream);
  /// The iterations that make the kernel last `ns` (at least 1).
  std::uint64_t iterations_for(std::uint64_t ns) const;
  double fixed_ns() const { return fixed_ns_; }
  double per_iteration_ns() const { return per_iteration_ns_; }

 private:
  double fixed_ns_ = 0;
  double per_iteration_ns_ = 1;
};

/// Enqueues the compute kernel on `stream`: a few blocks per SM, every thread running
/// `iterations` rounds of independent fused multiply-adds on registers.
void launch_compute(std::uint64_t iterations, int sm_count, cudaStream_t stream);

}  // namespace commprof
