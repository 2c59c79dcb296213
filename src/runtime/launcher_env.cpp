// SPDX-License-Identifier: MIT
#include "src/runtime/launcher_env.hpp"

#include <cstdlib>

namespace commprof {

std::optional<int> env_int(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1'000'000'000) return std::nullopt;
  return static_cast<int>(value);
}

std::optional<int> launcher_world_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (auto value = env_int(name)) return value;
  }
  return std::nullopt;
}

std::optional<LauncherLocalRank> launcher_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (auto value = env_int(name)) return LauncherLocalRank{*value, name};
  }
  return std::nullopt;
}

}  // namespace commprof
