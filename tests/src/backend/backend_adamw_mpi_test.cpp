// SPDX-License-Identifier: MIT
// The Backend contract (backend_conformance.hpp): the AdamW optimizer step, every parameter and
// moment against the update worked out here, in fp32 and in bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "src/backend/backend_conformance.hpp"

namespace commprof::test {
namespace {

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

// AdamwCall on `b` over `tensors` (in the optimizer's order, each starting at a multiple of four
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
void check_adamw(Backend& b, const std::vector<std::uint64_t>& tensors, DType t,
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
  Buffer in_host = b.allocate(4 * in_len * e, MemorySpace::kHostPinned);
  for (int k = 0; k < 4; ++k) {
    for (std::uint64_t j = 0; j < in_len; ++j)
      store(in_host.data(), k * in_len + j, adamw_input(k, j));
  }
  const std::uint64_t out_elems = 3 * out_len + kGuard;
  Buffer out_host = b.allocate(out_elems * e, MemorySpace::kHostPinned);
  for (std::uint64_t i = 0; i < out_elems; ++i) store(out_host.data(), i, kUntouched);
  Buffer src = b.allocate(4 * in_len * e, MemorySpace::kDevice);
  Buffer dst = b.allocate(out_elems * e, MemorySpace::kDevice);
  b.submit(Category::kMem,
           CopyCall{src.data(), in_host.data(), 4 * in_len * e, CopyKind::kHostToDevice},
           {"upload"});
  b.submit(Category::kMem,
           CopyCall{dst.data(), out_host.data(), out_elems * e, CopyKind::kHostToDevice},
           {"upload"});
  b.synchronize();
  b.submit(Category::kComp,
           AdamwCall{tensors, t, src.data(), 4 * in_len * e, dst.data(), 3 * out_len * e},
           {"optimizer.adamw"});
  b.synchronize();
  b.submit(Category::kMem,
           CopyCall{out_host.data(), dst.data(), out_elems * e, CopyKind::kDeviceToHost},
           {"readback"});
  b.synchronize();

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
void check_adamw_layouts(Backend& b, DType t) {
  constexpr std::uint64_t kIn = 10004;
  std::vector<bool> cases = {false};
  if (std::string(b.name()) == "cuda") cases.push_back(true);
  for (const bool past_a_launch : cases) {
    const std::vector<std::uint64_t> tensors = adamw_tensors(past_a_launch);
    std::uint64_t slots = 0;
    for (const std::uint64_t n : tensors) slots += (n + 3) / 4 * 4;
    check_adamw(b, tensors, t, kIn, slots);
    check_adamw(b, tensors, t, kIn, 3 * kIn);
  }
}

TEST_F(BackendConformance, AdamwUpdatesEveryParameterFromItsRegions) {
  check_adamw_layouts(b(), DType::kFloat32);
}

// bf16, the dtype every GPU preset runs: fp32 arithmetic on bf16 storage, each result rounded
// once. The host backend computes in float or double only (it runs no bf16 model).
TEST_F(BackendConformance, AdamwInBfloat16ComputesInFloatAndRoundsOnce) {
  if (!b().supports(DType::kBFloat16))
    GTEST_SKIP() << "the " << b().name() << " backend runs no bfloat16 (supports() is false)";
  check_adamw_layouts(b(), DType::kBFloat16);
}

}  // namespace
}  // namespace commprof::test
