// SPDX-License-Identifier: MIT
#include "src/backend/cuda/cuda_backend.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

#include "src/backend/annotation.hpp"
#include "src/backend/backend_info.hpp"
#include "src/backend/cuda/cuda_adamw.hpp"
#include "src/backend/cuda/cuda_check.hpp"
#include "src/backend/cuda/cuda_compute.hpp"
#include "src/backend/cuda/cuda_device.hpp"
#include "src/backend/cuda/cuda_elementwise.hpp"
#include "src/backend/cuda/cuda_gap.hpp"
#include "src/backend/cuda/cuda_patterns.hpp"
#include "src/backend/cuda/cudnn_attention.hpp"
#include "src/backend/cuda/cupti_activity.hpp"
#include "src/backend/cuda/nccl_collectives.hpp"
#include "src/backend/cuda/nccl_communicator.hpp"
#include "src/backend/cuda/nccl_cost_model.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {
namespace {

std::int64_t host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

cudaMemcpyKind memcpy_kind(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice:
      return cudaMemcpyHostToDevice;
    case CopyKind::kDeviceToHost:
      return cudaMemcpyDeviceToHost;
    case CopyKind::kDeviceToDevice:
      return cudaMemcpyDeviceToDevice;
  }
  return cudaMemcpyDefault;
}

}  // namespace

CudaBackend::CudaBackend(RankContext& ctx, const BackendOptions& options) : options_(options) {
  set_annotations_enabled(options.annotate);
  // Before the first CUDA call, so that CUPTI sees the context being made.
  if (options.activity_timing && ctx.rank() == options.test_no_activity_rank) {
    activity_problem_ = kActivityWithheldByTestHook;
  } else if (options.activity_timing) {
    activity_ = CuptiActivity::start(&activity_problem_);
  }
  const VisibleDevices visible = visible_cuda_devices();
  std::string why = visible.problem;
  std::optional<int> device;
  if (visible.count > 0)
    device = choose_device(ctx.local_rank(), ctx.local_size(), visible.count, &why);
  ctx.agree(device.has_value(), why, ErrorScope::kProgram);
  device_ = *device;
  COMMPROF_CUDA_CHECK(cudaSetDevice(device_));

  cudaDeviceProp props{};
  COMMPROF_CUDA_CHECK(cudaGetDeviceProperties(&props, device_));
  char bus_id[32] = {};
  COMMPROF_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device_));
  description_ = log::cat(props.name, " (", bus_id, ")");
  sm_count_ = props.multiProcessorCount;

  // COMM at the highest priority, as PyTorch and Megatron give their NCCL streams: NCCL kernels
  // then get SMs first when a GEMM and a collective compete.
  int least = 0;
  int greatest = 0;
  COMMPROF_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (Category c : kAllCategories) {
    const int priority = c == Category::kComm ? greatest : least;
    COMMPROF_CUDA_CHECK(
        cudaStreamCreateWithPriority(&streams_[index_of(c)], cudaStreamNonBlocking, priority));
  }
  COMMPROF_CUBLAS_CHECK(cublasCreate(&cublas_));
  // A workspace of the size PyTorch gives cuBLAS on Hopper (32 MiB): some GEMM kernels need one
  // (docs/BENCHMARKS.md, fidelity, measures what it changes).
  COMMPROF_CUDA_CHECK(cudaMalloc(&cublas_workspace_, kCublasWorkspaceBytes));
  bind_cublas(Category::kComp);
  COMMPROF_CUDA_CHECK(cudaEventCreate(&origin_));
  COMMPROF_CUDA_CHECK(cudaMalloc(&device_counter_, sizeof(unsigned long long)));
  // Measured here, before any op is issued, so that no other work shares the GPU with it (a few
  // ms); the records of these launches carry no op's tag and are dropped.
  compute_rate_ = ComputeRate::measure(sm_count_, stream(Category::kComp));
  // The gap kernel's first launch loads its module (CUDA loads lazily): ~60 µs that would
  // otherwise lengthen the run's first replayed gap.
  launch_gap(0, stream(Category::kComp));

  world_ = std::make_unique<NcclCommunicator>(ctx.comm(), "world", &communicators_);
  cost_model_ = NcclCostModel::open(stream(Category::kComm), cost_model_problem_);
  begin_epoch();
}

