// SPDX-License-Identifier: MIT
// The CUDA backend: one GPU per rank, three non-blocking streams (COMM at the highest priority,
// as frameworks give their NCCL streams), CUDA events around ops on one per-epoch origin,
// NCCL communicators, cuBLAS GEMMs, async copies from pinned memory, NVTX ranges.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "src/backend/backend.hpp"
#include "src/backend/cuda/cuda_compute.hpp"

namespace commprof {

class RankContext;
class NcclCommunicator;
class CuptiActivity;
class CudnnAttention;
class NcclCostModel;

class CudaBackend final : public Backend,
                          private ActivityRecorder,
                          private GraphCapture,
                          private AttentionRunner {
 public:
  CudaBackend(RankContext& ctx, const BackendOptions& options);
  ~CudaBackend() override;

  const char* name() const override { return "cuda"; }
  std::string device_description() const override { return description_; }
  int device_index() const override { return device_; }
  bool supports(DType) const override { return true; }

  Buffer allocate(std::size_t bytes, MemorySpace space) override;
  void fill(void* data, DType dtype, std::size_t count, const FillPattern& pattern) override;
  std::uint64_t count_mismatches(const void* data, DType dtype, std::size_t count,
                                 const ExpectPattern& expected) override;

  Communicator& world() override;

  void submit(Category stream, const Work& work, const OpLabel& label) override;
  void idle_for(Category stream, std::uint64_t ns) override;
  StampId stamp(Category stream) override;
  EventId record_event(Category stream) override;
  void wait_event(Category stream, EventId event) override;
  void synchronize() override;
  void wait_for(Category stream) override;
  void begin_epoch() override;
  std::int64_t stamp_ns(StampId stamp) const override;
  std::int64_t epoch_origin_host_ns() const override { return origin_host_ns_; }
  ActivityRecorder* activity() override;
  GraphCapture* graphs() override { return this; }
  AttentionRunner* attention() override { return cudnn() != nullptr ? this : nullptr; }
  CostModel* cost_model() override;
  std::string unavailable_reason(Capability capability) const override;
  // AttentionRunner: cuDNN's flash attention (cudnn_attention.cpp), bf16 or fp16.
  std::string dtype_problem(DType dtype) const override;
  // ActivityRecorder: CUPTI kernel, memcpy and memset records (cupti_activity.cpp).
  std::optional<ActivitySpan> span(std::uint64_t tag) override;
  void pause(bool paused) override;
  // GraphCapture: CUDA stream capture (cuda_graph.cpp).
  void begin_capture(Category stream) override;
  std::unique_ptr<Graph> end_capture(Category stream) override;
  void replay(Category stream, const Graph& graph) override;

 private:
  /// synchronize() and wait_for(): polls `streams` until idle, NCCL errors and the timeout seen.
  void wait_streams(const std::vector<Category>& streams);
  cudaStream_t stream(Category c) const { return streams_[index_of(c)]; }
  cudaEvent_t next_event(std::vector<cudaEvent_t>& pool, std::size_t& used, unsigned flags);
  void run_gemm(const GemmCall& call);
  /// cuDNN's fused attention, opened at the first question or call (cudnn_attention.cpp). Const
  /// because asking whether attention is available is a question: opening the library is what
  /// answering it takes, and the outcome is kept.
  CudnnAttention* cudnn() const;
  /// Enqueues one piece of work on `stream` (one overload per kind of Work: cuda_backend.cpp).
  struct Enqueue;
  /// cuBLAS onto `stream`, with this backend's workspace.
  void bind_cublas(Category stream);
  [[noreturn]] void abort_on_timeout(Category stuck);
  void abandon();
  static std::string abort_timeout_text();
  // How long a failing rank waits for ncclCommAbort before it ends the job without it.
  static constexpr double kAbortWaitSeconds = 5.0;

  BackendOptions options_;
  // Set once a stream timed out or NCCL failed: nothing is freed or destroyed after that.
  std::shared_ptr<std::atomic<bool>> abandoned_ = std::make_shared<std::atomic<bool>>(false);
  int device_ = -1;
  int sm_count_ = 1;          ///< streaming multiprocessors: the element-wise passes' grid
  ComputeRate compute_rate_;  ///< how long ComputeCall's kernel runs per iteration
  std::string description_;
  mutable std::unique_ptr<CudnnAttention> cudnn_;
  mutable bool cudnn_opened_ = false;
  mutable std::string cudnn_unavailable_;
  std::array<cudaStream_t, 3> streams_{};
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<NcclCommunicator> world_;
  // World and every communicator split from it (they register themselves), for error polling.
  std::vector<NcclCommunicator*> communicators_;
  // Events are pooled per epoch: creating one costs microseconds, recording a pooled one does not.
  std::vector<cudaEvent_t> stamp_events_;
  std::size_t stamps_used_ = 0;
  std::vector<cudaEvent_t> sync_events_;
  std::size_t syncs_used_ = 0;
  cudaEvent_t origin_ = nullptr;
  std::int64_t origin_host_ns_ = 0;
  unsigned long long* device_counter_ = nullptr;
  static constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;
  void* cublas_workspace_ = nullptr;
  std::string last_comm_op_ = "none";
  // Activity timing: CUPTI records, or why there are none.
  std::unique_ptr<CuptiActivity> activity_;
  std::string activity_problem_ = "activity timing was not requested";
  bool activity_pending_ = false;  // tagged work submitted since the last collect
  // NCCL's cost model, or why there is none (nccl_cost_model.cpp).
  std::unique_ptr<NcclCostModel> cost_model_;
  std::string cost_model_problem_;
};

}  // namespace commprof
