// SPDX-License-Identifier: MIT
// The Backend contract (backend_conformance.hpp), its first part: what a backend says of itself
// and of its world, and the fill and check every other test verifies its results with.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "src/backend/backend_conformance.hpp"
#include "src/collective/collective_spec.hpp"

namespace commprof::test {
namespace {

TEST_F(BackendConformance, DescribesItselfAndItsWorld) {
  EXPECT_EQ(b().name(), name_);
  EXPECT_FALSE(b().device_description().empty());
  EXPECT_TRUE(b().supports(DType::kFloat32));
  EXPECT_EQ(b().world().size(), size());
  EXPECT_EQ(b().world().rank(), rank());
  EXPECT_EQ(b().world().name(), "world");
}

TEST_F(BackendConformance, FillAndCountMismatchesRoundTrip) {
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(dtype_name(t));
    constexpr std::size_t kCount = 1000;
    Buffer buffer = b().allocate(kCount * dtype_size(t), MemorySpace::kDevice);
    ExpectPattern expect;
    expect.kind = ExpectKind::kData;
    expect.source = rank();
    expect.seed = 42;
    expect.modulus = data_modulus(t);
    b().fill(buffer.data(), t, kCount, FillPattern{FillKind::kData, rank(), 42, data_modulus(t)});
    EXPECT_EQ(b().count_mismatches(buffer.data(), t, kCount, expect), 0u);
    expect.source = rank() + 1;  // another rank's data differs everywhere
    EXPECT_EQ(b().count_mismatches(buffer.data(), t, kCount, expect), kCount);
    expect.source = rank();
    auto* bytes = static_cast<char*>(buffer.data());
    for (std::size_t at : {10u, 500u, 999u}) {
      b().fill(bytes + at * dtype_size(t), t, 1,
               FillPattern{FillKind::kConstant, 0, 0, 1, 0, -1.0});
    }
    EXPECT_EQ(b().count_mismatches(buffer.data(), t, kCount, expect), 3u);
  }
}

}  // namespace
}  // namespace commprof::test
