// SPDX-License-Identifier: MIT
// The one interface both backends implement: memory, communicators, and three in-order streams
// (COMP, COMM, MEM) that run work, record events for cross-stream dependencies and stamp the
// time at which they reach a point.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "collectives/pattern.hpp"
#include "src/backend/buffer.hpp"
#include "src/backend/category.hpp"
#include "src/backend/communicator.hpp"
#include "src/backend/work.hpp"
#include "src/core/dtype.hpp"

namespace commprof {

using StampId = std::uint32_t;
using EventId = std::uint32_t;

/// Run-time knobs every backend understands.
struct BackendOptions {
  bool annotate = true;      ///< NVTX ranges per op (cuda); free when no tool is attached
  double timeout_s = 300.0;  ///< a stream that does not drain within this aborts the run
};

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
  /// Enqueues a time stamp: the time at which the stream reaches this point.
  virtual StampId stamp(Category stream) = 0;
  /// Enqueues an event; a later wait_event() on another stream orders work after this point.
  virtual EventId record_event(Category stream) = 0;
  virtual void wait_event(Category stream, EventId event) = 0;
  /// Waits until every stream has run everything submitted; rethrows a failure of any of them.
  virtual void synchronize() = 0;

  /// Synchronizes, forgets earlier stamps and events, and starts a new time origin: stamps
  /// are nanoseconds since it on this rank's device clock.
  virtual void begin_epoch() = 0;
  /// Nanoseconds from the epoch origin to the stamp; valid after synchronize().
  virtual std::int64_t stamp_ns(StampId stamp) const = 0;
  /// The epoch origin on this rank's host steady clock (ns), to place epochs on one timeline.
  virtual std::int64_t epoch_origin_host_ns() const = 0;
};

}  // namespace commprof
