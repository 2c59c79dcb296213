// SPDX-License-Identifier: MIT
// The Backend contract (backend_conformance.hpp): the memory-bound elementwise pass, its bytes
// written and the buffers it stays in.
#include <gtest/gtest.h>

#include <cstdint>

#include "src/backend/backend_conformance.hpp"

namespace commprof::test {
namespace {

// A memory-bound pass writes the bytes it is asked to and no others, also where it wraps around
// buffers smaller than the bytes it moves; the first 8 bytes written are the first 8 read (every
// backend folds what it read into what it writes, starting from its first input).
TEST_F(BackendConformance, ElementwisePassWritesItsBytesAndStaysInItsBuffers) {
  constexpr std::size_t kFloats = std::size_t{4} << 20;  // 16 MiB
  Buffer src = constant(kFloats, 3.0);
  Buffer dst = constant(2 * kFloats, -1.0);  // the pass's 16 MiB, then a guard of as many
  auto* out = static_cast<float*>(dst.data());
  // Within the buffers: 1 MiB read, 64 KiB + 8 bytes written (rounded up to 16).
  b().submit(
      Category::kComp,
      ElementwiseCall{1 << 20, (64 << 10) + 8, src.data(), kFloats * 4, dst.data(), kFloats * 4},
      {"pass"});
  b().synchronize();
  EXPECT_EQ(mismatches(out, 2, 3.0), 0u) << "the first bytes written are not the first read";
  EXPECT_EQ(mismatches(out + (64 << 10) / 4 + 4, 2 * kFloats - (64 << 10) / 4 - 4, -1.0), 0u)
      << "bytes beyond the pass's write were written";
  // Around the buffers: 2.5 times the source read, 1.5 times the destination written.
  b().submit(
      Category::kComp,
      ElementwiseCall{kFloats * 10, kFloats * 6, src.data(), kFloats * 4, dst.data(), kFloats * 4},
      {"pass"});
  b().synchronize();
  EXPECT_EQ(mismatches(out + kFloats, kFloats, -1.0), 0u) << "the pass wrote past its buffer";
  EXPECT_EQ(mismatches(src.data(), kFloats, 3.0), 0u) << "the pass wrote into its source";
}

}  // namespace
}  // namespace commprof::test
