// SPDX-License-Identifier: MIT
// What `commprof diagnose --watch` says as it re-diagnoses files a running job keeps rewriting
// (the NCCL profiler plugin's, every COMMPROF_PLUGIN_FLUSH_S; a flush with nothing new still
// sets the file's time): a collective in flight at one snapshot is normal, so a problem of the
// did-not-complete kinds is said only once a rank file changed after the problem was first
// seen and the same collective (communicator, function, sequence number) is still not
// complete: a stall, the job alive but stuck. Where no file has changed for `quiet_s` since it
// was seen, the job stopped writing (ended, or its processes died) and that is said instead;
// in between, nothing is said yet (refreshes may come faster than the job's flushes). A
// straggler is said when first seen. Each problem once.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/diagnosis.hpp"

namespace commprof::diagnosis {

class StallTracker {
 public:
  /// `quiet_s`: how long the files may stay unchanged before a job counts as stopped (two of
  /// its flush periods).
  explicit StallTracker(double quiet_s) : quiet_s_(quiet_s) {}
  /// One refresh at `now_s`: its problems and the newest change time of any rank file (both
  /// seconds on one clock). The lines to print, each problem's once.
  std::vector<std::string> refresh(const std::vector<Problem>& problems, double newest_change_s,
                                   double now_s);
  /// Whether any problem was said.
  bool said_any() const { return !said_.empty(); }

 private:
  double quiet_s_;
  std::map<std::string, double>
      open_;  // a not-complete problem's key -> the files' newest change when it was first seen
  std::set<std::string> said_;
};

}  // namespace commprof::diagnosis
