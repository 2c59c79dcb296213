// SPDX-License-Identifier: MIT
#include "src/timeline/step_detection.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "src/core/errors.hpp"
#include "src/timeline/back_to_back.hpp"

namespace commprof {

namespace {

constexpr const char* kPluginBackend = "nccl-profiler";

// "AllReduce", "all_reduce" and "allreduce" alike.
std::string folded(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// z[i]: the length of the longest common prefix of s and s[i..] (z[0] = n).
std::vector<std::size_t> z_function(const std::vector<std::uint32_t>& s) {
  const std::size_t n = s.size();
  std::vector<std::size_t> z(n, 0);
  if (n > 0) z[0] = n;
  for (std::size_t i = 1, l = 0, r = 0; i < n; ++i) {
    if (i < r) z[i] = std::min(r - i, z[i - l]);
    while (i + z[i] < n && s[z[i]] == s[i + z[i]]) ++z[i];
    if (i + z[i] > r) l = i, r = i + z[i];
  }
  return z;
}

std::string two_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// One communicator's fit: its calls, the first bound's index, the period and the calls per step.
struct CommFit {
  std::string comm;
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> ends;    // -1: not timed
  std::vector<std::int64_t> bounds;  // the steps' bounds: step k runs from bounds[k] to [k + 1]
  std::size_t first = 0;
  std::size_t period = 0;
  std::size_t covered = 0;  // calls from the periodic suffix's start to the end
  double step_ns = 0.0;     // mean time from one step's bound to the next
};

// Moves the first bound to the phase of the period with the longest gaps before it (the time
// between steps: optimizer, data loading), where that phase's gaps stand out (1.5x the offset's).
// A gap runs from the previous call's end to this call's where both were timed: ends agree across
// ranks, where a start-to-start gap holds the rank's own wait in the call before (on 2 H200 the
// early rank of a DDP job took the step's second bucket for its first, the late one the first,
// so the two cut their steps one call apart). Otherwise (untimed calls) from start to start.
std::size_t phase_by_gaps(const CommFit& f, std::size_t offset, std::size_t period) {
  std::vector<double> gap(period, 0.0);
  std::vector<double> count(period, 0.0);
  for (std::size_t i = std::max<std::size_t>(offset, 1); i < f.starts.size(); ++i) {
    const std::size_t phase = (i - offset) % period;
    const bool ends = f.ends[i] >= 0 && f.ends[i - 1] >= 0;
    gap[phase] +=
        static_cast<double>(ends ? f.ends[i] - f.ends[i - 1] : f.starts[i] - f.starts[i - 1]);
    count[phase] += 1.0;
  }
  auto mean = [&](std::size_t p) { return count[p] > 0 ? gap[p] / count[p] : 0.0; };
  std::size_t best = 0;
  for (std::size_t p = 1; p < period; ++p) {
    if (mean(p) > mean(best)) best = p;
  }
  return mean(best) > 1.5 * mean(0) ? offset + best : offset;
}

// A period of equal calls (TP's per-layer all-reduces: every call the same) is a part of the
// step: where the long gaps between calls (4x the median's) recur every D calls, D a multiple of
// the period, D calls are the step, beginning after such a gap. Only where those gaps mark every
// step the calls span, two whole ones at least: on 2 H200 a sampled DDP capture (K = 3, 5 bucket
// all-reduces a step) had two step gaps over the threshold 125 calls apart, by chance, which
// made one step of 125 calls and left the rank without steps.
void refine_by_gaps(CommFit& f) {
  std::vector<std::int64_t> gaps;
  for (std::size_t i = f.first + 1; i < f.starts.size(); ++i)
    gaps.push_back(f.starts[i] - f.starts[i - 1]);
  if (gaps.size() < 3) return;
  std::vector<std::int64_t> sorted = gaps;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const std::int64_t threshold = 4 * std::max<std::int64_t>(sorted[sorted.size() / 2], 1);
  std::vector<std::size_t> at;  // the calls after a long gap
  for (std::size_t g = 0; g < gaps.size(); ++g) {
    if (gaps[g] > threshold) at.push_back(f.first + 1 + g);
  }
  if (at.size() < 2) return;
  const std::size_t d = at[1] - at[0];
  for (std::size_t k = 1; k < at.size(); ++k) {
    if (at[k] - at[k - 1] != d) return;
  }
  if (d <= f.period || d % f.period != 0) return;
  const std::size_t n = f.starts.size();
  if (at.front() - f.first > d || n - at.back() > d || n - at.front() < 2 * d) return;
  f.period = d;
  f.first += (at[0] - f.first) % d;
}

// Leading steps more than twice the median of the steps after them are warm-up in time though
// they issue the same calls as the others: FSDP's lazy initialisation, NCCL's connection setup
// and the allocator's first growth made the first step of a 2-GPU FSDP2 job 0.78 s where the
// others took 27 ms. Drops them from `bounds` (a step between each two), keeping two steps.
// The lengths are weighed at `at` (one time per bound, as `bounds`): times every rank shares
// where the capture has them, so that every rank drops the same steps.
void drop_slow_leading(std::vector<std::int64_t>& bounds, const std::vector<std::int64_t>& at) {
  std::size_t drop = 0;
  while (at.size() - drop >= 4) {
    std::vector<std::int64_t> rest;
    for (std::size_t k = drop + 1; k + 1 < at.size(); ++k) rest.push_back(at[k + 1] - at[k]);
    std::nth_element(rest.begin(), rest.begin() + rest.size() / 2, rest.end());
    if (at[drop + 1] - at[drop] <= 2 * rest[rest.size() / 2]) break;
    ++drop;
  }
  bounds.erase(bounds.begin(), bounds.begin() + static_cast<std::ptrdiff_t>(drop));
}

// The steps as the ends of their last calls, where every step's last call was timed: a
// collective ends at about the same time on every rank of its communicator, where its start is
// each rank's arrival, so every rank cuts its steps at the same calls and times them alike (on 2
// H200 the rank of a DDP job that waited in a step's first bucket had that step 17 ms longer by
// the buckets' starts). A step then runs from the previous step's last call's end to its own:
// its calls start after the first (one stream) and the last ends at the second. Empty where a
// step's last call was not timed (a sampled capture) or the calls before the first step are
// not yet periodic (the warm-up's last call, a broadcast, ends at different times).
std::vector<std::int64_t> bounds_by_ends(const CommFit& f, std::size_t offset) {
  std::vector<std::int64_t> bounds;
  std::size_t j = f.first + f.period - 1;  // the first step's last call
  if (f.first > offset) j = f.first - 1;   // the warm-up's last call, of the period's kinds
  for (; j < f.ends.size(); j += f.period) {
    if (f.ends[j] < 0 || (!bounds.empty() && f.ends[j] <= bounds.back())) return {};
    bounds.push_back(f.ends[j]);
  }
  if (bounds.size() < 2) return {};
  drop_slow_leading(bounds, bounds);
  return bounds;
}

// Where each step's first timed call sits at the same place in its step (one call in K timed,
// K a divisor of the period), those calls' ends, one per step: the same times on every rank. A
// start is the rank's arrival: on 2 H200 the rank of a sampled FSDP2 capture that reached the
// first periodic step's first call early waited there for the other, its step by starts came
// out twice the others' and was dropped as warm-up on that rank only, so the two ranks' step
// numbers named different steps. Empty otherwise.
std::vector<std::int64_t> shared_step_marks(const CommFit& f) {
  std::vector<std::int64_t> marks;
  std::size_t place = f.period;
  for (std::size_t i = f.first; i < f.ends.size(); i += f.period) {
    std::size_t j = 0;
    while (j < f.period && i + j < f.ends.size() && f.ends[i + j] < 0) ++j;
    if (i + j == f.ends.size() && i + f.period > f.ends.size()) break;  // a last step cut short
    if (j == f.period || (place != f.period && j != place)) return {};
    place = j;
    marks.push_back(f.ends[i + j]);
  }
  return marks;
}

// The steps as their first calls' starts (a sampled capture's calls placed on the GPU's time):
// every period's first call; the last step is left out, its end not seen.
std::vector<std::int64_t> bounds_by_starts(const CommFit& f) {
  std::vector<std::int64_t> bounds;
  for (std::size_t i = f.first; i < f.starts.size(); i += f.period) bounds.push_back(f.starts[i]);
  if (bounds.size() < 2) return {};
  const std::vector<std::int64_t> marks = shared_step_marks(f);
  drop_slow_leading(bounds,
                    marks.size() + 1 >= bounds.size() && marks.size() >= 4 ? marks : bounds);
  return bounds;
}

std::optional<CommFit> fit_comm(const std::string& comm,
                                const std::vector<const CommCall*>& calls) {
  std::map<std::pair<std::string, std::uint64_t>, std::uint32_t> id_of;
  std::vector<std::uint32_t> ids;
  CommFit fit;
  fit.comm = comm;
  for (const CommCall* c : calls) {
    const auto key = std::make_pair(folded(c->collective), c->bytes);
    ids.push_back(id_of.emplace(key, static_cast<std::uint32_t>(id_of.size())).first->second);
    fit.starts.push_back(c->start_ns);
    fit.ends.push_back(c->end_ns);
  }
  const PeriodFit p = find_period(ids);
  if (p.period == 0) return std::nullopt;
  fit.period = p.period;
  fit.covered = ids.size() - p.offset;
  fit.first = phase_by_gaps(fit, p.offset, p.period);
  refine_by_gaps(fit);
  if ((ids.size() - fit.first) / fit.period < 2) return std::nullopt;  // two whole steps at least
  fit.bounds = bounds_by_ends(fit, p.offset);
  if (fit.bounds.empty()) fit.bounds = bounds_by_starts(fit);
  if (fit.bounds.empty()) return std::nullopt;
  fit.step_ns = static_cast<double>(fit.bounds.back() - fit.bounds.front()) /
                static_cast<double>(fit.bounds.size() - 1);
  return fit;
}

// How far the steps can be trusted: the share of the calls the period covers, times the share
// of steps whose length is within 25% of the median step's.
double confidence_of(const CommFit& f, const std::vector<std::int64_t>& bounds) {
  std::vector<std::int64_t> lengths;
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
    if (bounds[k + 1] != std::numeric_limits<std::int64_t>::max())
      lengths.push_back(bounds[k + 1] - bounds[k]);
  }
  double regular = 1.0;
  if (!lengths.empty()) {
    std::vector<std::int64_t> sorted = lengths;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double median = static_cast<double>(sorted[sorted.size() / 2]);
    std::size_t near = 0;
    for (const std::int64_t l : lengths)
      near += std::abs(static_cast<double>(l) - median) <= 0.25 * median ? 1 : 0;
    regular = static_cast<double>(near) / static_cast<double>(lengths.size());
  }
  return regular * static_cast<double>(f.covered) / static_cast<double>(f.starts.size());
}

StepCut cut_by_marker(const std::vector<CommCall>& calls, const StepMarker& m) {
  if (m.comm.empty()) {
    StepCut whole;
    whole.note = std::string(kStepMarkerVariable) + "=none: the whole capture is one step";
    return whole;
  }
  StepCut cut;
  cut.method = StepMethod::kMarker;
  cut.comm = m.comm;
  cut.collective = m.collective;
  cut.confidence = 1.0;
  cut.bounds.push_back(std::numeric_limits<std::int64_t>::min());
  for (const CommCall& c : calls) {
    if ((c.comm == m.comm || c.comm == "comm-" + m.comm) && folded(c.collective) == m.collective)
      cut.bounds.push_back(c.start_ns + 1);  // the marker's call ends its step
  }
  if (cut.bounds.size() == 1) {
    StepCut whole;
    whole.note = "the marker " + m.comm + ":" + m.collective + " (" + kStepMarkerVariable +
                 ") was never called: the whole capture is one step";
    return whole;
  }
  return cut;
}

}  // namespace

StepMarker parse_step_marker(std::string_view text) {
  if (text == "none") return StepMarker{};  // the whole capture, one step
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    throw ConfigError(std::string(kStepMarkerVariable) + "='" + std::string(text) +
                      "': expected <communicator>:<collective>, e.g. dp0:allreduce");
  }
  return StepMarker{std::string(text.substr(0, colon)), folded(text.substr(colon + 1))};
}

