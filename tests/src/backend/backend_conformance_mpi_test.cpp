// SPDX-License-Identifier: MIT
// The Backend contract (src/backend/backend.hpp), written once and run on every compiled-in
// backend under real MPI: stream order, events across streams, stamps and epochs, fill and check,
// activity spans, collectives on the world and on a split communicator. The backend is the one
// named by COMMPROF_TEST_BACKEND (CTest sets it per test), created through the registry as the
// program does; the test skips only where that backend cannot run here (no GPU). What only one
// backend has (host worker threads, CUPTI, CUDA graphs, device types) stays in host/ and cuda/.
//
// Collectives make every rank wait for the others, so no test returns early between two of them:
// checks are EXPECT_*, and ASSERT_* only guards code that runs no collective.
#include <gtest/gtest.h>

#include <mpi.h>
#include <cmath>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "collectives/collective_spec.hpp"
#include "src/backend/backend.hpp"
#include "src/backend/backend_registry.hpp"
#include "src/core/errors.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {
namespace {

class BackendConformance : public ::testing::Test {
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

  /// A GEMM of ones that takes a while; every element of C is kDim.
  struct OnesGemm {
    static constexpr int kDim = 192;
    static constexpr std::size_t kElems = static_cast<std::size_t>(kDim) * kDim;
    Buffer a = constant(kElems, 1.0);
    Buffer bm = constant(kElems, 1.0);
    Buffer c = constant(kElems, 0.0);
    GemmCall call() const {
      return GemmCall{kDim, kDim, kDim, DType::kFloat32, a.data(), bm.data(), c.data()};
    }
  };

