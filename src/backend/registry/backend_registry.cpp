// SPDX-License-Identifier: MIT
#include "src/backend/registry/backend_registry.hpp"

#include "src/core/errors.hpp"

namespace commprof {

const std::vector<BackendInfo>& registered_backends() {
  static const std::vector<BackendInfo> backends = {cuda_backend_info(), host_backend_info()};
  return backends;
}

BackendChoice choose_backend(const std::string& requested) {
  const auto& all = registered_backends();
  if (requested == "auto") {
    std::string why_not;
    for (const BackendInfo& info : all) {
      auto reason = info.unavailable_reason();
      if (!reason) {
        return {&info, why_not.empty() ? "auto" : "auto: " + why_not};
      }
      why_not += (why_not.empty() ? "" : "; ") + info.name + " unavailable: " + *reason;
    }
    throw ConfigError("no usable backend: " + why_not);
  }
  std::string names;
  for (const BackendInfo& info : all) {
    if (info.name == requested) {
      if (auto reason = info.unavailable_reason()) {
        throw ConfigError("backend '" + requested + "' cannot run here: " + *reason);
      }
      return {&info, "requested"};
    }
    names += (names.empty() ? "" : ", ") + info.name;
  }
  throw ConfigError("unknown backend '" + requested + "': expected auto, " + names);
}

}  // namespace commprof
