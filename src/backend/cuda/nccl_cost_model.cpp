// SPDX-License-Identifier: MIT
#include "src/backend/cuda/nccl_cost_model.hpp"

#include <dlfcn.h>
#include <nccl.h>

#include <cstddef>

#include "src/backend/cuda/cuda_check.hpp"
#include "src/backend/cuda/nccl_collectives.hpp"
#include "src/backend/cuda/nccl_communicator.hpp"
#include "src/core/log.hpp"

namespace commprof {
namespace {

// ncclSimInfo_t as nccl.h declares it from NCCL 2.22 on (struct ncclSimInfo_v22200, unchanged
// through 2.28): NCCL reads `size` bytes of it, refuses it unless `magic` is 0x74685283 (what
// NCCL_SIM_INFO_INITIALIZER sets), and writes the estimate in µs, -1 (NCCL_UNDEF_FLOAT) where it
// has none. Declared here so that the build needs no NCCL that new.
struct SimInfo {
  std::size_t size = sizeof(SimInfo);
  unsigned int magic = 0x74685283;
  unsigned int version = 0;
  float estimated_us = -1.0f;
};

// NCCL's version code as text: 22809 → "2.28.9" (codes before 2.9 are X·1000 + Y·100 + Z).
std::string version_text(int code) {
  if (code < 10000) return log::cat(code / 1000, ".", code / 100 % 10, ".", code % 100);
  return log::cat(code / 10000, ".", code / 100 % 100, ".", code % 100);
}

}  // namespace

std::unique_ptr<NcclCostModel> NcclCostModel::open(cudaStream_t stream, std::string& why) {
  int version = 0;
  COMMPROF_NCCL_CHECK(ncclGetVersion(&version));
  // NCCL is linked, so its exported symbols are the process's: no library to open.
  void* simulate = dlsym(RTLD_DEFAULT, "ncclGroupSimulateEnd");
  if (simulate == nullptr) {
    why = log::cat("NCCL ", version_text(version),
                   " has no ncclGroupSimulateEnd (NCCL 2.22 and later have it)");
    return nullptr;
  }
  return std::unique_ptr<NcclCostModel>(new NcclCostModel(stream, simulate, version));
}

std::optional<double> NcclCostModel::estimate_ns(const CollectiveCall& call) {
  // commprof runs all-to-all(v) as grouped sends and receives (as nccl-tests does), which
  // NCCL's model does not cover: it would answer -1. Not asked, so no group is opened for them.
  // Nor for the uneven all-gather and reduce-scatter: a group of one broadcast (or reduce) per
  // root, whose estimate would be a sum of roots NCCL may well run at once.
  if (call.kind == CollectiveKind::kAllToAll || call.kind == CollectiveKind::kAllToAllV ||
      call.kind == CollectiveKind::kAllGatherV || call.kind == CollectiveKind::kReduceScatterV) {
    return std::nullopt;
  }
  // On one rank NCCL copies at enqueue time, group or not (seen on 1 H200, NCCL 2.28.3: the
  // "simulated" all-reduce had written its output): there is nothing to simulate.
  if (call.comm->size() == 1) return std::nullopt;
  auto* comm = static_cast<NcclCommunicator*>(call.comm);
  SimInfo info;
  info.version = static_cast<unsigned int>(version_);
  COMMPROF_NCCL_CHECK(ncclGroupStart());
  enqueue_nccl_collective(call, comm->nccl(), stream_);
  const auto simulate_end = reinterpret_cast<ncclResult_t (*)(SimInfo*)>(simulate_);
  COMMPROF_NCCL_CHECK(simulate_end(&info));
  if (!(info.estimated_us >= 0.0f)) return std::nullopt;
  return static_cast<double>(info.estimated_us) * 1e3;
}

std::string NcclCostModel::model_name() const {
  return log::cat("NCCL ", version_text(version_), " ncclGroupSimulateEnd");
}

}  // namespace commprof
