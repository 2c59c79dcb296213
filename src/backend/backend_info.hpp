// SPDX-License-Identifier: MIT
// How a backend presents itself to the registry (backend_registry.hpp): its name, the MPI thread
// level it needs, why it cannot run here, and how to create it. Each backend defines its own
// `*_backend_info()`; the registry, a layer above the backends, lists them.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

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

}  // namespace commprof
