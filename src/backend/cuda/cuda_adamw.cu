// SPDX-License-Identifier: MIT
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "src/backend/cuda/cuda_adamw.hpp"
#include "src/backend/cuda/cuda_check.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using u64 = unsigned long long;
constexpr int kThreads = 512;  // multi_tensor_apply's kBlockSize
constexpr int kIlp = 4;        // and its kILP: four elements per thread per iteration

// What one launch's blocks work on, passed by value as multi_tensor_apply passes its metadata:
// block b updates elements [start[b], start[b] + length[b]) of the flat parameter list.
struct Launch {
  u64 start[kAdamwMaxBlocks];
  unsigned length[kAdamwMaxBlocks];
};
static_assert(sizeof(Launch) <= 4096, "kernel parameters are limited to 4 KiB");

__device__ float to_float(float x) { return x; }
__device__ float to_float(double x) { return static_cast<float>(x); }
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ float to_float(__half x) { return __half2float(x); }
template <class T>
__device__ T from_float(float x);
template <>
__device__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ double from_float<double>(float x) {
  return x;
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}
template <>
__device__ __half from_float<__half>(float x) {
  return __float2half(x);
}

// Four consecutive elements, loaded and stored as one access (multi_tensor_apply's aligned
// ILP path: 8 bytes for bf16, 16 for float).
template <class T>
struct alignas(kIlp * sizeof(T)) Group {
  T x[kIlp];
};

template <class T>
__device__ void update(float& p, float g, float& m, float& v) {
  constexpr float kBias1 = 1.0f - kAdamwBeta1, kBias2 = 1.0f - kAdamwBeta2;  // step 1
  p *= 1.0f - kAdamwLr * kAdamwWeightDecay;
  m = kAdamwBeta1 * m + (1.0f - kAdamwBeta1) * g;
  v = kAdamwBeta2 * fabsf(v) + (1.0f - kAdamwBeta2) * g * g;
  p -= kAdamwLr / kBias1 * m / (sqrtf(v) / sqrtf(kBias2) + kAdamwEps);
}

// Regions: in = p | g | m | v (in_len elements each), out = p | m | v (out_len each).
template <class T>
__global__ void __launch_bounds__(kThreads)
    adamw_kernel(Launch launch, const T* __restrict__ in, u64 in_len, T* __restrict__ out,
                 u64 out_len) {
  const u64 start = launch.start[blockIdx.x];
  const unsigned length = launch.length[blockIdx.x];
  // Where the chunk begins in the regions, once per block; per group only a compare, since a
  // 64-bit modulo per group would cost more than the update itself.
  const u64 r0 = start % in_len;
  const u64 w0 = start % out_len;
  for (unsigned base = threadIdx.x * kIlp; base < length; base += kThreads * kIlp) {
    // Chunks start at multiples of 4 and regions hold multiples of 4: a group of four never
    // crosses a region's end.
    u64 r = r0 + base;
    while (r >= in_len) r -= in_len;
    u64 w = w0 + base;
    while (w >= out_len) w -= out_len;
    if (base + kIlp <= length) {
      const Group<T> gp = *reinterpret_cast<const Group<T>*>(in + r);
      const Group<T> gg = *reinterpret_cast<const Group<T>*>(in + in_len + r);
      const Group<T> gm = *reinterpret_cast<const Group<T>*>(in + 2 * in_len + r);
      const Group<T> gv = *reinterpret_cast<const Group<T>*>(in + 3 * in_len + r);
      Group<T> op, om, ov;
#pragma unroll
      for (int k = 0; k < kIlp; ++k) {
        float p = to_float(gp.x[k]), m = to_float(gm.x[k]), v = to_float(gv.x[k]);
        update<T>(p, to_float(gg.x[k]), m, v);
        op.x[k] = from_float<T>(p);
        om.x[k] = from_float<T>(m);
        ov.x[k] = from_float<T>(v);
      }
      *reinterpret_cast<Group<T>*>(out + w) = op;
      *reinterpret_cast<Group<T>*>(out + out_len + w) = om;
      *reinterpret_cast<Group<T>*>(out + 2 * out_len + w) = ov;
    } else {  // the tensor's last, partial group
      for (unsigned k = 0; base + k < length; ++k) {
        float p = to_float(in[r + k]), m = to_float(in[2 * in_len + r + k]);
        float v = to_float(in[3 * in_len + r + k]);
        update<T>(p, to_float(in[in_len + r + k]), m, v);
        out[w + k] = from_float<T>(p);
        out[out_len + w + k] = from_float<T>(m);
        out[2 * out_len + w + k] = from_float<T>(v);
      }
    }
  }
}

template <class T>
void launch_all(const AdamwCall& call, cudaStream_t stream) {
  const u64 in_len = adamw_region(call.src_bytes, 4, sizeof(T));
  const u64 out_len = adamw_region(call.dst_bytes, 3, sizeof(T));
  if (in_len == 0 || out_len == 0) throw Error("AdamW buffers too small for one group of four");
  const T* in = static_cast<const T*>(call.src);
  T* out = static_cast<T*>(call.dst);
  // multi_tensor_apply's loop: tensors join the launch in order, each chunk a block; launch
  // when the blocks are full, or the tensors are full at a tensor's last chunk, or at the end.
  Launch launch{};
  int blocks = 0, tensors = 0;
  u64 offset = 0;  // flat index of the current tensor's first element
  for (std::size_t t = 0; t < call.tensors.size(); ++t) {
    const u64 n = call.tensors[t];
    if (n == 0) continue;
    ++tensors;
    const u64 chunks = (n + kAdamwChunk - 1) / kAdamwChunk;
    for (u64 c = 0; c < chunks; ++c) {
      // Tensors start where the previous ends; PyTorch's allocator rounds each to 512 bytes,
      // which the flat index rounds to four elements to keep groups aligned.
      launch.start[blocks] = (offset + c * kAdamwChunk) / 4 * 4;
      launch.length[blocks] = static_cast<unsigned>(
          n - c * kAdamwChunk < kAdamwChunk ? n - c * kAdamwChunk : kAdamwChunk);
      ++blocks;
      const bool last_chunk = c + 1 == chunks;
      const bool last = last_chunk && t + 1 == call.tensors.size();
      if (blocks == kAdamwMaxBlocks || (tensors == kAdamwMaxTensors && last_chunk) || last) {
        adamw_kernel<T><<<blocks, kThreads, 0, stream>>>(launch, in, in_len, out, out_len);
        COMMPROF_CUDA_CHECK(cudaGetLastError());
        blocks = 0;
        tensors = last_chunk ? 0 : 1;  // a tensor cut between launches carries over
      }
    }
    offset += (n + 3) / 4 * 4;
  }
  if (blocks > 0) {  // trailing empty tensors after the last launch leave nothing pending
    adamw_kernel<T><<<blocks, kThreads, 0, stream>>>(launch, in, in_len, out, out_len);
    COMMPROF_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

void launch_adamw(const AdamwCall& call, cudaStream_t stream) {
  switch (call.dtype) {
    case DType::kFloat32:
      return launch_all<float>(call, stream);
    case DType::kFloat64:
      return launch_all<double>(call, stream);
    case DType::kBFloat16:
      return launch_all<__nv_bfloat16>(call, stream);
    case DType::kFloat16:
      return launch_all<__half>(call, stream);
    default:
      throw Error(std::string("AdamW on ") + dtype_name(call.dtype) +
                  ": parameters are floating point");
  }
}

}  // namespace commprof
