// SPDX-License-Identifier: MIT
#include "analysis/step_metrics.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace commprof {

namespace {

// The one implementation: fills the canonical unions in `scratch`, then measures them.
template <class Op>
StepMetrics measure(int index, bool warmup, std::int64_t start_ns, std::int64_t end_ns,
                    const std::vector<Op>& ops, StepScratch& scratch) {
  StepMetrics m;
  m.index = index;
  m.warmup = warmup;
  std::vector<Interval>* by_category[3] = {nullptr, nullptr, nullptr};
  by_category[index_of(Category::kComp)] = &scratch.comp;
  by_category[index_of(Category::kComm)] = &scratch.comm;
  by_category[index_of(Category::kMem)] = &scratch.mem;
  for (std::vector<Interval>* v : by_category) v->clear();
  std::int64_t lo = start_ns;
  std::int64_t hi = end_ns;
  for (const Op& op : ops) {
    by_category[index_of(op.category)]->push_back({op.start_ns, op.end_ns});
    lo = std::min(lo, op.start_ns);
    hi = std::max(hi, op.end_ns);
  }
  for (std::vector<Interval>* v : by_category) make_canonical(*v);
  // ∪ all ops = ∪ of the three unions.
  scratch.busy.clear();
  for (std::vector<Interval>* v : by_category) {
    scratch.busy.insert(scratch.busy.end(), v->begin(), v->end());
  }
  make_canonical(scratch.busy);
  m.wall_ns = hi - lo;
  m.comp_ns = total_length(scratch.comp);
  m.comm_ns = total_length(scratch.comm);
  m.mem_ns = total_length(scratch.mem);
  m.busy_ns = total_length(scratch.busy);
  m.comm_comp_ns = intersection_length(scratch.comm, scratch.comp);
  m.exposed_comm_ns = m.comm_ns - m.comm_comp_ns;  // |A \ B| = |A| − |A ∩ B|
  m.idle_ns = m.wall_ns - m.busy_ns;
  if (m.comm_ns > 0) {
    m.overlap = static_cast<double>(m.comm_comp_ns) / static_cast<double>(m.comm_ns);
  }
  const std::int64_t smaller = std::min(m.comm_ns, m.comp_ns);
  if (smaller > 0) {
    m.hidden_fraction = static_cast<double>(m.comm_comp_ns) / static_cast<double>(smaller);
  }
  return m;
}

}  // namespace

StepMetrics compute_step_metrics(const StepRecord& step, StepIntervals* intervals) {
  StepScratch scratch;
  const StepMetrics m =
      measure(step.index, step.warmup, step.start_ns, step.end_ns, step.ops, scratch);
  if (intervals != nullptr) {
    *intervals =
        StepIntervals{IntervalSet(std::move(scratch.comp)), IntervalSet(std::move(scratch.comm)),
                      IntervalSet(std::move(scratch.mem))};
  }
  return m;
}

StepMetrics compute_step_metrics(const StepView& step, StepScratch& scratch) {
  static const std::vector<OpView> kNone;
  return measure(step.index, step.warmup, step.start_ns, step.end_ns,
                 step.ops != nullptr ? *step.ops : kNone, scratch);
}

StepMetrics compute_step_metrics(std::int64_t start_ns, std::int64_t end_ns,
                                 const std::vector<OpSpan>& ops, StepScratch& scratch) {
  return measure(0, false, start_ns, end_ns, ops, scratch);
}

bool compute_known(const std::string& backend) { return backend != "nccl-profiler"; }

std::string steps_from(const JsonObject& config) {
  const nlohmann::ordered_json& j = config.json();
  if (!j.is_object() || !j.contains("step_cut") || !j["step_cut"].is_object()) return "";
  const nlohmann::ordered_json& d = j["step_cut"];
  return d.contains("description") && d["description"].is_string()
             ? d["description"].get<std::string>()
             : "";
}

