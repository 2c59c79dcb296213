// SPDX-License-Identifier: MIT
#include "workloads/commands/link_probe.hpp"

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "collectives/bench/bench_links.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/gather.hpp"

namespace commprof {

std::optional<LinkProbe> probe_links(RankContext& ctx, Backend& backend, Communicator& over) {
  if (ctx.size() < 2) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  BenchConfig config;
  config.min_bytes = 4 << 10;
  config.max_bytes = 1 << 20;
  config.step_factor = 16;
  config.iters = 5;
  config.warmup = 2;
  config.check = false;
  // One sweep per kind, each timed: what each costs (its connections' setup on NCCL) is the
  // probe's own account of its time.
  LinkProbe probe;
  probe.ranks = over.size();
  probe.communicator = &over == &backend.world() ? std::string("world") : over.name();
  BenchReport all;
  for (CollectiveKind kind :
       {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
        CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
    const auto kind_start = std::chrono::steady_clock::now();
    config.ops = {kind};
    BenchReport report = run_bench(config, backend, over, ctx, "the run's backend");
    probe.kind_ms.emplace_back(kind, std::chrono::duration<double, std::milli>(
                                         std::chrono::steady_clock::now() - kind_start)
                                         .count());
    if (all.ranks.empty()) all.ranks = std::move(report.ranks);
    for (BenchRow& row : report.rows) all.rows.push_back(std::move(row));
  }
  // Rank 0 holds the times reduced over the ranks and fits them; every rank reads the model back
  // from the same text, so every rank file records the same one (project refuses files whose
  // configurations differ). A fit that fails (no point timed) leaves the run without a probe.
  std::string text;
  if (ctx.rank() == 0) {
    std::vector<LinkSample> points = link_samples(all);
    try {
      text = link_model_text(
          fit_link_model(std::move(points), "the link probe at the start of commprof run"));
    } catch (const ConfigError&) {
      text.clear();
    }
  }
  text = broadcast_string(text, 0, ctx.comm());
  if (text.empty()) return std::nullopt;
  probe.model = parse_link_model(text, "the link probe");
  probe.points = static_cast<int>(probe.model.samples.size());
  probe.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return probe;
}

std::string link_probe_line(const LinkProbe& probe) {
  std::string kinds;
  for (const auto& [kind, ms] : probe.kind_ms) {
    kinds += log::cat(kinds.empty() ? "" : ", ", collective_name(kind), " ",
                      static_cast<long long>(std::llround(ms)));
  }
  return log::cat("# link probe: ", probe.points, " points (4 KiB to 1 MiB over all ", probe.ranks,
                  " ranks, on communicator ", probe.communicator, ") in ",
                  static_cast<long long>(std::llround(probe.elapsed_ms)), " ms (", kinds,
                  " ms, warm-up included), recorded in the rank files for `commprof project` "
                  "(--no-link-probe skips it)");
}

}  // namespace commprof
