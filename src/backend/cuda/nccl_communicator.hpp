// SPDX-License-Identifier: MIT
#pragma once

#include <mpi.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "src/backend/communicator.hpp"

namespace commprof {

/// An NCCL communicator with the MPI communicator of the same ranks beside it (for host-side
/// agreement). World: unique id from rank 0 broadcast over MPI; children: ncclCommSplit.
/// Destroyed cleanly with ncclCommDestroy unless released for an abort (abort_all_within).
class NcclCommunicator final : public Communicator {
 public:
  /// Every live communicator of one backend, so it can poll them all for asynchronous errors.
  using Registry = std::vector<NcclCommunicator*>;

  /// Collective over `mpi_parent`: creates the NCCL communicator of all its ranks. The CUDA
  /// device must already be set. It and its splits add themselves to `registry` while alive.
  NcclCommunicator(MPI_Comm mpi_parent, std::string name, Registry* registry);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }
  std::unique_ptr<Communicator> split(int color, int key, const std::string& name) override;

  ncclComm_t nccl() const { return nccl_; }
  /// ncclCommGetAsyncError: ncclSuccess, ncclInProgress, or the error that ended the comm.
  ncclResult_t async_error() const;
  /// Hands the NCCL handle over (to abort it elsewhere); this object then neither polls nor
  /// destroys it.
  ncclComm_t release();

 private:
  NcclCommunicator(ncclComm_t adopted, MPI_Comm mpi, std::string name, Registry* registry);
  ncclComm_t nccl_ = nullptr;
  Registry* registry_ = nullptr;
  MPI_Comm mpi_ = MPI_COMM_NULL;
  std::string name_;
  int rank_ = 0;
  int size_ = 1;
};

/// Aborts every communicator of `registry` (ncclCommAbort) on a helper thread and waits at most
/// `seconds` for that: within a node NCCL's abort can wait for the other ranks to abort too,
/// and a rank that stopped participating never will. True when every abort returned in time;
/// the communicators are released either way (no later poll or destroy touches them).
bool abort_all_within(const NcclCommunicator::Registry& registry, double seconds);

}  // namespace commprof
