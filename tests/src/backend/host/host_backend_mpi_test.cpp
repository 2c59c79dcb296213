// SPDX-License-Identifier: MIT
// The host backend under real MPI (1 rank and 4 ranks), beyond the contract every backend meets
// (tests/src/backend/backend_*_mpi_test.cpp): its description, allocation, stream order
// of its worker threads, activity spans, epochs, collectives against the reference model, and
// failure propagation.
//
// Collectives make every rank wait for the others, so no test returns early between two of
// them: checks are EXPECT_*, and ASSERT_* only guards code that runs no collective.
#include "src/backend/host/host_backend.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "src/collective/collective_spec.hpp"
#include "src/core/errors.hpp"
#include "src/runtime/rank_context.hpp"
#include "support/collective_model.hpp"

namespace commprof {
namespace {

class HostBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = std::make_unique<RankContext>(nullptr, nullptr, MPI_THREAD_MULTIPLE);
    BackendOptions options;
    options.activity_timing = true;
    backend_ = std::make_unique<HostBackend>(*ctx_, options);
  }
  void TearDown() override {
    backend_.reset();
    ctx_.reset();
  }

  int rank() const { return ctx_->rank(); }
  int size() const { return ctx_->size(); }

  /// A GEMM big enough to take milliseconds, with a result known in closed form: A and B all
  /// ones, so every element of C is k.
  struct SlowGemm {
    static constexpr int kDim = 192;
    std::vector<float> a = std::vector<float>(kDim * kDim, 1.0f);
    std::vector<float> b = std::vector<float>(kDim * kDim, 1.0f);
    std::vector<float> c = std::vector<float>(kDim * kDim, 0.0f);
    GemmCall call() {
      return GemmCall{kDim,     kDim,     kDim,         DType::kFloat32, a.data(),
                      b.data(), c.data(), a.size() * 4, b.size() * 4,    c.size() * 4};
    }
  };

  std::unique_ptr<RankContext> ctx_;
  std::unique_ptr<HostBackend> backend_;
};

TEST_F(HostBackendTest, DescribesItself) {
  EXPECT_STREQ(backend_->name(), "host");
  EXPECT_EQ(backend_->device_description(), "cpu");
  EXPECT_EQ(backend_->device_index(), -1);
  EXPECT_TRUE(backend_->supports(DType::kFloat32));
  EXPECT_TRUE(backend_->supports(DType::kFloat64));
  EXPECT_TRUE(backend_->supports(DType::kInt32));
  EXPECT_TRUE(backend_->supports(DType::kInt64));
  EXPECT_FALSE(backend_->supports(DType::kBFloat16));
  EXPECT_FALSE(backend_->supports(DType::kFloat16));
  EXPECT_EQ(backend_->world().size(), size());
  EXPECT_EQ(backend_->world().rank(), rank());
  EXPECT_EQ(backend_->world().name(), "world");
}

TEST_F(HostBackendTest, AllocationIsAlignedAndSized) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{4096}}) {
    Buffer buffer = backend_->allocate(bytes, MemorySpace::kDevice);
    ASSERT_NE(buffer.data(), nullptr);
    EXPECT_EQ(buffer.bytes(), bytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % 64, 0u);
    std::memset(buffer.data(), 0xAB, bytes);  // writable (ASan checks the extent)
  }
}

TEST_F(HostBackendTest, WorkOnOneStreamRunsInSubmissionOrder) {
  SlowGemm gemm;
  std::vector<float> copy(gemm.c.size(), -1.0f);
  std::vector<std::uint8_t> bytes(256, 0);
  std::vector<std::uint8_t> pattern(256);
  std::iota(pattern.begin(), pattern.end(), std::uint8_t{0});
  // COMP: the copy reads C only after the GEMM wrote it.
  backend_->submit(Category::kComp, gemm.call(), {"gemm"});
  backend_->submit(Category::kComp, CopyCall{copy.data(), gemm.c.data(), copy.size() * 4}, {"cp"});
  // MEM: memset, copy, memset of the first half: the result shows all three in order.
  backend_->submit(Category::kMem, MemsetCall{bytes.data(), 0x11, 256}, {"set"});
  backend_->submit(Category::kMem, CopyCall{bytes.data(), pattern.data(), 256}, {"cp"});
  backend_->submit(Category::kMem, MemsetCall{bytes.data(), 0x22, 128}, {"set"});
  backend_->synchronize();
  EXPECT_TRUE(std::all_of(copy.begin(), copy.end(), [](float v) { return v == SlowGemm::kDim; }));
  for (std::size_t i = 0; i < 256; ++i) {
    ASSERT_EQ(bytes[i], i < 128 ? 0x22 : pattern[i]) << "byte " << i;
  }
}

