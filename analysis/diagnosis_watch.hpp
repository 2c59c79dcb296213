// SPDX-License-Identifier: MIT
// What `commprof diagnose --watch` says as it re-diagnoses files a running job keeps rewriting
// (the NCCL profiler plugin's, every COMMPROF_PLUGIN_FLUSH_S): a collective in flight at one
// snapshot is normal, so a problem of the did-not-complete kinds is said only when the same
// collective (communicator, function, sequence number) is still not complete at the next
// refresh and some rank file was rewritten in between: a stall, the job alive but stuck. Where
// no file was rewritten the job stopped writing (ended, or its processes died) and that is said
// instead. A straggler is said when first seen. Each problem once.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/diagnosis.hpp"

namespace commprof::diagnosis {

class StallTracker {
 public:
  /// One refresh: its problems and whether a rank file changed since the refresh before. The
  /// lines to print, each problem's once.
  std::vector<std::string> refresh(const std::vector<Problem>& problems, bool rewritten);
  /// Whether any problem was said.
  bool said_any() const { return !said_.empty(); }

 private:
  std::map<std::string, int>
      open_;  // a not-complete problem's key -> the refresh it was first seen
  std::set<std::string> said_;
  int refreshes_ = 0;
};

}  // namespace commprof::diagnosis