  static inline std::string name_;
  static inline std::string skip_reason_;
  static inline RankContext* ctx_ = nullptr;
  static inline Backend* backend_ = nullptr;
};

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

// AdamW over a model's tensors, cut as multi_tensor_apply cuts them on cuda: a tensor of 330
// chunks (past the 320 blocks a launch holds, so it carries over), 40 small ones (past the 36
// tensors a launch holds) and odd sizes. The destination holds every parameter once (no wrap):
// every element must be updated from its own regions' values, and nothing beyond written.
TEST_F(BackendConformance, AdamwUpdatesEveryParameterFromItsRegions) {
  std::vector<std::uint64_t> tensors = {3, 330 * kAdamwChunk + 5};
  for (int i = 0; i < 40; ++i) tensors.push_back(100);
  tensors.push_back(7);
  std::uint64_t slots = 0;  // each tensor starts at a multiple of four elements
  for (std::uint64_t n : tensors) slots += (n + 3) / 4 * 4;
  constexpr std::uint64_t kIn = 1 << 16;                       // source regions wrap: 4 × 256 KiB
  const float p = 0.5f, g = -0.25f, m = 0.125f, v = -0.0625f;  // v read as |v|
  Buffer src = b().allocate(4 * kIn * sizeof(float), MemorySpace::kDevice);
  auto* in = static_cast<float*>(src.data());
  const float values[4] = {p, g, m, v};
  for (int r = 0; r < 4; ++r) {
    b().fill(in + r * kIn, DType::kFloat32, kIn,
             FillPattern{FillKind::kConstant, 0, 0, 1, 0, values[r]});
  }
  const std::uint64_t out_elems = 3 * slots + 4096;  // three regions, then a guard
  Buffer dst = constant(out_elems, -7.0);
  b().submit(Category::kComp,
             AdamwCall{tensors, DType::kFloat32, src.data(), 4 * kIn * sizeof(float), dst.data(),
                       3 * slots * sizeof(float)},
             {"optimizer.adamw"});
  b().synchronize();
  Buffer host = b().allocate(out_elems * sizeof(float), MemorySpace::kHostPinned);
  b().submit(Category::kMem,
             CopyCall{host.data(), dst.data(), out_elems * sizeof(float), CopyKind::kDeviceToHost},
             {"readback"});
  b().synchronize();
  // The update worked out here in double: p·(1 − lr·wd) − lr/(1 − β₁) · m' / (√v'/√(1 − β₂) + eps).
  const double m1 = 0.9 * m + 0.1 * g;
  const double v1 = 0.999 * 0.0625 + 0.001 * g * g;
  const double p1 =
      p * (1 - 1e-3 * 0.01) - 1e-3 / 0.1 * m1 / (std::sqrt(v1) / std::sqrt(0.001) + 1e-8);
  const auto* out = static_cast<const float*>(host.data());
  std::uint64_t updated = 0, wrong = 0, offset = 0;
  std::vector<bool> touched(slots, false);
  for (std::uint64_t n : tensors) {
    for (std::uint64_t i = offset; i < offset + n; ++i) touched[i] = true;
    offset += (n + 3) / 4 * 4;
  }
  for (std::uint64_t i = 0; i < slots; ++i) {
    const float want[3] = {static_cast<float>(p1), static_cast<float>(m1), static_cast<float>(v1)};
    for (int r = 0; r < 3; ++r) {
      const float got = out[r * slots + i];
      if (!touched[i]) {
        wrong += got != -7.0f;  // padding between tensors: not a parameter
      } else if (std::fabs(got - want[r]) > 1e-6f * std::fabs(want[r])) {
        ++wrong;
      } else {
        ++updated;
      }
    }
  }
  std::uint64_t params = 0;
  for (std::uint64_t n : tensors) params += n;
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(updated, 3 * params);
  for (std::uint64_t i = 3 * slots; i < out_elems; ++i) {
    if (out[i] != -7.0f) {
      ADD_FAILURE() << "AdamW wrote past its destination at element " << i;
      break;
    }
  }
}

TEST_F(BackendConformance, StampsAreNonDecreasingWithinAStream) {
  Buffer data = constant(1024, 1.0);
  Buffer sum = constant(1024, 0.0);
  Buffer scratch = constant(1024, 1.0);
  std::vector<StampId> comm, mem;
  b().begin_epoch();
  for (int i = 0; i < 20; ++i) {
    comm.push_back(b().stamp(Category::kComm));
    b().submit(Category::kComm,
               CollectiveCall{CollectiveKind::kAllReduce, &b().world(), data.data(), sum.data(),
                              1024, DType::kFloat32, 0},
               {"allreduce", 4096});
    mem.push_back(b().stamp(Category::kMem));
    b().submit(Category::kMem, MemsetCall{scratch.data(), 0, 4096}, {"set"});
  }
  b().synchronize();
  for (const auto* ids : {&comm, &mem}) {
    for (std::size_t i = 1; i < ids->size(); ++i) {
      EXPECT_LE(b().stamp_ns((*ids)[i - 1]), b().stamp_ns((*ids)[i]));
    }
    EXPECT_GE(b().stamp_ns(ids->front()), 0);
  }
  EXPECT_EQ(mismatches(sum.data(), 1024, size()), 0u);
}

TEST_F(BackendConformance, BeginEpochMovesTheOriginPastTheOldStamps) {
  OnesGemm gemm;
  b().begin_epoch();
  const std::int64_t origin1 = b().epoch_origin_host_ns();
  b().submit(Category::kComp, gemm.call(), {"gemm"});
  const StampId late = b().stamp(Category::kComp);
  b().synchronize();
  const std::int64_t late_ns = b().stamp_ns(late);
  EXPECT_GT(late_ns, 0);
  b().begin_epoch();
  EXPECT_GE(b().epoch_origin_host_ns(), origin1 + late_ns)
      << "the new origin is not after the old epoch's stamps";
  const StampId first = b().stamp(Category::kComm);
  b().synchronize();
  EXPECT_GE(b().stamp_ns(first), 0);
}

TEST_F(BackendConformance, ActivitySpansLieInsideTheStampsAroundTheirOp) {
  ActivityRecorder* recorder = b().activity();
  if (recorder == nullptr) {
    GTEST_SKIP() << "no activity records here: " << b().unavailable_reason(Capability::kActivity);
  }
  OnesGemm gemm;
  Buffer scratch = constant(4096, 1.0);
  b().begin_epoch();
  OpLabel g{"gemm"};
  g.activity_tag = 7;
  OpLabel m{"set"};
  m.activity_tag = 8;
  const StampId before = b().stamp(Category::kComp);
  b().submit(Category::kComp, gemm.call(), g);
  const StampId between = b().stamp(Category::kComp);
  b().submit(Category::kComp, MemsetCall{scratch.data(), 0, 4096 * 4}, m);
  const StampId after = b().stamp(Category::kComp);
  b().synchronize();
  const auto gs = recorder->span(7);
  const auto ms = recorder->span(8);
  ASSERT_TRUE(gs.has_value());
  ASSERT_TRUE(ms.has_value());
  // Records and stamps are two reads of the device's time: CUPTI interpolates GPU timestamps onto
  // the host clock, events read the GPU clock from an origin taken with idle streams; they agree
  // to microseconds (the host backend's both read one clock: exact there, tests in host/).
  const std::int64_t slack_ns = 20000;
  EXPECT_GE(gs->start_ns, b().stamp_ns(before) - slack_ns);
  EXPECT_LT(gs->start_ns, gs->end_ns);
  EXPECT_LE(gs->end_ns, b().stamp_ns(between) + slack_ns);
  EXPECT_GE(ms->start_ns, b().stamp_ns(between) - slack_ns);
  EXPECT_LE(ms->start_ns, ms->end_ns);
  EXPECT_LE(ms->end_ns, b().stamp_ns(after) + slack_ns);
  EXPECT_LE(gs->end_ns, ms->start_ns + slack_ns) << "the memset ran before the GEMM it follows";
  EXPECT_FALSE(recorder->span(9).has_value()) << "no op had tag 9";
  EXPECT_EQ(mismatches(gemm.c.data(), OnesGemm::kElems, OnesGemm::kDim), 0u);
}

// ComputeCall runs about as long as it asks (the host: at least that long, by its clock; a GPU:
// from its measured rate, on an otherwise idle device), and in order with the stream's other work.
TEST_F(BackendConformance, ComputeLastsAboutItsSetTime) {
  ActivityRecorder* recorder = b().activity();
  if (recorder == nullptr) {
    GTEST_SKIP() << "no activity records here: " << b().unavailable_reason(Capability::kActivity);
  }
  Buffer scratch = constant(4096, 1.0);
  b().begin_epoch();
  const std::uint64_t wanted_ns[] = {200'000, 2'000'000, 8'000'000};
  std::uint64_t tag = 20;
  for (std::uint64_t ns : wanted_ns) {
    OpLabel label{"compute"};
    label.activity_tag = ++tag;
    b().submit(Category::kComp, ComputeCall{ns}, label);
  }
  OpLabel after{"set after"};
  after.activity_tag = ++tag;
  b().submit(Category::kComp, MemsetCall{scratch.data(), 0, 4096 * 4}, after);
  b().synchronize();
  std::int64_t previous_end = 0;
  for (std::size_t i = 0; i <= std::size(wanted_ns); ++i) {
    const auto span = recorder->span(21 + i);
    ASSERT_TRUE(span.has_value()) << "no record of op " << i;
    EXPECT_GE(span->start_ns, previous_end) << "op " << i << " overlaps the one before";
    previous_end = span->end_ns;
    if (i == std::size(wanted_ns)) break;
    const double took = static_cast<double>(span->end_ns - span->start_ns);
    const double ns = static_cast<double>(wanted_ns[i]);
    // The host backend reads the clock it is timed by: never shorter. A GPU's kernel length is
    // set from the rate measured at start-up, to within a few percent on an idle device.
    EXPECT_GE(took, b().name() == std::string("host") ? ns : 0.8 * ns) << "op " << i;
    if (b().name() != std::string("host")) {
      EXPECT_LE(took, 1.25 * ns) << "op " << i;
    }
  }
  EXPECT_EQ(mismatches(scratch.data(), 4096, 0.0), 0u);
}

// Every collective on the world and on a split communicator of the even or odd ranks, ordered by
// descending world rank (key = -rank), verified exactly with the spec's data.
TEST_F(BackendConformance, EveryCollectiveVerifiesOnWorldAndSplit) {
  const int color = rank() % 2;
  std::unique_ptr<Communicator> parity = b().world().split(color, -rank(), "parity");
  int members = 0;
  int before_me = 0;  // members with a higher world rank come first
  for (int r = color; r < size(); r += 2) {
    ++members;
    if (r > rank()) ++before_me;
  }
  EXPECT_EQ(parity->size(), members);
  EXPECT_EQ(parity->rank(), before_me);
  EXPECT_EQ(parity->name(), "parity");
  const FillPattern poison{FillKind::kConstant, 0, 0, 1, 0, -7.0};
  std::uint64_t seed = 0;
  for (Communicator* comm : {&b().world(), parity.get()}) {
    const int n = comm->size();
    for (CollectiveKind kind : all_collective_kinds()) {
      const CollectiveSpec& spec = collective_spec(kind);
      SCOPED_TRACE(std::string(spec.name) + " on " + comm->name());
      const CollectiveSizes sz = spec.sizes(64 * 1024, DType::kFloat32, n);
      ++seed;
      Buffer send = b().allocate(sz.send_count * 4, MemorySpace::kDevice);
      Buffer recv = b().allocate(sz.recv_count * 4, MemorySpace::kDevice);
      b().fill(send.data(), DType::kFloat32, sz.send_count,
               spec.input(comm->rank(), n, DType::kFloat32, seed));
      b().fill(recv.data(), DType::kFloat32, sz.recv_count, poison);
      b().submit(Category::kComm,
                 CollectiveCall{kind, comm, send.data(), recv.data(), sz.count, DType::kFloat32, 0},
                 {spec.name, sz.bytes});
      b().synchronize();
      if (spec.output_defined(comm->rank(), 0)) {
        EXPECT_EQ(
            b().count_mismatches(recv.data(), DType::kFloat32, sz.recv_count,
                                 spec.expected(comm->rank(), n, 0, DType::kFloat32, seed, sz)),
            0u);
      }
    }
  }
}

}  // namespace
}  // namespace commprof
