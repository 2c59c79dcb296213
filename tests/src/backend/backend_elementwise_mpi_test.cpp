// SPDX-License-Identifier: MIT
// The Backend contract (backend_conformance.hpp): the memory-bound elementwise pass, its bytes
// written and the buffers it stays in, and its access patterns' results.
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

// The strided pattern (PyTorch's unvectorised kernel over a `chunk` half) reads the first half
// of each row only and writes its elements in order: with first halves of 3.0 and second halves
// of 5.0, every element written is 3.0 (each is the OR of first-half values), and nothing past
// the pattern's bytes, nor into the source, is written. Without rows it reads in order.
TEST_F(BackendConformance, StridedPassReadsTheFirstHalfOfEachRow) {
  constexpr std::size_t kHalf = 1000;  // floats
  constexpr std::size_t kRows = 300;
  Buffer src = constant(2 * kHalf * kRows, 5.0);
  for (std::size_t r = 0; r < kRows; ++r) {
    b().fill(static_cast<float*>(src.data()) + 2 * kHalf * r, DType::kFloat32, kHalf,
             FillPattern{FillKind::kConstant, 0, 0, 1, 0, 3.0});
  }
  Buffer dst = constant(2 * kHalf * kRows, -1.0);
  auto* out = static_cast<float*>(dst.data());
  ElementwiseCall call{kHalf * kRows * 4, kHalf * kRows * 4, src.data(),
                       src.bytes(),       dst.data(),        dst.bytes()};
  call.pattern = AccessPattern::kStrided;
  call.pattern_read = call.read_bytes;
  call.pattern_write = call.write_bytes;
  call.row_bytes = kHalf * 4;
  call.dtype = DType::kFloat32;
  b().submit(Category::kComp, call, {"strided"});
  b().synchronize();
  EXPECT_EQ(mismatches(out, kHalf * kRows, 3.0), 0u) << "a second half was read";
  EXPECT_EQ(mismatches(out + kHalf * kRows, kHalf * kRows, -1.0), 0u)
      << "bytes beyond the pass's write were written";
  EXPECT_EQ(mismatches(src.data(), kHalf, 3.0), 0u) << "the pass wrote into its source";
  EXPECT_EQ(mismatches(static_cast<float*>(src.data()) + kHalf, kHalf, 5.0), 0u)
      << "the pass wrote into its source";
  // In order (no rows): the first 2,000 floats read are a first and a second half, so what is
  // written from the second on carries 5.0's bits.
  call.row_bytes = 0;
  call.read_bytes = call.pattern_read = 2 * kHalf * 4;
  call.write_bytes = call.pattern_write = 2 * kHalf * 4;
  b().submit(Category::kComp, call, {"strided"});
  b().synchronize();
  EXPECT_EQ(mismatches(out, 1, 3.0), 0u);
  EXPECT_GT(mismatches(out + kHalf, kHalf, 3.0), 0u) << "in order, the second half was not read";
}

// The scatter-add pattern (index_add_) adds source row s into destination row s mod rows,
// element by element: 3 source rows per destination row of ones make every destination element
// 3, and a pass over twice its source buffer (which it goes through again from the start)
// makes them 6 more; the rows past the destination's are untouched, and so is the source.
TEST_F(BackendConformance, ScatterAddAddsEachRowIntoItsDestination) {
  constexpr std::size_t kRow = 1000;  // floats
  constexpr std::size_t kRowsOut = 40;
  constexpr std::size_t kRowsIn = 3 * kRowsOut;
  Buffer src = constant(kRow * kRowsIn, 1.0);
  Buffer dst = constant(2 * kRow * kRowsOut, 0.0);
  auto* out = static_cast<float*>(dst.data());
  b().fill(out + kRow * kRowsOut, DType::kFloat32, kRow * kRowsOut,
           FillPattern{FillKind::kConstant, 0, 0, 1, 0, -1.0});
  ElementwiseCall call{kRow * kRowsIn * 4, kRow * kRowsOut * 4, src.data(),
                       src.bytes(),        dst.data(),          dst.bytes()};
  call.pattern = AccessPattern::kScatterAdd;
  call.pattern_read = call.read_bytes;
  call.pattern_write = call.write_bytes;
  call.row_bytes = kRow * 4;
  call.dtype = DType::kFloat32;
  b().submit(Category::kComp, call, {"scatter-add"});
  b().synchronize();
  EXPECT_EQ(mismatches(out, kRow * kRowsOut, 3.0), 0u) << "a row was not added 3 times";
  EXPECT_EQ(mismatches(out + kRow * kRowsOut, kRow * kRowsOut, -1.0), 0u)
      << "rows past the destination's were written";
  call.read_bytes = call.pattern_read = 2 * kRow * kRowsIn * 4;
  b().submit(Category::kComp, call, {"scatter-add"});
  b().synchronize();
  EXPECT_EQ(mismatches(out, kRow * kRowsOut, 9.0), 0u) << "around the source buffer";
  EXPECT_EQ(mismatches(src.data(), kRow * kRowsIn, 1.0), 0u) << "the pass wrote into its source";
}

}  // namespace
}  // namespace commprof::test
