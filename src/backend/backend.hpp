// SPDX-License-Identifier: MIT
// The one interface both backends implement: memory, communicators, and three in-order streams
// (COMP, COMM, MEM) that run work, record events for cross-stream dependencies and stamp the
// time at which they reach a point.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "src/backend/buffer.hpp"
#include "src/backend/communicator.hpp"
#include "src/backend/work.hpp"
#include "src/collective/pattern.hpp"
#include "src/core/dtype.hpp"
#include "src/timeline/category.hpp"

namespace commprof {

using StampId = std::uint32_t;
using EventId = std::uint32_t;

/// Run-time knobs every backend understands.
struct BackendOptions {
  bool annotate = true;      ///< NVTX ranges per op (cuda); free when no tool is attached
  double timeout_s = 300.0;  ///< a stream that does not drain within this aborts the run
  /// Record when each tagged op's own work runs (see ActivityRecorder); cuda starts CUPTI
  /// for it before touching the GPU.
  bool activity_timing = false;
  /// Test hook (`run --test-no-activity-rank`): the backend of this rank offers no activity
  /// recorder, as where another profiler holds CUPTI, so that the ranks' agreement on op timing
  /// can be tested on any backend. -1: none.
  int test_no_activity_rank = -1;
};

/// Why activity() is null on the rank that test_no_activity_rank names.
inline constexpr char kActivityWithheldByTestHook[] =
    "activity records withheld on this rank by --test-no-activity-rank";

/// When an op's work ran: nanoseconds since the epoch origin.
struct ActivitySpan {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

/// A recorded sequence of work that replays as one launch (cuda: an instantiated CUDA graph).
class Graph {
 public:
  virtual ~Graph() = default;
};

/// Activity timing, the alternative to stamps around ops: the device itself records when the
/// work of an op submitted with a non-zero OpLabel::activity_tag starts and ends (cuda: CUPTI
/// kernel, memcpy and memset records; host: the stream's worker thread), so nothing is added to
/// the streams. An optional capability: Backend::activity().
class ActivityRecorder {
 public:
  virtual ~ActivityRecorder() = default;
  /// After synchronize(): from the first start to the last end of the work submitted with `tag`
  /// in this epoch; nullopt when none of it was recorded.
  virtual std::optional<ActivitySpan> span(std::uint64_t tag) = 0;
  /// Stops (true) or resumes the recording itself, streams idle: to measure what it costs.
  virtual void pause(bool paused) = 0;
};

/// Graph capture, as nccl-tests' -G: work submitted to `stream` between begin_capture() and
/// end_capture() is recorded, not run; replay() then enqueues all of it with one launch, so the
/// host's per-call launch cost leaves the timed loop. No stamps or events while capturing. An
/// optional capability: Backend::graphs().
class GraphCapture {
 public:
  virtual ~GraphCapture() = default;
  virtual void begin_capture(Category stream) = 0;
  virtual std::unique_ptr<Graph> end_capture(Category stream) = 0;
  virtual void replay(Category stream, const Graph& graph) = 0;
};

/// Fused scaled-dot-product attention: the backend runs an AttentionCall as one fused kernel
/// forward and one backward (cuda: cuDNN's flash attention; host: computed as defined). An
/// optional capability: Backend::attention(). Submitting an AttentionCall where it is null, or
/// of a type it refuses, throws ConfigError.
class AttentionRunner {
 public:
  virtual ~AttentionRunner() = default;
  /// Why AttentionCall of `dtype` cannot run ("" when it can): cuda takes bf16 or fp16, host
  /// fp32 or fp64.
  virtual std::string dtype_problem(DType dtype) const = 0;
};

/// The communication library's own estimate of a collective's time, from the model it tunes
/// with (cuda: NCCL's ncclGroupSimulateEnd, NCCL 2.22 and later), to set beside what was
/// measured. An optional capability: Backend::cost_model(). Collective on the call's
/// communicator where the library needs it so: every rank asks for the same calls in order.
class CostModel {
 public:
  virtual ~CostModel() = default;
  /// The estimated time of `call` on its own, in ns; nullopt where the model has none (NCCL
  /// models collectives, not grouped sends and receives, and not a communicator of one rank).
  virtual std::optional<double> estimate_ns(const CollectiveCall& call) = 0;
  /// The model's name and version, for reports ("NCCL 2.28.9 ncclGroupSimulateEnd").
  virtual std::string model_name() const = 0;
};

/// The optional capabilities a backend may offer.
enum class Capability { kActivity, kGraphs, kAttention, kCostModel };

/// A backend executes work on one device (a GPU, or the CPU for `host`) for one rank.
///
/// Streams are in order, as CUDA streams are; work on different streams may overlap unless an
/// event orders it. Submission never blocks on the device: only synchronize() waits.
///
/// \code
///   backend.begin_epoch();
///   StampId t0 = backend.stamp(Category::kComm);
///   backend.submit(Category::kComm, CollectiveCall{...}, {"allreduce", bytes});
///   StampId t1 = backend.stamp(Category::kComm);
///   backend.synchronize();
///   double us = (backend.stamp_ns(t1) - backend.stamp_ns(t0)) / 1e3;
/// \endcode
///
/// Not thread-safe: one thread (the rank's main thread) drives a backend.
class Backend {
 public:
  virtual ~Backend() = default;

