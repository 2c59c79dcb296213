// SPDX-License-Identifier: MIT
// What the parts of the nsys importer share (not a public interface): the export's table names,
// a step's time range, and the bounds every time read from an export must stay within.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/nsys/sqlite_reader.hpp"
#include "analysis/nsys_rules.hpp"

namespace commprof::nsys {

inline constexpr const char* kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr const char* kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr const char* kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr const char* kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr const char* kNvtxTable = "NVTX_EVENTS";
/// An NVTX row's text: inline, or a registered string's through textId.
inline constexpr const char* kNvtxText =
    "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))";

/// How errors name an activity row, by ActivityKind.
inline constexpr const char* kActivityRow[] = {"a kernel activity", "a memcpy activity",
                                               "a memset activity"};
static_assert(static_cast<int>(ActivityKind::kMemset) == 2, "kActivityRow follows ActivityKind");

/// One step: an NVTX range of the export, on the export's clock.
struct StepRange {
  std::int64_t start = 0;
  std::int64_t end = 0;
  int index = 0;
  bool warmup = false;
};

/// Times as rank files keep them (within +-2^60 ns, src/timeline/op_record.hpp): a damaged
/// export fails here, naming the file and what was out of bounds, instead of yielding rank files
/// that `commprof report` would refuse. `what` (+ `detail`) names the row; the message is only
/// built on failure, since this runs for every activity of the export.
std::int64_t bounded_time(const Db& db, std::int64_t t, const char* what, const char* detail = "");

/// A start and end read from one row: each bounded, the end not before the start.
void check_span(const Db& db, std::int64_t start, std::int64_t end, const char* what);

/// "1,2,3": ids for an SQL `IN (...)`.
std::string in_list(const std::vector<std::int64_t>& ids);

}  // namespace commprof::nsys
