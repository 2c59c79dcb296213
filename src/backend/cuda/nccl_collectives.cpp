// SPDX-License-Identifier: MIT
#include "src/backend/cuda/nccl_collectives.hpp"

#include <stdexcept>

#include "src/backend/communicator.hpp"
#include "src/backend/cuda/cuda_check.hpp"

namespace commprof {

ncclDataType_t nccl_datatype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kInt32:
      return ncclInt32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kFloat16:
      return ncclFloat16;
  }
  return ncclFloat32;
}

void enqueue_nccl_p2p(const P2PCall& call, ncclComm_t comm, cudaStream_t stream) {
  const ncclDataType_t type = nccl_datatype(call.dtype);
  COMMPROF_NCCL_CHECK(ncclGroupStart());
  for (const P2PTransfer& s : call.sends) {
    if (s.peer >= 0)
      COMMPROF_NCCL_CHECK(ncclSend(call.send, call.count, type, s.peer, comm, stream));
  }
  char* recv = static_cast<char*>(call.recv);
  for (const P2PTransfer& r : call.recvs) {
    if (r.peer < 0) continue;
    COMMPROF_NCCL_CHECK(ncclRecv(recv, call.count, type, r.peer, comm, stream));
    recv += call.count * dtype_size(call.dtype);
  }
  COMMPROF_NCCL_CHECK(ncclGroupEnd());
}

void enqueue_nccl_collective(const CollectiveCall& call, ncclComm_t comm, cudaStream_t stream) {
  const ncclDataType_t type = nccl_datatype(call.dtype);
  const std::size_t count = call.count;
  switch (call.kind) {
    case CollectiveKind::kAllReduce:
      COMMPROF_NCCL_CHECK(ncclAllReduce(call.send, call.recv, count, type, ncclSum, comm, stream));
      return;
    case CollectiveKind::kAllGather:
      COMMPROF_NCCL_CHECK(ncclAllGather(call.send, call.recv, count, type, comm, stream));
      return;
    case CollectiveKind::kReduceScatter:
      COMMPROF_NCCL_CHECK(
          ncclReduceScatter(call.send, call.recv, count, type, ncclSum, comm, stream));
      return;
    case CollectiveKind::kBroadcast:
      COMMPROF_NCCL_CHECK(
          ncclBroadcast(call.send, call.recv, count, type, call.root, comm, stream));
      return;
    case CollectiveKind::kReduce:
      COMMPROF_NCCL_CHECK(
          ncclReduce(call.send, call.recv, count, type, ncclSum, call.root, comm, stream));
      return;
    case CollectiveKind::kAllToAll: {
      // Grouped point-to-point, as nccl-tests' alltoall does: one send and one receive of
      // `count` elements per peer, fused by NCCL into one kernel.
      const int n = call.comm->size();
      const std::size_t chunk = count * dtype_size(call.dtype);
      const auto* send = static_cast<const char*>(call.send);
      auto* recv = static_cast<char*>(call.recv);
      COMMPROF_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < n; ++peer) {
        COMMPROF_NCCL_CHECK(ncclSend(send + peer * chunk, count, type, peer, comm, stream));
        COMMPROF_NCCL_CHECK(ncclRecv(recv + peer * chunk, count, type, peer, comm, stream));
      }
      COMMPROF_NCCL_CHECK(ncclGroupEnd());
      return;
    }
    case CollectiveKind::kAllToAllV: {
      // Grouped point-to-point with each peer's own count, as Megatron's alltoall dispatcher
      // runs all_to_all_single with splits (NCCL has no alltoallv call). Every rank posts its
      // peers in the same order, and a zero count is still posted: NCCL treats it as a no-op.
      const int n = call.comm->size();
      if (!call.splits || call.splits->send_counts.size() != static_cast<std::size_t>(n) ||
          call.splits->recv_counts.size() != static_cast<std::size_t>(n)) {
        throw std::logic_error("alltoallv without splits for every rank of its communicator");
      }
      const PeerSplits& s = *call.splits;
      const std::size_t elem = dtype_size(call.dtype);
      const auto* send = static_cast<const char*>(call.send);
      auto* recv = static_cast<char*>(call.recv);
      COMMPROF_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < n; ++peer) {
        const auto p = static_cast<std::size_t>(peer);
        COMMPROF_NCCL_CHECK(
            ncclSend(send + s.send_displs[p] * elem, s.send_counts[p], type, peer, comm, stream));
        COMMPROF_NCCL_CHECK(
            ncclRecv(recv + s.recv_displs[p] * elem, s.recv_counts[p], type, peer, comm, stream));
      }
      COMMPROF_NCCL_CHECK(ncclGroupEnd());
      return;
    }
    case CollectiveKind::kAllGatherV:
    case CollectiveKind::kReduceScatterV: {
      // NCCL has no uneven all-gather or reduce-scatter. PyTorch's ProcessGroupNCCL::allgather
      // and ::reduce_scatter, given outputs (inputs) of different sizes, coalesce one
      // out-of-place broadcast (reduce) per root rank (_broadcast_oop, _reduce_oop between
      // startCoalescing and endCoalescing): what Megatron-Core's gather_from_sequence_parallel_
      // region and reduce_scatter_to_sequence_parallel_region with split sizes run. The same
      // here, in one NCCL group: root p broadcasts its rows into recv + recv_displs[p], or
      // receives the sum of every rank's block p (send + send_displs[p]) into recv.
      const int n = call.comm->size();
      const auto un = static_cast<std::size_t>(n);
      if (!call.splits || call.splits->send_counts.size() != un ||
          call.splits->recv_counts.size() != un || call.splits->send_displs.size() != un ||
          call.splits->recv_displs.size() != un) {
        throw std::logic_error("uneven all-gather or reduce-scatter without splits for every rank");
      }
      const PeerSplits& s = *call.splits;
      const std::size_t elem = dtype_size(call.dtype);
      const auto* send = static_cast<const char*>(call.send);
      auto* recv = static_cast<char*>(call.recv);
      COMMPROF_NCCL_CHECK(ncclGroupStart());
      for (int root = 0; root < n; ++root) {
        const auto p = static_cast<std::size_t>(root);
        if (call.kind == CollectiveKind::kAllGatherV) {
          COMMPROF_NCCL_CHECK(ncclBroadcast(call.send, recv + s.recv_displs[p] * elem,
                                            s.recv_counts[p], type, root, comm, stream));
        } else {
          COMMPROF_NCCL_CHECK(ncclReduce(send + s.send_displs[p] * elem, call.recv,
                                         s.send_counts[p], type, ncclSum, root, comm, stream));
        }
      }
      COMMPROF_NCCL_CHECK(ncclGroupEnd());
      return;
    }
    case CollectiveKind::kSendRecv: {
      const int n = call.comm->size();
      const int me = call.comm->rank();
      COMMPROF_NCCL_CHECK(ncclGroupStart());
      COMMPROF_NCCL_CHECK(ncclSend(call.send, count, type, (me + 1) % n, comm, stream));
      COMMPROF_NCCL_CHECK(ncclRecv(call.recv, count, type, (me - 1 + n) % n, comm, stream));
      COMMPROF_NCCL_CHECK(ncclGroupEnd());
      return;
    }
  }
}

}  // namespace commprof