PeriodFit find_period(const std::vector<std::uint32_t>& ids) {
  const std::size_t n = ids.size();
  // Periodic suffixes of ids are periodic prefixes of its reverse: r[0, P + z[P]) has period P.
  const std::vector<std::uint32_t> reversed(ids.rbegin(), ids.rend());
  const std::vector<std::size_t> z = z_function(reversed);
  PeriodFit best;
  for (std::size_t p = 1; 2 * p <= n; ++p) {
    const std::size_t covered = p + z[p];
    if (covered < 2 * p || 2 * covered < n) continue;
    if (best.period == 0 || n - covered < best.offset) best = PeriodFit{p, n - covered};
  }
  return best;
}

StepCut find_steps(const std::vector<CommCall>& calls, const std::optional<StepMarker>& marker) {
  if (marker) return cut_by_marker(calls, *marker);
  std::map<std::string_view, std::vector<const CommCall*>> by_comm;
  for (const CommCall& c : calls) by_comm[c.comm].push_back(&c);
  // The longest period is the step; of periods as long (within 5%), the one whose step begins
  // first, so that every communicator's calls of a step fall into it.
  std::vector<CommFit> fits;
  for (const auto& [comm, of_comm] : by_comm) {
    if (std::optional<CommFit> fit = fit_comm(std::string(comm), of_comm))
      fits.push_back(std::move(*fit));
  }
  std::optional<CommFit> best;
  for (CommFit& f : fits) {
    if (!best || f.step_ns > 1.05 * best->step_ns ||
        (f.step_ns >= 0.95 * best->step_ns && f.bounds.front() < best->bounds.front()))
      best = f;
  }
  std::string shorter;  // the communicators whose period is a part of the step
  for (const CommFit& f : fits) {
    if (f.step_ns < 0.95 * best->step_ns) shorter += (shorter.empty() ? "" : ", ") + f.comm;
  }
  StepCut cut;
  if (!best) {
    cut.note = calls.empty() ? "no collectives: the whole capture is one step"
                             : "no steps found (no communicator repeats its collectives): the "
                               "whole capture is one step";
    return cut;
  }
  cut.method = StepMethod::kDetected;
  cut.comm = best->comm;
  cut.period = best->period;
  cut.bounds = best->bounds;
  cut.confidence = confidence_of(*best, cut.bounds);
  if (!shorter.empty()) cut.note = "shorter periods within the step: " + shorter;
  return cut;
}

