// SPDX-License-Identifier: MIT
#include "workloads/prediction/source_runs.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <tuple>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "workloads/prediction/projection.hpp"

namespace commprof {
namespace {

// The first field where `a` and `b` differ ("model.layers"), with both values; "" where equal.
std::string first_difference(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b,
                             const std::string& path, std::string* va, std::string* vb) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const std::string at = path.empty() ? key : path + "." + key;
      if (!b.contains(key)) {
        *va = value.dump();
        *vb = "absent";
        return at;
      }
      std::string d = first_difference(value, b.at(key), at, va, vb);
      if (!d.empty()) return d;
    }
    for (const auto& [key, value] : b.items()) {
      if (!a.contains(key)) {
        *va = "absent";
        *vb = value.dump();
        return path.empty() ? key : path + "." + key;
      }
    }
    return "";
  }
  if (a == b) return "";
  *va = a.dump();
  *vb = b.dump();
  return path.empty() ? std::string("config") : path;
}

// A figure per key of `by_run` (each run's map), the median set through `apply`.
template <typename Key, typename Apply>
void combine_map(const std::vector<std::map<Key, double>>& by_run, Apply apply) {
  std::map<Key, std::vector<double>> values;
  for (const auto& m : by_run) {
    for (const auto& [k, v] : m) values[k].push_back(v);
  }
  for (const auto& [k, v] : values) apply(k, v);
}

std::string rate_unit(const std::string& cls) {
  return OverlapSlowdown::comp_kind(cls) == "flop" ? "TFLOP/s" : "GB/s";
}
// FLOP/ns to TFLOP/s; B/ns is GB/s as it is.
double rate_scale(const std::string& cls) {
  return OverlapSlowdown::comp_kind(cls) == "flop" ? 1e-3 : 1.0;
}

// One factor over the runs: `applied` holds, per run, the factor that run applies to the group
// (its own, or the level above's where it measured none at this level). The op counts are summed
// over `counted` (each run's factor of this very group, where it has one), so that they say what
// was measured here. A COMP factor (alone 1) takes the median slowdown. A COMM factor's alone
// ratio and slowdown are fitted together on a run (one odd alone op makes a low ratio and a large
// slowdown), so their medians taken apart could multiply two extremes; it takes instead the median
// of its time alone (the ratio) and of its time fully overlapped (ratio × (1 + slowdown)), and
// runs linearly between the two, as each run's factor does.
SlowdownFactor median_factor(const std::vector<const SlowdownFactor*>& applied,
                             const std::vector<const SlowdownFactor*>& counted,
                             const std::string& name, bool comm,
                             std::vector<CombinedFigure>* figures) {
  SlowdownFactor out;
  std::vector<double> alone, slowdown, full, overlap;
  for (const SlowdownFactor* f : applied) {
    alone.push_back(f->alone);
    slowdown.push_back(f->slowdown);
    full.push_back(f->factor(1.0));
    out.measured_slowdown = out.measured_slowdown || f->measured_slowdown;
  }
  for (const SlowdownFactor* f : counted) {
    if (f->overlapped_ops > 0) overlap.push_back(f->mean_overlap);
    out.alone_ops += f->alone_ops;
    out.overlapped_ops += f->overlapped_ops;
  }
  out.alone = median_of(alone);
  out.slowdown = median_of(slowdown);
  if (comm && out.alone > 0) out.slowdown = median_of(full) / out.alone - 1;
  out.mean_overlap = median_of(overlap);
  if (figures == nullptr) return out;
  if (comm) {
    figures->push_back(combined_figure("alone x " + name, "x", alone));
    figures->push_back(combined_figure("fully overlapped x " + name, "x", full));
  } else if (out.measured_slowdown) {
    figures->push_back(combined_figure("slowdown " + name, "ratio", slowdown, 1.0, false));
  }
  return out;
}

// Every key of `member` in any run, each run's factor for it as `lookup` finds what that run
// applies (nullptr: none).
template <typename Key, typename Lookup>
std::map<Key, SlowdownFactor> median_factors(const std::vector<OverlapSlowdown>& each,
                                             std::map<Key, SlowdownFactor> OverlapSlowdown::*member,
                                             Lookup lookup,
                                             const std::function<std::string(const Key&)>& name,
                                             bool comm, std::vector<CombinedFigure>* figures) {
  std::map<Key, std::vector<const SlowdownFactor*>> counted;
  for (const OverlapSlowdown& s : each) {
    for (const auto& [k, f] : s.*member) counted[k].push_back(&f);
  }
  std::map<Key, SlowdownFactor> out;
  for (const auto& [k, own] : counted) {
    std::vector<const SlowdownFactor*> applied;
    for (const OverlapSlowdown& s : each) {
      if (const SlowdownFactor* f = lookup(s, k)) applied.push_back(f);
    }
    out[k] = median_factor(applied, own, name(k), comm, figures);
  }
  return out;
}

