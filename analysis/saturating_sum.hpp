// SPDX-License-Identifier: MIT
// Sums of durations and waits over many ops. Each term is bounded (times lie within +-2^60 ns),
// but valid, absurd rank files can still carry enough of them to pass 2^63 ns; the sum then
// stays at the int64 limit (292 years) instead of overflowing into a negative figure.
#pragma once

#include <cstdint>
#include <limits>

namespace commprof {

inline void add_saturating(std::int64_t& sum, std::int64_t term) {
  if (__builtin_add_overflow(sum, term, &sum)) {
    sum = term > 0 ? std::numeric_limits<std::int64_t>::max()
                   : std::numeric_limits<std::int64_t>::min();
  }
}

/// Bytes: a sum of byte counts from untrusted files stays at the uint64 limit.
inline void add_saturating(std::uint64_t& sum, std::uint64_t term) {
  if (__builtin_add_overflow(sum, term, &sum)) sum = std::numeric_limits<std::uint64_t>::max();
}

}  // namespace commprof
