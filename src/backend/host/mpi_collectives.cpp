// SPDX-License-Identifier: MIT
#include "src/backend/host/mpi_collectives.hpp"

#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "src/backend/communicator.hpp"
#include "src/core/log.hpp"
#include "src/runtime/mpi_check.hpp"

namespace commprof {

MPI_Datatype mpi_datatype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return MPI_FLOAT;
    case DType::kFloat64:
      return MPI_DOUBLE;
    case DType::kInt32:
      return MPI_INT32_T;
    case DType::kInt64:
      return MPI_INT64_T;
    default:
      throw ConfigError(std::string("MPI has no built-in ") + dtype_name(dtype) +
                        " type: the host backend supports float, double, int32 and int64");
  }
}

void run_mpi_p2p(const P2PCall& call, MPI_Comm comm) {
  if (call.count > static_cast<std::size_t>(INT_MAX)) {
    throw ConfigError(log::cat("a host-backend send/recv moves at most ", INT_MAX,
                               " elements per call; got ", call.count));
  }
  const int count = static_cast<int>(call.count);
  const MPI_Datatype type = mpi_datatype(call.dtype);
  // One tag per direction: MPI then matches activations with activations and gradients with
  // gradients, whatever order two ranks post them in.
  auto tag = [](const P2PTransfer& t) { return t.forward ? 11 : 12; };
  MPI_Request requests[4];
  int n = 0;
  char* recv = static_cast<char*>(call.recv);
  for (const P2PTransfer& r : call.recvs) {
    if (r.peer < 0) continue;
    COMMPROF_MPI_CHECK(MPI_Irecv(recv, count, type, r.peer, tag(r), comm, &requests[n++]));
    recv += call.count * dtype_size(call.dtype);
  }
  for (const P2PTransfer& s : call.sends) {
    if (s.peer < 0) continue;
    COMMPROF_MPI_CHECK(
        MPI_Isend(const_cast<void*>(call.send), count, type, s.peer, tag(s), comm, &requests[n++]));
  }
  if (n > 0) COMMPROF_MPI_CHECK(MPI_Waitall(n, requests, MPI_STATUSES_IGNORE));
}