CostModel* CudaBackend::cost_model() { return cost_model_.get(); }

CudaBackend::~CudaBackend() {
  if (abandoned_->load()) {
    // After a timeout or NCCL error the job is being aborted: touch nothing that could wait for
    // the device. The communicators were released; CUPTI's buffers are left to the exit.
    static_cast<void>(activity_.release());
    static_cast<void>(cudnn_.release());
    return;
  }
  // Best effort: a destructor must not throw, and the process is ending anyway.
  for (cudaStream_t s : streams_) {
    if (s != nullptr) cudaStreamSynchronize(s);
  }
  world_.reset();
  activity_.reset();
  cudnn_.reset();
  for (cudaEvent_t e : stamp_events_) cudaEventDestroy(e);
  for (cudaEvent_t e : sync_events_) cudaEventDestroy(e);
  if (origin_ != nullptr) cudaEventDestroy(origin_);
  if (device_counter_ != nullptr) cudaFree(device_counter_);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (cublas_workspace_ != nullptr) cudaFree(cublas_workspace_);
  for (cudaStream_t s : streams_) {
    if (s != nullptr) cudaStreamDestroy(s);
  }
}

Buffer CudaBackend::allocate(std::size_t bytes, MemorySpace space) {
  void* data = nullptr;
  const std::size_t n = bytes == 0 ? 1 : bytes;
  if (space == MemorySpace::kHostPinned) {
    COMMPROF_CUDA_CHECK(cudaMallocHost(&data, n));
    return Buffer(data, bytes, space, [abandoned = abandoned_](void* p) {
      if (!abandoned->load()) cudaFreeHost(p);
    });
  }
  COMMPROF_CUDA_CHECK(cudaMalloc(&data, n));
  // cudaFree waits for the device: after a timeout, memory is left to the process's exit.
  return Buffer(data, bytes, space, [abandoned = abandoned_](void* p) {
    if (!abandoned->load()) cudaFree(p);
  });
}

void CudaBackend::fill(void* data, DType dtype, std::size_t count, const FillPattern& pattern) {
  cudaStream_t s = stream(Category::kMem);
  launch_fill(data, dtype, count, pattern, s);
  COMMPROF_CUDA_CHECK(cudaStreamSynchronize(s));
}

std::uint64_t CudaBackend::count_mismatches(const void* data, DType dtype, std::size_t count,
                                            const ExpectPattern& expected) {
  cudaStream_t s = stream(Category::kMem);
  COMMPROF_CUDA_CHECK(cudaMemsetAsync(device_counter_, 0, sizeof(unsigned long long), s));
  launch_count_mismatches(data, dtype, count, expected, device_counter_, s);
  unsigned long long wrong = 0;
  COMMPROF_CUDA_CHECK(
      cudaMemcpyAsync(&wrong, device_counter_, sizeof wrong, cudaMemcpyDeviceToHost, s));
  COMMPROF_CUDA_CHECK(cudaStreamSynchronize(s));
  return wrong;
}

Communicator& CudaBackend::world() { return *world_; }

// cublasSetStream puts the handle back on cuBLAS's default workspace: ours is set again after it.
// A GEMM on another stream than COMP (none of the workloads issues one) shares the workspace,
// so it must not run beside a COMP GEMM.
void CudaBackend::bind_cublas(Category c) {
  COMMPROF_CUBLAS_CHECK(cublasSetStream(cublas_, stream(c)));
  COMMPROF_CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_, kCublasWorkspaceBytes));
}

