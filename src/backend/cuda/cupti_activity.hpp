// SPDX-License-Identifier: MIT
// Kernel, copy and memset times from CUPTI's activity records, attributed to commprof's ops by
// external correlation ids. The GPU timestamps its own work, so, unlike a pair of CUDA events,
// nothing is added to the streams and an op's time is its work's time, as nsys reports it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace commprof {

/// First start and last end of the device work tagged with one id, in CUPTI timestamps, which
/// commprof makes the host's steady clock (ns), the clock of epoch_origin_host_ns().
struct TaggedSpan {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

/// One per process: CUPTI's activity API is process-wide. libcupti is loaded at run time, so
/// commprof still runs where it is missing (activity timing is then unavailable, with the reason).
class CuptiActivity {
 public:
  /// Loads CUPTI and starts recording kernels, memcpys and memsets; nullptr with `why` set when
  /// CUPTI is missing or taken by another tool (Nsight Systems and Nsight Compute hold it).
  static std::unique_ptr<CuptiActivity> start(std::string* why);
  ~CuptiActivity();
  CuptiActivity(const CuptiActivity&) = delete;
  CuptiActivity& operator=(const CuptiActivity&) = delete;

  /// Work launched by this thread between push(tag) and pop() is attributed to `tag` (non-zero).
  void push(std::uint64_t tag);
  /// Never throws (it runs in destructors); a failure is logged, as the next op's times would be
  /// attributed wrongly.
  void pop() noexcept;

  /// Takes delivery of the records of finished work (call after the streams are synchronized);
  /// `forced` also takes buffers CUPTI still holds open. Throws if CUPTI dropped records.
  void collect(bool forced);
  /// The span of `tag`'s work among the records collected so far.
  std::optional<TaggedSpan> span(std::uint64_t tag) const;
  /// Forgets every record collected so far.
  void clear();
  /// Disables (false) or re-enables the activity kinds and the launch API callbacks that
  /// correlate work with tags; recording starts enabled.
  void set_recording(bool on);

  /// Called by CUPTI's buffer-completed callback (any thread): parses one buffer.
  void take_buffer(std::uint8_t* buffer, std::size_t valid_bytes);

  struct Library;  // CUPTI's entry points (defined in the .cpp)

 private:
  std::vector<int> driver_cbids_, runtime_cbids_;  ///< the launch API records enabled
  struct WorkRecord {
    std::uint32_t correlation;
    std::int64_t start_ns;
    std::int64_t end_ns;
  };
  explicit CuptiActivity(std::unique_ptr<Library> lib);
  // Kernel, memcpy and memset records name their times and launching call alike.
  template <typename Record>
  static WorkRecord work_record(const void* record);
  void join_locked() const;

  std::unique_ptr<Library> lib_;
  mutable std::mutex mutex_;
  // Kernel, memcpy and memset records, and the correlation ids of the API calls that launched
  // them mapped to commprof's tags; joined lazily because the two kinds arrive in any order.
  mutable std::vector<WorkRecord> work_;
  mutable std::unordered_map<std::uint32_t, std::uint64_t> tag_of_correlation_;
  mutable std::unordered_map<std::uint64_t, TaggedSpan> spans_;
  std::uint64_t dropped_ = 0;
};

}  // namespace commprof
