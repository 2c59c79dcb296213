// SPDX-License-Identifier: MIT
// The memory-bound pass of ElementwiseCall (src/backend/work.hpp) as one CUDA kernel.
#pragma once

#include <cuda_runtime.h>

#include "src/backend/work.hpp"

namespace commprof {

/// Enqueues `call` on `stream`: a grid of a few blocks per SM (`sm_count`), each thread reading
/// and writing 16-byte vectors in a grid-stride loop, as PyTorch's vectorised element-wise
/// kernels do; the part of a pattern other than the stream first, by its own kernel
/// (cuda_access_patterns.hpp). Throws Error on a launch failure.
void launch_elementwise(const ElementwiseCall& call, int sm_count, cudaStream_t stream);

}  // namespace commprof