void CudaBackend::run_gemm(const GemmCall& g) {
  if (const std::string problem = g.bounds_problem(); !problem.empty()) throw ConfigError(problem);
  // Column-major C(m×n) = op(A)(m×k)·op(B)(k×n). fp32 runs on tensor cores (TF32), as frameworks
  // allow by default for matmuls; bf16/fp16 accumulate in fp32.
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  switch (g.dtype) {
    case DType::kFloat32:
      break;
    case DType::kBFloat16:
      type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kFloat16:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kFloat64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    default:
      throw ConfigError(std::string("no cuBLAS GEMM for ") + dtype_name(g.dtype));
  }
  const double alpha64 = 1.0;
  const double beta64 = 0.0;
  const float alpha32 = 1.0f;
  const float beta32 = 0.0f;
  const void* alpha = g.dtype == DType::kFloat64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = g.dtype == DType::kFloat64 ? static_cast<const void*>(&beta64) : &beta32;
  COMMPROF_CUBLAS_CHECK(cublasGemmEx(cublas_, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                     g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, alpha,
                                     g.a, type, g.lda(), g.b, type, g.ldb(), beta, g.c, type, g.m,
                                     compute, CUBLAS_GEMM_DEFAULT));
}

namespace {

/// Attributes the work launched in its scope to an op's tag, popping even when a launch throws.
class ActivityScope {
 public:
  ActivityScope(CuptiActivity* activity, std::uint64_t tag)
      : activity_(tag != 0 ? activity : nullptr) {
    if (activity_ != nullptr) activity_->push(tag);
  }
  ~ActivityScope() {
    if (activity_ != nullptr) activity_->pop();
  }
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

 private:
  CuptiActivity* activity_;
};

}  // namespace

// One overload per kind of Work: a new kind without one here does not compile.
struct CudaBackend::Enqueue {
  CudaBackend& b;
  Category c;
  const OpLabel& label;

  void operator()(const CollectiveCall& call) const {
    auto* comm = static_cast<NcclCommunicator*>(call.comm);
    b.last_comm_op_ =
        log::cat(label.name, " #", label.seq, " on communicator '", comm->name(), "'");
    enqueue_nccl_collective(call, comm->nccl(), b.stream(c));
  }
  void operator()(const P2PCall& call) const {
    auto* comm = static_cast<NcclCommunicator*>(call.comm);
    b.last_comm_op_ = log::cat(label.name, " on communicator '", comm->name(), "'");
    enqueue_nccl_p2p(call, comm->nccl(), b.stream(c));
  }
  void operator()(const ElementwiseCall& call) const {
    launch_elementwise(call, b.sm_count_, b.stream(c));
  }
  void operator()(const AdamwCall& call) const { launch_adamw(call, b.stream(c)); }
  void operator()(const ComputeCall& call) const {
    launch_compute(b.compute_rate_.iterations_for(call.ns), b.sm_count_, b.stream(c));
  }
  void operator()(const AttentionCall& call) const {
    const std::string problem = attention_problem(b, call.dtype);
    if (!problem.empty()) throw ConfigError("fused attention: " + problem);
    b.cudnn()->run(call, b.stream(c));
  }
  void operator()(const GemmCall& call) const {
    if (c != Category::kComp) b.bind_cublas(c);
    b.run_gemm(call);  // cuBLAS is bound to the COMP stream
    if (c != Category::kComp) b.bind_cublas(Category::kComp);
  }
  void operator()(const CopyCall& call) const {
    COMMPROF_CUDA_CHECK(
        cudaMemcpyAsync(call.dst, call.src, call.bytes, memcpy_kind(call.kind), b.stream(c)));
  }
  void operator()(const MemsetCall& call) const {
    COMMPROF_CUDA_CHECK(cudaMemsetAsync(call.dst, call.value, call.bytes, b.stream(c)));
  }
};

void CudaBackend::submit(Category c, const Work& work, const OpLabel& label) {
  ScopedAnnotation range(label, work, c);  // COMM ranges also name their communicator
  ActivityScope tagged(activity_.get(), label.activity_tag);
  if (activity_ && label.activity_tag != 0) activity_pending_ = true;
  std::visit(Enqueue{*this, c, label}, work);
}

