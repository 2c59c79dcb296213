// SPDX-License-Identifier: MIT
#include "analysis/nsys/nsys_steps.hpp"

#include <regex>
#include <string>

namespace commprof::nsys {

namespace {

// Any export: the whole capture, from the first GPU activity's launch (its CUDA API call, where
// recorded: steps hold the activities launched within them) to the last one's end.
StepRange whole_capture(Db& db, const NsysSchema& schema) {
  Stmt s(db,
         "SELECT MIN(launch), MAX(end) FROM (" + activity_query(schema, /*ordered=*/false) + ")");
  if (!s.step() || s.null(0) || s.null(1)) {
    db.fail("no GPU activity (kernel, memcpy or memset) in the capture: nothing to import");
  }
  StepRange r;
  r.start = s.i64(0);
  r.end = s.i64(1);
  check_span(db, r.start, r.end, "the capture's GPU activity");
  return r;
}

}  // namespace

std::vector<StepRange> read_steps(Db& db, const NsysSchema& schema,
                                  const std::vector<std::int64_t>& commprof_domains,
                                  const NsysImportOptions& options) {
  std::vector<StepRange> steps;
  if (options.step_range.empty() && commprof_domains.empty()) {
    steps.push_back(whole_capture(db, schema));
    return steps;
  }
  if (!db.has_table(kNvtxTable)) {
    db.fail("no " + std::string(kNvtxTable) +
            " table, so no steps: profile with -t cuda,nvtx (commprof marks its steps in NVTX)");
  }
  const std::string text = kNvtxText;
  if (!options.step_range.empty()) {
    Stmt s(db, "SELECT n.start, n.end, " + text + " FROM " + kNvtxTable +
                   " n WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL ORDER BY n.start");
    while (s.step()) {
      const std::string t = s.text(2);
      if (t.compare(0, options.step_range.size(), options.step_range) != 0) continue;
      StepRange r;
      r.start = s.i64(0);
      r.end = s.i64(1);
      check_span(db, r.start, r.end, "an NVTX step range");
      r.index = static_cast<int>(steps.size());
      r.warmup = r.index < options.warmup_steps;
      steps.push_back(r);
    }
    if (steps.empty()) {
      db.fail("no NVTX range named '" + options.step_range + "...' (--step-range)");
    }
  } else {
    static const std::regex step_re(R"(^step ([0-9]+)( \(warm-up\))?$)");
    Stmt s(db, "SELECT n.start, n.end, " + text + " FROM " + kNvtxTable +
                   " n WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL AND n.category IS "
                   "NULL AND n.domainId IN (" +
                   in_list(commprof_domains) + ") ORDER BY n.start");
    while (s.step()) {
      std::smatch m;
      const std::string t = s.text(2);
      if (!std::regex_match(t, m, step_re)) continue;
      StepRange r;
      r.start = s.i64(0);
      r.end = s.i64(1);
      check_span(db, r.start, r.end, "an NVTX step range");
      r.index = std::stoi(m[1].str());
      r.warmup = m[2].matched;
      steps.push_back(r);
    }
    if (steps.empty()) db.fail("commprof NVTX domain present but no 'step N' ranges");
  }
  return steps;
}

}  // namespace commprof::nsys
