// SPDX-License-Identifier: MIT
// The stragglers of a job whose collectives all completed: per measured step, the rank whose late
// arrival at its collectives made the others wait longest, and what it spent the time on.
#include <algorithm>

#include "analysis/diagnosis.hpp"
#include "src/core/log.hpp"
#include "src/timeline/category.hpp"

namespace commprof::diagnosis {
namespace {

std::string ms(double ns) {
  return log::cat(static_cast<double>(static_cast<std::int64_t>(ns / 1e3)) / 1e3, " ms");
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Why `rank` was late in `step`: the category its busy time exceeds the other ranks' median by
// most, and its longest op of that category.
std::string cause(const Part& part, int rank, int step) {
  const RankFacts::Step& mine = part.ranks.at(rank).steps.at(step);
  double best = 0;
  std::string out = "no category of its own work took longer than on the other ranks";
  for (Category c : kAllCategories) {
    std::vector<double> others;
    for (const auto& [r, facts] : part.ranks) {
      const auto s = facts.steps.find(step);
      if (r != rank && s != facts.steps.end())
        others.push_back(static_cast<double>(s->second.busy[index_of(c)]));
    }
    const double excess = static_cast<double>(mine.busy[index_of(c)]) - median(others);
    if (excess > best && c != Category::kComm) {  // COMM time is the others' wait, not a cause
      best = excess;
      out = log::cat(
          "its ", category_name(c), " took ", ms(excess), " longer than the median rank's (",
          ms(static_cast<double>(mine.busy[index_of(c)])), " against ", ms(median(others)),
          "); its longest ", category_name(c), " op: ", mine.longest_name[index_of(c)]);
    }
  }
  return out;
}

}  // namespace

std::vector<Problem> stragglers(const Part& part, const Options& options) {
  // Per step and rank, the mean wait its late arrivals caused each other rank.
  std::map<int, std::map<int, double>> caused;
  for (const auto& [key, s] : part.keys) {
    const auto n = static_cast<double>(s.finished.size());
    if (key.function == "p2p" || n < 2 || s.latest_rank < 0 || s.step < 0) continue;
    const double wait = (n * static_cast<double>(s.latest_start) - s.sum_start) / (n - 1);
    caused[s.step][s.latest_rank] += wait;
  }
  std::vector<Problem> out;
  for (const auto& [step, by_rank] : caused) {
    const auto worst =
        std::max_element(by_rank.begin(), by_rank.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<double> lengths;
    bool warmup = false;
    for (const auto& [r, facts] : part.ranks) {
      const auto s = facts.steps.find(step);
      if (s == facts.steps.end()) continue;
      lengths.push_back(static_cast<double>(s->second.length));
      warmup = warmup || s->second.warmup;
    }
    const double length = median(lengths);
    if (warmup || length <= 0 || worst->second < options.straggler_share * length ||
        part.ranks.at(worst->first).steps.count(step) == 0)
      continue;
    Problem p;
    p.kind = "straggler";
    p.step = step;
    p.ranks = std::to_string(worst->first);
    p.cost_ns = worst->second;
    p.verdict = log::cat("straggler in step ", step, ": rank ", worst->first,
                         " (the others waited ", ms(worst->second), " for it at its collectives, ",
                         static_cast<int>(100 * worst->second / length), "% of the step)");
    p.evidence = cause(part, worst->first, step);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace commprof::diagnosis
