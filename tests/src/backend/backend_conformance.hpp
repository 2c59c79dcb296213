// SPDX-License-Identifier: MIT
// The fixture of the Backend contract (src/backend/backend.hpp), written once and run on every
// compiled-in backend under real MPI, one binary (commprof_backend_conformance_mpi_tests) of
// the backend_*_mpi_test.cpp files here, one per part of the contract. The backend is the one
// named by COMMPROF_TEST_BACKEND (CTest sets it per test), created through the registry as the
// program does; a test skips only where that backend cannot run here (no GPU). What only one
// backend has (host worker threads, CUPTI, CUDA graphs, device types) stays in host/ and cuda/.
//
// Collectives make every rank wait for the others, so no test returns early between two of them:
// checks are EXPECT_*, and ASSERT_* only guards code that runs no collective. The files' tests
// are one suite, BackendConformance, set up once per process: every rank runs the same tests in
// the same order.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "src/backend/backend.hpp"
#include "src/backend/registry/backend_registry.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof::test {

class BackendConformance : public ::testing::Test {
 public:
  static Backend& b() { return *backend_; }
  static int rank() { return ctx_->rank(); }
  static int size() { return ctx_->size(); }

  /// `count` floats of `value` on the device.
  static Buffer constant(std::size_t count, double value) {
    Buffer buf = b().allocate(count * sizeof(float), MemorySpace::kDevice);
    b().fill(buf.data(), DType::kFloat32, count,
             FillPattern{FillKind::kConstant, 0, 0, 1, 0, value});
    return buf;
  }
  static ExpectPattern all(double value) {
    ExpectPattern e;
    e.kind = ExpectKind::kConstant;
    e.constant = value;
    return e;
  }
  static std::uint64_t mismatches(const void* data, std::size_t count, double value) {
    return b().count_mismatches(data, DType::kFloat32, count, all(value));
  }

 protected:
  static void SetUpTestSuite() {
    const char* name = std::getenv("COMMPROF_TEST_BACKEND");
    name_ = name != nullptr ? name : "host";
    const BackendInfo* info = nullptr;
    for (const BackendInfo& b : registered_backends()) {
      if (b.name == name_) info = &b;
    }
    if (info == nullptr) {
      skip_reason_ = "no backend named '" + name_ + "' in this build";
      return;
    }
    if (auto why = info->unavailable_reason()) {
      skip_reason_ = *why;
      return;
    }
    ctx_ = new RankContext(nullptr, nullptr, MPI_THREAD_MULTIPLE);
    BackendOptions options;
    options.activity_timing = true;  // as `run` asks by default
    backend_ = info->create(*ctx_, options).release();
  }
  static void TearDownTestSuite() {
    delete backend_;
    delete ctx_;
    backend_ = nullptr;
    ctx_ = nullptr;
  }
  void SetUp() override {
    if (backend_ == nullptr) GTEST_SKIP() << name_ << " cannot run here: " << skip_reason_;
  }

  /// A GEMM of ones that takes a while; every element of C is kDim.
  struct OnesGemm {
    static constexpr int kDim = 192;
    static constexpr std::size_t kElems = static_cast<std::size_t>(kDim) * kDim;
    Buffer a = constant(kElems, 1.0);
    Buffer bm = constant(kElems, 1.0);
    Buffer c = constant(kElems, 0.0);
    GemmCall call() const {
      return GemmCall{kDim,      kDim,     kDim,      DType::kFloat32, a.data(),
                      bm.data(), c.data(), a.bytes(), bm.bytes(),      c.bytes()};
    }
  };

  static inline std::string name_;
  static inline std::string skip_reason_;
  static inline RankContext* ctx_ = nullptr;
  static inline Backend* backend_ = nullptr;
};

// bf16 bits of a float, rounded to nearest even (the GPU's conversion), and back: the AdamW and
// attention tests store their inputs and read their results this way.
inline std::uint16_t to_bf16(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float from_bf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace commprof::test
