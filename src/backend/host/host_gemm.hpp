// SPDX-License-Identifier: MIT
// Real arithmetic for the host backend's COMP stream: a cache-blocked GEMM and the memory-bound
// pass of element-wise ops.
#pragma once

#include "src/backend/work.hpp"

namespace commprof {

/// C = A·B, column-major, float or double; throws ConfigError for other types.
void host_gemm(const GemmCall& call);

/// ElementwiseCall's pass over real memory: reads its input and writes its output in 8-byte
/// words, each output word the XOR of the words read so far (as the CUDA kernel does per thread).
void host_elementwise(const ElementwiseCall& call);

}  // namespace commprof
