// SPDX-License-Identifier: MIT
#include "src/backend/host/host_backend.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "src/backend/backend_info.hpp"
#include "src/backend/host/host_adamw.hpp"
#include "src/backend/host/host_attention.hpp"
#include "src/backend/host/host_communicator.hpp"
#include "src/backend/host/host_gemm.hpp"
#include "src/backend/host/host_wait.hpp"
#include "src/backend/host/mpi_collectives.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <class T>
void fill_typed(T* out, std::size_t count, const FillPattern& p) {
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<T>(fill_value(p, i));
}

template <class T>
std::uint64_t mismatches_typed(const T* in, std::size_t count, const ExpectPattern& e) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    wrong += static_cast<double>(in[i]) != expected_value(e, i) ? 1 : 0;
  }
  return wrong;
}

// One piece of work, run on its stream's worker thread: one overload per kind of Work, so a
// new kind without one here does not compile. `comm` is the call's MPI communicator, looked up
// at submission; `gemm_scratch` the stream's own.
struct RunOnThread {
  MPI_Comm comm;
  GemmScratch* gemm_scratch;
  void operator()(const CollectiveCall& call) const { run_mpi_collective(call, comm); }
  void operator()(const P2PCall& call) const { run_mpi_p2p(call, comm); }
  void operator()(const ElementwiseCall& call) const { host_elementwise(call); }
  void operator()(const AdamwCall& call) const { host_adamw(call); }
  void operator()(const AttentionCall& call) const { host_attention(call); }
  void operator()(const ComputeCall& call) const { host_compute(call); }
  void operator()(const GemmCall& call) const { host_gemm(call, *gemm_scratch); }
  void operator()(const CopyCall& call) const { std::memcpy(call.dst, call.src, call.bytes); }
  void operator()(const MemsetCall& call) const { std::memset(call.dst, call.value, call.bytes); }
};

}  // namespace

/// A one-shot flag set by a stream reaching record_event() and awaited by wait_event().
struct HostBackend::Signal {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
};

HostBackend::HostBackend(RankContext& ctx, const BackendOptions& options)
    : options_(options),
      activity_(options.activity_timing && ctx.rank() != options.test_no_activity_rank),
      world_(std::make_unique<HostCommunicator>(ctx.comm(), "world", abandoned_)) {
  for (Category c : kAllCategories) {
    streams_[index_of(c)] = std::make_unique<HostStream>(category_name(c));
    gemm_scratch_[index_of(c)] = std::make_shared<GemmScratch>();
  }
  origin_ns_ = now_ns();
}

HostBackend::~HostBackend() = default;

std::string HostBackend::device_description() const { return "cpu"; }

bool HostBackend::supports(DType dtype) const {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kInt32 ||
         dtype == DType::kInt64;
}

Buffer HostBackend::allocate(std::size_t bytes, MemorySpace space) {
  // 64-byte alignment, as cudaMalloc gives at least 256: vector loads never straddle lines.
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* data = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (data == nullptr) {
    throw Error(log::cat("host allocation of ", bytes, " bytes failed on ", log::identity()));
  }
  // After a stream timed out, its work may still be running (a collective with a peer that
  // stopped participating never returns) and would write into freed memory: from then on the
  // memory is left to the process's end, which the aborted job reaches soon (tsan found the
  // executor's buffers freed under a running GEMM in the hung-peer test).
  return Buffer(data, bytes, space, [abandoned = abandoned_](void* p) {
    if (!abandoned->load()) std::free(p);
  });
}

void HostBackend::fill(void* data, DType dtype, std::size_t count, const FillPattern& pattern) {
  switch (dtype) {
    case DType::kFloat32:
      return fill_typed(static_cast<float*>(data), count, pattern);
    case DType::kFloat64:
      return fill_typed(static_cast<double*>(data), count, pattern);
    case DType::kInt32:
      return fill_typed(static_cast<std::int32_t*>(data), count, pattern);
    case DType::kInt64:
      return fill_typed(static_cast<std::int64_t*>(data), count, pattern);
    default:
      throw ConfigError(std::string("host backend cannot fill ") + dtype_name(dtype));
  }
}

std::uint64_t HostBackend::count_mismatches(const void* data, DType dtype, std::size_t count,
                                            const ExpectPattern& expected) {
  switch (dtype) {
    case DType::kFloat32:
      return mismatches_typed(static_cast<const float*>(data), count, expected);
    case DType::kFloat64:
      return mismatches_typed(static_cast<const double*>(data), count, expected);
    case DType::kInt32:
      return mismatches_typed(static_cast<const std::int32_t*>(data), count, expected);
    case DType::kInt64:
      return mismatches_typed(static_cast<const std::int64_t*>(data), count, expected);
    default:
      throw ConfigError(std::string("host backend cannot check ") + dtype_name(dtype));
  }
}

Communicator& HostBackend::world() { return *world_; }