cudaEvent_t CudaBackend::next_event(std::vector<cudaEvent_t>& pool, std::size_t& used,
                                    unsigned flags) {
  if (used == pool.size()) {
    cudaEvent_t e = nullptr;
    COMMPROF_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    pool.push_back(e);
  }
  return pool[used++];
}

void CudaBackend::idle_for(Category c, std::uint64_t ns) { launch_gap(ns, stream(c)); }

StampId CudaBackend::stamp(Category c) {
  const auto id = static_cast<StampId>(stamps_used_);
  cudaEvent_t e = next_event(stamp_events_, stamps_used_, cudaEventDefault);
  COMMPROF_CUDA_CHECK(cudaEventRecord(e, stream(c)));
  return id;
}

EventId CudaBackend::record_event(Category c) {
  const auto id = static_cast<EventId>(syncs_used_);
  cudaEvent_t e = next_event(sync_events_, syncs_used_, cudaEventDisableTiming);
  COMMPROF_CUDA_CHECK(cudaEventRecord(e, stream(c)));
  return id;
}

void CudaBackend::wait_event(Category c, EventId event) {
  if (event >= syncs_used_) throw Error(log::cat("wait on unknown event ", event));
  COMMPROF_CUDA_CHECK(cudaStreamWaitEvent(stream(c), sync_events_[event], 0));
}

void CudaBackend::synchronize() {
  wait_streams(std::vector<Category>(kAllCategories.begin(), kAllCategories.end()));
}

void CudaBackend::wait_for(Category c) { wait_streams({c}); }

void CudaBackend::wait_streams(const std::vector<Category>& streams) {
  // Poll instead of cudaStreamSynchronize: a peer that never joins a collective would block
  // that call forever, while polling lets us see NCCL's asynchronous errors and the timeout.
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    bool busy = false;
    for (Category c : streams) {
      const cudaError_t rc = cudaStreamQuery(stream(c));
      if (rc == cudaErrorNotReady) {
        busy = true;
      } else if (rc != cudaSuccess) {
        COMMPROF_CUDA_CHECK(rc);
      }
    }
    if (!busy) return;
    for (NcclCommunicator* comm : communicators_) {
      const ncclResult_t state = comm->async_error();
      if (state != ncclSuccess && state != ncclInProgress) {
        const std::string what = ncclGetErrorString(state);
        const std::string name = comm->name();
        abandon();
        const bool aborted = abort_all_within(communicators_, kAbortWaitSeconds);
        throw DeviceError(log::cat("NCCL reported an asynchronous error on communicator '", name,
                                   "' on ", log::identity(), " after ", last_comm_op_, ": ", what,
                                   aborted ? "" : "; ", aborted ? "" : abort_timeout_text()));
      }
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > options_.timeout_s) {
      // A stuck COMM stream is the cause when the others wait on its events: name it first.
      if (cudaStreamQuery(stream(Category::kComm)) == cudaErrorNotReady) {
        abort_on_timeout(Category::kComm);
      }
      for (Category c : streams) {
        if (cudaStreamQuery(stream(c)) == cudaErrorNotReady) abort_on_timeout(c);
      }
    }
    std::this_thread::yield();
  }
}

void CudaBackend::abandon() {
  // Work may still run on the device (a kernel waiting for a peer): freeing its memory or
  // destroying its streams would block or pull memory from under it.
  abandoned_->store(true);
}

std::string CudaBackend::abort_timeout_text() {
  return log::cat("ncclCommAbort did not return within ", kAbortWaitSeconds,
                  " s (NCCL waits for the other ranks on this node to abort too), so the job ends "
                  "without it");
}

