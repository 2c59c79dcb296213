// SPDX-License-Identifier: MIT
#include "analysis/report/step_timelines.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {
namespace {

// The measured step `step` of a rank, if it has it.
const StepPoint* point_of(const RankSummary& s, int step) {
  for (const StepPoint& p : s.step_points)
    if (p.index == step && !p.warmup) return &p;
  return nullptr;
}

// Keeps the ops of one measured step while a rank file streams past.
class StepPicker final : public RankStepSink {
 public:
  explicit StepPicker(int index) : index_(index) {}
  void header(const RankTimeline&) override {}
  void step(const StepView& step) override {
    if (!found_ && !step.warmup && step.index == index_) found_ = to_step_record(step);
  }
  void end() override {}
  void restart() override { found_.reset(); }
  std::optional<StepRecord> take() { return std::move(found_); }

 private:
  int index_;
  std::optional<StepRecord> found_;
};

}  // namespace

int choose_timeline_step(const Report& report, int requested) {
  std::map<int, std::int64_t> slowest;  // step index → its slowest rank's wall, steps with ops
  for (const RankSummary& s : report.ranks) {
    for (const StepPoint& p : s.step_points) {
      if (p.warmup || p.ops == 0) continue;
      auto [it, fresh] = slowest.try_emplace(p.index, p.wall_ns);
      if (!fresh) it->second = std::max(it->second, p.wall_ns);
    }
  }
  if (requested >= 0) {
    if (slowest.count(requested) != 0) return requested;
    std::string have;
    for (const auto& [index, wall] : slowest) {
      if (have.size() > 60) {
        have += ", ...";
        break;
      }
      have += (have.empty() ? "" : ", ") + std::to_string(index);
    }
    throw Error(
        "--timeline-step " + std::to_string(requested) +
        ": no rank measured that step with per-op timing" +
        (have.empty() ? std::string(" (no step has ops)") : " (steps with ops: " + have + ")"));
  }
  int best = -1;
  std::int64_t best_wall = -1;
  for (const auto& [index, wall] : slowest) {
    if (wall > best_wall) {
      best = index;
      best_wall = wall;
    }
  }
  return best;
}

std::vector<int> choose_timeline_ranks(const Report& report, int step, int always_rank, int count) {
  std::vector<std::pair<std::int64_t, int>> by_wall;  // (wall, rank)
  for (const RankSummary& s : report.ranks) {
    if (const StepPoint* p = point_of(s, step)) by_wall.emplace_back(p->wall_ns, s.rank);
  }
  std::sort(by_wall.begin(), by_wall.end());
  std::set<int> chosen;
  for (const auto& [wall, rank] : by_wall) {
    if (rank == always_rank && count > 0) chosen.insert(rank);
  }
  // Slowest, fastest, second slowest, second fastest, ... until `count`.
  std::size_t lo = 0, hi = by_wall.size();
  bool take_slow = true;
  while (static_cast<int>(chosen.size()) < count && lo < hi) {
    const int rank = take_slow ? by_wall[--hi].second : by_wall[lo++].second;
    chosen.insert(rank);
    take_slow = !take_slow;
  }
  std::vector<int> out;
  for (auto it = by_wall.rbegin(); it != by_wall.rend(); ++it) {
    if (chosen.count(it->second) != 0) out.push_back(it->second);
  }
  return out;
}

void load_step_timelines(
    Report& report, const TimelineOptions& options,
    const std::function<std::optional<StepRecord>(const RankSummary&, int step)>& read_step) {
  report.timelines.clear();
  report.timeline_step = choose_timeline_step(report, options.step);
  if (report.timeline_step < 0) return;
  for (int rank :
       choose_timeline_ranks(report, report.timeline_step, options.always_rank, options.ranks)) {
    const auto summary = std::find_if(report.ranks.begin(), report.ranks.end(),
                                      [&](const RankSummary& s) { return s.rank == rank; });
    std::optional<StepRecord> step = read_step(*summary, report.timeline_step);
    if (!step) continue;
    report.timelines.push_back({rank, summary->host, summary->clock_offset_ns, std::move(*step)});
  }
}

void load_step_timelines_from_files(Report& report, const TimelineOptions& options) {
  std::vector<std::string> unreadable;
  load_step_timelines(report, options, [&](const RankSummary& s, int step) {
    StepPicker picker(step);
    try {
      stream_rank_file(s.source, picker);
    } catch (const std::exception& e) {
      unreadable.push_back(e.what());
      return std::optional<StepRecord>{};
    }
    return picker.take();
  });
  for (const std::string& why : unreadable) {
    report.warnings.push_back(
        "the timeline leaves out a rank whose file could not be read again: " + why);
  }
}

}  // namespace commprof
