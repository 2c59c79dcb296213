// SPDX-License-Identifier: MIT
// Verifiable data for collectives, usable on the host and in CUDA kernels.
//
// Two families of input values, both small integers, so every result is exact in any reduction
// order (the idea of nccl-tests' verifiable/ data, with a closed form instead of a replay):
//  - reduction inputs: (rank + index + seed) mod m, with m chosen so that n·(m−1) stays below the
//    type's largest exact integer; the sum over ranks has a closed form (reduce_sum below). When
//    even m = 2 would pass that limit (bfloat16 beyond 256 ranks), only every `stride`-th rank
//    contributes, so at most limit ranks add ones;
//  - data inputs: (rank·7919 + index + seed) mod p, p a prime below the exact-integer limit, so
//    each element says where it came from.
// Checks compare for exact equality: a wrong element is a wrong element.
//
// A third family is for compute, not checks: normal values (the statistics of trained weights,
// activations and gradients), because the arithmetic's speed depends on them. On an H200 a bf16
// GEMM of zeros and ones runs 6-15% faster than one of random normal operands (docs/workloads.md):
// the clock follows the power that switching bits draws.
#pragma once

#include <math.h>

#include <cstdint>

#if defined(__CUDACC__)
#define COMMPROF_HD __host__ __device__
#else
#define COMMPROF_HD
#endif

namespace commprof {

enum class FillKind : std::uint8_t { kReduceInput, kData, kConstant, kNormal };

/// What to write into element i of a buffer (i counted from `first_index`).
struct FillPattern {
  FillKind kind = FillKind::kConstant;
  int rank = 0;
  std::uint64_t seed = 0;
  std::uint64_t modulus = 1;
  std::uint64_t first_index = 0;
  double constant = 0.0;     ///< kConstant: the value; kNormal: the standard deviation
  std::uint64_t stride = 1;  ///< reduction inputs: only ranks ≡ 0 (mod stride) are non-zero
};

enum class ExpectKind : std::uint8_t {
  kReduceSum,  ///< sum over `nranks` reduction inputs at index first_index + i
  kData,       ///< data input of rank `source` at index first_index + i
  kGathered,   ///< block q = i / chunk holds rank q's data input at i mod chunk
  kAllToAll,   ///< block q = i / chunk holds rank q's data input at rank·chunk + i mod chunk
  kConstant,
};

/// What element i of a result buffer must hold.
struct ExpectPattern {
  ExpectKind kind = ExpectKind::kConstant;
  int nranks = 1;
  int rank = 0;
  int source = 0;
  std::uint64_t seed = 0;
  std::uint64_t modulus = 1;
  std::uint64_t chunk = 1;
  std::uint64_t first_index = 0;
  double constant = 0.0;
  std::uint64_t stride = 1;  ///< as FillPattern::stride
};

inline constexpr std::uint64_t kDataRankStride = 7919;  // a prime: ranks differ in every element

COMMPROF_HD inline double data_value(int rank, std::uint64_t index, std::uint64_t seed,
                                     std::uint64_t modulus) {
  return static_cast<double>((static_cast<std::uint64_t>(rank) * kDataRankStride + index + seed) %
                             modulus);
}

/// Rank r contributes ((r / stride) + index + seed) mod m if r is a multiple of stride, else 0.
COMMPROF_HD inline double reduce_input_value(int rank, std::uint64_t index, std::uint64_t seed,
                                             std::uint64_t modulus, std::uint64_t stride = 1) {
  const auto r = static_cast<std::uint64_t>(rank);
  if (r % stride != 0) return 0.0;
  return static_cast<double>((r / stride + index + seed) % modulus);
}

/// Σ over ranks of reduce_input_value in closed form: the ceil(n / stride) contributing ranks
/// count as ranks 0, 1, …; full cycles of m contribute m(m−1)/2 each, the remaining ones (fewer
/// than m ≤ 7) are added one by one.
COMMPROF_HD inline double reduce_sum(int nranks, std::uint64_t index, std::uint64_t seed,
                                     std::uint64_t modulus, std::uint64_t stride = 1) {
  const std::uint64_t n = (static_cast<std::uint64_t>(nranks) + stride - 1) / stride;
  std::uint64_t total = (n / modulus) * (modulus * (modulus - 1) / 2);
  const std::uint64_t base = (index + seed) % modulus;
  for (std::uint64_t r = 0; r < n % modulus; ++r) total += (base + r) % modulus;
  return static_cast<double>(total);
}

/// SplitMix64's finaliser: a bijection of 64-bit words whose outputs pass as independent.
COMMPROF_HD inline std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A standard normal value for element `index` of `rank`'s buffer with `seed`: counter-based (any
/// element computed alone, on the host or in a kernel, the same), by Box-Muller from two uniforms
/// of 53 bits. |value| < 8.6 (the first uniform is at least 2^-53).
COMMPROF_HD inline double normal_value(int rank, std::uint64_t index, std::uint64_t seed) {
  const std::uint64_t h1 = mix64(mix64(seed ^ (static_cast<std::uint64_t>(rank) << 32)) + index);
  const std::uint64_t h2 = mix64(h1);
  const double u1 = (static_cast<double>(h1 >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  const double u2 = static_cast<double>(h2 >> 11) * (1.0 / 9007199254740992.0);
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2);  // ::, not commprof::log
}

COMMPROF_HD inline double fill_value(const FillPattern& p, std::uint64_t i) {
  const std::uint64_t j = p.first_index + i;
  switch (p.kind) {
    case FillKind::kReduceInput:
      return reduce_input_value(p.rank, j, p.seed, p.modulus, p.stride);
    case FillKind::kData:
      return data_value(p.rank, j, p.seed, p.modulus);
    case FillKind::kConstant:
      return p.constant;
    case FillKind::kNormal:
      return p.constant * normal_value(p.rank, j, p.seed);
  }
  return p.constant;
}

/// Normal values of standard deviation `stddev` for `rank`'s buffer number `seed`: what compute
/// operands hold (checks use the exact families above).
inline FillPattern normal_fill(int rank, std::uint64_t seed, double stddev) {
  FillPattern p;
  p.kind = FillKind::kNormal;
  p.rank = rank;
  p.seed = seed;
  p.constant = stddev;
  return p;
}

COMMPROF_HD inline double expected_value(const ExpectPattern& e, std::uint64_t i) {
  switch (e.kind) {
    case ExpectKind::kReduceSum:
      return reduce_sum(e.nranks, e.first_index + i, e.seed, e.modulus, e.stride);
    case ExpectKind::kData:
      return data_value(e.source, e.first_index + i, e.seed, e.modulus);
    case ExpectKind::kGathered:
      return data_value(static_cast<int>(i / e.chunk), i % e.chunk, e.seed, e.modulus);
    case ExpectKind::kAllToAll:
      return data_value(static_cast<int>(i / e.chunk),
                        static_cast<std::uint64_t>(e.rank) * e.chunk + i % e.chunk, e.seed,
                        e.modulus);
    case ExpectKind::kConstant:
      return e.constant;
  }
  return e.constant;
}

}  // namespace commprof
