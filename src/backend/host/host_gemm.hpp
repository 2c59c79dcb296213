// SPDX-License-Identifier: MIT
// Real arithmetic for the host backend's COMP stream: a cache-blocked GEMM and the memory-bound
// pass of element-wise ops, and compute for a set time.
#pragma once

#include "src/backend/work.hpp"

namespace commprof {

/// C = A·B, column-major, float or double; throws ConfigError for other types.
void host_gemm(const GemmCall& call);

/// ElementwiseCall's pass over real memory: reads its input and writes its output in 8-byte
/// words, each output word the XOR of the words read so far (as the CUDA kernel does per thread);
/// the part of a pattern other than the stream first (host_access_patterns.hpp).
void host_elementwise(const ElementwiseCall& call);

/// ComputeCall on a CPU core: fused multiply-adds until `call.ns` nanoseconds have passed on the
/// steady clock (read every few thousand operations). A stream thread is one core, so the time
/// is the work: no rate to measure, and no GPU's SMs to share.
void host_compute(const ComputeCall& call);

}  // namespace commprof
