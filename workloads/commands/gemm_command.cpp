// SPDX-License-Identifier: MIT
// `commprof gemm`: options and the per-rank TFLOP/s table.
#include "workloads/commands/gemm_command.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <numeric>

#include "src/cli/command.hpp"
#include "src/cli/common_options.hpp"
#include "src/core/errors.hpp"
#include "src/runtime/rank_context.hpp"
#include "workloads/execution/gemm_probe.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

class GemmCommand final : public Command {
 public:
  const char* name() const override { return "gemm"; }
  const char* summary() const override {
    return "GEMM probe: TFLOP/s of each rank's COMP stream (cuBLAS or CPU)";
  }
  void define_options(po::options_description& visible, po::options_description&) override {
    visible.add_options()("m", po::value<int>()->default_value(0),
                          "rows of A and C (0: 8192 on cuda, 512 on host)")(
        "n", po::value<int>()->default_value(0), "columns of B and C (0: as for m)")(
        "k", po::value<int>()->default_value(0), "inner dimension (0: as for m)")(
        "dtype,d", po::value<std::string>()->default_value("auto"),
        "auto (bfloat16 on cuda, float on host), float (TF32 tensor cores on cuda), bfloat16, "
        "half, double")(
        // No -n: --n is a matrix dimension here (bench's -n, nccl-tests' iterations, would read
        // as one).
        "iters", po::value<int>()->default_value(20), "timed GEMMs")(
        "warmup,w", po::value<int>()->default_value(5), "untimed GEMMs");
    add_runtime_options(visible);
  }
  void configure(const po::variables_map& vm) override {
    runtime_ = read_runtime_options(vm);
    config_.m = vm["m"].as<int>();
    config_.n = vm["n"].as<int>();
    config_.k = vm["k"].as<int>();
    const std::string dtype = vm["dtype"].as<std::string>();
    config_.dtype_auto = dtype == "auto";
    if (!config_.dtype_auto) config_.dtype = parse_dtype(dtype);
    config_.iters = vm["iters"].as<int>();
    config_.warmup = vm["warmup"].as<int>();
    if (config_.m < 0 || config_.n < 0 || config_.k < 0) {
      throw ConfigError("--m, --n and --k must not be negative");
    }
    if (config_.iters < 1) throw ConfigError("--iters must be at least 1");
    if (config_.warmup < 0) throw ConfigError("--warmup must not be negative");
  }
  std::string backend_name() const override { return runtime_.backend; }
  BackendOptions backend_options() const override { return runtime_.backend_options; }

  int run(RankContext& ctx, Backend* backend, const BackendChoice&) override {
    const GemmProbeResult r = run_gemm_probe(config_, *backend, ctx);
    if (ctx.rank() == 0) {
      const auto& t = r.rank_tflops;
      const double mean = std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size());
      const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
      char line[256];
      std::printf(
          "# commprof gemm: C = A*B, %d x %d x %d, %s, %d iterations after %d warm-up on the "
          "COMP stream\n",
          r.m, r.n, r.k, dtype_name(r.dtype), config_.iters, r.warmup);
      std::printf("# TFLOP/s = 2mnk / time / 1e12; time per GEMM from stream stamps\n");
      for (std::size_t i = 0; i < t.size(); ++i) {
        std::snprintf(line, sizeof line, "#   rank %4zu  host %s  %10.4g TFLOP/s\n", i,
                      ctx.hosts()[i].c_str(), t[i]);
        std::cout << line;
      }
      std::snprintf(line, sizeof line,
                    "gemm %dx%dx%d %s: min %.4g  mean %.4g  max %.4g TFLOP/s (rank 0: %.1f us "
                    "per GEMM)\n",
                    r.m, r.n, r.k, dtype_name(r.dtype), *lo, mean, *hi, r.time_us);
      std::cout << line << std::flush;
    }
    return kExitOk;
  }

 private:
  RuntimeOptions runtime_;
  GemmProbeConfig config_;
};

}  // namespace

std::unique_ptr<Command> make_gemm_command() { return std::make_unique<GemmCommand>(); }

}  // namespace commprof
