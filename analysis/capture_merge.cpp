// SPDX-License-Identifier: MIT
#include "analysis/capture_merge.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {
namespace {

bool is_collective(const OpRecord& op) {
  return op.category == Category::kComm && !op.collective.empty();
}

// The capture's call `c` stands for the trace's collective `t`: the same collective, and the
// same bytes where both record them.
bool same_call(const OpRecord& c, const OpRecord& t) {
  return c.collective == t.collective && (c.bytes == 0 || t.bytes == 0 || c.bytes == t.bytes);
}

std::string describe(const OpRecord& op) { return log::cat(op.collective, " of ", op.bytes, " B"); }

}  // namespace

RankTimeline merge_capture_into_trace(const RankTimeline& capture, const RankTimeline& trace,
                                      CaptureMerge* how) {
  if (capture.rank != trace.rank) {
    throw Error(log::cat("the capture's rank ", capture.rank, " is not the trace's ", trace.rank));
  }
  std::vector<const OpRecord*> calls, wanted;
  for (const StepRecord& s : capture.steps) {
    for (const OpRecord& op : s.ops)
      if (is_collective(op)) calls.push_back(&op);
  }
  for (const StepRecord& s : trace.steps) {
    for (const OpRecord& op : s.ops)
      if (is_collective(op)) wanted.push_back(&op);
  }
  auto by_start = [](const OpRecord* a, const OpRecord* b) { return a->start_ns < b->start_ns; };
  std::stable_sort(calls.begin(), calls.end(), by_start);
  std::stable_sort(wanted.begin(), wanted.end(), by_start);
  if (wanted.empty()) {
    throw Error(log::cat("rank ", trace.rank,
                         ": the trace has no collective to set the "
                         "capture's clock against"));
  }
  // Of the runs of the capture's calls that are the trace's collectives call for call, the one
  // whose pairs keep one clock offset: a training step repeats its calls, so several runs match
  // by kind and bytes, but only the right one has every pair's start the same distance apart
  // (the others are a step off, the distance changing with each step's length).
  std::size_t first = calls.size();
  double offset = 0, residual = 0;
  for (std::size_t k = 0; k + wanted.size() <= calls.size(); ++k) {
    bool all = true;
    for (std::size_t i = 0; all && i < wanted.size(); ++i)
      all = same_call(*calls[k + i], *wanted[i]);
    if (!all) continue;
    std::vector<double> d;
    for (std::size_t i = 0; i < wanted.size(); ++i)
      d.push_back(static_cast<double>(calls[k + i]->start_ns - wanted[i]->start_ns));
    std::vector<double> sorted = d;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double o = sorted[sorted.size() / 2];
    double r = 0;
    for (double x : d) r = std::max(r, std::abs(x - o));
    if (first == calls.size() || r < residual) {
      first = k;
      offset = o;
      residual = r;
    }
  }
  if (first == calls.size()) {
    throw Error(log::cat("rank ", trace.rank, ": no run of the capture's ", calls.size(),
                         " calls is the trace's ", wanted.size(), " collectives (the first ",
                         describe(*wanted.front()), "): not a capture of the traced job?"));
  }
  // The trace with each collective the capture's, on the trace's clock.
  const auto shift = static_cast<std::int64_t>(std::llround(offset));
  RankTimeline out = trace;
  std::size_t i = 0;
  for (StepRecord& s : out.steps) {
    std::vector<OpRecord*> mine;
    for (OpRecord& op : s.ops)
      if (is_collective(op)) mine.push_back(&op);
    std::stable_sort(mine.begin(), mine.end(), by_start);
    for (OpRecord* op : mine) {
      // Matched in the same order as `wanted` (every step's, by start): i runs over both.
      const OpRecord& c = *calls[first + i++];
      OpRecord merged = c;
      merged.start_ns = c.start_ns - shift;
      merged.end_ns = c.end_ns - shift;
      merged.enqueue_ns = c.enqueue_ns != 0 ? c.enqueue_ns - shift : 0;
      merged.after = op->after;  // the trace's waits, where it recorded any
      *op = std::move(merged);
    }
  }
  nlohmann::ordered_json config = out.config.json();
  if (!config.is_object()) config = nlohmann::ordered_json::object();
  config["merged_capture"] = {{"backend", capture.backend},    {"collectives", wanted.size()},
                              {"capture_calls", calls.size()}, {"first_call", first},
                              {"clock_offset_ns", offset},     {"residual_ns", residual}};
  out.config = JsonObject(std::move(config));
  if (how != nullptr)
    *how = CaptureMerge{trace.rank, wanted.size(), calls.size(), first, offset, residual};
  return out;
}

}  // namespace commprof
