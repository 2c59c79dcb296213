// SPDX-License-Identifier: MIT
// Backends by name. What is compiled in decides what registers; a run-time check decides what
// is usable here; `--backend auto` takes the first usable one and says why.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/backend/backend.hpp"

namespace commprof {

class RankContext;

struct BackendInfo {
  std::string name;
  std::string description;
  /// The MPI thread level the backend needs (the host backend calls MPI from its COMM thread).
  int mpi_thread_level = 0;
  /// Why it cannot run on this machine (not compiled in, no device), or nullopt when it can.
  /// Must work before MPI_Init.
  std::function<std::optional<std::string>()> unavailable_reason;
  std::function<std::unique_ptr<Backend>(RankContext&, const BackendOptions&)> create;
};

/// Defined by each backend's translation unit (or its "not compiled in" stand-in).
BackendInfo host_backend_info();
BackendInfo cuda_backend_info();

/// Every backend known to this build, in the order `auto` prefers them.
const std::vector<BackendInfo>& registered_backends();

struct BackendChoice {
  const BackendInfo* info = nullptr;
  std::string reason;  ///< e.g. "auto: no CUDA device visible"
};

/// Resolves "auto", "host" or "cuda" to a usable backend; throws ConfigError naming the
/// backends that exist when the name is unknown, or why the requested one cannot run.
BackendChoice choose_backend(const std::string& requested);

}  // namespace commprof
