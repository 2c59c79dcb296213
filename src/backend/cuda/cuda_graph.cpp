// SPDX-License-Identifier: MIT
// CUDA graph capture and replay for the CUDA backend (`commprof bench --graph`, as nccl-tests'
// -G): NCCL calls enqueued while a stream captures become graph nodes, and one cudaGraphLaunch
// replays them all, so the time between two kernels no longer includes a host launch.
#include <cuda_runtime.h>

#include "src/backend/cuda/cuda_backend.hpp"
#include "src/backend/cuda/cuda_check.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {
namespace {

class CudaGraph final : public Graph {
 public:
  CudaGraph(cudaGraph_t graph, cudaGraphExec_t exec) : graph_(graph), exec_(exec) {}
  ~CudaGraph() override {
    // Destructors must not throw; a failed destroy at teardown leaks a graph, nothing more.
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  cudaGraphExec_t exec() const { return exec_; }

 private:
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
};

}  // namespace

void CudaBackend::begin_capture(Category c) {
  // Thread-local: CUDA calls of other threads (NCCL's proxy, CUPTI) must not end the capture;
  // NCCL supports capture in this mode.
  COMMPROF_CUDA_CHECK(cudaStreamBeginCapture(stream(c), cudaStreamCaptureModeThreadLocal));
}

std::unique_ptr<Graph> CudaBackend::end_capture(Category c) {
  cudaGraph_t graph = nullptr;
  COMMPROF_CUDA_CHECK(cudaStreamEndCapture(stream(c), &graph));
  if (graph == nullptr) {
    throw DeviceError(log::cat("the capture on the ", category_name(c), " stream of ",
                               log::identity(), " produced no graph"));
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t rc = cudaGraphInstantiate(&exec, graph, 0);
  if (rc != cudaSuccess) cudaGraphDestroy(graph);
  COMMPROF_CUDA_CHECK(rc);
  auto owned = std::make_unique<CudaGraph>(graph, exec);
  // Upload now, so the first replay does not carry the copy of the graph to the device.
  COMMPROF_CUDA_CHECK(cudaGraphUpload(exec, stream(c)));
  return owned;
}

void CudaBackend::replay(Category c, const Graph& graph) {
  const auto* g = dynamic_cast<const CudaGraph*>(&graph);
  if (g == nullptr) throw Error("replay of a graph the CUDA backend did not capture");
  COMMPROF_CUDA_CHECK(cudaGraphLaunch(g->exec(), stream(c)));
}

}  // namespace commprof
