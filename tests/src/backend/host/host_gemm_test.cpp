// SPDX-License-Identifier: MIT
// The host backend's COMP work: a blocked GEMM must compute exactly what the textbook triple
// loop computes (column-major, as cuBLAS), whatever the shape.
#include "src/backend/host/host_gemm.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

struct Shape {
  int m, n, k;
};

// One call with a scratch of its own, for the cases where reuse is not the point.
void gemm(const GemmCall& call) {
  GemmScratch scratch;
  host_gemm(call, scratch);
}

// Small integers: every product and sum is exact in float and double, so results must match
// the reference bit for bit regardless of summation order.
template <class T>
std::vector<T> small_ints(std::size_t count, int salt) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<T>(static_cast<int>((i * 7 + static_cast<std::size_t>(salt) * 13) % 9) - 4);
  }
  return v;
}

template <class T>
std::vector<T> naive_gemm(const Shape& s, const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> c(static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.n), T(0));
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      T sum = 0;
      for (int p = 0; p < s.k; ++p) {
        sum += a[static_cast<std::size_t>(p) * s.m + i] * b[static_cast<std::size_t>(j) * s.k + p];
      }
      c[static_cast<std::size_t>(j) * s.m + i] = sum;
    }
  }
  return c;
}

template <class T>
void check_shape(const Shape& s, DType dtype) {
  SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " +
               dtype_name(dtype));
  const auto a = small_ints<T>(static_cast<std::size_t>(s.m) * s.k, 1);
  const auto b = small_ints<T>(static_cast<std::size_t>(s.k) * s.n, 2);
  // C starts as garbage: the GEMM overwrites (beta = 0), it does not accumulate.
  std::vector<T> c(static_cast<std::size_t>(s.m) * s.n, T(12345));
  GemmCall call;
  call.m = s.m;
  call.n = s.n;
  call.k = s.k;
  call.dtype = dtype;
  call.a = a.data();
  call.b = b.data();
  call.c = c.data();
  call.a_bytes = a.size() * sizeof(T);
  call.b_bytes = b.size() * sizeof(T);
  call.c_bytes = c.size() * sizeof(T);
  gemm(call);
  EXPECT_EQ(c, naive_gemm(s, a, b));
}

// Odd shapes, shapes that cross the 256-row and 128-deep blocks, and k = 0 (C = 0).
const Shape kShapes[] = {{37, 19, 53},  {1, 1, 1},     {1, 7, 3}, {64, 1, 64},
                         {300, 5, 260}, {257, 3, 129}, {5, 4, 0}};

TEST(HostGemm, FloatMatchesNaiveTripleLoop) {
  for (const Shape& s : kShapes) check_shape<float>(s, DType::kFloat32);
}

TEST(HostGemm, DoubleMatchesNaiveTripleLoop) {
  for (const Shape& s : kShapes) check_shape<double>(s, DType::kFloat64);
}

// A or B stored transposed (GemmCall::trans_a, trans_b), as a framework's linear layer stores
// its weight: the same products as the triple loop over op(A)(i, p) and op(B)(p, j).
template <class T>
void check_transposed(const Shape& s, bool ta, bool tb, GemmScratch& scratch) {
  SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
               (ta ? " T" : " N") + (tb ? "T" : "N"));
  const auto a = small_ints<T>(static_cast<std::size_t>(s.m) * s.k, 3);
  const auto b = small_ints<T>(static_cast<std::size_t>(s.k) * s.n, 4);
  std::vector<T> want(static_cast<std::size_t>(s.m) * s.n, T(0));
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      T sum = 0;
      for (int p = 0; p < s.k; ++p) {
        const T ap = ta ? a[static_cast<std::size_t>(i) * s.k + p]
                        : a[static_cast<std::size_t>(p) * s.m + i];
        const T bp = tb ? b[static_cast<std::size_t>(p) * s.n + j]
                        : b[static_cast<std::size_t>(j) * s.k + p];
        sum += ap * bp;
      }
      want[static_cast<std::size_t>(j) * s.m + i] = sum;
    }
  }
  std::vector<T> c(want.size(), T(777));
  GemmCall call{s.m,
                s.n,
                s.k,
                std::is_same_v<T, float> ? DType::kFloat32 : DType::kFloat64,
                a.data(),
                b.data(),
                c.data(),
                a.size() * sizeof(T),
                b.size() * sizeof(T),
                c.size() * sizeof(T)};
  call.trans_a = ta;
  call.trans_b = tb;
  EXPECT_EQ(call.lda(), ta ? s.k : s.m);
  EXPECT_EQ(call.ldb(), tb ? s.n : s.k);
  host_gemm(call, scratch);
  EXPECT_EQ(c, want);
}