// Compute rates per op class and per kind: the median rate over the runs that measured the
// class; its Throughput keeps every run's time and ops, its work set so that per_ns() is the
// median.
Throughput combine_throughput(const std::vector<const Throughput*>& ts, const std::string& name,
                              const std::string& unit, double scale,
                              std::vector<CombinedFigure>& figures) {
  Throughput t;
  std::vector<double> rates;
  for (const Throughput* x : ts) {
    if (x->per_ns() <= 0) continue;
    rates.push_back(x->per_ns());
    t.ns += x->ns;
    t.ops += x->ops;
  }
  t.work = median_of(rates) * t.ns;
  if (!rates.empty()) figures.push_back(combined_figure(name, unit, rates, scale));
  return t;
}

void combine_compute_rates(const std::vector<MeasuredRun>& runs, MeasuredRates& r,
                           std::vector<CombinedFigure>& figures) {
  std::map<std::string, std::vector<const Throughput*>> classes;
  for (const MeasuredRun& run : runs) {
    for (const auto& [cls, t] : run.rates.by_class) classes[cls].push_back(&t);
  }
  for (const auto& [cls, ts] : classes) {
    r.by_class[cls] =
        combine_throughput(ts, "rate " + cls, rate_unit(cls), rate_scale(cls), figures);
  }
  const std::pair<Throughput MeasuredRates::*, const char*> kinds[] = {
      {&MeasuredRates::gemm_flops, "GEMMs (FLOPs)"},
      {&MeasuredRates::attention_flops, "attention (FLOPs)"},
      {&MeasuredRates::pass_bytes, "memory-bound passes (bytes)"},
      {&MeasuredRates::copy_bytes, "copies (bytes)"}};
  for (const auto& [member, label] : kinds) {
    std::vector<const Throughput*> ts;
    for (const MeasuredRun& run : runs) ts.push_back(&(run.rates.*member));
    const bool flops = std::string(label).find("FLOPs") != std::string::npos;
    r.*member = combine_throughput(ts, std::string("rate, every op of ") + label,
                                   flops ? "TFLOP/s" : "GB/s", flops ? 1e-3 : 1.0, figures);
  }
}

// Host gaps per category.
void combine_gaps(const std::vector<MeasuredRun>& runs, MeasuredRates& r,
                  std::vector<CombinedFigure>& figures) {
  static const char* kCategory[] = {"COMP", "COMM", "MEM"};
  for (int c = 0; c < 3; ++c) {
    std::vector<double> gaps;
    for (const MeasuredRun& run : runs) gaps.push_back(static_cast<double>(run.rates.gap_ns[c]));
    r.gap_ns[c] = std::llround(median_of(gaps));
    figures.push_back(combined_figure(log::cat("host gap ", kCategory[c]), "us", gaps, 1e-3));
  }
}

// Collectives: each link-model point (collective, communicator kind, link, ranks, bytes) the
// median of its time over the runs that measured it; the run's own fit is made from those.
void combine_link_points(const std::vector<MeasuredRun>& runs, MeasuredRun& out) {
  MeasuredRates& r = out.rates;
  using PointKey = std::tuple<CollectiveKind, std::string, LinkClass, int, std::uint64_t>;
  std::vector<std::map<PointKey, double>> points;
  for (const MeasuredRun& run : runs) {
    std::map<PointKey, double>& m = points.emplace_back();
    for (const LinkSample& p : run.rates.collectives)
      m[{p.collective, p.group, p.link, p.ranks, p.bytes}] = p.time_us;
  }
  combine_map(points, [&](const PointKey& k, const std::vector<double>& times) {
    LinkSample p;
    std::tie(p.collective, p.group, p.link, p.ranks, p.bytes) = k;
    p.time_us = median_of(times);
    r.collectives.push_back(p);
    out.combined.push_back(combined_figure(
        log::cat("link point ", link_collective_name(p.collective), " ", p.group, " ",
                 link_class_name(p.link), " ", p.ranks, " ranks ", p.bytes, " B"),
        "us", times));
  });
  out.own_links = own_link_model(r.collectives, out.config.settings.link_probe,
                                 "the source runs' own collectives (medians)");
}

