// SPDX-License-Identifier: MIT
// Backends by name. What is compiled in decides what registers (this target links the cuda
// backend or its "not compiled in" stand-in); a run-time check decides what is usable here;
// `--backend auto` takes the first usable one and says why.
#pragma once

#include <string>
#include <vector>

#include "src/backend/backend_info.hpp"

namespace commprof {

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
