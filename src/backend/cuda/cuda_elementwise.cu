// SPDX-License-Identifier: MIT
#include "src/backend/cuda/cuda_access_patterns.hpp"
#include "src/backend/cuda/cuda_check.hpp"
#include "src/backend/cuda/cuda_elementwise.hpp"

namespace commprof {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;  // enough bytes in flight to reach the memory's bandwidth
using u64 = unsigned long long;

// Thread t reads input vectors t, t + n, t + 2n, ... and writes output vectors t, t + n, ...,
// each output the XOR of the inputs this thread has read so far: every read feeds a write, so the
// compiler can drop none. Positions wrap around buffers smaller than the pass (the executor's are
// larger than the grid's stride, so the loops below subtract once).
__global__ void elementwise_pass_kernel(const uint4* __restrict__ in, u64 in_vecs, u64 in_cap,
                                        uint4* __restrict__ out, u64 out_vecs, u64 out_cap) {
  const u64 stride = static_cast<u64>(gridDim.x) * blockDim.x;
  const u64 total = in_vecs > out_vecs ? in_vecs : out_vecs;
  const u64 first = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  u64 r = first % in_cap;
  u64 w = first % out_cap;
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (u64 i = first; i < total; i += stride) {
    if (i < in_vecs) {
      const uint4 v = in[r];
      acc.x ^= v.x;
      acc.y ^= v.y;
      acc.z ^= v.z;
      acc.w ^= v.w;
    }
    if (i < out_vecs) out[w] = acc;
    r += stride;
    while (r >= in_cap) r -= in_cap;
    w += stride;
    while (w >= out_cap) w -= out_cap;
  }
}

}  // namespace

void launch_elementwise(const ElementwiseCall& call, int sm_count, cudaStream_t stream) {
  // The bytes the pattern's kernel moves, then the rest as a stream.
  launch_access_pattern(call, sm_count, stream);
  const u64 read =
      call.read_bytes - (call.pattern_read < call.read_bytes ? call.pattern_read : call.read_bytes);
  const u64 write = call.write_bytes -
                    (call.pattern_write < call.write_bytes ? call.pattern_write : call.write_bytes);
  const u64 in_vecs = elementwise_span(read) / kElementwiseVector;
  const u64 out_vecs = elementwise_span(write) / kElementwiseVector;
  const u64 total = in_vecs > out_vecs ? in_vecs : out_vecs;
  if (total == 0) return;
  const u64 in_cap = call.src_bytes / kElementwiseVector;
  const u64 out_cap = call.dst_bytes / kElementwiseVector;
  const u64 wanted = (total + kThreads - 1) / kThreads;
  const u64 most = static_cast<u64>(sm_count) * kBlocksPerSm;
  const auto blocks = static_cast<unsigned>(wanted < most ? wanted : most);
  elementwise_pass_kernel<<<blocks, kThreads, 0, stream>>>(
      static_cast<const uint4*>(call.src), in_vecs, in_cap > 0 ? in_cap : 1,
      static_cast<uint4*>(call.dst), out_vecs, out_cap > 0 ? out_cap : 1);
  COMMPROF_CUDA_CHECK(cudaGetLastError());
}

}  // namespace commprof
