// SPDX-License-Identifier: MIT
// The host implementation of every collective: MPI on any communicator, with NCCL's argument
// semantics (CollectiveCall) so specs and verification are shared with the NCCL path.
#pragma once

#include <mpi.h>

#include "src/backend/work.hpp"

namespace commprof {

/// Runs `call` over `comm` and returns when it is complete on this rank. Throws MpiError.
void run_mpi_collective(const CollectiveCall& call, MPI_Comm comm);

/// Runs the grouped send/receive of `call` over `comm`. Throws MpiError.
void run_mpi_p2p(const P2PCall& call, MPI_Comm comm);

/// The MPI datatype of a commprof element type; throws ConfigError for types MPI cannot sum.
MPI_Datatype mpi_datatype(DType dtype);

}  // namespace commprof
