// SPDX-License-Identifier: MIT
// The access patterns of ElementwiseCall other than the plain stream (AccessPattern), as CUDA
// kernels that reach memory as the real ops' kernels do.
#pragma once

#include <cuda_runtime.h>

#include "src/backend/work.hpp"

namespace commprof {

/// Enqueues the pattern part of `call` (pattern_read, pattern_write) on `stream`: kStrided as
/// PyTorch's unvectorised element-wise kernel (over a chunk view), kScatterAdd as its index_add_
/// (element-wise atomic adds, a grid of at most 8 blocks of 128 threads per SM, `sm_count`).
/// Buffers smaller than the part are covered in slices, one launch each, each starting again
/// at the buffers' beginning. Throws Error on a launch failure, ConfigError for a dtype the
/// pattern cannot add.
void launch_access_pattern(const ElementwiseCall& call, int sm_count, cudaStream_t stream);

}  // namespace commprof
