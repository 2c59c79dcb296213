// SPDX-License-Identifier: MIT
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "src/backend/access_slices.hpp"
#include "src/backend/cuda/cuda_access_patterns.hpp"
#include "src/backend/cuda/cuda_check.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using u32 = unsigned;
using u64 = unsigned long long;

// n / d for n < 2^31 by a multiply-high and a shift (GPUs have no integer divide instruction):
// the method of Granlund and Montgomery that PyTorch's IntDivider uses for the offsets of
// non-contiguous operands, so the index arithmetic costs what it costs there.
struct FastDiv {
  u32 d = 1;
  u32 m = 1;
  u32 s = 0;
  explicit FastDiv(u32 divisor) : d(divisor < 1 ? 1 : divisor) {
    while ((u64{1} << s) < d) ++s;
    m = static_cast<u32>(((u64{1} << 32) * ((u64{1} << s) - d)) / d + 1);
  }
  __device__ u32 div(u32 n) const { return (__umulhi(n, m) + n) >> s; }
};

// PyTorch's unvectorised element-wise kernel (launch_legacy_kernel<128, 4>): one launch, 128
// threads a block, each thread 4 elements 128 apart, every operand loaded an element at a time
// from its offset. Item i reads the element of column i mod h in the first half of row i / h of
// rows of 2h elements (row·2h + i − row·h = i + row·h; with h as long as the launch, element i)
// and writes output element i: each write the OR of the thread's reads so far (a value read
// from the first halves only comes out as it went in; no read can be dropped).
constexpr int kLegacyThreads = 128;
constexpr int kLegacyItems = 4;

template <class T>
__global__ void strided_kernel(const T* __restrict__ in, u32 in_items, T* __restrict__ out,
                               u32 out_items, FastDiv half) {
  const u32 first = blockIdx.x * (kLegacyThreads * kLegacyItems) + threadIdx.x;
  T v[kLegacyItems];
#pragma unroll
  for (int k = 0; k < kLegacyItems; ++k) {
    const u32 i = first + static_cast<u32>(k * kLegacyThreads);
    v[k] = 0;
    if (i < in_items) v[k] = in[i + half.div(i) * half.d];
  }
  T acc = 0;
#pragma unroll
  for (int k = 0; k < kLegacyItems; ++k) {
    const u32 i = first + static_cast<u32>(k * kLegacyThreads);
    acc |= v[k];
    if (i < out_items) out[i] = acc;
  }
}

template <class T>
void launch_strided(const ElementwiseCall& c, cudaStream_t stream) {
  const StridedSlices g = strided_slices(c, sizeof(T));
  const FastDiv half(static_cast<u32>(g.half));
  for (u64 base = 0; base < g.total; base += g.slice) {
    const u64 len = std::min<u64>(g.slice, g.total - base);
    const u64 in_len = base < g.in_total ? std::min<u64>(len, g.in_total - base) : 0;
    const u64 out_len = base < g.out_total ? std::min<u64>(len, g.out_total - base) : 0;
    const auto blocks = static_cast<unsigned>((len + kLegacyThreads * kLegacyItems - 1) /
                                              (kLegacyThreads * kLegacyItems));
    strided_kernel<T><<<blocks, kLegacyThreads, 0, stream>>>(
        static_cast<const T*>(c.src), static_cast<u32>(in_len), static_cast<T*>(c.dst),
        static_cast<u32>(out_len), half);
    COMMPROF_CUDA_CHECK(cudaGetLastError());
  }
}

// PyTorch's index_add_ over rows (indexFuncLargeIndex): a grid-stride loop over the source's
// elements, each added with one atomic add of its type into its row's destination. Source row
// s goes to destination row s mod rows: MoE's unpermutation adds each expert's rows, in token
// order, into the token rows, so the destinations sweep the output once per routed copy.
constexpr int kIndexThreads = 128;
constexpr int kIndexBlocksPerSm = 8;

template <class T>
__global__ void scatter_add_kernel(const T* __restrict__ src, u32 items, u32 first_row, FastDiv row,
                                   FastDiv rows, T* dst) {
  const u32 stride = gridDim.x * blockDim.x;
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < items; i += stride) {
    const u32 r = row.div(i);
    const u32 s = first_row + r;
    const u32 d = s - rows.div(s) * rows.d;
    atomicAdd(dst + (d * row.d + (i - r * row.d)), src[i]);
  }
}

template <class T>
void launch_scatter_add(const ElementwiseCall& c, int sm_count, cudaStream_t stream) {
  const ScatterRows g = scatter_rows(c, sizeof(T));
  const u64 most = static_cast<u64>(sm_count > 0 ? sm_count : 1) * kIndexBlocksPerSm;
  for (u64 first = 0; first < g.rows_in; first += g.slice_rows) {
    const u64 n = std::min<u64>(g.slice_rows, g.rows_in - first) * g.row;
    const auto blocks =
        static_cast<unsigned>(std::min<u64>((n + kIndexThreads - 1) / kIndexThreads, most));
    scatter_add_kernel<T><<<blocks, kIndexThreads, 0, stream>>>(
        static_cast<const T*>(c.src), static_cast<u32>(n), static_cast<u32>(first),
        FastDiv(static_cast<u32>(g.row)), FastDiv(static_cast<u32>(g.rows_out)),
        static_cast<T*>(c.dst));
    COMMPROF_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

void launch_access_pattern(const ElementwiseCall& call, int sm_count, cudaStream_t stream) {
  switch (call.pattern) {
    case AccessPattern::kStream:
      return;
    case AccessPattern::kStrided:
      // The elements are moved, not computed on: their width is what matters.
      switch (dtype_size(call.dtype)) {
        case 2:
          return launch_strided<unsigned short>(call, stream);
        case 4:
          return launch_strided<unsigned>(call, stream);
        default:
          return launch_strided<u64>(call, stream);
      }
    case AccessPattern::kScatterAdd:
      switch (call.dtype) {
        case DType::kFloat32:
          return launch_scatter_add<float>(call, sm_count, stream);
        case DType::kFloat64:
          return launch_scatter_add<double>(call, sm_count, stream);
        case DType::kBFloat16:
          return launch_scatter_add<__nv_bfloat16>(call, sm_count, stream);
        case DType::kFloat16:
          return launch_scatter_add<__half>(call, sm_count, stream);
        case DType::kInt32:
          return launch_scatter_add<int>(call, sm_count, stream);
        case DType::kInt64:
          return launch_scatter_add<u64>(call, sm_count, stream);
      }
      throw ConfigError(std::string("scatter-add cannot add ") + dtype_name(call.dtype));
  }
}

}  // namespace commprof
