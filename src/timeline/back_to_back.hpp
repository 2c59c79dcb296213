// SPDX-License-Identifier: MIT
// Runs of back-to-back calls in a plugin capture: nccl-tests times a loop of the same collective
// issued back to back (the kernel, its launch and the gap to the next call, over the calls), where
// NCCL's profiler plugin times each call's kernel channels alone. Two timed calls of one
// communicator with only like calls between them give that loop's time per call: their starts'
// distance over the calls apart.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/timeline/op_record.hpp"

namespace commprof {

/// One call of a communicator by its number there (the plugin's sequence number). The names are
/// views of the caller's strings, which outlive the call to back_to_back_runs: a sampled capture
/// lists up to about a million untimed calls a rank, and copying their names only to hand them
/// over cost two allocations a call.
struct NumberedKind {
  std::string_view comm;
  std::int64_t seq = 0;
  std::string_view collective;
  std::uint64_t bytes = 0;
  int in_place = -1;  ///< as OpRecord::in_place
};

/// Σ over the pairs of one collective and size on communicators of `comm_size` ranks.
struct BackToBackSums {
  std::string collective;
  int comm_size = 0;
  std::uint64_t bytes = 0;
  std::int64_t pairs = 0;
  std::int64_t calls = 0;    ///< Σ calls apart
  std::int64_t span_ns = 0;  ///< Σ start-to-start
  /// As OpRecord::in_place: nccl-tests runs an out-of-place loop, then an in-place one, of each
  /// size, and an all-gather's in-place loop ran 6-8% faster on 2 H200s.
  int in_place = -1;
};

/// A timed call's period to the next like call is back to back when it is at most this many
/// times its own kernel time: the GPU went from one to the next (nccl-tests' loops on 2 H200: 1.35
/// at 1 MiB, 1.08 at 16 MiB); FSDP's like all-gathers with a layer's compute between are not.
inline constexpr double kBackToBackMaxRatio = 1.5;

/// The pairs of consecutive timed calls (`ops`: the capture's) of one communicator, of the same
/// collective and size, with only like calls between them (`untimed`: the calls the plugin
/// listed untimed; a number in neither is an unknown call and breaks the run), whose period is
/// back to back. A timed call whose GPU times are another's is left out: NCCL keeps each
/// channel's last 64 works' times in a ring its proxy thread reads, and a proxy more than 64
/// works behind the GPU reads a later work's times (NCCL 2.28, src/plugin/profiler.cc): such a
/// call carries the times of a later call of its communicator, or starts after one.
std::vector<BackToBackSums> back_to_back_runs(const std::vector<OpRecord>& ops,
                                              const std::vector<NumberedKind>& untimed);

/// As the rank file's configuration holds them ("back_to_back") and back.
nlohmann::ordered_json back_to_back_json(const std::vector<BackToBackSums>& sums);
std::vector<BackToBackSums> back_to_back_from_json(const nlohmann::ordered_json& config);

}  // namespace commprof
