// SPDX-License-Identifier: MIT
// Synthetic measured runs for the projection's tests (tests/workloads/prediction), written from the
// workload generator's own plans with known rates: every op with FLOPs takes FLOPs / flops_per_ns
// ns, every other op bytes / bytes_per_ns ns, an all-reduce of S bytes on n ranks latency × 2(n−1)
// + S × 2(n−1)/n / busbw; ops back to back, no host gaps. Under --no-overlap every op waits for the
// one before, so a rank's step is the sum of its ops' times, which serial_step_ns adds up from
// the plan without any replay.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/links/link_model.hpp"
#include "src/timeline/json_object.hpp"
#include "workloads/layout.hpp"
#include "workloads/run_config_json.hpp"
#include "workloads/workload.hpp"

namespace commprof::test {

struct KnownRates {
  double flops_per_ns = 2.0;
  double bytes_per_ns = 1.0;
  double latency_us = 5.0;
  double busbw_gbps = 10.0;
  /// This rank's COMP ops take `slow_factor` times as long (-1: none).
  int slow_rank = -1;
  double slow_factor = 1.0;
};

inline std::int64_t allreduce_ns(std::uint64_t bytes, int n, const KnownRates& k = {}) {
  const double us = k.latency_us * 2 * (n - 1) +
                    static_cast<double>(bytes) * 2.0 * (n - 1) / n / (k.busbw_gbps * 1e3);
  return static_cast<std::int64_t>(std::llround(us * 1e3));
}

inline std::int64_t op_ns(const PlannedOp& op, int dp, const KnownRates& k = {}) {
  if (op.is<PlannedCollective>()) return allreduce_ns(op.bytes, dp, k);
  if (op.flops > 0) return static_cast<std::int64_t>(std::llround(op.flops / k.flops_per_ns));
  return static_cast<std::int64_t>(std::llround(static_cast<double>(op.bytes) / k.bytes_per_ns));
}

/// The tiny model's dp run of 2 layers under --no-overlap, buckets of several sizes.
inline WorkloadConfig serial_dp(int dp) {
  WorkloadConfig w;
  w.kind = WorkloadKind::kDp;
  w.shape = model_preset("tiny");
  w.shape.layers = 2;
  w.layout.dp = dp;
  w.no_overlap = true;
  w.attention = AttentionMode::kGemm;
  w.bucket_mb = 0.05;  // several buckets of different sizes: the fit sees more than one size
  return w;
}

/// Every rank's timeline of `steps` measured steps of `w`, ops back to back at the known rates.
inline std::vector<RankTimeline> synthetic_run(const WorkloadConfig& w, int steps,
                                               const KnownRates& k = {}) {
  std::vector<RankTimeline> out;
  const int world = w.layout.world();
  for (int r = 0; r < world; ++r) {
    const RankPlace place = place_rank(w.layout, r);
    const OpPlan plan = build_plan(w, place);
    RankTimeline t;
    t.rank = r;
    t.world_size = world;
    t.host = "node0";
    t.backend = "host";
    t.config =
        JsonObject(run_config_json(w, RunSettings{steps, 0, OpTimingMode::kPair, 4, std::nullopt}));
    std::int64_t now = 0;
    for (int s = 0; s < steps; ++s) {
      StepRecord step;
      step.index = s;
      step.start_ns = now;
      std::int64_t seq = 0;
      for (const PlannedOp& op : plan.ops) {
        OpRecord rec;
        rec.name = op.name;
        rec.category = op.stream;
        rec.stream = category_name(op.stream);
        rec.bytes = op.bytes;
        rec.flops = op.flops;
        if (const auto* c = std::get_if<PlannedCollective>(&op.call)) {
          rec.collective = collective_name(c->kind);
          rec.comm = "dp" + std::to_string(place.dp_group_id);
          rec.comm_size = w.layout.dp;
          rec.seq = seq++;
        }
        rec.after.assign(op.deps.begin(), op.deps.end());  // the waits, as the executor records
        rec.start_ns = now;
        std::int64_t ns = op_ns(op, w.layout.dp, k);
        if (r == k.slow_rank && op.stream == Category::kComp) {
          ns = static_cast<std::int64_t>(std::llround(static_cast<double>(ns) * k.slow_factor));
        }
        now += ns;
        rec.end_ns = now;
        step.ops.push_back(rec);
      }
      step.end_ns = now;
      t.steps.push_back(step);
    }
    out.push_back(std::move(t));
  }
  return out;
}

/// The step of `w` under --no-overlap, added up from rank 0's plan (every rank's is alike).
inline std::int64_t serial_step_ns(const WorkloadConfig& w, const KnownRates& k = {}) {
  std::int64_t sum = 0;
  for (const PlannedOp& op : build_plan(w, place_rank(w.layout, 0)).ops)
    sum += op_ns(op, w.layout.dp, k);
  return sum;
}

/// The all-reduce's link model at the known latency and busbw.
inline LinkModel known_links(const KnownRates& k = {}) {
  LinkModel m;
  LinkFit f;
  f.collective = CollectiveKind::kAllReduce;
  f.latency_us = k.latency_us;
  f.busbw_gbps = k.busbw_gbps;
  m.fits.push_back(f);
  return m;
}

}  // namespace commprof::test
