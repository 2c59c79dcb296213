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

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collectives/alltoallv_layout.hpp"
#include "collectives/collective_spec.hpp"
#include "src/backend/backend.hpp"
#include "src/backend/registry/backend_registry.hpp"
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
  /// Fused attention of `batch` × `heads` query heads sharing `kv_heads` key/value heads, `seq`
  /// queries against `kv_seq` keys (0: as many) of `head_dim`, causal (bottom-right where
  /// kv_seq > seq), forward and backward, against the definition (below).
  void check_attention(int batch, int heads, int kv_heads, int seq, int head_dim, int kv_seq = 0);
  /// AdamW over `tensors` in `t` with source regions of `in_len` and destination regions of
  /// `out_len` elements, every value against the update worked out here (below).
  void check_adamw(const std::vector<std::uint64_t>& tensors, DType t, std::uint64_t in_len,
                   std::uint64_t out_len);
  /// check_adamw over the tests' tensors, with a destination that wraps and one that does not.
  void check_adamw_layouts(DType t);

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
      return GemmCall{kDim,      kDim,     kDim,      DType::kFloat32, a.data(),
                      bm.data(), c.data(), a.bytes(), bm.bytes(),      c.bytes()};
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

// bf16 bits of a float, rounded to nearest even (the GPU's conversion), and back.
std::uint16_t to_bf16(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

// AdamW's inputs, the test's own pattern: region k (parameters, gradients, first and second
// moments) at source position j, a different value at every position and in every region, of a
// training step's scale. Parameters of 1/64 to 1/16, either sign: small enough that a step of
// lr = 1e-3 moves them by several bf16 steps (one bf16 step at 1/64 is 2^-13). Gradients within
// ±1, first moments within ±0.1, second moments 0.01 to 0.1 stored with either sign (read as |v|),
// so every step is bounded (|m̂|/√v̂ < 2) and no parameter is cancelled to nothing by its step.
double adamw_input(int region, std::uint64_t j) {
  const std::uint64_t h =
      (j * 2654435761u + static_cast<std::uint64_t>(region) * 40503u + 977u) % 4294967291u;
  const double u = static_cast<double>(h % 1000003u) / 1000003.0;  // in [0, 1)
  const double sign = (h >> 21) % 2 == 0 ? 1.0 : -1.0;
  switch (region) {
    case 0:
      return sign * (1.0 / 64 + u * (1.0 / 16 - 1.0 / 64));
    case 1:
      return 2 * u - 1;
    case 2:
      return 0.2 * u - 0.1;
    default:
      return sign * (0.01 + 0.09 * u);
  }
}

// AdamwCall over `tensors` (in the optimizer's order, each starting at a multiple of four
// elements), its source regions in_len elements long and its destination regions out_len, both
// multiples of four. Element i of the flat list reads source position i mod in_len and writes
// destination slot i mod out_len (src/backend/work.hpp). Each written slot must hold the update
// of its own source position, worked out here in double from the values as stored:
//   p' = p·(1 − lr·wd) − lr/(1 − β₁) · m' / (√v' / √(1 − β₂) + eps),
//   m' = β₁m + (1 − β₁)g,  v' = β₂|v| + (1 − β₂)g²  (step 1);
// slots no element maps to (padding between tensors) and the guard after the three regions keep
// their value. Where the destination wraps, out_len is a multiple of in_len, so every element that
// lands on one slot read the same position and writes the same values: the result does not
// depend on the order of writes, which a GPU's blocks do not keep.
void BackendConformance::check_adamw(const std::vector<std::uint64_t>& tensors, DType t,
                                     std::uint64_t in_len, std::uint64_t out_len) {
  SCOPED_TRACE(std::string(dtype_name(t)) + ", source regions of " + std::to_string(in_len) +
               ", destination regions of " + std::to_string(out_len));
  const bool bf16 = t == DType::kBFloat16;
  const std::size_t e = dtype_size(t);
  constexpr std::uint64_t kGuard = 4096;
  constexpr float kUntouched = -7.0f;  // exact in bf16 too
  const auto store = [&](void* base, std::uint64_t i, double v) {
    if (bf16) {
      static_cast<std::uint16_t*>(base)[i] = to_bf16(static_cast<float>(v));
    } else {
      static_cast<float*>(base)[i] = static_cast<float>(v);
    }
  };
  const auto load = [&](const void* base, std::uint64_t i) {
    return bf16 ? static_cast<double>(from_bf16(static_cast<const std::uint16_t*>(base)[i]))
                : static_cast<double>(static_cast<const float*>(base)[i]);
  };
  // Inputs through pinned memory, and the destination preset to kUntouched.
  Buffer in_host = b().allocate(4 * in_len * e, MemorySpace::kHostPinned);
  for (int k = 0; k < 4; ++k) {
    for (std::uint64_t j = 0; j < in_len; ++j)
      store(in_host.data(), k * in_len + j, adamw_input(k, j));
  }
  const std::uint64_t out_elems = 3 * out_len + kGuard;
  Buffer out_host = b().allocate(out_elems * e, MemorySpace::kHostPinned);
  for (std::uint64_t i = 0; i < out_elems; ++i) store(out_host.data(), i, kUntouched);
  Buffer src = b().allocate(4 * in_len * e, MemorySpace::kDevice);
  Buffer dst = b().allocate(out_elems * e, MemorySpace::kDevice);
  b().submit(Category::kMem,
             CopyCall{src.data(), in_host.data(), 4 * in_len * e, CopyKind::kHostToDevice},
             {"upload"});
  b().submit(Category::kMem,
             CopyCall{dst.data(), out_host.data(), out_elems * e, CopyKind::kHostToDevice},
             {"upload"});
  b().synchronize();
  b().submit(Category::kComp,
             AdamwCall{tensors, t, src.data(), 4 * in_len * e, dst.data(), 3 * out_len * e},
             {"optimizer.adamw"});
  b().synchronize();
  b().submit(Category::kMem,
             CopyCall{out_host.data(), dst.data(), out_elems * e, CopyKind::kDeviceToHost},
             {"readback"});
  b().synchronize();

  // The update of each source position, and how far from it the stored result may lie. The
  // device computes in fp32 with fp32 constants: some ten roundings (the constants, the products
  // and sums, the square root, the division), each within 2^-24 of its value, so within 2^-18 of
  // the sum of the magnitudes of the terms, with room to spare. bf16 then rounds the fp32 result
  // to nearest, within half a bf16 step, at most 2^-8 of the value (8 significant bits); a result
  // within 2^-18 of a rounding boundary may round to either neighbour, so the bf16 bound is
  // 2^-8·|want| + twice the fp32 one. Values of another position, or a wrong formula, miss by
  // far more: neighbouring positions differ by a sizeable part of each input's range.
  struct Want {
    double value[3];
    double slack[3];
  };
  std::vector<Want> want(in_len);
  const double fp32 = std::ldexp(1.0, -18);
  for (std::uint64_t j = 0; j < in_len; ++j) {
    const double p = load(in_host.data(), j), g = load(in_host.data(), in_len + j);
    const double m = load(in_host.data(), 2 * in_len + j);
    const double v = std::fabs(load(in_host.data(), 3 * in_len + j));
    const double m1 = 0.9 * m + 0.1 * g;
    const double v1 = 0.999 * v + 0.001 * g * g;
    const double step = 1e-3 / 0.1 * m1 / (std::sqrt(v1) / std::sqrt(0.001) + 1e-8);
    const double p1 = p * (1 - 1e-3 * 0.01) - step;
    Want& w = want[j];
    w.value[0] = p1;
    w.value[1] = m1;
    w.value[2] = v1;
    const double terms[3] = {std::fabs(p) + std::fabs(step),
                             0.9 * std::fabs(m) + 0.1 * std::fabs(g), 0.999 * v + 0.001 * g * g};
    for (int r = 0; r < 3; ++r) {
      w.slack[r] =
          bf16 ? std::ldexp(std::fabs(w.value[r]), -8) + 2 * fp32 * terms[r] : fp32 * terms[r];
    }
  }

  const void* out = out_host.data();
  std::vector<bool> written(out_len, false);
  std::uint64_t checked = 0, wrong = 0, offset = 0;
  for (const std::uint64_t n : tensors) {
    for (std::uint64_t i = offset; i < offset + n; ++i) {
      const std::uint64_t slot = i % out_len;
      const Want& w = want[i % in_len];
      written[slot] = true;
      for (int r = 0; r < 3; ++r) {
        const double got = load(out, r * out_len + slot);
        ++checked;
        if (!(std::fabs(got - w.value[r]) <= w.slack[r]) && wrong++ < 5) {
          ADD_FAILURE() << "element " << i << " (slot " << slot << ", source position "
                        << i % in_len << "), region " << r << ": " << got << ", expected "
                        << w.value[r] << " ± " << w.slack[r];
        }
      }
    }
    offset += (n + 3) / 4 * 4;
  }
  std::uint64_t params = 0;
  for (const std::uint64_t n : tensors) params += n;
  EXPECT_EQ(checked, 3 * params);
  EXPECT_EQ(wrong, 0u) << "of " << checked << " values";
  std::uint64_t stray = 0;
  for (std::uint64_t slot = 0; slot < out_len; ++slot) {
    if (written[slot]) continue;
    for (int r = 0; r < 3; ++r) stray += load(out, r * out_len + slot) != kUntouched;
  }
  EXPECT_EQ(stray, 0u) << "values written where no parameter lands (padding between tensors)";
  for (std::uint64_t i = 3 * out_len; i < out_elems; ++i) {
    if (load(out, i) != kUntouched) {
      ADD_FAILURE() << "AdamW wrote past its destination at element " << i;
      break;
    }
  }
}

// The tensors of the AdamW tests, cut as multi_tensor_apply cuts them on cuda: a tensor of three
// chunks, 40 small ones (past the 36 tensors a launch holds) and odd sizes; with `past_a_launch`,
// the second tensor has 330 chunks instead, past the 320 blocks a launch holds, so it carries over
// into the next launch.
std::vector<std::uint64_t> adamw_tensors(bool past_a_launch) {
  std::vector<std::uint64_t> tensors = {3, (past_a_launch ? 330 : 2) * kAdamwChunk + 5};
  for (int i = 0; i < 40; ++i) tensors.push_back(100);
  tensors.push_back(7);
  return tensors;
}

// Every parameter updated from its own regions' values, in the dtype given: with a destination
// that holds each parameter once (a skipped or misplaced chunk leaves its slots untouched) and one
// that wraps (regions three source regions long: the flat list runs around them four and a half
// times, or 720 times past a launch). The source regions (10004 elements, no divisor of the
// chunk) wrap inside chunks and tensors. The tensor past cuda's launch only where launches are
// cut: the host backend has none to cut, and its 21.6 M elements cost ~35 s under ThreadSanitizer.
void BackendConformance::check_adamw_layouts(DType t) {
  constexpr std::uint64_t kIn = 10004;
  std::vector<bool> cases = {false};
  if (std::string(b().name()) == "cuda") cases.push_back(true);
  for (const bool past_a_launch : cases) {
    const std::vector<std::uint64_t> tensors = adamw_tensors(past_a_launch);
    std::uint64_t slots = 0;
    for (const std::uint64_t n : tensors) slots += (n + 3) / 4 * 4;
    check_adamw(tensors, t, kIn, slots);
    check_adamw(tensors, t, kIn, 3 * kIn);
  }
}

TEST_F(BackendConformance, AdamwUpdatesEveryParameterFromItsRegions) {
  check_adamw_layouts(DType::kFloat32);
}

// bf16, the dtype every GPU preset runs: fp32 arithmetic on bf16 storage, each result rounded
// once. The host backend computes in float or double only (it runs no bf16 model).
TEST_F(BackendConformance, AdamwInBfloat16ComputesInFloatAndRoundsOnce) {
  if (!b().supports(DType::kBFloat16))
    GTEST_SKIP() << "the " << b().name() << " backend runs no bfloat16 (supports() is false)";
  check_adamw_layouts(DType::kBFloat16);
}

// Causal attention forward and backward against the definition, worked out here in double from
// the same inputs (as stored: bf16 on cuda, whose fused kernels take no fp32; fp32 on host):
// P = softmax(QKᵀ/√d) below the diagonal (bottom-right: query i sees keys j ≤ i + SKV − S),
// O = PV, stats = log Σ exp; dV = PᵀdO,
// dS = P∘(dO Vᵀ − rowsum(dO∘O)), dQ = dS K/√d, dK = dSᵀQ/√d; under GQA query head i reads K and
// V head i / (heads / kv_heads), whose dK and dV sum over the query heads sharing it. Every
// element of O, the statistics and the three gradients is compared, relative to the largest of
// its tensor.
void BackendConformance::check_attention(int B, int H, int KV, int S, int D, int SKV) {
  if (SKV == 0) SKV = S;
  const int rows = std::max(S, SKV);  // token rows of the qkv buffer
  const DType t =
      attention_problem(b(), DType::kBFloat16).empty() ? DType::kBFloat16 : DType::kFloat32;
  const std::string problem = attention_problem(b(), t);
  ASSERT_TRUE(problem.empty()) << problem;
  const std::size_t X = static_cast<std::size_t>(B) * S * H * D;     // one of O, dO, dQ
  const std::size_t Y = static_cast<std::size_t>(B) * SKV * KV * D;  // one of dK, dV
  const int G = H / KV;                                              // query heads per K/V head
  const std::size_t e = dtype_size(t);
  std::vector<double> qkv(static_cast<std::size_t>(B) * rows * (H + 2 * KV) * D), d_o(X);
  std::uint64_t state = 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(rank());
  auto uniform = [&] {  // splitmix64 in [-1, 1), stored precision applied below
    state += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) / 4503599627370496.0 - 1.0;
  };
  auto stored = [&](double v) {
    return t == DType::kBFloat16 ? static_cast<double>(from_bf16(to_bf16(static_cast<float>(v))))
                                 : static_cast<double>(static_cast<float>(v));
  };
  for (double& v : qkv) v = stored(2.0 * uniform());
  for (double& v : d_o) v = stored(uniform());
  // Device buffers, filled through pinned memory.
  auto upload = [&](const std::vector<double>& values) {
    Buffer host = b().allocate(values.size() * e, MemorySpace::kHostPinned);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (t == DType::kBFloat16) {
        static_cast<std::uint16_t*>(host.data())[i] = to_bf16(static_cast<float>(values[i]));
      } else {
        static_cast<float*>(host.data())[i] = static_cast<float>(values[i]);
      }
    }
    Buffer dev = b().allocate(values.size() * e, MemorySpace::kDevice);
    b().submit(Category::kMem,
               CopyCall{dev.data(), host.data(), values.size() * e, CopyKind::kHostToDevice},
               {"upload"});
    b().synchronize();
    return dev;
  };
  auto download = [&](const Buffer& dev, std::size_t count, bool fp32) {
    const std::size_t bytes = count * (fp32 ? 4 : e);
    Buffer host = b().allocate(bytes, MemorySpace::kHostPinned);
    b().submit(Category::kMem, CopyCall{host.data(), dev.data(), bytes, CopyKind::kDeviceToHost},
               {"readback"});
    b().synchronize();
    std::vector<double> out(count);
    for (std::size_t i = 0; i < count; ++i) {
      out[i] = fp32 || t == DType::kFloat32
                   ? static_cast<const float*>(host.data())[i]
                   : from_bf16(static_cast<const std::uint16_t*>(host.data())[i]);
    }
    return out;
  };
  Buffer qkv_d = upload(qkv), do_d = upload(d_o);
  Buffer o_d = b().allocate(X * e, MemorySpace::kDevice);
  Buffer stats_d = b().allocate(static_cast<std::size_t>(B) * H * S * 4, MemorySpace::kDevice);
  Buffer dq_d = b().allocate(X * e, MemorySpace::kDevice);
  Buffer dk_d = b().allocate(Y * e, MemorySpace::kDevice);
  Buffer dv_d = b().allocate(Y * e, MemorySpace::kDevice);
  AttentionCall call;
  call.batch = B;
  call.heads = H;
  call.kv_heads = KV;
  call.seq = S;
  call.kv_seq = SKV;
  call.head_dim = D;
  call.dtype = t;
  call.qkv = qkv_d.data();
  call.o = o_d.data();
  call.stats = stats_d.data();
  call.d_o = do_d.data();
  call.dq = dq_d.data();
  call.dk = dk_d.data();
  call.dv = dv_d.data();
  b().submit(Category::kComp, call, {"attention.fwd"});
  call.backward = true;
  b().submit(Category::kComp, call, {"attention.bwd"});
  b().synchronize();
  const std::vector<double> o = download(o_d, X, false);
  const std::vector<double> stats = download(stats_d, static_cast<std::size_t>(B) * H * S, true);
  const std::vector<double> dq = download(dq_d, X, false), dk = download(dk_d, Y, false),
                            dv = download(dv_d, Y, false);

  // The reference: per (batch, head), the whole probability matrix, then the products.
  std::vector<double> o_ref(X), stats_ref(stats.size()), dq_ref(X), dk_ref(Y, 0.0), dv_ref(Y, 0.0);
  auto at = [&](int bi, int tok, int which, int hi) {  // into qkv [b][rows][H + 2·KV][d]
    const int head = which == 0 ? hi : H + (which - 1) * KV + hi / G;
    return (static_cast<std::size_t>(bi) * rows + tok) * (H + 2 * KV) * D +
           static_cast<std::size_t>(head) * D;
  };
  auto row = [&](int bi, int tok, int hi) {  // into [b][s][H][d]
    return (static_cast<std::size_t>(bi) * S + tok) * H * D + static_cast<std::size_t>(hi) * D;
  };
  auto kv_row = [&](int bi, int tok, int hi) {  // query head hi's K/V head in [b][skv][KV][d]
    return (static_cast<std::size_t>(bi) * SKV + tok) * KV * D +
           static_cast<std::size_t>(hi / G) * D;
  };
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  // p and dS are S × SKV, row-major.
  std::vector<double> p(static_cast<std::size_t>(S) * SKV), dp(p.size());
  for (int bi = 0; bi < B; ++bi) {
    for (int hi = 0; hi < H; ++hi) {
      for (int i = 0; i < S; ++i) {
        const int last = i + SKV - S;  // the last key query i sees
        double max = -1e300;
        for (int j = 0; j <= last; ++j) {
          double x = 0;
          for (int k = 0; k < D; ++k) x += qkv[at(bi, i, 0, hi) + k] * qkv[at(bi, j, 1, hi) + k];
          p[static_cast<std::size_t>(i) * SKV + j] = x * scale;
          max = std::max(max, x * scale);
        }
        double sum = 0;
        for (int j = 0; j <= last; ++j) {
          sum += std::exp(p[static_cast<std::size_t>(i) * SKV + j] - max);
        }
        for (int j = 0; j < SKV; ++j) {
          double& pij = p[static_cast<std::size_t>(i) * SKV + j];
          pij = j <= last ? std::exp(pij - max) / sum : 0.0;
        }
        stats_ref[(static_cast<std::size_t>(bi) * H + hi) * S + i] = max + std::log(sum);
      }
      for (int i = 0; i < S; ++i) {
        for (int k = 0; k < D; ++k) {
          double x = 0;
          for (int j = 0; j < SKV; ++j)
            x += p[static_cast<std::size_t>(i) * SKV + j] * qkv[at(bi, j, 2, hi) + k];
          o_ref[row(bi, i, hi) + k] = x;
        }
      }
      for (int i = 0; i < S; ++i) {
        double rowsum = 0;
        for (int k = 0; k < D; ++k) rowsum += d_o[row(bi, i, hi) + k] * o_ref[row(bi, i, hi) + k];
        for (int j = 0; j < SKV; ++j) {
          double x = 0;
          for (int k = 0; k < D; ++k) x += d_o[row(bi, i, hi) + k] * qkv[at(bi, j, 2, hi) + k];
          const std::size_t ij = static_cast<std::size_t>(i) * SKV + j;
          dp[ij] = p[ij] * (x - rowsum) * scale;  // dS, scaled
        }
      }
      // dV and dK per key j (sums over the queries), dQ per query i (sums over the keys).
      for (int j = 0; j < SKV; ++j) {
        for (int k = 0; k < D; ++k) {
          double v = 0, kk = 0;
          for (int i = 0; i < S; ++i) {
            const std::size_t ij = static_cast<std::size_t>(i) * SKV + j;
            v += p[ij] * d_o[row(bi, i, hi) + k];
            kk += dp[ij] * qkv[at(bi, i, 0, hi) + k];
          }
          dv_ref[kv_row(bi, j, hi) + k] += v;
          dk_ref[kv_row(bi, j, hi) + k] += kk;
        }
      }
      for (int i = 0; i < S; ++i) {
        for (int k = 0; k < D; ++k) {
          double q = 0;
          for (int j = 0; j < SKV; ++j) {
            q += dp[static_cast<std::size_t>(i) * SKV + j] * qkv[at(bi, j, 1, hi) + k];
          }
          dq_ref[row(bi, i, hi) + k] = q;
        }
      }
    }
  }
  // bf16 outputs carry 8 bits of mantissa, the kernels accumulate in fp32: 2% of the largest
  // element of each tensor on cuda; fp32 throughout on host.
  const double tol = t == DType::kBFloat16 ? 2e-2 : 1e-4;
  auto relative_error = [](const std::vector<double>& got, const std::vector<double>& want) {
    double err = 0, top = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      err = std::max(err, std::fabs(got[i] - want[i]));
      top = std::max(top, std::fabs(want[i]));
    }
    return err / top;
  };
  EXPECT_LT(relative_error(o, o_ref), tol) << "O";
  EXPECT_LT(relative_error(stats, stats_ref), tol) << "softmax statistics";
  EXPECT_LT(relative_error(dq, dq_ref), tol) << "dQ";
  EXPECT_LT(relative_error(dk, dk_ref), tol) << "dK";
  EXPECT_LT(relative_error(dv, dv_ref), tol) << "dV";
}

