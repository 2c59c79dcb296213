// SPDX-License-Identifier: MIT
// The unit of a value in a field table (src/fields/field_table.hpp), as the row holds it;
// formats convert it for display and name it.
#pragma once

namespace commprof {

/// The unit of a field's value as the row holds it. (Named for the report, whose tables came
/// first: analysis/report_fields.hpp.)
enum class ReportUnit {
  kNs,      ///< a time or duration in ns
  kUs,      ///< a time in µs (bench's, as nccl-tests')
  kBytes,   ///< B
  kGBps,    ///< a bandwidth in GB/s (10⁹ B/s)
  kRatio,   ///< a fraction (1 = 100 %)
  kFactor,  ///< a multiple (a speed-up)
  kCount,   ///< a number of things (steps, ops, collectives)
  kRanks,   ///< a number of ranks
  kId,      ///< a number that names something: a rank, a sequence number
  kText,
  kFlag,   ///< yes or no
  kOfRow,  ///< the row's own unit (a row with a ReportUnit member `unit`: across ranks, the
           ///< unit of the metric the row summarises)
};

}  // namespace commprof