void HostBackend::submit(Category c, const Work& work, const OpLabel& label) {
  // The host backend has no NVTX consumer worth feeding; the label names the op in errors.
  last_label_[index_of(c)] = label.seq >= 0 ? log::cat(label.name, " #", label.seq) : label.name;
  // The MPI communicator is looked up now, not when the stream gets to the work: the
  // Communicator object may be gone by then if a timeout unwound its owner (see allocate()).
  MPI_Comm comm = MPI_COMM_NULL;
  if (const auto* coll = std::get_if<CollectiveCall>(&work)) {
    comm = static_cast<HostCommunicator*>(coll->comm)->comm();
  } else if (const auto* p2p = std::get_if<P2PCall>(&work)) {
    comm = static_cast<HostCommunicator*>(p2p->comm)->comm();
  }
  ActivitySpan* span = nullptr;
  if (activity_ && label.activity_tag != 0) {
    span_of_tag_[label.activity_tag] = spans_.size();
    span = &spans_.emplace_back();
  }
  const std::int64_t origin = origin_ns_;
  // The task shares the scratch: a GEMM still running after a timeout unwound the backend keeps
  // its memory alive (see allocate()).
  stream(c).enqueue_work([work, comm, span, origin, scratch = gemm_scratch_[index_of(c)]] {
    if (span != nullptr) span->start_ns = now_ns() - origin;
    std::visit(RunOnThread{comm, scratch.get()}, work);
    if (span != nullptr) span->end_ns = now_ns() - origin;
  });
}

ActivityRecorder* HostBackend::activity() { return activity_ ? this : nullptr; }

std::string HostBackend::dtype_problem(DType dtype) const {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64
             ? ""
             : std::string("the host backend computes attention in float or double, not ") +
                   dtype_name(dtype);
}

std::string HostBackend::unavailable_reason(Capability capability) const {
  switch (capability) {
    case Capability::kActivity:
      if (activity_) return "";
      return options_.activity_timing ? kActivityWithheldByTestHook
                                      : "activity timing was not requested";
    case Capability::kGraphs:
      return "the host backend has no graphs to capture (CUDA graphs: --backend cuda)";
    case Capability::kAttention:
      return "";
    case Capability::kCostModel:
      return "MPI has no cost model to ask (NCCL's estimate: --backend cuda)";
  }
  return "unknown capability";
}

std::optional<ActivitySpan> HostBackend::span(std::uint64_t tag) {
  const auto it = span_of_tag_.find(tag);
  if (it == span_of_tag_.end()) return std::nullopt;
  return spans_[it->second];
}

void HostBackend::idle_for(Category c, std::uint64_t ns) {
  stream(c).enqueue_control([ns] { wait_on_host(ns); });
}

StampId HostBackend::stamp(Category c) {
  stamps_.push_back(0);
  std::int64_t* slot = &stamps_.back();
  const std::int64_t origin = origin_ns_;
  stream(c).enqueue_control([slot, origin] { *slot = now_ns() - origin; });
  return static_cast<StampId>(stamps_.size() - 1);
}

EventId HostBackend::record_event(Category c) {
  signals_.emplace_back();
  Signal* signal = &signals_.back();
  stream(c).enqueue_control([signal] {
    {
      std::lock_guard<std::mutex> lock(signal->mutex);
      signal->done = true;
    }
    signal->cv.notify_all();
  });
  return static_cast<EventId>(signals_.size() - 1);
}

void HostBackend::wait_event(Category c, EventId event) {
  if (event >= signals_.size()) throw Error(log::cat("wait on unknown event ", event));
  Signal* signal = &signals_[event];
  stream(c).enqueue_control([signal] {
    std::unique_lock<std::mutex> lock(signal->mutex);
    signal->cv.wait(lock, [signal] { return signal->done; });
  });
}

void HostBackend::synchronize() {
  drain_streams({Category::kComm, Category::kMem, Category::kComp});
}

void HostBackend::wait_for(Category c) { drain_streams({c}); }

void HostBackend::drain_streams(const std::vector<Category>& streams) {
  // One deadline for all streams, COMM first (synchronize): when a peer stops participating,
  // COMM is the stream that hangs and the others only wait on its events, so the error names
  // the cause.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options_.timeout_s));
  std::exception_ptr first;
  for (Category c : streams) {
    try {
      const double left = std::max(
          0.0, std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count());
      if (!stream(c).drain_for(left)) {
        abandoned_->store(true);
        throw TimeoutError(log::cat("the ", category_name(c), " stream on ", log::identity(),
                                    " did not finish within --timeout ", options_.timeout_s,
                                    " s; last op submitted there: ", last_label_[index_of(c)],
                                    " (a peer rank may have stopped participating)"));
      }
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void HostBackend::begin_epoch() {
  synchronize();
  stamps_.clear();
  signals_.clear();
  spans_.clear();
  span_of_tag_.clear();
  origin_ns_ = now_ns();
}

std::int64_t HostBackend::stamp_ns(StampId stamp) const {
  if (stamp >= stamps_.size()) throw Error(log::cat("unknown stamp ", stamp));
  return stamps_[stamp];
}

BackendInfo host_backend_info() {
  BackendInfo info;
  info.name = "host";
  info.description = "CPU threads as streams, MPI collectives, memcpy, CPU GEMM";
  info.mpi_thread_level = MPI_THREAD_MULTIPLE;  // the COMM stream's thread calls MPI
  info.unavailable_reason = [] { return std::optional<std::string>(); };
  info.create = [](RankContext& ctx, const BackendOptions& options) {
    return std::unique_ptr<Backend>(std::make_unique<HostBackend>(ctx, options));
  };
  return info;
}

}  // namespace commprof