void plugin_counts(const JsonObject& config, RankSummary& s) {
  const nlohmann::ordered_json& j = config.json();
  s.back_to_back = back_to_back_from_json(j);
  if (!j.is_object() || !j.contains("communicators") || !j["communicators"].is_array()) return;
  s.plugin_calls = s.plugin_timed = s.plugin_dropped = 0;
  for (const auto& c : j["communicators"]) {
    if (!c.is_object()) continue;
    s.plugin_calls += c.value("calls", std::int64_t{0});
    s.plugin_timed += c.value("timed", std::int64_t{0});
    s.plugin_dropped += c.value("dropped", std::int64_t{0});
  }
}

void add_step(RankSummary& s, const StepMetrics& m, std::int64_t ops) {
  ++s.steps;
  s.ops += ops;
  // A plugin capture's steps with a timed call are no slower than those without (the plugin
  // times none of the step's work; a sampled one's steps mostly have none): every step is plain.
  const bool plugin = !compute_known(s.backend);
  if (ops == 0 || plugin) s.plain_wall_ns.add(static_cast<double>(m.wall_ns));
  if (ops == 0) return;  // no per-op timing: its busy times are unknown, not zero
  ++s.timed_steps;
  s.timed_wall_ns.add(static_cast<double>(m.wall_ns));
  s.comm_ns.add(static_cast<double>(m.comm_ns));
  // A capture of communication alone: what needs compute (or every op) is unknown, no sample.
  if (!compute_known(s.backend)) return;
  s.comp_ns.add(static_cast<double>(m.comp_ns));
  s.mem_ns.add(static_cast<double>(m.mem_ns));
  s.busy_ns.add(static_cast<double>(m.busy_ns));
  s.comm_comp_ns.add(static_cast<double>(m.comm_comp_ns));
  s.exposed_comm_ns.add(static_cast<double>(m.exposed_comm_ns));
  s.idle_ns.add(static_cast<double>(m.idle_ns));
  if (m.overlap) s.overlap.add(*m.overlap);
  if (m.hidden_fraction) s.hidden_fraction.add(*m.hidden_fraction);
}

StepPoint step_point(int index, bool warmup, std::size_t ops, std::int64_t start_ns,
                     std::int64_t clock_offset_ns, const StepMetrics& m) {
  StepPoint p;
  p.index = index;
  p.warmup = warmup;
  p.ops = static_cast<std::int32_t>(std::min<std::size_t>(ops, INT32_MAX));
  p.start_ns = start_ns + clock_offset_ns;
  p.wall_ns = m.wall_ns;
  if (m.overlap) p.overlap = static_cast<float>(*m.overlap);
  return p;
}

void finish_summary(RankSummary& s) {
  s.wall_ns = s.plain_wall_ns.count > 0 ? s.plain_wall_ns : s.timed_wall_ns;
}

int pipeline_stage(int rank, const JsonObject& config) {
  const nlohmann::ordered_json& j = config.json();
  auto degree = [&](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
  };
  const int tp = degree("tp"), dp = degree("dp"), pp = degree("pp");
  if (pp < 2 || tp < 1 || dp < 1 || rank < 0) return -1;
  const int stage = rank / (tp * dp);
  return stage < pp ? stage : -1;
}

RankSummary summarise_rank(const RankTimeline& t, const std::string& source,
                           const StepVisitor& visit) {
  RankSummary s;
  s.rank = t.rank;
  s.world_size = t.world_size;
  s.host = t.host;
  s.device = t.device;
  s.backend = t.backend;
  s.source = source;
  s.steps_from = steps_from(t.config);
  plugin_counts(t.config, s);
  s.clock_offset_ns = t.clock_offset_ns;
  s.pp_stage = pipeline_stage(t.rank, t.config);
  HtaScope hta;
  for (const StepRecord& step : t.steps) {
    StepIntervals intervals;
    const StepMetrics m = compute_step_metrics(step, visit ? &intervals : nullptr);
    s.step_points.push_back(
        step_point(step.index, step.warmup, step.ops.size(), step.start_ns, t.clock_offset_ns, m));
    if (!compute_known(s.backend)) s.step_points.back().overlap = -1.0f;  // unknown
    if (step.warmup) {
      ++s.warmup_steps;
      continue;
    }
    if (visit) visit(step, m, intervals);
    add_step(s, m, static_cast<std::int64_t>(step.ops.size()));
    hta.add_step(step.ops);
  }
  s.hta = hta.figures();
  finish_summary(s);
  return s;
}

}  // namespace commprof
