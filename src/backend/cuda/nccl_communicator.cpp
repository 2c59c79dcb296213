// SPDX-License-Identifier: MIT
#include "src/backend/cuda/nccl_communicator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "src/backend/cuda/cuda_check.hpp"
#include "src/runtime/mpi_check.hpp"

namespace commprof {
namespace {

// A communicator named as commprof names it (world, dp0, tp1, ...): NCCL's logs, its RAS
// reports and any profiler plugin (commprof's own included) then call it that. NCCL keeps the
// pointer, not a copy, so the names live as long as the process (a few short strings).
ncclConfig_t named_config(const std::string& name) {
  static std::set<std::string> names;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = names.insert(name).first->c_str();
  return config;
}

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm mpi_parent, std::string name, Registry* registry)
    : registry_(registry), name_(std::move(name)) {
  COMMPROF_MPI_CHECK(MPI_Comm_dup(mpi_parent, &mpi_));
  COMMPROF_MPI_CHECK(MPI_Comm_set_errhandler(mpi_, MPI_ERRORS_RETURN));
  COMMPROF_MPI_CHECK(MPI_Comm_rank(mpi_, &rank_));
  COMMPROF_MPI_CHECK(MPI_Comm_size(mpi_, &size_));
  ncclUniqueId id{};
  if (rank_ == 0) COMMPROF_NCCL_CHECK(ncclGetUniqueId(&id));
  COMMPROF_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi_));
  ncclConfig_t config = named_config(name_);
  COMMPROF_NCCL_CHECK(ncclCommInitRankConfig(&nccl_, size_, id, rank_, &config));
  if (registry_ != nullptr) registry_->push_back(this);
}

NcclCommunicator::NcclCommunicator(ncclComm_t adopted, MPI_Comm mpi, std::string name,
                                   Registry* registry)
    : nccl_(adopted), registry_(registry), mpi_(mpi), name_(std::move(name)) {
  COMMPROF_MPI_CHECK(MPI_Comm_set_errhandler(mpi_, MPI_ERRORS_RETURN));
  COMMPROF_MPI_CHECK(MPI_Comm_rank(mpi_, &rank_));
  COMMPROF_MPI_CHECK(MPI_Comm_size(mpi_, &size_));
  int nccl_rank = -1;
  COMMPROF_NCCL_CHECK(ncclCommUserRank(nccl_, &nccl_rank));
  if (nccl_rank != rank_) {
    throw Error(describe_failure("ncclCommSplit", __FILE__, __LINE__,
                                 "NCCL and MPI disagree on the rank order of '" + name_ + "'"));
  }
  if (registry_ != nullptr) registry_->push_back(this);
}

NcclCommunicator::~NcclCommunicator() {
  // Destructors must not throw: a failed teardown at exit is not worth a crash.
  if (registry_ != nullptr) {
    registry_->erase(std::remove(registry_->begin(), registry_->end(), this), registry_->end());
  }
  if (nccl_ != nullptr) ncclCommDestroy(nccl_);
  if (mpi_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_);
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key, const std::string& name) {
  // Both sides split with the same colour and key, so NCCL and MPI ranks line up.
  MPI_Comm child_mpi = MPI_COMM_NULL;
  COMMPROF_MPI_CHECK(MPI_Comm_split(mpi_, color, key, &child_mpi));
  ncclComm_t child = nullptr;
  ncclConfig_t config = named_config(name);
  COMMPROF_NCCL_CHECK(ncclCommSplit(nccl_, color, key, &child, &config));
  return std::unique_ptr<Communicator>(new NcclCommunicator(child, child_mpi, name, registry_));
}

ncclResult_t NcclCommunicator::async_error() const {
  if (nccl_ == nullptr) return ncclSuccess;  // released for an abort: nothing left to poll
  ncclResult_t state = ncclSuccess;
  const ncclResult_t rc = ncclCommGetAsyncError(nccl_, &state);
  return rc != ncclSuccess ? rc : state;
}

ncclComm_t NcclCommunicator::release() {
  ncclComm_t handle = nccl_;
  nccl_ = nullptr;
  return handle;
}

bool abort_all_within(const NcclCommunicator::Registry& registry, double seconds) {
  std::vector<ncclComm_t> handles;
  for (NcclCommunicator* comm : registry) {
    if (ncclComm_t handle = comm->release()) handles.push_back(handle);
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  // Detached: if an abort never returns, the process still reaches MPI_Abort and ends.
  std::thread([handles, done] {
    for (ncclComm_t handle : handles) ncclCommAbort(handle);
    done->store(true);
  }).detach();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done->load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace commprof
