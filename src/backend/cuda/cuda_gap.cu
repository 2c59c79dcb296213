// SPDX-License-Identifier: MIT
#include "src/backend/cuda/cuda_check.hpp"
#include "src/backend/cuda/cuda_gap.hpp"

namespace commprof {
namespace {

using u64 = unsigned long long;

__device__ u64 globaltimer() {
  u64 t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void commprof_replayed_gap(u64 ns) {
  const u64 start = globaltimer();
  while (globaltimer() - start < ns) {
  }
}

}  // namespace

void launch_gap(std::uint64_t ns, cudaStream_t stream) {
  commprof_replayed_gap<<<1, 1, 0, stream>>>(static_cast<u64>(ns));
  COMMPROF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace commprof
