// SPDX-License-Identifier: MIT
#include "workloads/execution/gemm_probe.hpp"

#include <string>

#include "src/backend/annotation.hpp"
#include "src/backend/backend.hpp"
#include "src/core/log.hpp"
#include "src/runtime/gather.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {

GemmProbeResult run_gemm_probe(const GemmProbeConfig& config, Backend& backend, RankContext& ctx) {
  const bool gpu = std::string(backend.name()) == "cuda";
  GemmProbeResult r;
  r.m = config.m > 0 ? config.m : (gpu ? 8192 : 512);
  r.n = config.n > 0 ? config.n : (gpu ? 8192 : 512);
  r.k = config.k > 0 ? config.k : (gpu ? 8192 : 512);
  r.dtype = config.dtype_auto ? (gpu ? DType::kBFloat16 : DType::kFloat32) : config.dtype;
  ctx.agree(gpu || r.dtype == DType::kFloat32 || r.dtype == DType::kFloat64,
            std::string("the host backend computes in float or double, "
                        "not ") +
                dtype_name(r.dtype));

  const std::size_t elem = dtype_size(r.dtype);
  const auto mm = static_cast<std::size_t>(r.m);
  const auto nn = static_cast<std::size_t>(r.n);
  const auto kk = static_cast<std::size_t>(r.k);
  Buffer a = backend.allocate(mm * kk * elem, MemorySpace::kDevice);
  Buffer b = backend.allocate(kk * nn * elem, MemorySpace::kDevice);
  Buffer c = backend.allocate(mm * nn * elem, MemorySpace::kDevice);
  // Standard normal operands, as PyTorch's torch.randn: the speed of the arithmetic depends on
  // the values (zeros and ones ran 15% faster on an H200, docs/workloads.md). Results stay
  // finite in every type: each is a sum of k products, of standard deviation sqrt(k).
  backend.fill(a.data(), r.dtype, mm * kk, normal_fill(ctx.rank(), 1, 1.0));
  backend.fill(b.data(), r.dtype, kk * nn, normal_fill(ctx.rank(), 2, 1.0));

  const GemmCall call{r.m,      r.n,      r.k,       r.dtype,   a.data(),
                      b.data(), c.data(), a.bytes(), b.bytes(), c.bytes()};
  const OpLabel label{log::cat("gemm ", r.m, "x", r.n, "x", r.k), 0, call.flops()};
  for (; r.warmup < config.warmup; ++r.warmup) backend.submit(Category::kComp, call, label);
  backend.synchronize();
  ctx.barrier();
  backend.begin_epoch();
  const StampId first = backend.stamp(Category::kComp);
  for (int i = 0; i < config.iters; ++i) backend.submit(Category::kComp, call, label);
  const StampId last = backend.stamp(Category::kComp);
  backend.synchronize();
  r.time_us =
      static_cast<double>(backend.stamp_ns(last) - backend.stamp_ns(first)) / 1e3 / config.iters;
  const double tflops = r.time_us > 0 ? call.flops() / (r.time_us * 1e-6) / 1e12 : 0.0;
  r.rank_tflops = gather_doubles(tflops, ctx.comm());
  return r;
}

}  // namespace commprof