TEST(HostGemm, TransposedOperandsMatchTheTripleLoop) {
  // One scratch for every call, as a stream keeps it: a larger operand's leftovers in it must
  // not leak into a smaller one's product.
  GemmScratch scratch;
  for (const Shape& s : {Shape{37, 19, 53}, Shape{300, 5, 260}, Shape{1, 7, 3}}) {
    check_transposed<float>(s, true, false, scratch);  // a linear layer's forward: Wᵀ·x
    check_transposed<float>(s, false, true, scratch);  // its weight gradient: x·dyᵀ
    check_transposed<double>(s, true, true, scratch);
  }
  // By hand: A stored 2×3 (column-major, leading dimension k = 2) holds the columns (1,2),
  // (3,4), (5,6), so op(A) = Aᵀ is 3×2 with rows (1,2), (3,4), (5,6); times B = I (2×2), C is
  // op(A), column-major (1,3,5), (2,4,6).
  const std::vector<float> at = {1, 2, 3, 4, 5, 6}, id = {1, 0, 0, 1};
  std::vector<float> c(6, -1);
  GemmCall call{3, 2, 2, DType::kFloat32, at.data(), id.data(), c.data(), 24, 16, 24};
  call.trans_a = true;
  gemm(call);
  EXPECT_EQ(c, (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

// A step issues the same GEMMs every time: after the first, the transposed copies go where the
// first one's went, and the scratch grows only for a larger operand.
TEST(HostGemm, TransposedCopiesReuseTheScratchAfterTheFirstCall) {
  GemmScratch scratch;
  EXPECT_EQ(scratch.bytes(), 0u);
  check_transposed<float>({64, 8, 32}, true, true, scratch);  // A 32x64 and B 8x32 transposed
  const std::size_t after_first = scratch.bytes();
  EXPECT_EQ(after_first, (64u * 32u + 32u * 8u) * sizeof(float));
  const float* a_room = scratch.room<float>(0, 0);
  const float* b_room = scratch.room<float>(1, 0);
  for (int step = 0; step < 3; ++step) {
    check_transposed<float>({64, 8, 32}, true, true, scratch);
    check_transposed<float>({16, 4, 8}, true, true, scratch);  // smaller: the same room
  }
  EXPECT_EQ(scratch.bytes(), after_first);
  EXPECT_EQ(scratch.room<float>(0, 0), a_room);
  EXPECT_EQ(scratch.room<float>(1, 0), b_room);
  check_transposed<float>({128, 8, 32}, true, false, scratch);  // a larger A grows its room only
  EXPECT_EQ(scratch.bytes(), (128u * 32u + 32u * 8u) * sizeof(float));
  // Plain operands need no copy: nothing is taken for them.
  GemmScratch untouched;
  check_transposed<double>({37, 19, 53}, false, false, untouched);
  EXPECT_EQ(untouched.bytes(), 0u);
}

TEST(HostGemm, EmptyOutputTouchesNoMemory) {
  // As with cuBLAS, a GEMM with m = 0 or n = 0 has no output and may get null pointers.
  for (const Shape& s : {Shape{0, 3, 4}, Shape{3, 0, 4}, Shape{0, 0, 0}}) {
    EXPECT_NO_THROW(gemm(GemmCall{s.m, s.n, s.k, DType::kFloat32, nullptr, nullptr, nullptr}));
    EXPECT_NO_THROW(gemm(GemmCall{s.m, s.n, s.k, DType::kFloat64, nullptr, nullptr, nullptr}));
  }
}

TEST(HostGemm, OtherTypesAreConfigErrorsNamingTheType) {
  std::vector<std::uint16_t> buffer(16);
  for (DType t : {DType::kBFloat16, DType::kFloat16, DType::kInt32, DType::kInt64}) {
    GemmCall call{2, 2, 2, t, buffer.data(), buffer.data(), buffer.data(), 32, 32, 32};
    try {
      gemm(call);
      ADD_FAILURE() << dtype_name(t) << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(dtype_name(t)), std::string::npos) << e.what();
    }
  }
}

TEST(HostGemm, NegativeDimensionsAreRejected) {
  float x = 0;
  EXPECT_THROW(gemm(GemmCall{-1, 2, 2, DType::kFloat32, &x, &x, &x}), ConfigError);
  EXPECT_THROW(gemm(GemmCall{2, 2, -3, DType::kFloat32, &x, &x, &x}), ConfigError);
}

// The kernel runs uninstrumented under the sanitizers (uninstrumented.hpp): operands that do
// not fit their buffers are refused before it runs, naming the operand and both sizes.
TEST(HostGemm, OperandsLargerThanTheirBuffersAreRejected) {
  std::vector<float> a(6), b(12), c(8);  // A 2x3, B 3x4, C 2x4 in float
  GemmCall call{2, 4, 3, DType::kFloat32, a.data(), b.data(), c.data(), 24, 48, 32};
  EXPECT_NO_THROW(gemm(call));
  for (std::uint64_t GemmCall::*bytes :
       {&GemmCall::a_bytes, &GemmCall::b_bytes, &GemmCall::c_bytes}) {
    GemmCall shorter = call;
    shorter.*bytes -= 4;
    try {
      gemm(shorter);
      ADD_FAILURE() << "a buffer 4 B short accepted";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("needs " + std::to_string(call.*bytes) + " B, its buffer has " +
                          std::to_string(call.*bytes - 4) + " B"),
                std::string::npos)
          << what;
    }
  }
  // Without sizes (a caller that did not say) nothing is run either.
  EXPECT_THROW(gemm(GemmCall{2, 4, 3, DType::kFloat32, a.data(), b.data(), c.data()}), ConfigError);
}

TEST(GemmCall, FlopsAreTwoMnk) {
  EXPECT_DOUBLE_EQ((GemmCall{37, 19, 53}).flops(), 2.0 * 37 * 19 * 53);
  EXPECT_DOUBLE_EQ((GemmCall{65536, 65536, 65536}).flops(), 2.0 * 65536.0 * 65536.0 * 65536.0);
}

}  // namespace
}  // namespace commprof
