// SPDX-License-Identifier: MIT
#include "workloads/prediction/what_if.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "analysis/collective_matching.hpp"
#include "analysis/graph/critical_path.hpp"
#include "analysis/graph/critical_report.hpp"
#include "analysis/group_time.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

[[noreturn]] void bad_rule(const std::string& text, const std::string& why) {
  throw ConfigError("invalid --scale '" + text + "': " + why +
                    " (expected [rankR:]KIND[[GROUP]]=FACTOR, KIND comp, comm, mem or gap, e.g. "
                    "comp=0.8, 'comm[dp]=0.5', rank3:comp=1.2)");
}

bool kind_matches(const ScaleRule& r, const GraphOp& op) {
  if (r.rank >= 0 && r.rank != op.rank) return false;
  if (r.kind == "comp") return op.category == Category::kComp;
  if (r.kind == "mem") return op.category == Category::kMem;
  if (r.kind != "comm" || op.category != Category::kComm) return false;
  return r.group.empty() || r.group == op.comm || r.group == group_of(op.comm);
}

std::int64_t times(std::int64_t ns, double factor) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(ns) * factor));
}

}  // namespace

ScaleRule parse_scale_rule(const std::string& text) {
  ScaleRule r;
  r.text = text;
  std::string rest = text;
  const std::size_t eq = rest.find('=');
  if (eq == std::string::npos) bad_rule(text, "no '='");
  const std::string value = rest.substr(eq + 1);
  rest = rest.substr(0, eq);
  try {
    std::size_t used = 0;
    r.factor = std::stod(value, &used);
    if (used != value.size()) bad_rule(text, "the factor '" + value + "' is not a number");
  } catch (const std::logic_error&) {
    bad_rule(text, "the factor '" + value + "' is not a number");
  }
  if (!std::isfinite(r.factor) || r.factor < 0) bad_rule(text, "the factor must be 0 or more");
  if (rest.rfind("rank", 0) == 0) {
    const std::size_t colon = rest.find(':');
    if (colon == std::string::npos) bad_rule(text, "'rank' without ':'");
    const std::string digits = rest.substr(4, colon - 4);
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      bad_rule(text, "'rank" + digits + "' is not a rank");
    }
    r.rank = std::stoi(digits);
    rest = rest.substr(colon + 1);
  }
  const std::size_t open = rest.find('[');
  if (open != std::string::npos) {
    if (rest.back() != ']' || open + 2 > rest.size() - 1) bad_rule(text, "an unclosed '['");
    r.group = rest.substr(open + 1, rest.size() - open - 2);
    rest = rest.substr(0, open);
    if (rest != "comm") bad_rule(text, "only comm takes a [GROUP]");
  }
  if (rest != "comp" && rest != "comm" && rest != "mem" && rest != "gap") {
    bad_rule(text, "unknown kind '" + rest + "'");
  }
  r.kind = rest;
  return r;
}

ReplayModel scaled_model(const StepGraph& g, ReplayModel m, const std::vector<ScaleRule>& rules) {
  std::vector<double> member_factor(g.collectives.size(), 0.0);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    double factor = 1.0, gap = 1.0;
    for (const ScaleRule& r : rules) {
      if (kind_matches(r, op)) factor *= r.factor;
      if (r.kind == "gap" && (r.rank < 0 || r.rank == op.rank)) gap *= r.factor;
    }
    m.gap_ns[i] = times(m.gap_ns[i], gap);
    if (op.collective_id < 0) {
      m.op_ns[i] = times(m.op_ns[i], factor);
    } else {
      double& f = member_factor[static_cast<std::size_t>(op.collective_id)];
      f = std::max(f, factor);
    }
  }
  for (std::size_t c = 0; c < g.collectives.size(); ++c) {
    for (const int k : g.collectives[c].members) {
      const auto i = static_cast<std::size_t>(k);
      m.op_ns[i] = times(m.op_ns[i], member_factor[c]);
    }
  }
  return m;
}

namespace {

// Sums one step's figures into `f`; `overlaps` counts the steps with an overlap.
void add_step(WhatIfFigures& f, int& overlaps, const StepGraph& g, const GraphTimes& t) {
  const StepOutcome o = step_outcome(g, t);
  const CriticalPath p = critical_path(g, t);
  f.step_ns += static_cast<double>(o.step_ns);
  f.exposed_comm_ns += o.exposed_comm_ns;
  f.comm_ns += o.comm_ns;
  f.path_ns += static_cast<double>(p.length_ns());
  for (const PathSegment& s : p.segments) {
    if (s.gap) f.gap_ns += static_cast<double>(s.length_ns());
  }
  if (o.overlap) {
    f.overlap = f.overlap.value_or(0.0) + *o.overlap;
    ++overlaps;
  }
}

void to_means(WhatIfFigures& f, std::int64_t steps, int overlaps) {
  const double n = static_cast<double>(std::max<std::int64_t>(1, steps));
  f.step_ns /= n;
  f.exposed_comm_ns /= n;
  f.comm_ns /= n;
  f.path_ns /= n;
  f.gap_ns /= n;
  if (f.overlap) *f.overlap /= overlaps;
}

}  // namespace

StepGraph serialized(StepGraph g) {
  for (const GraphRank& r : g.ranks) {
    for (int k = 1; k < r.ops; ++k) {
      WaitList& preds = g.ops[static_cast<std::size_t>(r.first_op + k)].preds;
      const int before = r.first_op + k - 1;
      if (std::find(preds.begin(), preds.end(), before) == preds.end()) preds.push_back(before);
    }
  }
  return g;
}

WhatIf what_if(const std::vector<StepGraph>& graphs, const std::vector<ScaleRule>& rules,
               bool serialize) {
  WhatIf w;
  CriticalPathRows paths;
  int overlaps[3] = {0, 0, 0};
  for (const StepGraph& g : graphs) {
    const ReplayModel model = measured_model(g);
    // The changed graph keeps the measured durations and gaps: only the order is new.
    const StepGraph changed = serialize ? serialized(g) : StepGraph();
    const StepGraph& target = serialize ? changed : g;
    const GraphTimes predicted = replay(target, scaled_model(g, model, rules));
    add_step(w.measured, overlaps[0], g, measured_times(g));
    add_step(w.replayed, overlaps[1], g, replay(g, model));
    add_step(w.predicted, overlaps[2], target, predicted);
    paths.add(target, predicted);
    ++w.steps;
  }
  to_means(w.measured, w.steps, overlaps[0]);
  to_means(w.replayed, w.steps, overlaps[1]);
  to_means(w.predicted, w.steps, overlaps[2]);
  paths.finish(w.paths);
  return w;
}

}  // namespace commprof
