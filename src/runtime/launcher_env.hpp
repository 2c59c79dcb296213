// SPDX-License-Identifier: MIT
// What the launcher (mpirun, srun) tells a process through its environment, readable before
// MPI_Init: used to let only the first rank print --help, and to cross-check local ranks.
#pragma once

#include <optional>
#include <string>

namespace commprof {

/// World rank from OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID, if any is set.
std::optional<int> launcher_world_rank();

/// Local rank and where it came from ("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", ...).
struct LauncherLocalRank {
  int value = 0;
  std::string variable;
};
std::optional<LauncherLocalRank> launcher_local_rank();

/// Parses an environment variable as a non-negative int; nullopt when unset or malformed.
std::optional<int> env_int(const char* name);

}  // namespace commprof
