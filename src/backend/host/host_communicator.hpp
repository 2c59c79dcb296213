// SPDX-License-Identifier: MIT
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <string>

#include "src/backend/communicator.hpp"

namespace commprof {

/// Set by the host backend when a stream timed out with work in flight (host_backend.cpp).
using AbandonedFlag = std::shared_ptr<const std::atomic<bool>>;

/// An MPI communicator owned by the host backend: a duplicate, so the COMM stream's collectives
/// never interleave with commprof's own control-plane collectives on the world communicator.
/// Once `abandoned` is set, destruction leaves the MPI communicator alone: a collective on it
/// may still be running on the COMM stream (its peer stopped), and the job is being aborted.
class HostCommunicator final : public Communicator {
 public:
  /// Duplicates `parent` (collective over it) and sets MPI_ERRORS_RETURN.
  HostCommunicator(MPI_Comm parent, std::string name, AbandonedFlag abandoned);
  ~HostCommunicator() override;
  HostCommunicator(const HostCommunicator&) = delete;
  HostCommunicator& operator=(const HostCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }
  std::unique_ptr<Communicator> split(int color, int key, const std::string& name) override;

  MPI_Comm comm() const { return comm_; }

 private:
  HostCommunicator(MPI_Comm adopted, std::string name, AbandonedFlag abandoned, bool /*adopt*/);
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string name_;
  AbandonedFlag abandoned_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace commprof
