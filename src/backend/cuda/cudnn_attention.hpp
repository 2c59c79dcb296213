// SPDX-License-Identifier: MIT
// AttentionCall (src/backend/work.hpp) on the GPU as PyTorch runs scaled_dot_product_attention
// on Hopper: cuDNN's fused flash-attention engines, forward and backward. cuDNN is opened with
// dlopen (libcudnn.so.9), so a host without it loses only this op; its graphs are built once per
// shape and kept.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "src/backend/work.hpp"

namespace commprof {

class CudnnAttention {
 public:
  /// cuDNN's fused attention on the current device, or nullptr with the reason in `why_not`
  /// (no libcudnn.so.9, an older cuDNN than 9, no handle).
  static std::unique_ptr<CudnnAttention> open(std::string& why_not);
  virtual ~CudnnAttention() = default;

  /// Enqueues `call` on `stream`; the first call of a shape builds its graph and plan (slow:
  /// the warm-up step's). Throws DeviceError naming the shape and cuDNN's message when cuDNN
  /// has no engine for it (a head dimension it does not support, fp32).
  virtual void run(const AttentionCall& call, cudaStream_t stream) = 0;
  /// "cuDNN 9.19.0"
  virtual std::string version() const = 0;
};

}  // namespace commprof