void CudaBackend::abort_on_timeout(Category stuck) {
  abandon();
  const bool aborted = abort_all_within(communicators_, kAbortWaitSeconds);
  throw TimeoutError(log::cat("the ", category_name(stuck), " stream on ", log::identity(),
                              " did not finish within --timeout ", options_.timeout_s,
                              " s; last op enqueued on the COMM stream: ", last_comm_op_,
                              " (a peer rank may have stopped participating); ",
                              aborted ? "NCCL communicators aborted" : abort_timeout_text()));
}

void CudaBackend::begin_epoch() {
  synchronize();
  stamps_used_ = 0;
  syncs_used_ = 0;
  if (activity_) {
    activity_->collect(true);
    activity_->clear();
    activity_pending_ = false;
  }
  // Every stream is idle, so the origin completes at once: stamps on any stream are measured
  // from it with cudaEventElapsedTime and are never negative.
  origin_host_ns_ = host_now_ns();
  COMMPROF_CUDA_CHECK(cudaEventRecord(origin_, stream(Category::kComp)));
  COMMPROF_CUDA_CHECK(cudaEventSynchronize(origin_));
}

ActivityRecorder* CudaBackend::activity() { return activity_ ? this : nullptr; }

CudnnAttention* CudaBackend::cudnn() const {
  if (!cudnn_opened_) {
    cudnn_opened_ = true;
    cudnn_ = CudnnAttention::open(cudnn_unavailable_);
  }
  return cudnn_.get();
}

std::string CudaBackend::dtype_problem(DType dtype) const {
  if (dtype != DType::kBFloat16 && dtype != DType::kFloat16) {
    return log::cat("cuDNN's flash attention takes bf16 or fp16, not ", dtype_name(dtype));
  }
  return "";
}

std::string CudaBackend::unavailable_reason(Capability capability) const {
  switch (capability) {
    case Capability::kActivity:
      return activity_ ? "" : activity_problem_;
    case Capability::kGraphs:
      return "";
    case Capability::kAttention:
      return cudnn() != nullptr ? "" : "cuDNN is unavailable: " + cudnn_unavailable_;
    case Capability::kCostModel:
      return cost_model_ ? "" : cost_model_problem_;
  }
  return "unknown capability";
}

std::optional<ActivitySpan> CudaBackend::span(std::uint64_t tag) {
  if (!activity_) return std::nullopt;
  if (activity_pending_) {
    activity_->collect(false);
    activity_pending_ = false;
  }
  std::optional<TaggedSpan> span = activity_->span(tag);
  if (!span) {
    // A buffer CUPTI still holds open is only handed over by a forced flush.
    activity_->collect(true);
    span = activity_->span(tag);
  }
  if (!span) return std::nullopt;
  return ActivitySpan{span->start_ns - origin_host_ns_, span->end_ns - origin_host_ns_};
}

void CudaBackend::pause(bool paused) {
  if (!activity_) return;
  synchronize();
  activity_->set_recording(!paused);
}

std::int64_t CudaBackend::stamp_ns(StampId stamp) const {
  if (stamp >= stamps_used_) throw Error(log::cat("unknown stamp ", stamp));
  float ms = 0.0f;
  COMMPROF_CUDA_CHECK(cudaEventElapsedTime(&ms, origin_, stamp_events_[stamp]));
  return static_cast<std::int64_t>(static_cast<double>(ms) * 1e6);
}

BackendInfo cuda_backend_info() {
  BackendInfo info;
  info.name = "cuda";
  info.description = "CUDA streams and events, NCCL collectives, cuBLAS GEMM";
  info.mpi_thread_level = MPI_THREAD_FUNNELED;  // only the main thread calls MPI
  info.unavailable_reason = []() -> std::optional<std::string> {
    const VisibleDevices visible = visible_cuda_devices();
    if (visible.count == 0) return visible.problem;
    return std::nullopt;
  };
  info.create = [](RankContext& ctx, const BackendOptions& options) {
    return std::unique_ptr<Backend>(std::make_unique<CudaBackend>(ctx, options));
  };
  return info;
}

}  // namespace commprof