namespace {

// MPI's v-collectives take int counts and displacements: each must fit, or the call would
// silently move other elements than the splits say.
std::vector<int> as_mpi_ints(const std::vector<std::size_t>& values, const char* what) {
  std::vector<int> out;
  out.reserve(values.size());
  for (std::size_t v : values) {
    if (v > static_cast<std::size_t>(INT_MAX)) {
      throw ConfigError(log::cat("a host-backend v-collective takes ", what, " of at most ",
                                 INT_MAX, " elements (MPI counts are int); got ", v));
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

void run_mpi_alltoallv(const CollectiveCall& call, MPI_Comm comm, int size) {
  if (!call.splits || call.splits->send_counts.size() != static_cast<std::size_t>(size) ||
      call.splits->recv_counts.size() != static_cast<std::size_t>(size)) {
    throw std::logic_error(log::cat("alltoallv without splits for its ", size, " ranks"));
  }
  const PeerSplits& s = *call.splits;
  const std::vector<int> send_counts = as_mpi_ints(s.send_counts, "send counts");
  const std::vector<int> send_displs = as_mpi_ints(s.send_displs, "send displacements");
  const std::vector<int> recv_counts = as_mpi_ints(s.recv_counts, "receive counts");
  const std::vector<int> recv_displs = as_mpi_ints(s.recv_displs, "receive displacements");
  const MPI_Datatype type = mpi_datatype(call.dtype);
  COMMPROF_MPI_CHECK(MPI_Alltoallv(const_cast<void*>(call.send), send_counts.data(),
                                   send_displs.data(), type, call.recv, recv_counts.data(),
                                   recv_displs.data(), type, comm));
}

// The splits of an uneven all-gather or reduce-scatter (PeerSplits), checked where MPI would
// read them: one entry per rank, and for the reduce-scatter the blocks back to back in rank
// order, as MPI_Reduce_scatter lays them out.
const PeerSplits& uneven_splits(const CollectiveCall& call, int size) {
  const auto n = static_cast<std::size_t>(size);
  if (!call.splits || call.splits->send_counts.size() != n ||
      call.splits->recv_counts.size() != n || call.splits->send_displs.size() != n ||
      call.splits->recv_displs.size() != n) {
    throw std::logic_error(
        log::cat(collective_name(call.kind), " without splits for its ", size, " ranks"));
  }
  return *call.splits;
}

void run_mpi_allgatherv(const CollectiveCall& call, MPI_Comm comm, int size) {
  const PeerSplits& s = uneven_splits(call, size);
  const std::vector<int> counts = as_mpi_ints(s.recv_counts, "receive counts");
  const std::vector<int> displs = as_mpi_ints(s.recv_displs, "receive displacements");
  const MPI_Datatype type = mpi_datatype(call.dtype);
  COMMPROF_MPI_CHECK(MPI_Allgatherv(const_cast<void*>(call.send), static_cast<int>(call.count),
                                    type, call.recv, counts.data(), displs.data(), type, comm));
}

void run_mpi_reduce_scatterv(const CollectiveCall& call, MPI_Comm comm, int size) {
  const PeerSplits& s = uneven_splits(call, size);
  std::size_t at = 0;
  for (std::size_t p = 0; p < s.send_counts.size(); ++p) {
    if (s.send_displs[p] != at) {
      throw std::logic_error("reducescatterv's blocks must lie back to back in rank order");
    }
    at += s.send_counts[p];
  }
  const std::vector<int> counts = as_mpi_ints(s.send_counts, "block counts");
  COMMPROF_MPI_CHECK(MPI_Reduce_scatter(const_cast<void*>(call.send), call.recv, counts.data(),
                                        mpi_datatype(call.dtype), MPI_SUM, comm));
}

}  // namespace

void run_mpi_collective(const CollectiveCall& call, MPI_Comm comm) {
  if (call.count > static_cast<std::size_t>(INT_MAX)) {
    throw ConfigError(log::cat("a host-backend collective moves at most ", INT_MAX,
                               " elements per call (MPI counts are int); got ", call.count));
  }
  const int count = static_cast<int>(call.count);
  const MPI_Datatype type = mpi_datatype(call.dtype);
  int rank = 0;
  int size = 1;
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm, &size));
  void* send = const_cast<void*>(call.send);  // MPI-3 takes const void*, older headers may not
  switch (call.kind) {
    case CollectiveKind::kAllReduce:
      COMMPROF_MPI_CHECK(MPI_Allreduce(send, call.recv, count, type, MPI_SUM, comm));
      return;
    case CollectiveKind::kAllGather:
      COMMPROF_MPI_CHECK(MPI_Allgather(send, count, type, call.recv, count, type, comm));
      return;
    case CollectiveKind::kReduceScatter:
      COMMPROF_MPI_CHECK(MPI_Reduce_scatter_block(send, call.recv, count, type, MPI_SUM, comm));
      return;
    case CollectiveKind::kBroadcast:
      // NCCL's broadcast is out of place: the root sends from `send` and, like everyone,
      // ends with the data in `recv`. MPI_Bcast is in place, so the root broadcasts from its
      // send buffer and copies locally, the cheapest way to honour the same contract.
      if (rank == call.root) {
        COMMPROF_MPI_CHECK(MPI_Bcast(send, count, type, call.root, comm));
        if (call.recv != call.send)
          std::memcpy(call.recv, call.send, call.count * dtype_size(call.dtype));
      } else {
        COMMPROF_MPI_CHECK(MPI_Bcast(call.recv, count, type, call.root, comm));
      }
      return;
    case CollectiveKind::kReduce:
      COMMPROF_MPI_CHECK(MPI_Reduce(send, call.recv, count, type, MPI_SUM, call.root, comm));
      return;
    case CollectiveKind::kAllToAll:
      COMMPROF_MPI_CHECK(MPI_Alltoall(send, count, type, call.recv, count, type, comm));
      return;
    case CollectiveKind::kAllToAllV:
      run_mpi_alltoallv(call, comm, size);
      return;
    case CollectiveKind::kAllGatherV:
      run_mpi_allgatherv(call, comm, size);
      return;
    case CollectiveKind::kReduceScatterV:
      run_mpi_reduce_scatterv(call, comm, size);
      return;
    case CollectiveKind::kSendRecv: {
      const int next = (rank + 1) % size;
      const int prev = (rank - 1 + size) % size;
      constexpr int kTag = 7;
      COMMPROF_MPI_CHECK(MPI_Sendrecv(send, count, type, next, kTag, call.recv, count, type, prev,
                                      kTag, comm, MPI_STATUS_IGNORE));
      return;
    }
  }
}

}  // namespace commprof
