// SPDX-License-Identifier: MIT
#include "analysis/diagnosis_watch.hpp"

#include "src/core/log.hpp"

namespace commprof::diagnosis {
namespace {

std::string key_of(const Problem& p) {
  return log::cat(p.kind, '|', p.comm, '|', p.function, '|', p.seq, '|', p.step, '|', p.ranks);
}

}  // namespace

std::vector<std::string> StallTracker::refresh(const std::vector<Problem>& problems,
                                               bool rewritten) {
  ++refreshes_;
  std::vector<std::string> lines;
  std::map<std::string, int> still;
  for (const Problem& p : problems) {
    const std::string key = key_of(p);
    if (p.kind == "straggler") {
      if (said_.insert(key).second) lines.push_back("straggler: " + p.verdict);
      continue;
    }
    const auto it = open_.find(key);
    const int first = it == open_.end() ? refreshes_ : it->second;
    still[key] = first;
    if (first == refreshes_ || said_.count(key) != 0) continue;
    said_.insert(key);
    lines.push_back(rewritten ? "stall: " + p.verdict
                              : "no rank file rewritten since the last refresh (the job ended "
                                "or its processes died): " +
                                    p.verdict);
  }
  open_ = std::move(still);  // a problem gone completed: a later one of the same key is new
  return lines;
}

}  // namespace commprof::diagnosis
