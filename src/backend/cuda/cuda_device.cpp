// SPDX-License-Identifier: MIT
#include "src/backend/cuda/cuda_device.hpp"

#include <cuda_runtime.h>

#include "src/core/log.hpp"

namespace commprof {

VisibleDevices visible_cuda_devices() {
  VisibleDevices out;
  const cudaError_t rc = cudaGetDeviceCount(&out.count);
  if (rc != cudaSuccess) {
    out.count = 0;
    out.problem =
        std::string("no CUDA device visible (cudaGetDeviceCount: ") + cudaGetErrorName(rc) + ")";
    (void)cudaGetLastError();
  } else if (out.count == 0) {
    out.problem = "no CUDA device visible";
  }
  return out;
}

std::optional<int> choose_device(int local_rank, int local_size, int visible, std::string* why) {
  if (visible == 1) return 0;  // the launcher bound this rank to one GPU
  if (visible > 1 && local_rank < visible) return local_rank;
  if (why != nullptr) {
    *why = log::cat(local_size, " ranks run on this host but only ", visible,
                    " GPU(s) are visible: commprof uses one GPU per rank (local rank ", local_rank,
                    " has none); start at most ", visible, " ranks per host");
  }
  return std::nullopt;
}

}  // namespace commprof
