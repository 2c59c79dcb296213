// SPDX-License-Identifier: MIT
// AdamwCall (src/backend/work.hpp) cut into launches as PyTorch's multi_tensor_apply cuts a
// fused AdamW step: the same chunks, blocks per launch, tensors per launch and threads per
// block, so the step has the real kernel's launch count and partly filled GPU, not only its
// bytes (a single grid-stride pass of the same bytes runs about 1.4 times faster on an H200).
#pragma once

#include <cuda_runtime.h>

#include "src/backend/work.hpp"

namespace commprof {

/// Enqueues the launches on `stream`. Throws Error on a launch failure or an unsupported dtype.
void launch_adamw(const AdamwCall& call, cudaStream_t stream);

}  // namespace commprof
