// SPDX-License-Identifier: MIT
// Stands in for the CUDA backend in builds without CUDA (COMMPROF_ENABLE_CUDA=OFF), so the
// registry, `--backend cuda` and `--backend auto` say why instead of not knowing the name.
#include <mpi.h>
#include "src/backend/backend_info.hpp"

#include "src/core/errors.hpp"

namespace commprof {

BackendInfo cuda_backend_info() {
  BackendInfo info;
  info.name = "cuda";
  info.description = "CUDA streams and events, NCCL collectives, cuBLAS GEMM (not in this build)";
  info.mpi_thread_level = MPI_THREAD_FUNNELED;
  info.unavailable_reason = [] {
    return std::optional<std::string>(
        "not compiled in (rebuild with -DCOMMPROF_ENABLE_CUDA=ON and a CUDA toolkit with NCCL)");
  };
  info.create = [](RankContext&, const BackendOptions&) -> std::unique_ptr<Backend> {
    throw ConfigError("the cuda backend is not compiled into this build");
  };
  return info;
}

}  // namespace commprof
