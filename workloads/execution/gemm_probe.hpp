// SPDX-License-Identifier: MIT
// `commprof gemm`: how fast this rank's COMP stream computes a GEMM, so the COMP ops of the
// mock workloads are known to be real work at real speed (cuBLAS on GPUs, blocked loops on CPUs).
#pragma once

#include <vector>

#include "src/core/dtype.hpp"

namespace commprof {

class Backend;
class RankContext;

struct GemmProbeConfig {
  int m = 0, n = 0, k = 0;  ///< 0: 8192 on cuda, 512 on host
  DType dtype = DType::kBFloat16;
  bool dtype_auto = true;  ///< bfloat16 on cuda, float on host
  int iters = 20;
  int warmup = 5;
};

struct GemmProbeResult {
  int m = 0, n = 0, k = 0;
  DType dtype = DType::kFloat32;
  int warmup = 0;                   ///< untimed GEMMs submitted before the timed ones
  double time_us = 0;               ///< this rank's mean time per GEMM
  std::vector<double> rank_tflops;  ///< every rank's TFLOP/s (rank 0 only)
};

/// Collective: every rank times `iters` GEMMs on its COMP stream between two stamps.
GemmProbeResult run_gemm_probe(const GemmProbeConfig& config, Backend& backend, RankContext& ctx);

}  // namespace commprof
