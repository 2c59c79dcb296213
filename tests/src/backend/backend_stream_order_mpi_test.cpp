// SPDX-License-Identifier: MIT
// The Backend contract (backend_conformance.hpp): work on one stream runs in the order it was
// submitted, and an event orders work across two streams.
#include <gtest/gtest.h>

#include <cstdint>

#include "src/backend/backend_conformance.hpp"

namespace commprof::test {
namespace {

TEST_F(BackendConformance, WorkOnOneStreamRunsInSubmissionOrder) {
  constexpr std::size_t kCount = 256;
  Buffer twos = constant(kCount, 2.0);
  Buffer out = constant(kCount, 7.0);
  // MEM: clear, copy, clear the first half: only the submission order gives this result.
  b().submit(Category::kMem, MemsetCall{out.data(), 0, kCount * 4}, {"set"});
  b().submit(Category::kMem, CopyCall{out.data(), twos.data(), kCount * 4}, {"cp"});
  b().submit(Category::kMem, MemsetCall{out.data(), 0, kCount * 2}, {"set"});
  b().synchronize();
  EXPECT_EQ(mismatches(out.data(), kCount / 2, 0.0), 0u);
  EXPECT_EQ(mismatches(static_cast<float*>(out.data()) + kCount / 2, kCount / 2, 2.0), 0u);
}

TEST_F(BackendConformance, EventOrdersWorkAcrossStreams) {
  OnesGemm gemm;
  Buffer out = constant(OnesGemm::kElems, -1.0);
  b().begin_epoch();
  const StampId gemm_start = b().stamp(Category::kComp);
  b().submit(Category::kComp, gemm.call(), {"gemm"});
  const StampId gemm_end = b().stamp(Category::kComp);
  const EventId done = b().record_event(Category::kComp);
  b().wait_event(Category::kMem, done);
  const StampId copy_start = b().stamp(Category::kMem);
  b().submit(Category::kMem, CopyCall{out.data(), gemm.c.data(), OnesGemm::kElems * 4}, {"cp"});
  b().synchronize();
  EXPECT_LE(b().stamp_ns(gemm_start), b().stamp_ns(gemm_end));
  EXPECT_GE(b().stamp_ns(copy_start), b().stamp_ns(gemm_end))
      << "the copy started before the event it waited for";
  EXPECT_EQ(mismatches(out.data(), OnesGemm::kElems, OnesGemm::kDim), 0u)
      << "the copy did not see the GEMM's result";
}

}  // namespace
}  // namespace commprof::test