std::string describe(const StepCut& cut) {
  const std::string steps = std::to_string(cut.steps()) + " step" + (cut.steps() == 1 ? "" : "s");
  switch (cut.method) {
    case StepMethod::kMarker:
      return "marker " + cut.comm + ":" + cut.collective + ": " + steps;
    case StepMethod::kDetected:
      return "detected: " + std::to_string(cut.period) + " calls of " + cut.comm +
             " per step, confidence " + two_digits(cut.confidence) + ", " + steps +
             (cut.note.empty() ? "" : "; " + cut.note);
    case StepMethod::kWholeCapture:
      break;
  }
  return "whole capture: " + cut.note;
}

std::vector<StepRecord> cut_steps(std::vector<OpRecord> ops, const StepCut& cut) {
  const std::size_t measured = cut.bounds.empty() ? 1 : cut.bounds.size() - 1;
  // Slot 0: before the first bound (warm-up); 1..measured: the steps; last: after the last bound.
  std::vector<StepRecord> slots(measured + 2);
  for (OpRecord& op : ops) {
    const std::size_t k =
        cut.bounds.empty()
            ? 1
            : static_cast<std::size_t>(
                  std::upper_bound(cut.bounds.begin(), cut.bounds.end(), op.start_ns) -
                  cut.bounds.begin());
    slots[k].ops.push_back(std::move(op));
  }
  std::vector<StepRecord> steps;
  for (std::size_t k = 0; k < slots.size(); ++k) {
    StepRecord& s = slots[k];
    const bool inner = k >= 1 && k <= measured;
    if (s.ops.empty() && !inner) continue;
    s.warmup = !inner;
    s.index = static_cast<int>(steps.size());
    s.start_ns = s.ops.empty() ? 0 : s.ops.front().start_ns;
    s.end_ns = s.start_ns;
    for (const OpRecord& op : s.ops) s.end_ns = std::max(s.end_ns, op.end_ns);
    // A step lasts from its first call to the next step's: the cadence of its collectives. A
    // sampled capture's step may hold no timed call at all: its bounds alone say it.
    if (inner && !cut.bounds.empty() && s.ops.empty()) {
      const std::int64_t lo = cut.bounds[k - 1], hi = cut.bounds[k];
      if (lo != std::numeric_limits<std::int64_t>::min() &&
          hi != std::numeric_limits<std::int64_t>::max()) {
        s.start_ns = lo;
        s.end_ns = hi - (cut.method == StepMethod::kMarker ? 1 : 0);
      }
    } else if (inner && !cut.bounds.empty()) {
      if (cut.bounds[k - 1] != std::numeric_limits<std::int64_t>::min() && !s.ops.empty())
        s.start_ns = std::min(s.start_ns, cut.bounds[k - 1]);
      if (cut.bounds[k] != std::numeric_limits<std::int64_t>::max() && !s.ops.empty())
        s.end_ns = std::max(s.end_ns, cut.bounds[k] - (cut.method == StepMethod::kMarker ? 1 : 0));
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

namespace {

// The untimed collectives a sampled capture lists per communicator ("untimed_calls":
// [number, enqueue_ns, group]), each as its group ("untimed") names it; none in other files.
struct NumberedCall {
  std::int64_t seq = 0;  ///< the plugin's number of the call on its communicator
  CommCall call;
  int in_place = -1;  ///< as OpRecord::in_place
};

std::vector<NumberedCall> untimed_calls(const nlohmann::ordered_json& config) {
  std::vector<NumberedCall> calls;
  const auto comms = config.find("communicators");
  if (!config.is_object() || comms == config.end() || !comms->is_array()) return calls;
  // The names are views of the configuration's own strings (it outlives the cut), "" where one
  // is missing.
  const auto text = [](const nlohmann::ordered_json& o, const char* key) -> std::string_view {
    const auto v = o.find(key);
    return v != o.end() && v->is_string() ? std::string_view(v->get_ref<const std::string&>())
                                          : std::string_view();
  };
  for (const auto& c : *comms) {
    const auto list = c.find("untimed_calls");
    const auto groups = c.find("untimed");
    if (list == c.end() || !list->is_array() || groups == c.end() || !groups->is_array() ||
        !c.contains("name") || !c["name"].is_string())
      continue;
    const std::string_view name = text(c, "name");
    for (const auto& u : *list) {
      if (!u.is_array() || u.size() != 3 || !u[0].is_number_integer() ||
          !u[1].is_number_integer() || !u[2].is_number_unsigned())
        continue;
      const std::size_t g = u[2].get<std::size_t>();
      if (g >= groups->size()) continue;
      const auto& group = (*groups)[g];
      calls.push_back({u[0].get<std::int64_t>(),
                       CommCall{name, text(group, "collective"),
                                group.value("bytes", std::uint64_t{0}), u[1].get<std::int64_t>()},
                       group.value("in_place", -1)});
    }
  }
  return calls;
}

// How far the GPU's start of a timed call came after the host's call, at the host's time of
// the call (enqueue_ns), in that order.
struct LagSample {
  std::int64_t enqueue_ns = 0;
  std::int64_t lag_ns = 0;
};

std::vector<LagSample> gpu_lags(const std::vector<OpRecord>& ops) {
  std::vector<LagSample> lags;
  for (const OpRecord& op : ops) {
    if (op.category == Category::kComm && op.enqueue_ns > 0)
      lags.push_back({op.enqueue_ns, op.start_ns - op.enqueue_ns});
  }
  std::sort(lags.begin(), lags.end(),
            [](const LagSample& a, const LagSample& b) { return a.enqueue_ns < b.enqueue_ns; });
  return lags;
}

// The lag at a call made at `enqueue_ns`: linear between the timed calls around it, the
// nearest's before the first and after the last; 0 without any.
std::int64_t lag_at(const std::vector<LagSample>& lags, std::int64_t enqueue_ns) {
  if (lags.empty()) return 0;
  const auto after =
      std::lower_bound(lags.begin(), lags.end(), enqueue_ns,
                       [](const LagSample& s, std::int64_t e) { return s.enqueue_ns < e; });
  if (after == lags.begin()) return after->lag_ns;
  if (after == lags.end()) return lags.back().lag_ns;
  const LagSample& a = *(after - 1);
  const LagSample& b = *after;
  if (b.enqueue_ns == a.enqueue_ns) return b.lag_ns;
  const double f = static_cast<double>(enqueue_ns - a.enqueue_ns) /
                   static_cast<double>(b.enqueue_ns - a.enqueue_ns);
  return a.lag_ns +
         static_cast<std::int64_t>(std::llround(f * static_cast<double>(b.lag_ns - a.lag_ns)));
}

}  // namespace

void cut_plugin_capture(RankTimeline& t) {
  if (t.backend != kPluginBackend || t.steps.size() != 1) return;
  std::optional<StepMarker> marker;
  const nlohmann::ordered_json& config = t.config.json();
  if (const char* v = std::getenv(kStepMarkerVariable); v != nullptr && *v != '\0') {
    marker = parse_step_marker(v);
  } else if (config.is_object() && config.contains("step_marker") &&
             config["step_marker"].is_string()) {
    marker = parse_step_marker(config["step_marker"].get<std::string>());
  }
  // A sampled capture (COMMPROF_PLUGIN_SAMPLE=K > 1) times one call in K: those alone repeat
  // with a period that need not be the step's (lcm(K, calls a step) calls), and which step a
  // period is cannot be told. The plugin lists every untimed collective with its number and
  // the host's time of its call: the steps are cut from all calls, each untimed one placed on
  // the GPU's time by the lag of the timed calls around it (their start less their call).
  std::vector<NumberedCall> numbered = untimed_calls(config);
  const bool sampled = !numbered.empty();
  // The names: views of the configuration's and the records' strings, both kept until the ops
  // are moved into their steps, after the cut.
  std::vector<NumberedKind> kinds;
  kinds.reserve(numbered.size());
  for (const NumberedCall& n : numbered)
    kinds.push_back({n.call.comm, n.seq, n.call.collective, n.call.bytes, n.in_place});
  const std::vector<BackToBackSums> runs = back_to_back_runs(t.steps[0].ops, kinds);
  if (sampled) {
    const std::vector<LagSample> lags = gpu_lags(t.steps[0].ops);
    for (NumberedCall& n : numbered) n.call.start_ns += lag_at(lags, n.call.start_ns);
  }
  for (const OpRecord& op : t.steps[0].ops) {
    if (op.category == Category::kComm && !op.collective.empty())
      numbered.push_back(
          {op.seq, CommCall{op.comm, op.collective, op.bytes, op.start_ns, op.end_ns}});
  }
  // Each communicator's calls in their order, which the numbers say exactly (a placed time
  // may come out of order where the lag moves between timed calls), their times made to
  // follow it; unsampled, in start order as recorded.
  if (sampled) {
    std::stable_sort(
        numbered.begin(), numbered.end(), [](const NumberedCall& a, const NumberedCall& b) {
          return a.call.comm != b.call.comm ? a.call.comm < b.call.comm : a.seq < b.seq;
        });
    for (std::size_t i = 1; i < numbered.size(); ++i) {
      if (numbered[i].call.comm == numbered[i - 1].call.comm)
        numbered[i].call.start_ns =
            std::max(numbered[i].call.start_ns, numbered[i - 1].call.start_ns);
    }
  } else {
    std::stable_sort(numbered.begin(), numbered.end(),
                     [](const NumberedCall& a, const NumberedCall& b) {
                       return a.call.start_ns < b.call.start_ns;
                     });
  }
  std::vector<CommCall> calls;
  calls.reserve(numbered.size());
  for (const NumberedCall& n : numbered) calls.push_back(n.call);
  StepCut cut = find_steps(calls, marker);
  if (sampled && !cut.bounds.empty()) {
    cut.note += std::string(cut.note.empty() ? "" : "; ") +
                "sampled: cut from every call, the untimed ones placed by the timed ones' GPU lag";
  }
  std::vector<StepRecord> steps = cut_steps(std::move(t.steps[0].ops), cut);
  std::size_t warmup = 0;
  for (const StepRecord& s : steps) warmup += s.warmup ? 1 : 0;
  nlohmann::ordered_json with = config.is_object() ? config : nlohmann::ordered_json::object();
  with["step_cut"] = {{"method", cut.method == StepMethod::kMarker     ? "marker"
                                 : cut.method == StepMethod::kDetected ? "detected"
                                                                       : "whole capture"},
                      {"comm", cut.comm},
                      {"period_calls", cut.period},
                      {"confidence", cut.confidence},
                      {"steps", steps.size() - warmup},
                      {"warmup_steps", warmup},
                      {"description", describe(cut)}};
  if (!runs.empty()) with["back_to_back"] = back_to_back_json(runs);
  t.config = JsonObject(std::move(with));
  t.steps = std::move(steps);
}

}  // namespace commprof
