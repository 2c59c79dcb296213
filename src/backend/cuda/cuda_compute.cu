// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>

#include "src/backend/cuda/cuda_check.hpp"
#include "src/backend/cuda/cuda_compute.hpp"

namespace commprof {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;
constexpr int kChains = 8;  // independent FMA chains per thread: the FMA units never wait
using u64 = unsigned long long;

// Each thread runs `iterations` rounds of kChains fused multiply-adds on registers. The result
// is written only if it is exactly zero, which the values below never give, so the compiler
// keeps every FMA and the kernel writes no memory.
__global__ void compute_kernel(u64 iterations, float* sink) {
  float acc[kChains];
  const float seed = 1.0f + 1e-7f * static_cast<float>(threadIdx.x + blockIdx.x * blockDim.x);
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = seed + static_cast<float>(c);
  const float mul = 0.999999f;
  const float add = 1e-6f;
  for (u64 i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = fmaf(acc[c], mul, add);
  }
  float total = 0.0f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) total += acc[c];
  if (total == 0.0f) *sink = total;
}

float* sink_pointer() {
  static float* sink = [] {
    float* p = nullptr;
    COMMPROF_CUDA_CHECK(cudaMalloc(&p, sizeof(float)));
    return p;
  }();
  return sink;
}

// The shortest of `repeats` launches of `iterations`, in ns.
double time_launch(u64 iterations, int sm_count, cudaStream_t stream, int repeats) {
  cudaEvent_t a = nullptr, b = nullptr;
  COMMPROF_CUDA_CHECK(cudaEventCreate(&a));
  COMMPROF_CUDA_CHECK(cudaEventCreate(&b));
  float best = 0;
  for (int r = 0; r < repeats; ++r) {
    COMMPROF_CUDA_CHECK(cudaEventRecord(a, stream));
    launch_compute(iterations, sm_count, stream);
    COMMPROF_CUDA_CHECK(cudaEventRecord(b, stream));
    COMMPROF_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    COMMPROF_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r == 0 || ms < best) best = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return static_cast<double>(best) * 1e6;
}

}  // namespace

void launch_compute(std::uint64_t iterations, int sm_count, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(std::max(sm_count, 1) * kBlocksPerSm);
  compute_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<u64>(iterations), sink_pointer());
  COMMPROF_CUDA_CHECK(cudaGetLastError());
}

ComputeRate ComputeRate::measure(int sm_count, cudaStream_t stream) {
  // Two lengths far apart (about 0.1 and 2 ms on an H100) fit the line; the first launches
  // warm the clocks up and are thrown away.
  constexpr u64 kShort = u64{1} << 12;
  constexpr u64 kLong = u64{1} << 16;
  time_launch(kLong, sm_count, stream, 3);
  const double short_ns = time_launch(kShort, sm_count, stream, 5);
  const double long_ns = time_launch(kLong, sm_count, stream, 5);
  ComputeRate rate;
  rate.per_iteration_ns_ =
      std::max((long_ns - short_ns) / static_cast<double>(kLong - kShort), 1e-3);
  rate.fixed_ns_ = std::max(short_ns - rate.per_iteration_ns_ * static_cast<double>(kShort), 0.0);
  return rate;
}

std::uint64_t ComputeRate::iterations_for(std::uint64_t ns) const {
  const double wanted = (static_cast<double>(ns) - fixed_ns_) / per_iteration_ns_;
  return wanted < 1 ? 1 : static_cast<std::uint64_t>(std::llround(wanted));
}

}  // namespace commprof
