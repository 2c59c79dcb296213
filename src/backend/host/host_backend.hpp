// SPDX-License-Identifier: MIT
// The host backend: the stream/event model run by threads. COMM through MPI collectives on a
// communicator of its own, COMP through real CPU arithmetic, MEM through memcpy, timing with the
// steady clock. The embedded default wherever no GPU is visible.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/backend/backend.hpp"
#include "src/backend/host/host_stream.hpp"

namespace commprof {

class RankContext;
class HostCommunicator;
class GemmScratch;

class HostBackend final : public Backend, private ActivityRecorder, private AttentionRunner {
 public:
  HostBackend(RankContext& ctx, const BackendOptions& options);
  ~HostBackend() override;

  const char* name() const override { return "host"; }
  std::string device_description() const override;
  int device_index() const override { return -1; }
  bool supports(DType dtype) const override;

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
  std::int64_t epoch_origin_host_ns() const override { return origin_ns_; }
  ActivityRecorder* activity() override;
  AttentionRunner* attention() override { return this; }
  std::string unavailable_reason(Capability capability) const override;
  // AttentionRunner: computed as defined, in float or double (host_attention.cpp).
  std::string dtype_problem(DType dtype) const override;
  // ActivityRecorder: the worker threads' own clock reads around each task.
  std::optional<ActivitySpan> span(std::uint64_t tag) override;
  // Two clock reads per task cost nothing worth pausing for.
  void pause(bool) override {}

 private:
  /// synchronize() and wait_for(): drains `streams` in order within one --timeout.
  void drain_streams(const std::vector<Category>& streams);
  struct Signal;
  HostStream& stream(Category c) { return *streams_[index_of(c)]; }

  BackendOptions options_;
  // Activity timing requested and not withheld on this rank by the test hook.
  bool activity_ = false;
  // Set when a stream timed out with work in flight: buffers are no longer freed (allocate()),
  // communicators no longer released. Before world_, which is built with it.
  std::shared_ptr<std::atomic<bool>> abandoned_ = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<HostCommunicator> world_;
  std::array<std::unique_ptr<HostStream>, 3> streams_;
  // Per stream: where a GEMM's transposed operands go, kept across steps (host_gemm.hpp).
  std::array<std::shared_ptr<GemmScratch>, 3> gemm_scratch_;
  // Deques: elements keep their address while new ones are added, so worker threads may write
  // through pointers taken at submission time.
  std::deque<std::int64_t> stamps_;
  std::deque<Signal> signals_;
  // Activity timing: when each tagged op's task ran, written by its stream's worker thread.
  std::deque<ActivitySpan> spans_;
  std::unordered_map<std::uint64_t, std::size_t> span_of_tag_;
  std::int64_t origin_ns_ = 0;
  std::array<std::string, 3> last_label_;  // per stream, for timeout messages
};

}  // namespace commprof