// The ranks' compute speeds. A rank slow in one run is often not slow in the next (on a shared
// machine the slow core moves), while the step waits for whichever rank is slowest: a median
// per rank id would shrink the spread that every run showed to nearly none. So the speeds are
// combined as order statistics: the k-th slowest speed is the median of the runs' k-th slowest,
// and it is given to the rank whose own median speed is k-th slowest (a rank that is slow in
// most runs, where it ran, keeps being the slow one).
void combine_rank_speeds(const std::vector<MeasuredRun>& runs, MeasuredRates& r,
                         std::vector<CombinedFigure>& figures) {
  const std::size_t n = runs.front().rates.rank_compute.size();
  bool aligned = n > 0;
  for (const MeasuredRun& run : runs) aligned = aligned && run.rates.rank_compute.size() == n;
  if (!aligned) return;
  std::vector<std::vector<double>> sorted;
  std::vector<double> own(n);
  for (const MeasuredRun& run : runs) {
    sorted.push_back(run.rates.rank_compute);
    std::sort(sorted.back().begin(), sorted.back().end(), std::greater<>());
  }
  for (std::size_t rank = 0; rank < n; ++rank) {
    std::vector<double> v;
    for (const MeasuredRun& run : runs) v.push_back(run.rates.rank_compute[rank]);
    own[rank] = median_of(v);
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return own[a] > own[b]; });
  r.rank_compute.assign(n, 1.0);
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<double> v;
    for (const std::vector<double>& s : sorted) v.push_back(s[k]);
    r.rank_compute[order[k]] = median_of(v);
    figures.push_back(combined_figure(
        log::cat("compute time / class rates, slowest rank ", k + 1, " (to rank ", order[k], ")"),
        "x", v));
  }
}

// The steps' compute jitter: every run's samples together. Each is a step's speed over its own
// run's rank speed, so runs of different speeds pool without one shifting the others. Shown, not
// applied: the ranks' step spread.
void combine_jitter_and_spread(const std::vector<MeasuredRun>& runs, MeasuredRates& r,
                               std::vector<CombinedFigure>& figures) {
  r.compute_jitter.clear();
  for (const MeasuredRun& run : runs) {
    r.compute_jitter.insert(r.compute_jitter.end(), run.rates.compute_jitter.begin(),
                            run.rates.compute_jitter.end());
  }
  std::vector<double> spreads;
  for (const MeasuredRun& run : runs) spreads.push_back(run.rates.step_spread);
  r.step_spread = median_of(spreads);
  figures.push_back(combined_figure("ranks' step spread (not applied)", "ratio", spreads));
}

// What the run itself measured: the run of median step (the lower middle of an even count), as
// --validate-runs compares with; every run's steps, files and observations.
void take_measured(const std::vector<MeasuredRun>& runs, MeasuredRun& out) {
  std::vector<std::size_t> by_step(runs.size());
  std::iota(by_step.begin(), by_step.end(), 0);
  std::stable_sort(by_step.begin(), by_step.end(), [&](std::size_t a, std::size_t b) {
    return runs[a].figures.measured.step_ns < runs[b].figures.measured.step_ns;
  });
  out.figures = runs[by_step[(by_step.size() - 1) / 2]].figures;
  std::vector<double> steps;
  for (const MeasuredRun& run : runs) {
    steps.push_back(run.figures.measured.step_ns);
    out.rates.steps += run.rates.steps;
    out.files.insert(out.files.end(), run.files.begin(), run.files.end());
    out.observations.insert(out.observations.end(), run.observations.begin(),
                            run.observations.end());
  }
  out.combined.push_back(
      combined_figure("measured step (the median run's printed)", "ms", steps, 1e-6));
}

}  // namespace

