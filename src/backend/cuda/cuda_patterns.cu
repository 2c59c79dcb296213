// SPDX-License-Identifier: MIT
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "src/backend/cuda/cuda_check.hpp"
#include "src/backend/cuda/cuda_patterns.hpp"

namespace commprof {
namespace {

template <class T>
__device__ inline T from_double(double v) {
  return static_cast<T>(v);
}
template <>
__device__ inline __nv_bfloat16 from_double<__nv_bfloat16>(double v) {
  return __float2bfloat16(static_cast<float>(v));
}
template <>
__device__ inline __half from_double<__half>(double v) {
  return __float2half(static_cast<float>(v));
}

template <class T>
__device__ inline double to_double(T v) {
  return static_cast<double>(v);
}
template <>
__device__ inline double to_double<__nv_bfloat16>(__nv_bfloat16 v) {
  return static_cast<double>(__bfloat162float(v));
}
template <>
__device__ inline double to_double<__half>(__half v) {
  return static_cast<double>(__half2float(v));
}

template <class T>
__global__ void fill_kernel(T* out, std::size_t count, FillPattern pattern) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    out[i] = from_double<T>(fill_value(pattern, i));
  }
}

template <class T>
__global__ void count_kernel(const T* in, std::size_t count, ExpectPattern expected,
                             unsigned long long* wrong) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    mine += to_double(in[i]) != expected_value(expected, i) ? 1 : 0;
  }
  if (mine != 0) atomicAdd(wrong, mine);
}

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 4096));
}

template <class F>
void dispatch(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      f(float{});
      break;
    case DType::kFloat64:
      f(double{});
      break;
    case DType::kInt32:
      f(std::int32_t{});
      break;
    case DType::kInt64:
      f(std::int64_t{});
      break;
    case DType::kBFloat16:
      f(__nv_bfloat16{});
      break;
    case DType::kFloat16:
      f(__half{});
      break;
  }
}

}  // namespace

void launch_fill(void* data, DType dtype, std::size_t count, const FillPattern& pattern,
                 cudaStream_t stream) {
  if (count == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    fill_kernel<T>
        <<<blocks_for(count), kThreads, 0, stream>>>(static_cast<T*>(data), count, pattern);
  });
  COMMPROF_CUDA_CHECK(cudaGetLastError());
}

void launch_count_mismatches(const void* data, DType dtype, std::size_t count,
                             const ExpectPattern& expected, unsigned long long* device_counter,
                             cudaStream_t stream) {
  if (count == 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    count_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const T*>(data), count,
                                                                expected, device_counter);
  });
  COMMPROF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace commprof
