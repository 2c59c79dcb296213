// SPDX-License-Identifier: MIT
#include "workloads/commands/link_probe.hpp"

#include <chrono>
#include <string>
#include <vector>

#include "collectives/bench/bench_links.hpp"
#include "src/core/errors.hpp"
#include "src/runtime/gather.hpp"

namespace commprof {

std::optional<LinkProbe> probe_links(RankContext& ctx, Backend& backend) {
  if (ctx.size() < 2) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  BenchConfig config;
  config.ops = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll,
                CollectiveKind::kSendRecv};
  config.min_bytes = 4 << 10;
  config.max_bytes = 1 << 20;
  config.step_factor = 16;
  config.iters = 5;
  config.warmup = 2;
  config.check = false;
  const BenchReport report = run_bench(config, backend, ctx, "the run's backend");
  // Rank 0 holds the times reduced over the ranks and fits them; every rank reads the model back
  // from the same text, so every rank file records the same one (project refuses files whose
  // configurations differ). A fit that fails (no point timed) leaves the run without a probe.
  std::string text;
  if (ctx.rank() == 0) {
    std::vector<LinkSample> points = link_samples(report);
    try {
      text = link_model_text(
          fit_link_model(std::move(points), "the link probe at the start of commprof run"));
    } catch (const ConfigError&) {
      text.clear();
    }
  }
  text = broadcast_string(text, 0, ctx.comm());
  if (text.empty()) return std::nullopt;
  LinkProbe probe;
  probe.model = parse_link_model(text, "the link probe");
  probe.points = static_cast<int>(probe.model.samples.size());
  probe.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return probe;
}

}  // namespace commprof
