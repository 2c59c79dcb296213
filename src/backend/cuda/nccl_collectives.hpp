// SPDX-License-Identifier: MIT
// The NCCL implementation of every collective, with the same CollectiveCall semantics (and so
// the same specs and verification) as the MPI one.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include "src/backend/work.hpp"

namespace commprof {

/// Enqueues `call` on `stream`; returns once enqueued (not completed). Throws DeviceError.
void enqueue_nccl_collective(const CollectiveCall& call, ncclComm_t comm, cudaStream_t stream);

/// Enqueues the grouped send/receive of `call` on `stream`. Throws DeviceError.
void enqueue_nccl_p2p(const P2PCall& call, ncclComm_t comm, cudaStream_t stream);

ncclDataType_t nccl_datatype(DType dtype);

}  // namespace commprof