TEST_F(HostBackendTest, ActivitySpansLieInsideTheStampsAroundTheirOp) {
  SlowGemm gemm;
  std::vector<float> scratch(4096, 1.0f);
  ASSERT_NE(backend_->activity(), nullptr);
  backend_->begin_epoch();
  const StampId before = backend_->stamp(Category::kComp);
  OpLabel g{"gemm"};
  g.activity_tag = 7;
  backend_->submit(Category::kComp, gemm.call(), g);
  const StampId between = backend_->stamp(Category::kComp);
  OpLabel m{"set"};
  m.activity_tag = 8;
  backend_->submit(Category::kComp, MemsetCall{scratch.data(), 0, 4 * scratch.size()}, m);
  const StampId after = backend_->stamp(Category::kComp);
  backend_->submit(Category::kComp, MemsetCall{scratch.data(), 0, 4 * scratch.size()},
                   {"untagged"});
  backend_->synchronize();

  const auto gs = backend_->activity()->span(7);
  const auto ms = backend_->activity()->span(8);
  ASSERT_TRUE(gs.has_value());
  ASSERT_TRUE(ms.has_value());
  EXPECT_LE(backend_->stamp_ns(before), gs->start_ns);
  EXPECT_LT(gs->start_ns, gs->end_ns) << "a 192^3 GEMM takes time";
  EXPECT_LE(gs->end_ns, backend_->stamp_ns(between));
  EXPECT_LE(backend_->stamp_ns(between), ms->start_ns);
  EXPECT_LE(ms->start_ns, ms->end_ns);
  EXPECT_LE(ms->end_ns, backend_->stamp_ns(after));
  EXPECT_EQ(gemm.c[0], static_cast<float>(SlowGemm::kDim)) << "the work itself ran";
  EXPECT_FALSE(backend_->activity()->span(9).has_value()) << "no op had tag 9";

  backend_->begin_epoch();
  EXPECT_FALSE(backend_->activity()->span(7).has_value()) << "spans of the old epoch are forgotten";
}

TEST_F(HostBackendTest, ActivityTimingIsOffUnlessRequested) {
  HostBackend plain(*ctx_, BackendOptions{});
  ASSERT_EQ(plain.activity(), nullptr) << "no recorder unless requested";
  EXPECT_EQ(plain.unavailable_reason(Capability::kActivity), "activity timing was not requested");
  OpLabel g{"set"};
  g.activity_tag = 1;
  std::vector<float> scratch(16, 1.0f);
  plain.submit(Category::kMem, MemsetCall{scratch.data(), 0, 64}, g);
  plain.synchronize();  // a tagged op runs all the same
  EXPECT_EQ(plain.activity(), nullptr);
}

TEST_F(HostBackendTest, BeginEpochResetsTheOrigin) {
  SlowGemm gemm;
  const std::int64_t origin1 = backend_->epoch_origin_host_ns();
  backend_->submit(Category::kComp, gemm.call(), {"gemm"});
  const StampId late = backend_->stamp(Category::kComp);
  backend_->synchronize();
  const std::int64_t late_ns = backend_->stamp_ns(late);
  EXPECT_GT(late_ns, 0);

  backend_->begin_epoch();
  const std::int64_t origin2 = backend_->epoch_origin_host_ns();
  EXPECT_GE(origin2, origin1 + late_ns) << "the new origin is not after the old epoch's stamps";
  const StampId first = backend_->stamp(Category::kComm);
  backend_->synchronize();
  const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now().time_since_epoch())
                                  .count();
  EXPECT_EQ(first, 0u) << "stamp ids restart with the epoch";
  EXPECT_GE(backend_->stamp_ns(first), 0);
  EXPECT_LE(origin2 + backend_->stamp_ns(first), now_ns) << "stamps are on the steady clock";
  EXPECT_THROW(backend_->stamp_ns(1), Error) << "stamps of the old epoch are forgotten";
}

// The host backend's MPI has no 16-bit float sums, and its fill and check refuse those types
// (the round trip of the others: BackendConformance).
TEST_F(HostBackendTest, SixteenBitTypesAreRefused) {
  std::vector<std::uint16_t> half(8);
  EXPECT_THROW(backend_->fill(half.data(), DType::kBFloat16, 8, FillPattern{}), ConfigError);
  EXPECT_THROW(backend_->count_mismatches(half.data(), DType::kFloat16, 8, ExpectPattern{}),
               ConfigError);
}

// Every collective through Backend::submit on the world, checked against the reference model
// (not against CollectiveSpec::expected, so an error in both would not hide).
class HostBackendCollectives : public HostBackendTest,
                               public ::testing::WithParamInterface<CollectiveKind> {};

