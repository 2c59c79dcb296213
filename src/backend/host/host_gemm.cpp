// SPDX-License-Identifier: MIT
#include "src/backend/host/host_gemm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "src/backend/host/host_access_patterns.hpp"
#include "src/backend/host/uninstrumented.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

// Blocked so a tile of A and a column strip of C stay in L1/L2; the inner loop runs down a
// column (unit stride in column-major), which the compiler vectorises. Uninstrumented: host_gemm
// checked the operands against their buffers (see uninstrumented.hpp).
template <class T>
COMMPROF_UNINSTRUMENTED void gemm_blocked(int m, int n, int k, const T* a, const T* b, T* c) {
  if (m == 0 || n == 0) return;  // C may be null then, as cuBLAS allows
  constexpr int kBlockK = 128;
  constexpr int kBlockM = 256;
  std::memset(c, 0, sizeof(T) * static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
  for (int k0 = 0; k0 < k; k0 += kBlockK) {
    const int k1 = std::min(k, k0 + kBlockK);
    for (int m0 = 0; m0 < m; m0 += kBlockM) {
      const int m1 = std::min(m, m0 + kBlockM);
      for (int j = 0; j < n; ++j) {
        T* __restrict cj = c + static_cast<std::size_t>(j) * m;
        for (int p = k0; p < k1; ++p) {
          const T bpj = b[static_cast<std::size_t>(j) * k + p];
          const T* __restrict ap = a + static_cast<std::size_t>(p) * m;
          for (int i = m0; i < m1; ++i) cj[i] += ap[i] * bpj;
        }
      }
    }
  }
}

// A stored cols×rows (column-major) as rows×cols into `out`: the blocked loop reads op(A) and
// op(B) in their plain layout, so a transposed operand is copied into it first (the host's GEMM
// is about arithmetic, not about a kernel's memory layout).
template <class T>
const T* transposed(const T* x, int rows, int cols, T* out) {
  for (int j = 0; j < cols; ++j) {
    for (int i = 0; i < rows; ++i) {
      out[static_cast<std::size_t>(j) * rows + i] = x[static_cast<std::size_t>(i) * cols + j];
    }
  }
  return out;
}

std::size_t elements(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

template <class T>
void gemm_of(const GemmCall& call, GemmScratch& scratch) {
  const T* a = static_cast<const T*>(call.a);
  const T* b = static_cast<const T*>(call.b);
  if (call.trans_a && call.m > 0 && call.k > 0) {
    a = transposed(a, call.m, call.k, scratch.room<T>(0, elements(call.m, call.k)));
  }
  if (call.trans_b && call.k > 0 && call.n > 0) {
    b = transposed(b, call.k, call.n, scratch.room<T>(1, elements(call.k, call.n)));
  }
  gemm_blocked(call.m, call.n, call.k, a, b, static_cast<T*>(call.c));
}

}  // namespace

std::size_t GemmScratch::bytes() const {
  std::size_t total = 0;
  for (const auto& v : floats_) total += v.size() * sizeof(float);
  for (const auto& v : doubles_) total += v.size() * sizeof(double);
  return total;
}

// Uninstrumented: every index wraps within the caps taken from the buffers' sizes.
COMMPROF_UNINSTRUMENTED void host_elementwise(const ElementwiseCall& call) {
  host_access_pattern(call);  // the pattern's part first, then the rest as a stream
  const std::uint64_t read = call.read_bytes - std::min(call.pattern_read, call.read_bytes);
  const std::uint64_t write = call.write_bytes - std::min(call.pattern_write, call.write_bytes);
  const std::uint64_t in_words = elementwise_span(read) / sizeof(std::uint64_t);
  const std::uint64_t out_words = elementwise_span(write) / sizeof(std::uint64_t);
  const std::uint64_t in_cap = std::max<std::uint64_t>(call.src_bytes / 8, 1);
  const std::uint64_t out_cap = std::max<std::uint64_t>(call.dst_bytes / 8, 1);
  const auto* in = static_cast<const std::uint64_t*>(call.src);
  auto* out = static_cast<std::uint64_t*>(call.dst);
  std::uint64_t acc = 0;
  for (std::uint64_t i = 0, r = 0, w = 0; i < in_words || i < out_words; ++i) {
    if (i < in_words) acc ^= in[r];
    if (i < out_words) out[w] = acc;
    if (++r == in_cap) r = 0;  // around a buffer smaller than the pass
    if (++w == out_cap) w = 0;
  }
}

void host_compute(const ComputeCall& call) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point end = Clock::now() + std::chrono::nanoseconds(call.ns);
  double acc[4] = {1.0, 2.0, 3.0, 4.0};
  do {
    for (int i = 0; i < 4096; ++i) {
      for (double& a : acc) a = std::fma(a, 0.999999, 1e-6);
    }
  } while (Clock::now() < end);
  // An empty asm the compiler must assume reads the result: no FMA can be dropped.
  double total = acc[0] + acc[1] + acc[2] + acc[3];
  asm volatile("" : : "g"(total) : "memory");
}

void host_gemm(const GemmCall& call, GemmScratch& scratch) {
  if (const std::string problem = call.bounds_problem(); !problem.empty()) {
    throw ConfigError(problem);
  }
  switch (call.dtype) {
    case DType::kFloat32:
      gemm_of<float>(call, scratch);
      return;
    case DType::kFloat64:
      gemm_of<double>(call, scratch);
      return;
    default:
      throw ConfigError(std::string("the host backend computes GEMMs in float or double, not ") +
                        dtype_name(call.dtype));
  }
}

}  // namespace commprof
