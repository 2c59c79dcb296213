// SPDX-License-Identifier: MIT
// CudnnAttention where the build found no cuDNN headers (cudnn_graph.h): fused attention is
// then unavailable on this build, and says so.
#include "src/backend/cuda/cudnn_attention.hpp"

namespace commprof {

std::unique_ptr<CudnnAttention> CudnnAttention::open(std::string& why_not) {
  why_not = "this build found no cuDNN headers (cudnn_graph.h, cuDNN 9) when it was configured";
  return nullptr;
}

}  // namespace commprof
