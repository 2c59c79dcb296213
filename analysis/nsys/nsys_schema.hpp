// SPDX-License-Identifier: MIT
// What an nsys export must hold for import-nsys (tables and columns, checked before any row is
// read, so a wrong file fails with one message naming what is missing) and the two queries the
// import streams: GPU activities in launch order, and commprof's op ranges in start order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/nsys/nsys_export.hpp"

namespace commprof::nsys {

/// The optional parts an export has.
struct NsysSchema {
  bool memcpy = false;      ///< CUPTI_ACTIVITY_KIND_MEMCPY
  bool memset = false;      ///< CUPTI_ACTIVITY_KIND_MEMSET
  bool runtime = false;     ///< CUPTI_ACTIVITY_KIND_RUNTIME: launches, to order by launch time
  bool nvtx = false;        ///< NVTX_EVENTS
  bool nvtx_int64 = false;  ///< NVTX_EVENTS.int64Value: the sequence numbers of tagged ranges
};

/// Checks the tables and columns the import reads; fails naming the first one missing.
NsysSchema check_schema(Db& db);

/// Kernels, memcpys and memsets with their launch (the runtime call of the same correlationId,
/// the GPU start without one), ordered by launch. Columns: kind, start, end, streamId, bytes,
/// ref (copyKind for memcpys), globalPid, launch, globalTid of the launch, kernel name.
/// `ordered` false leaves out the ORDER BY: for aggregates over it, which need no sort.
std::string activity_query(const NsysSchema& schema, bool ordered = true);

/// commprof's op ranges (push/pop and start/end ranges with a category) in `domains`, by
/// start. Columns: start, end, globalTid, category, text, uint64 payload, int64 payload.
std::string op_range_query(const NsysSchema& schema, const std::vector<std::int64_t>& domains);

}  // namespace commprof::nsys
