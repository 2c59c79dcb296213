// SPDX-License-Identifier: MIT
#include "analysis/diagnosis_watch.hpp"

#include <cstdio>

#include "src/core/log.hpp"

namespace commprof::diagnosis {
namespace {

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

std::string key_of(const Problem& p) {
  return log::cat(p.kind, '|', p.comm, '|', p.function, '|', p.seq, '|', p.step, '|', p.ranks);
}

}  // namespace

std::vector<std::string> StallTracker::refresh(const std::vector<Problem>& problems,
                                               double newest_change_s, double now_s) {
  std::vector<std::string> lines;
  std::map<std::string, double> still;
  for (const Problem& p : problems) {
    const std::string key = key_of(p);
    if (p.kind == "straggler") {
      if (said_.insert(key).second) lines.push_back("straggler: " + p.verdict);
      continue;
    }
    const auto it = open_.find(key);
    const bool seen_before = it != open_.end();
    const double seen_at = seen_before ? it->second : newest_change_s;
    still[key] = seen_at;
    if (!seen_before || said_.count(key) != 0) continue;
    if (newest_change_s > seen_at) {
      said_.insert(key);
      lines.push_back("stall: " + p.verdict);
    } else if (now_s - newest_change_s >= quiet_s_) {
      said_.insert(key);
      lines.push_back(log::cat("no rank file rewritten for ", seconds(now_s - newest_change_s),
                               " s (the job ended or its processes died): ", p.verdict));
    }
  }
  open_ = std::move(still);  // a problem gone completed: a later one of the same key is new
  return lines;
}

}  // namespace commprof::diagnosis
