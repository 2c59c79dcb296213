// SPDX-License-Identifier: MIT
// NCCL's estimate of a collective's time: the call is enqueued inside a group that NCCL then
// simulates instead of launching (ncclGroupSimulateEnd, NCCL 2.22 and later), and NCCL returns
// the time its tuning model gives the algorithm and protocol it chose. The entry point is
// resolved at run time, so a binary built or run with an older NCCL still works and says why the
// estimate is missing.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>

#include "src/backend/backend.hpp"

namespace commprof {

class NcclCostModel final : public CostModel {
 public:
  /// The model on `stream` (nothing is launched on it), or nullptr with `why` set when the NCCL
  /// in this process has no ncclGroupSimulateEnd.
  static std::unique_ptr<NcclCostModel> open(cudaStream_t stream, std::string& why);

  std::optional<double> estimate_ns(const CollectiveCall& call) override;
  std::string model_name() const override;

 private:
  NcclCostModel(cudaStream_t stream, void* simulate, int version)
      : stream_(stream), simulate_(simulate), version_(version) {}

  cudaStream_t stream_;
  void* simulate_;  ///< ncclGroupSimulateEnd, as dlsym found it
  int version_;     ///< ncclGetVersion's code of the NCCL in the process
};

}  // namespace commprof
