// SPDX-License-Identifier: MIT
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "src/backend/cuda/cuda_access_patterns.hpp"
#include "src/backend/cuda/cuda_check.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using u32 = unsigned;
using u64 = unsigned long long;

// Items per launch at most: every index and offset below stays in 32 bits, as PyTorch keeps its
// element-wise kernels' (it splits larger tensors too).
constexpr u64 kSliceItems = u64{1} << 30;

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
  const u64 e = sizeof(T);
  const u64 in_total = std::min(c.pattern_read, c.read_bytes) / e;
  const u64 out_total = std::min(c.pattern_write, c.write_bytes) / e;
  const u64 total = std::max(in_total, out_total);
  if (total == 0) return;
  const u64 src_cap = c.src_bytes / e;
  const u64 dst_cap = std::max<u64>(c.dst_bytes / e, 1);
  // Half-rows no wider than half the source buffer; each launch whole rows of it. Reads in
  // order: one "row" as long as the launch.
  u64 h = 0;
  u64 slice = std::max<u64>(std::min({src_cap, dst_cap, kSliceItems}), 1);
  if (c.row_bytes > 0) {
    h = std::clamp<u64>(c.row_bytes / e, 1, std::max<u64>(src_cap / 2, 1));
    slice = std::min({src_cap / (2 * h) * h, dst_cap, kSliceItems});
    if (slice >= h) slice = slice / h * h;
    slice = std::max<u64>(slice, 1);
  } else {
    h = slice;
  }
  const FastDiv half(static_cast<u32>(h));
  for (u64 base = 0; base < total; base += slice) {
    const u64 len = std::min(slice, total - base);
    const u64 in_len = base < in_total ? std::min(len, in_total - base) : 0;
    const u64 out_len = base < out_total ? std::min(len, out_total - base) : 0;
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
  const u64 e = sizeof(T);
  const u64 src_cap = c.src_bytes / e;
  const u64 dst_cap = c.dst_bytes / e;
  const u64 w = std::clamp<u64>(c.row_bytes / e, 1, std::max<u64>(std::min(src_cap, dst_cap), 1));
  const u64 rows_in = std::min(c.pattern_read, c.read_bytes) / e / w;
  if (rows_in == 0) return;
  const u64 rows_out = std::clamp<u64>(std::min(c.pattern_write, c.write_bytes) / e / w, 1,
                                       std::max<u64>(dst_cap / w, 1));
  const u64 slice_rows = std::max<u64>(std::min(src_cap, kSliceItems) / w, 1);
  const u64 most = static_cast<u64>(sm_count > 0 ? sm_count : 1) * kIndexBlocksPerSm;
  for (u64 first = 0; first < rows_in; first += slice_rows) {
    const u64 n = std::min(slice_rows, rows_in - first) * w;
    const auto blocks =
        static_cast<unsigned>(std::min((n + kIndexThreads - 1) / kIndexThreads, most));
    scatter_add_kernel<T><<<blocks, kIndexThreads, 0, stream>>>(
        static_cast<const T*>(c.src), static_cast<u32>(n), static_cast<u32>(first),
        FastDiv(static_cast<u32>(w)), FastDiv(static_cast<u32>(rows_out)), static_cast<T*>(c.dst));
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
