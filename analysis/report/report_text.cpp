// SPDX-License-Identifier: MIT
// The terminal report: fixed-width tables, units in every column header.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include "analysis/report/report_writers.hpp"
#include "analysis/report/text_table.hpp"

namespace commprof {
namespace {

std::string fmt(const char* format, double v) { return format_number(format, v); }
std::string us(double ns) { return fmt("%.1f", ns / 1e3); }
std::string us_or_na(const Stat& s) { return s.count > 0 ? us(s.mean) : "n/a"; }
std::string pct_or_na(const Stat& s) { return s.count > 0 ? fmt("%.1f", 100.0 * s.mean) : "n/a"; }
std::string gbps_or_na(double v) { return v < 0 ? "n/a" : fmt("%.2f", v); }
void table(std::ostream& os, const std::vector<std::vector<std::string>>& rows) {
  write_table(os, rows);
}

}  // namespace

// Sampled op timing: which steps the per-op figures come from, and what timing them cost (the
// timed steps' mean step time against the plain ones', both measured in this run).
void write_sampling_line(std::ostream& os, const Report& r) {
  int timed = 0, steps = 0;
  double cost_sum = 0;
  int cost_ranks = 0;
  for (const RankSummary& s : r.ranks) {
    timed += s.timed_steps;
    steps += s.steps;
    if (s.timed_wall_ns.count > 0 && s.plain_wall_ns.count > 0 && s.plain_wall_ns.mean > 0) {
      cost_sum += (s.timed_wall_ns.mean - s.plain_wall_ns.mean) / s.plain_wall_ns.mean;
      ++cost_ranks;
    }
  }
  if (cost_ranks == 0) return;
  char line[256];
  std::snprintf(line, sizeof line,
                "# per-op timing on %d of %d measured steps (all ranks): busy times and overlap "
                "from those, step time from the others; timed steps took %+.2f%% (mean over "
                "%d ranks)\n",
                timed, steps, 100 * cost_sum / cost_ranks, cost_ranks);
  os << line;
}

void write_report_text(std::ostream& os, const Report& r) {
  os << "# commprof report: " << r.ranks.size() << " of " << r.world_size << " ranks";
  if (r.inputs.empty()) {
    // commprof run's own reduction when it wrote no rank files (no --out).
    os << " received over MPI at the end of the run\n";
  } else {
    // Offline, or at the end of a run that wrote them: the same line either way.
    os << ", from " << r.inputs.size() << " rank file(s)\n";
  }
  os << "# times in us (mean per measured step), ratios in %, bandwidth in GB/s (1e9 B/s)\n";
  for (const FileProblem& p : r.problems)
    os << "# problem: " << p.message << '\n';  // the message names the file
  if (!r.missing_ranks.empty()) {
    os << "# missing ranks:";
    for (int m : r.missing_ranks) os << ' ' << m;
    os << '\n';
  }
  for (const std::string& w : r.warnings) os << "# warning: " << w << '\n';
  write_sampling_line(os, r);

  os << "\n## Per rank\n";
  std::vector<std::vector<std::string>> rows = {{"rank", "host", "device", "steps(#)", "step(us)",
                                                 "COMP(us)", "COMM(us)", "MEM(us)", "overlap(%)",
                                                 "hidden(%)", "exposed(us)", "idle(us)"}};
  for (const RankSummary& s : r.ranks) {
    rows.push_back({std::to_string(s.rank), s.host, s.device, std::to_string(s.steps),
                    us_or_na(s.wall_ns), us_or_na(s.comp_ns), us_or_na(s.comm_ns),
                    us_or_na(s.mem_ns), pct_or_na(s.overlap), pct_or_na(s.hidden_fraction),
                    us_or_na(s.exposed_comm_ns), us_or_na(s.idle_ns)});
  }
  table(os, rows);

  os << "\n## Across ranks (each rank's mean step)\n";
  rows = {{"metric", "unit", "min", "mean", "max", "worst rank", "worst host"}};
  for (const AcrossRanks& a : r.across) {
    const bool ratio = a.unit == "ratio";
    auto v = [&](double x) { return ratio ? fmt("%.1f", 100.0 * x) : us(x); };
    if (a.stat.count == 0) {
      rows.push_back({a.metric, ratio ? "%" : "us", "n/a", "n/a", "n/a", "-", "-"});
    } else {
      rows.push_back({a.metric, ratio ? "%" : "us", v(a.stat.min), v(a.stat.mean), v(a.stat.max),
                      std::to_string(a.worst_rank), a.worst_host});
    }
  }
  table(os, rows);

  if (!r.groups.empty()) {
    os << "\n## Communicator groups\n";
    rows = {{"group", "comms(#)", "size(ranks)", "collectives(#)", "bytes(B)", "time(us)",
             "busbw(GB/s)", "skew(us)", "wait(us)"}};
    for (const GroupRow& g : r.groups) {
      const std::string size = g.min_size == g.max_size
                                   ? std::to_string(g.min_size)
                                   : std::to_string(g.min_size) + "-" + std::to_string(g.max_size);
      rows.push_back({g.group, std::to_string(g.communicators), size, std::to_string(g.instances),
                      std::to_string(g.bytes), us(g.time_ns), gbps_or_na(g.busbw_gbps),
                      us(g.mean_skew_ns), us(static_cast<double>(g.wait_ns))});
    }
    table(os, rows);
  }

  if (!r.collectives.empty()) {
    os << "\n## Collectives by message size (time: shortest rank's duration per call)\n";
    rows = {{"collective", "n(ranks)", "bytes(B)", "count(#)", "p50(us)", "p95(us)", "algbw(GB/s)",
             "busbw(GB/s)", "peak(%)", "skew(us)"}};
    // NCCL's choice of algorithm and protocol, where the files say (NCCL's profiler plugin).
    const bool algo = std::any_of(r.collectives.begin(), r.collectives.end(),
                                  [](const CollectiveRow& c) { return !c.algo.empty(); });
    if (algo) rows[0].push_back("nccl algo/proto");
    for (const CollectiveRow& c : r.collectives) {
      rows.push_back({c.collective, std::to_string(c.comm_size), std::to_string(c.bytes),
                      std::to_string(c.count), us(c.p50_ns), us(c.p95_ns),
                      fmt("%.2f", c.algbw_gbps), gbps_or_na(c.busbw_gbps),
                      c.peak_fraction < 0 ? "n/a" : fmt("%.1f", 100.0 * c.peak_fraction),
                      us(c.mean_skew_ns)});
      if (algo) rows.back().push_back(c.algo.empty() ? "?" : c.algo);
    }
    table(os, rows);
  }

  if (!r.waits.empty()) {
    os << "\n## Stragglers (ranks the others waited for most)\n";
    std::vector<RankWait> waits = r.waits;
    std::stable_sort(waits.begin(), waits.end(), [](const RankWait& a, const RankWait& b) {
      return a.wait_caused_ns > b.wait_caused_ns;
    });
    rows = {{"rank", "host", "last(#)", "last(%)", "caused wait(us)", "own wait(us)",
             "collectives(#)"}};
    auto host_of = [&](int rank) -> std::string {
      for (const RankSummary& s : r.ranks) {
        if (s.rank == rank) return s.host;
      }
      return "?";
    };
    for (std::size_t i = 0; i < waits.size() && i < 10; ++i) {
      const RankWait& w = waits[i];
      rows.push_back(
          {std::to_string(w.rank), host_of(w.rank), std::to_string(w.times_last),
           fmt("%.1f", 100.0 * static_cast<double>(w.times_last) /
                           static_cast<double>(std::max<std::int64_t>(1, w.collectives))),
           us(static_cast<double>(w.wait_caused_ns)), us(static_cast<double>(w.wait_ns)),
           std::to_string(w.collectives)});
    }
    table(os, rows);
    const RankWait& top = waits.front();
    if (top.wait_caused_ns > 0) {
      os << "# straggler: rank " << top.rank << " (" << host_of(top.rank) << ") arrived last at "
         << top.times_last << " of " << top.collectives << " collectives; others waited "
         << us(static_cast<double>(top.wait_caused_ns)) << " us for it\n";
    }
  }

  if (r.baseline) {
    const BaselineComparison& b = *r.baseline;
    os << "\n## Against the serialized baseline (" << b.source << ")\n";
    os << " step time: " << us(b.run_step_ns) << " us, baseline " << us(b.baseline_step_ns)
       << " us, speed-up " << (b.speedup ? fmt("%.3f", *b.speedup) + "x" : "n/a") << '\n';
    os << " communication hidden behind compute: " << us(b.comm_hidden_ns) << " us per step (of "
       << us(b.run_comm_ns) << " us COMM; baseline COMM " << us(b.baseline_comm_ns) << " us)\n";
    for (const Interference& in : b.interference) {
      os << " interference " << in.category << ": " << in.ops << " overlapped ops of " << in.names
         << " names take " << us(in.run_mean_ns) << " us vs " << us(in.baseline_mean_ns)
         << " us alone: " << (in.slowdown ? fmt("%+.1f", 100.0 * *in.slowdown) + " %" : "n/a")
         << '\n';
    }
  }
}

}  // namespace commprof
