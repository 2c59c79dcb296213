// SPDX-License-Identifier: MIT
#include "src/backend/host/host_communicator.hpp"

#include "src/runtime/mpi_check.hpp"

namespace commprof {

HostCommunicator::HostCommunicator(MPI_Comm parent, std::string name, AbandonedFlag abandoned)
    : name_(std::move(name)), abandoned_(std::move(abandoned)) {
  COMMPROF_MPI_CHECK(MPI_Comm_dup(parent, &comm_));
  COMMPROF_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

HostCommunicator::HostCommunicator(MPI_Comm adopted, std::string name, AbandonedFlag abandoned,
                                   bool)
    : comm_(adopted), name_(std::move(name)), abandoned_(std::move(abandoned)) {
  COMMPROF_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

HostCommunicator::~HostCommunicator() {
  if (comm_ != MPI_COMM_NULL && !abandoned_->load()) MPI_Comm_free(&comm_);
}

std::unique_ptr<Communicator> HostCommunicator::split(int color, int key, const std::string& name) {
  MPI_Comm child = MPI_COMM_NULL;
  COMMPROF_MPI_CHECK(MPI_Comm_split(comm_, color, key, &child));
  return std::unique_ptr<Communicator>(new HostCommunicator(child, name, abandoned_, true));
}

}  // namespace commprof
