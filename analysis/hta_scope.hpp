// SPDX-License-Identifier: MIT
// A rank's communication/computation overlap and temporal breakdown as Holistic Trace Analysis
// computes them (HolisticTraceAnalysis @ f4d0062: hta/analyzers/communication_analysis.py
// get_comm_comp_overlap, hta/analyzers/breakdown_analysis.py get_temporal_breakdown), so that a
// user can check commprof's figures against HTA's on the same trace:
// - scope: every op of the measured steps but the last (HTA keeps the GPU work launched before
//   the last ProfilerStep began; a rank file places each op in the step that launched it), all
//   of them where there is one step only (HTA filters nothing then); pooled, not per step;
// - each op rounded inward to whole microseconds, start up and end down (HTA's parser does so to
//   any trace with sub-microsecond times); an op that rounds to nothing takes no time;
// - overlap = |∪COMM ∩ ∪COMP| / |∪COMM|; the breakdown's span runs from the first op's start to
//   the last one's end: idle = span − |∪ every op|, compute = |∪COMP|, non-compute = the rest.
// commprof's own overlap is the mean of per-step ratios over every measured step, each step's
// ops as measured: the same formula, another aggregation (docs/analysis.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/interval_set.hpp"
#include "src/timeline/category.hpp"

namespace commprof {

/// A rank's pooled figures, as HTA computes them. Times in ns (whole microseconds).
struct HtaFigures {
  std::int32_t steps = 0;         ///< measured steps pooled
  std::int32_t steps_of = 0;      ///< measured steps of the rank
  std::int64_t comm_ns = 0;       ///< |∪COMM|
  std::int64_t comp_ns = 0;       ///< |∪COMP|
  std::int64_t comm_comp_ns = 0;  ///< |∪COMM ∩ ∪COMP|
  std::int64_t busy_ns = 0;       ///< |∪ every op|
  std::int64_t span_ns = 0;       ///< first start to last end
  /// comm_comp / comm; empty without COMM (HTA: NaN).
  std::optional<double> overlap() const;
  /// Parts of the span; empty without one.
  std::optional<double> idle() const;
  std::optional<double> compute() const;
  std::optional<double> non_compute() const;
};

/// Gathers a rank's measured steps in order and gives its HtaFigures. It holds the unions of the
/// steps pooled so far and of the latest step (which HTA leaves out unless it is the only one).
class HtaScope {
 public:
  /// One measured step's ops (anything with category, start_ns and end_ns).
  template <class Op>
  void add_step(const std::vector<Op>& ops) {
    fold_latest();
    for (std::vector<Interval>* v : {&latest_.comm, &latest_.comp, &latest_.all}) v->clear();
    latest_.first = INT64_MAX;
    latest_.last = INT64_MIN;
    for (const Op& op : ops) add_op(op.category, op.start_ns, op.end_ns);
    for (std::vector<Interval>* v : {&latest_.comm, &latest_.comp, &latest_.all}) {
      make_canonical(*v);
    }
    have_latest_ = true;
  }
  HtaFigures figures() const;

 private:
  struct Pool {
    std::vector<Interval> comm, comp, all;  // canonical
    std::int64_t first = INT64_MAX, last = INT64_MIN;
  };
  void add_op(Category category, std::int64_t start_ns, std::int64_t end_ns);
  void fold_latest();
  static HtaFigures measure(const Pool& pool);
  Pool pooled_, latest_;
  bool have_latest_ = false;
  std::int32_t pooled_steps_ = 0;
};

}  // namespace commprof