TEST_P(HostBackendCollectives, ExactResultsOnTheWorld) {
  const CollectiveKind kind = GetParam();
  const CollectiveSpec& spec = collective_spec(kind);
  const int n = size();
  for (DType t : {DType::kFloat32, DType::kInt64, DType::kFloat64, DType::kInt32}) {
    for (std::uint64_t bytes : {4096ull, 1000ull * dtype_size(t) + 48}) {
      const int root = spec.rooted ? n - 1 : 0;
      const CollectiveSizes s = spec.sizes(bytes, t, n);
      SCOPED_TRACE(std::string(spec.name) + " " + dtype_name(t) + " " + std::to_string(bytes));
      ASSERT_GT(s.count, 0u);  // no collective yet: all ranks agree on this
      const std::uint64_t seed = bytes;
      Buffer send = backend_->allocate(s.send_count * dtype_size(t), MemorySpace::kDevice);
      Buffer recv = backend_->allocate(s.recv_count * dtype_size(t), MemorySpace::kDevice);
      backend_->fill(send.data(), t, s.send_count, spec.input(rank(), n, t, seed));
      backend_->fill(recv.data(), t, s.recv_count,
                     FillPattern{FillKind::kConstant, 0, 0, 1, 0, testing::kUndefined});
      CollectiveCall call{kind, &backend_->world(), send.data(), recv.data(), s.count, t, root};
      backend_->submit(Category::kComm, call, {spec.name});
      backend_->synchronize();

      const testing::RankBuffers model =
          testing::simulate_collective(kind, s, root, testing::make_inputs(spec, n, t, seed, s));
      const auto& want = model[static_cast<std::size_t>(rank())];
      std::vector<double> got(s.recv_count);
      for (std::size_t i = 0; i < got.size(); ++i) {
        switch (t) {
          case DType::kFloat32:
            got[i] = recv.as<float>()[i];
            break;
          case DType::kFloat64:
            got[i] = recv.as<double>()[i];
            break;
          case DType::kInt32:
            got[i] = recv.as<std::int32_t>()[i];
            break;
          default:
            got[i] = static_cast<double>(recv.as<std::int64_t>()[i]);
            break;
        }
      }
      if (spec.output_defined(rank(), root)) {
        EXPECT_EQ(got, want);
        EXPECT_EQ(backend_->count_mismatches(recv.data(), t, s.recv_count,
                                             spec.expected(rank(), n, root, t, seed, s)),
                  0u);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, HostBackendCollectives,
                         ::testing::ValuesIn(all_collective_kinds()),
                         [](const ::testing::TestParamInfo<CollectiveKind>& p) {
                           return std::string(collective_name(p.param));
                         });

TEST_F(HostBackendTest, FailedWorkIsRethrownBySynchronizeAndControlTasksStillRun) {
  std::vector<std::uint16_t> bf16(16, 0);
  std::vector<std::uint8_t> skipped(64, 0);
  std::vector<std::uint8_t> source(64, 0x5A);
  std::vector<std::uint8_t> copied(64, 0);
  backend_->submit(
      Category::kComp,
      GemmCall{4, 4, 4, DType::kBFloat16, bf16.data(), bf16.data(), bf16.data(), 32, 32, 32},
      {"gemm"});
  // Work after the failure on the same stream is skipped...
  backend_->submit(Category::kComp, MemsetCall{skipped.data(), 1, skipped.size()}, {"set"});
  // ...but its event is still recorded, so the MEM stream waiting on it does not hang.
  const EventId after_failure = backend_->record_event(Category::kComp);
  const StampId stamp_after_failure = backend_->stamp(Category::kComp);
  backend_->wait_event(Category::kMem, after_failure);
  backend_->submit(Category::kMem, CopyCall{copied.data(), source.data(), source.size()}, {"cp"});
  try {
    backend_->synchronize();
    ADD_FAILURE() << "synchronize() did not report the failed GEMM";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos) << e.what();
  }
  EXPECT_EQ(skipped, std::vector<std::uint8_t>(64, 0)) << "work after a failure ran";
  EXPECT_EQ(copied, source) << "the MEM stream's work after the event did not run";
  EXPECT_GT(backend_->stamp_ns(stamp_after_failure), 0) << "a stamp after the failure was lost";

  // The failure is reported once; the stream then runs work again.
  EXPECT_NO_THROW(backend_->synchronize());
  backend_->submit(Category::kComp, MemsetCall{skipped.data(), 1, skipped.size()}, {"set"});
  EXPECT_NO_THROW(backend_->synchronize());
  EXPECT_EQ(skipped, std::vector<std::uint8_t>(64, 1));
}

TEST_F(HostBackendTest, FailedCollectiveArgumentsAreReportedNotHung) {
  // bfloat16 has no MPI sum: every rank fails alike before communicating.
  std::vector<std::uint16_t> data(8, 0);
  backend_->submit(Category::kComm,
                   CollectiveCall{CollectiveKind::kAllReduce, &backend_->world(), data.data(),
                                  data.data(), data.size(), DType::kBFloat16, 0},
                   {"allreduce"});
  EXPECT_THROW(backend_->synchronize(), ConfigError);
}

}  // namespace
}  // namespace commprof
