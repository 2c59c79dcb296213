// SPDX-License-Identifier: MIT
#include "analysis/graph/critical_report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analysis/graph/critical_path.hpp"

namespace commprof {
namespace {

std::string described_collective(const GraphCollective& c) {
  return c.collective + " " + c.comm + " #" + std::to_string(c.seq);
}

// A send or receive by the op's name and its rank, with the peers it waited for.
std::string described_transfer(const StepGraph& g, int op) {
  const GraphOp& o = g.ops[static_cast<std::size_t>(op)];
  std::string s = o.name + " on rank " + std::to_string(o.rank) + " (with rank";
  const char* sep = " ";
  for (const int p : o.partners) {
    s += sep + std::to_string(g.ops[static_cast<std::size_t>(p)].rank);
    sep = ", ";
  }
  return s + ")";
}

}  // namespace

CriticalStepSummary summarize_critical_step(const StepGraph& g, const GraphTimes& t) {
  const CriticalPath p = critical_path(g, t);
  const StepOutcome o = step_outcome(g, t);
  CriticalStepSummary out;
  CriticalStepRow& row = out.row;
  row.step = g.step;
  row.step_ns = o.step_ns;
  row.path_ns = p.length_ns();
  row.exposed_comm_ns = o.exposed_comm_ns;
  std::set<int> ranks;
  out.path.step = g.step;
  for (const PathSegment& s : p.segments) {
    const GraphOp& op = g.ops[static_cast<std::size_t>(s.op)];
    ranks.insert(op.rank);
    out.path.segments.push_back(
        CriticalSegment{op.rank, op.index, s.gap, op.category, op.name, s.start_ns, s.end_ns});
    out.comms.push_back(op.comm);
    if (s.gap) {
      row.gap_ns += s.length_ns();
    } else {
      ++row.ops;
      (op.category == Category::kComp   ? row.comp_ns
       : op.category == Category::kComm ? row.comm_ns
                                        : row.mem_ns) += s.length_ns();
    }
  }
  row.ranks = static_cast<std::int64_t>(ranks.size());
  if (p.straggler) {
    const StragglerCause& c = *p.straggler;
    const GraphOp& cause = g.ops[static_cast<std::size_t>(c.op < 0 ? 0 : c.op)];
    row.straggler_rank = c.rank;
    row.straggler_at =
        c.collective >= 0
            ? described_collective(g.collectives[static_cast<std::size_t>(c.collective)])
            : described_transfer(g, c.transfer);
    row.straggler_late_ns = c.late_ns;
    if (c.op >= 0) {
      row.straggler_cause = c.gap ? "host gap before " + cause.name
                                  : cause.name + " (" + category_name(cause.category) + ")";
      row.straggler_excess_ns = std::max(0.0, c.excess_ns);
    }
  }
  out.waits = g.ops_with_waits;
  out.incomplete = g.incomplete;
  out.unmatched = g.unmatched_transfers;
  out.no_peers = g.transfers_without_peers;
  return out;
}

void CriticalPathRows::add(const StepGraph& g, const GraphTimes& t) {
  add(summarize_critical_step(g, t));
}

void CriticalPathRows::add(CriticalStepSummary step) {
  const CriticalStepRow& row = step.row;
  for (std::size_t n = 0; n < step.path.segments.size(); ++n) {
    const CriticalSegment& s = step.path.segments[n];
    const std::string category = s.gap ? "gap" : category_name(s.category);
    const auto key = std::tie(s.rank, category, s.name, step.comms[n]);
    const auto at =
        std::lower_bound(index_.begin(), index_.end(), key, [&](std::size_t i, const auto& k) {
          const CriticalShareRow& r = shares_[i].row;
          return std::tie(r.rank, r.category, r.op, r.comm) < k;
        });
    Share* share = nullptr;
    if (at != index_.end()) {
      const CriticalShareRow& r = shares_[*at].row;
      if (std::tie(r.rank, r.category, r.op, r.comm) == key) share = &shares_[*at];
    }
    if (share == nullptr) {
      const std::size_t fresh = shares_.size();
      shares_.push_back(
          {CriticalShareRow{s.rank, category, s.name, step.comms[n], 0.0, 0.0, 0}, -1, 0.0});
      index_.insert(at, fresh);
      share = &shares_[fresh];
    }
    share->total_ns += static_cast<double>(s.end_ns - s.start_ns);
    if (share->last_step != row.step) {
      share->last_step = row.step;
      ++share->row.steps;
    }
  }
  total_ns_ += static_cast<double>(row.path_ns);
  waits_ += step.waits;
  incomplete_ += step.incomplete;
  unmatched_ += step.unmatched;
  no_peers_ += step.no_peers;
  steps_.push_back(std::move(step.row));
  paths_.push_back(std::move(step.path));
}

void CriticalPathRows::finish(Report& report) {
  const double n = static_cast<double>(std::max<std::size_t>(1, steps_.size()));
  std::vector<CriticalShareRow> shares;
  shares.reserve(shares_.size());
  for (Share& s : shares_) {
    s.row.mean_ns = s.total_ns / n;
    s.row.share = total_ns_ > 0 ? s.total_ns / total_ns_ : 0.0;
    shares.push_back(std::move(s.row));
  }
  std::stable_sort(shares.begin(), shares.end(),
                   [](const CriticalShareRow& a, const CriticalShareRow& b) {
                     if (a.mean_ns != b.mean_ns) return a.mean_ns > b.mean_ns;
                     return std::tie(a.rank, a.category, a.op, a.comm) <
                            std::tie(b.rank, b.category, b.op, b.comm);
                   });
  std::string note;
  if (!steps_.empty() && waits_ == 0) {
    note = "no recorded waits: stream order and collective matching alone";
  }
  if (incomplete_ > 0) {
    note += std::string(note.empty() ? "" : "; ") + std::to_string(incomplete_) +
            " collective(s) recorded by fewer ranks than their communicator has";
  }
  if (unmatched_ > 0) {
    note += std::string(note.empty() ? "" : "; ") + std::to_string(unmatched_) +
            " transfer(s) whose other side no rank recorded";
  }
  if (no_peers_ > 0) {
    note += std::string(note.empty() ? "" : "; ") + std::to_string(no_peers_) +
            " send(s) and receive(s) without their peers, which order nothing across ranks";
  }
  report.critical_steps = std::move(steps_);
  report.critical_shares = std::move(shares);
  report.critical_note = std::move(note);
  report.critical_paths = std::move(paths_);
  steps_.clear();
  paths_.clear();
  shares_.clear();
  index_.clear();
}

void add_critical_paths(Report& report, const std::vector<StepGraph>& graphs) {
  CriticalPathRows rows;
  for (const StepGraph& g : graphs) rows.add(g, measured_times(g));
  rows.finish(report);
}

void add_critical_paths_or_warn(Report& report, StepGraphBuilder& builder,
                                const std::string& problem) {
  if (problem.empty()) {
    add_critical_paths(report, builder.finish());
  } else {
    report.warnings.push_back("no critical path: " + problem);
  }
}

}  // namespace commprof