TEST_F(BackendConformance, AttentionForwardAndBackwardAsDefined) {
  check_attention(2, 3, 3, 128, 128);
}

// Llama 3's grouping (four query heads to a key/value head) with two groups.
TEST_F(BackendConformance, GroupedQueryAttentionAsDefined) { check_attention(1, 8, 2, 128, 128); }

// A context-parallel block (all-gather CP's last chunk): 64 queries against 192 keys, causal
// aligned bottom-right, with GQA. Checks the kv_seq path of every backend against the definition.
TEST_F(BackendConformance, CausalBlockWithMoreKeysAsDefined) {
  check_attention(1, 4, 2, 64, 128, 192);
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

// idle_for holds the stream for the time asked (a replayed gap of a traced step), and on a GPU for
// not much longer, even for gaps of a few microseconds (ten of 5 µs).
TEST_F(BackendConformance, IdleForHoldsTheStreamForItsTime) {
  ActivityRecorder* recorder = b().activity();
  if (recorder == nullptr) {
    GTEST_SKIP() << "no activity records here: " << b().unavailable_reason(Capability::kActivity);
  }
  const bool host = b().name() == std::string("host");  // threads of a loaded CPU may be
                                                        // descheduled: no upper bound there
  b().begin_epoch();
  const std::uint64_t first_tag = 40;
  std::uint64_t tag = first_tag;
  auto compute = [&] {
    OpLabel label{"compute"};
    label.activity_tag = tag++;
    b().submit(Category::kComp, ComputeCall{100'000}, label);
  };
  const std::uint64_t waits_ns[] = {200'000, 1'000'000};
  compute();
  for (std::uint64_t ns : waits_ns) {
    b().idle_for(Category::kComp, ns);
    compute();
  }
  const int short_waits = 10;
  for (int i = 0; i < short_waits; ++i) {
    b().idle_for(Category::kComp, 5'000);
    compute();
  }
  b().synchronize();
  auto gap_before = [&](std::uint64_t op) -> std::int64_t {
    const auto before = recorder->span(first_tag + op - 1);
    const auto after = recorder->span(first_tag + op);
    if (!before || !after) return -1;
    return after->start_ns - before->end_ns;
  };
  for (std::size_t i = 0; i < std::size(waits_ns); ++i) {
    const std::int64_t gap = gap_before(i + 1);
    const auto ns = static_cast<std::int64_t>(waits_ns[i]);
    ASSERT_GE(gap, 0) << "no record around wait " << i;
    EXPECT_GE(gap, host ? ns : ns * 98 / 100) << "wait " << i;
    if (!host) {
      EXPECT_LE(gap, ns + 20'000) << "wait " << i;
    }
    std::printf("idle_for(%.0f us): the stream idled %.1f us\n", static_cast<double>(ns) / 1e3,
                static_cast<double>(gap) / 1e3);
  }
  std::int64_t total = 0;
  for (int i = 0; i < short_waits; ++i) {
    const std::int64_t gap = gap_before(std::size(waits_ns) + 1 + i);
    ASSERT_GE(gap, 0) << "no record around short wait " << i;
    total += gap;
  }
  if (host) {
    EXPECT_GE(total, short_waits * 5'000);
  } else {
    EXPECT_LE(total, short_waits * 5'000 + 100'000);
  }
  std::printf("%d idle_for(5 us): the stream idled %.1f us in all\n", short_waits,
              static_cast<double>(total) / 1e3);
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

// alltoallv with counts from a skewed routing (12 experts: they divide among 1, 2 and 4 ranks) on
// the world and on the split communicator, each peer's block verified against its pattern.
TEST_F(BackendConformance, AlltoallvVerifiesOnWorldAndSplit) {
  std::unique_ptr<Communicator> parity = b().world().split(rank() % 2, -rank(), "parity");
  MoeShape shape;
  shape.experts = 12;
  shape.top_k = 3;
  shape.hidden = 5;
  const Routing routing(parse_routing("zipf:1"), shape.experts);
  const FillPattern poison{FillKind::kConstant, 0, 0, 1, 0, -7.0};
  std::uint64_t seed = 100;
  for (Communicator* comm : {&b().world(), parity.get()}) {
    SCOPED_TRACE("alltoallv on " + comm->name());
    const int n = comm->size();
    const int me = comm->rank();
    const AllToAllvLayout layout(routing, shape, n, 300);
    auto splits = std::make_shared<PeerSplits>();
    for (int p = 0; p < n; ++p) {
      splits->send_counts.push_back(layout.elements(me, p));
      splits->send_displs.push_back(layout.send_offset(me, p));
      splits->recv_counts.push_back(layout.elements(p, me));
      splits->recv_displs.push_back(layout.recv_offset(me, p));
    }
    ++seed;
    Buffer send = b().allocate(layout.send_total(me) * 4, MemorySpace::kDevice);
    Buffer recv =
        b().allocate(std::max<std::uint64_t>(layout.recv_total(me), 1) * 4, MemorySpace::kDevice);
    b().fill(send.data(), DType::kFloat32, layout.send_total(me),
             layout.input(me, DType::kFloat32, seed));
    b().fill(recv.data(), DType::kFloat32, layout.recv_total(me), poison);
    CollectiveCall call{CollectiveKind::kAllToAllV,
                        comm,
                        send.data(),
                        recv.data(),
                        layout.send_total(me),
                        DType::kFloat32,
                        0};
    call.splits = splits;
    b().submit(Category::kComm, call, {"alltoallv", layout.sizes(DType::kFloat32).bytes});
    b().synchronize();
    for (int source = 0; source < n; ++source) {
      EXPECT_EQ(b().count_mismatches(
                    static_cast<const char*>(recv.data()) + layout.recv_offset(me, source) * 4,
                    DType::kFloat32, layout.elements(source, me),
                    layout.expected(me, source, DType::kFloat32, seed)),
                0u)
          << "block from rank " << source;
    }
  }
}

}  // namespace
}  // namespace commprof