double CombinedFigure::spread() const {
  if (!relative) return max - min;
  return min > 0 ? max / min - 1 : 0.0;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

CombinedFigure combined_figure(const std::string& name, const std::string& unit,
                               const std::vector<double>& values, double scale, bool relative) {
  CombinedFigure f;
  f.name = name;
  f.unit = unit;
  f.relative = relative;
  f.runs = static_cast<int>(values.size());
  if (values.empty()) return f;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  f.min = *lo * scale;
  f.max = *hi * scale;
  f.median = median_of(values) * scale;
  return f;
}

void check_same_source(const MeasuredRun& first, const std::string& first_name,
                       const MeasuredRun& other, const std::string& other_name) {
  // Steps, warm-up and op timing may differ: they change how much a run measured, not what.
  const RunSettings settings;
  std::string va, vb;
  const std::string field =
      first_difference(run_config_json(first.config.workload, settings),
                       run_config_json(other.config.workload, settings), "", &va, &vb);
  if (!field.empty()) {
    throw ConfigError(other_name + ": not a run of the same source as " + first_name + ": " +
                      field + " is " + vb + " there, " + va + " in " + first_name +
                      " (every source run must be the same `commprof run` command: model, "
                      "workload, layout and options)");
  }
  if (other.rates.hosts != first.rates.hosts ||
      other.rates.ranks_per_host != first.rates.ranks_per_host) {
    throw ConfigError(log::cat(other_name, ": not a run of the same source as ", first_name,
                               ": hosts is ", other.rates.hosts, " (", other.rates.ranks_per_host,
                               " ranks per host) there, ", first.rates.hosts, " (",
                               first.rates.ranks_per_host, ") in ", first_name,
                               " (a communicator's link class would differ)"));
  }
}

MeasuredRun combine_runs(std::vector<MeasuredRun> runs) {
  if (runs.empty()) throw ConfigError("no source run to combine");
  if (runs.size() == 1) return std::move(runs.front());
  MeasuredRun out;
  const MeasuredRun& first = runs.front();
  out.config = first.config;
  MeasuredRates& r = out.rates;
  r.ranks = first.rates.ranks;
  r.hosts = first.rates.hosts;
  r.ranks_per_host = first.rates.ranks_per_host;
  combine_compute_rates(runs, r, out.combined);
  combine_gaps(runs, r, out.combined);
  combine_link_points(runs, out);
  combine_rank_speeds(runs, r, out.combined);
  combine_jitter_and_spread(runs, r, out.combined);
  take_measured(runs, out);
  out.sources = std::move(runs);
  return out;
}

OverlapSlowdown combine_slowdowns(const std::vector<OverlapSlowdown>& each,
                                  std::vector<CombinedFigure>* figures) {
  if (each.size() == 1) return each.front();
  OverlapSlowdown out;
  std::vector<std::map<std::string, double>> alone;
  for (const OverlapSlowdown& s : each) {
    alone.push_back(s.alone_rate);
    out.comm_without_fit += s.comm_without_fit;
  }
  combine_map(alone, [&](const std::string& cls, const std::vector<double>& rates) {
    out.alone_rate[cls] = median_of(rates);
    if (figures != nullptr) {
      figures->push_back(
          combined_figure("alone rate " + cls, rate_unit(cls), rates, rate_scale(cls)));
    }
  });
  // Each run's factor as that run applies it: a COMP class its own from kMinClassOps overlapped
  // ops on, else its kind's pooled one; a COMM group its own, else its communicator kind's, else
  // its collective's. A run that measured a group at a level above is still a sample of it.
  auto find = [](const auto& m, const auto& k) {
    const auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  out.comp_pooled = median_factors<std::string>(
      each, &OverlapSlowdown::comp_pooled,
      [&](const OverlapSlowdown& s, const std::string& k) { return find(s.comp_pooled, k); },
      [](const std::string& k) { return "COMP, every " + k + " class (pooled)"; }, false, figures);
  out.comp = median_factors<std::string>(
      each, &OverlapSlowdown::comp,
      [](const OverlapSlowdown& s, const std::string& k) { return &s.comp_factor(k); },
      [](const std::string& k) { return "COMP " + k; }, false, figures);
  out.comm_by_collective = median_factors<CollectiveKind>(
      each, &OverlapSlowdown::comm_by_collective,
      [&](const OverlapSlowdown& s, CollectiveKind k) { return find(s.comm_by_collective, k); },
      [](CollectiveKind k) { return log::cat("COMM ", link_collective_name(k), " (every kind)"); },
      true, nullptr);
  out.comm_by_kind = median_factors<std::pair<CollectiveKind, std::string>>(
      each, &OverlapSlowdown::comm_by_kind,
      [&](const OverlapSlowdown& s, const std::pair<CollectiveKind, std::string>& k) {
        const SlowdownFactor* f = find(s.comm_by_kind, k);
        return f != nullptr ? f : find(s.comm_by_collective, k.first);
      },
      [](const std::pair<CollectiveKind, std::string>& k) {
        return log::cat("COMM ", link_collective_name(k.first), " ", k.second, " (every size)");
      },
      true, nullptr);
  out.comm = median_factors<CommKey>(
      each, &OverlapSlowdown::comm,
      [](const OverlapSlowdown& s, const CommKey& k) { return s.comm_factor(k); },
      [](const CommKey& k) {
        return log::cat("COMM ", link_collective_name(k.collective), " ", k.group, " ",
                        size_class_name(k.size_class), k.inter_node ? " inter_node" : "");
      },
      true, figures);
  return out;
}

}  // namespace commprof