  /// "host" or "cuda".
  virtual const char* name() const = 0;
  /// What a report shows as this rank's device, e.g. "cpu" or "NVIDIA H200 (0000:18:00.0)".
  virtual std::string device_description() const = 0;
  /// The device ordinal used (-1 for host).
  virtual int device_index() const = 0;
  /// Whether collectives of this element type can run here (the host backend's MPI has no
  /// bfloat16 or half sums, for example).
  virtual bool supports(DType dtype) const = 0;

  virtual Buffer allocate(std::size_t bytes, MemorySpace space) = 0;
  /// Writes `count` elements of `pattern` at `data`; synchronous, streams must be idle.
  virtual void fill(void* data, DType dtype, std::size_t count, const FillPattern& pattern) = 0;
  /// Counts elements of `data` that differ from `expected`; synchronous, streams must be idle.
  virtual std::uint64_t count_mismatches(const void* data, DType dtype, std::size_t count,
                                         const ExpectPattern& expected) = 0;

  /// All ranks of the job.
  virtual Communicator& world() = 0;

  /// Enqueues work on a stream.
  virtual void submit(Category stream, const Work& work, const OpLabel& label) = 0;
  /// Enqueues `ns` nanoseconds in which the stream runs nothing of its own: its next work starts
  /// that much after the stream gets here (a traced step's gap replayed, --compute-from). No op:
  /// nothing is recorded for it, and the device computes nothing for it (cuda: one thread
  /// polling the GPU clock; host: the stream's thread waiting).
  virtual void idle_for(Category stream, std::uint64_t ns) = 0;
  /// Enqueues a time stamp: the time at which the stream reaches this point.
  virtual StampId stamp(Category stream) = 0;
  /// Enqueues an event; a later wait_event() on another stream orders work after this point.
  virtual EventId record_event(Category stream) = 0;
  virtual void wait_event(Category stream, EventId event) = 0;
  /// Waits until every stream has run everything submitted; rethrows a failure of any of them.
  virtual void synchronize() = 0;
  /// Waits on the host until `stream` has run everything submitted to it so far (and so what it
  /// waited for on other streams): a framework reading a device value on the host (MoE routing
  /// counts, `.item()`). Same timeout and error reports as synchronize(); the other streams go on.
  virtual void wait_for(Category stream) = 0;

  /// Synchronizes, forgets earlier stamps and events, and starts a new time origin: stamps
  /// are nanoseconds since it on this rank's device clock.
  virtual void begin_epoch() = 0;
  /// Nanoseconds from the epoch origin to the stamp; valid after synchronize().
  virtual std::int64_t stamp_ns(StampId stamp) const = 0;
  /// The epoch origin on this rank's host steady clock (ns), to place epochs on one timeline.
  virtual std::int64_t epoch_origin_host_ns() const = 0;

  /// Optional capabilities: the interface, or null where this backend cannot offer it here;
  /// unavailable_reason() then says why. Activity timing is on only when BackendOptions asked
  /// for it and the device can record (cuda: CUPTI present and not held by nsys or ncu).
  virtual ActivityRecorder* activity() { return nullptr; }
  virtual GraphCapture* graphs() { return nullptr; }
  /// May load a library the first time it is asked (cuda: cuDNN).
  virtual AttentionRunner* attention() { return nullptr; }
  /// May resolve a library entry point the first time it is asked (cuda: NCCL's simulator).
  virtual CostModel* cost_model() { return nullptr; }
  /// Why `capability` is null here (not requested, CUPTI missing, no graphs on the host, no
  /// cuDNN); "" when it is available.
  virtual std::string unavailable_reason(Capability capability) const = 0;
};

/// Why AttentionCall of `dtype` cannot run on `backend`, "" when it can: the capability missing,
/// or the runner refusing the type.
inline std::string attention_problem(Backend& backend, DType dtype) {
  const AttentionRunner* runner = backend.attention();
  if (runner == nullptr) return backend.unavailable_reason(Capability::kAttention);
  return runner->dtype_problem(dtype);
}

}  // namespace commprof
