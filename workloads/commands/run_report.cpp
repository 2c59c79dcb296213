// SPDX-License-Identifier: MIT
#include "workloads/commands/run_report.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <sstream>
#include <vector>

#include "analysis/distributed_reduction.hpp"
#include "analysis/findings.hpp"
#include "analysis/graph/critical_path_across.hpp"
#include "analysis/mpi/mpi_reduce_exchange.hpp"
#include "analysis/reducer.hpp"
#include "analysis/report/report_writers.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/gather.hpp"

namespace commprof {

// The header lines of calibrated compute: what was learned, and what of the trace the run leaves
// out or adds: the traced step's gaps are replayed as idle time, or left out (--no-host-gaps);
// ends the run has and the trace showed none of run as modelled; ends the trace had and the run
// does not (--vocab 0) are left out.
std::string compute_line(const ComputeProfile& p, const WorkloadConfig& w) {
  const ModelShape& s = w.shape;
  char gaps[32];
  std::snprintf(gaps, sizeof gaps, "%.3f", p.gaps_total() / 1e6);
  std::string line = "# " + describe(p) + "\n";
  line += w.host_gaps ? std::string("# note: the traced step's gaps (") + gaps +
                            " ms per step) are replayed as idle time before the ops they "
                            "preceded: the device idles there, as it did in the trace\n"
                      : std::string("# note: --no-host-gaps: the traced step's gaps (") + gaps +
                            " ms per step: launch gaps, waits on the host, the trace's copies) "
                            "are left out\n";
  if (s.vocab > 0 && !p.has_ends()) {
    line += "# note: the trace shows no ends; the run's (--vocab " + std::to_string(s.vocab) +
            ") run as modelled (if the traced model had ends, their kernels are in the layers' "
            "learned time and count twice: --vocab 0 leaves the modelled ones out)\n";
  } else if (s.vocab == 0 && p.has_ends()) {
    line += "# note: --vocab 0: the trace's ends are left out\n";
  }
  return line;
}

// Rank 0's summary over measured steps: step time and, per category, the busy time. Each
// category has one in-order stream here, whose ops never overlap one another, so the sum of
// a category's op durations is exactly the length of the union of its intervals.
void print_run_summary(RankContext& ctx, const RunSummaryHeader& h, const RankTimeline& t,
                       const OpPlan& plan) {
  const WorkloadConfig& w = *h.workload;
  // Steps with ops carried per-op timing; steps without (sampled timing's plain steps, or
  // --op-timing step) give the step time, uninstrumented, when there are any.
  double plain_ms = 0, timed_ms = 0;
  int plain = 0, timed = 0;
  double per_cat_ms[3] = {0, 0, 0};
  double gemm_flops = 0;
  double gemm_ms = 0;
  for (const StepRecord& s : t.steps) {
    if (s.warmup) continue;
    const double wall = static_cast<double>(s.end_ns - s.start_ns) / 1e6;
    if (s.ops.empty()) {
      plain_ms += wall;
      ++plain;
      continue;
    }
    timed_ms += wall;
    ++timed;
    for (const OpRecord& op : s.ops) {
      const double ms = static_cast<double>(op.duration_ns()) / 1e6;
      per_cat_ms[index_of(op.category)] += ms;
      if (op.category == Category::kComp && op.flops > 0) {
        gemm_flops += op.flops;
        gemm_ms += ms;
      }
    }
  }
  const double step_ms = plain > 0 ? plain_ms / plain : timed_ms / timed;
  const auto steps = gather_doubles(step_ms, ctx.comm());
  std::vector<std::vector<double>> cats;
  for (double v : per_cat_ms) cats.push_back(gather_doubles(timed > 0 ? v / timed : 0, ctx.comm()));
  const auto tflops =
      gather_doubles(gemm_ms > 0 ? gemm_flops / (gemm_ms * 1e-3) / 1e12 : 0, ctx.comm());
  const auto timed_means = gather_doubles(timed > 0 ? timed_ms / timed : 0, ctx.comm());
  const auto plain_means = gather_doubles(plain > 0 ? plain_ms / plain : 0, ctx.comm());
  if (ctx.rank() != 0) return;
  auto stats = [](const std::vector<double>& v) {
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    char buf[96];
    std::snprintf(buf, sizeof buf, "%10.3f %10.3f %10.3f", *lo, mean, *hi);
    return std::string(buf);
  };
  const ModelShape& s = w.shape;
  std::cout << "# commprof run: workload " << workload_name(w.kind) << ", " << describe(w.layout)
            << ", model " << s.name << " (" << s.layers << " layers, h " << s.hidden << ", seq "
            << s.seq << ", micro-batch " << s.micro_batch << " x " << s.micro_batches << ", "
            << dtype_name(s.dtype) << ")" << (w.no_overlap ? ", --no-overlap (serial)" : "")
            << (w.slow_rank >= 0 ? log::cat(", rank ", w.slow_rank, "'s compute x", w.slow_factor)
                                 : std::string())
            << '\n'
            << "# " << plan.ops.size() << " ops per step on rank 0; " << h.steps
            << " measured steps after " << h.warmup_steps << " warm-up; op timing "
            << op_timing_name(h.timing) << "\n"
            << (w.compute ? compute_line(*w.compute, w)
                : w.attention == AttentionMode::kFused
                    ? std::string("# attention: fused (causal, one kernel forward, one backward)\n")
                    : "# attention: GEMMs over the whole s x s" + h.attention_note + "\n")
            << "#                                   min       mean        max   (over ranks of "
               "each rank's mean per step)\n"
            << "  step time (ms)           " << stats(steps) << '\n';
  if (timed > 0 && plain > 0) {
    auto mean = [](const std::vector<double>& v) {
      return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    const double tm = mean(timed_means), pm = mean(plain_means);
    char line[256];
    std::snprintf(line, sizeof line,
                  "# per-op timing on %d of %d measured steps (every %d-th); step time from "
                  "the %d plain ones. Timed steps %.3f ms, plain %.3f ms (means over ranks): "
                  "timing cost %+.2f%%\n",
                  timed, timed + plain, h.sample_every, plain, tm, pm, 100 * (tm - pm) / pm);
    std::cout << line;
  }
  if (timed > 0) {
    for (Category cat : kAllCategories) {
      std::cout << "  " << category_name(cat) << " busy (ms)"
                << std::string(15 - std::string(category_name(cat)).size(), ' ')
                << stats(cats[index_of(cat)]) << '\n';
    }
    std::cout << "  COMP TFLOP/s (in ops)    " << stats(tflops) << '\n';
  }
  std::cout << std::flush;
}

namespace {

// Rank 0's part of the report across ranks: prints it, writes report.txt and report.json beside
// the rank files, and weighs the --fail-if gates.
int write_rank0_report(Report& report, const std::vector<std::string>& sources,
                       const RankTimeline& mine, const std::string& out_dir, RankFileFormat format,
                       const FindingGates& gates) {
  if (out_dir.empty()) {
    log::info(
        "no critical path in this report: it is made where --out writes the rank files it "
        "describes");
  } else {
    report.inputs = sources;
  }
  // Rank 0's configuration is the run's.
  add_findings(report, run_facts(mine.config), gates.options);
  // The files before the terminal: after Ctrl-C to mpirun the launcher kills the ranks a grace
  // period after it passes the signal on, and once rank 0 was killed in the middle of printing
  // (on a loaded CI machine), which lost the files too.
  // A file that cannot be written still leaves the report on the terminal, then fails the run.
  // The text is formatted once, for both.
  std::ostringstream formatted;
  write_report_text(formatted, report);
  const std::string text = formatted.str();
  std::exception_ptr file_error;
  if (!out_dir.empty()) {
    try {
      write_file_atomically(out_dir + "/report.txt", [&](std::ostream& os) { os << text; });
      write_file_atomically(out_dir + "/report.json",
                            [&](std::ostream& os) { write_report_json(os, report); });
    } catch (...) {
      file_error = std::current_exception();
    }
  }
  std::cout << '\n' << text << std::flush;
  if (file_error) std::rethrow_exception(file_error);
  if (!out_dir.empty()) {
    // On stdout after the report, not on stderr: under mpirun the two streams reach the
    // terminal apart, and the line landed inside the report's tables.
    std::cout << "# wrote " << out_dir << "/rank-*"
              << (format == RankFileFormat::kZstd ? ".json.zst" : ".json")
              << ", report.txt and report.json" << std::endl;
  }
  return apply_finding_gates(report, gates, "run");
}

}  // namespace

// Stage two of the reduction, as `commprof report` does offline under mpirun: each rank
// reduces its own timeline, collectives are matched by owner ranks, and rank 0 gathers the
// summaries (distributed_reduction.hpp), so no rank holds every timeline. Rank 0 prints the
// report and writes report.txt and report.json beside the rank files: byte for byte what
// `commprof report DIR` and `--format json` write from them.
int report_across_ranks(RankContext& ctx, const RankTimeline& mine, const std::string& out_dir,
                        RankFileFormat format, const FindingGates& gates) {
  auto source_of = [&](int rank) {
    // With rank files written, the report names them as `commprof report DIR` would.
    return out_dir.empty() ? log::cat("rank ", rank, " (over MPI)")
                           : (std::filesystem::path(out_dir) /
                              std::filesystem::path(rank_file_path("", rank, format)).filename())
                                 .string();
  };
  Reducer reducer(ReduceOptions{});
  reducer.set_file_index(static_cast<std::uint32_t>(ctx.rank()));
  // The critical path needs every rank's ops of a step, which no rank holds: each rank packs
  // its own steps, as `commprof report DIR` packs its files' while reducing them, and the
  // steps go to their owner ranks (critical_path_across.hpp). No rank reads a file back.
  CriticalPathPacks packs;
  {
    // Through the file's text, so the report has the numbers the file holds.
    std::ostringstream text;
    write_rank_json(text, mine);
    const std::string source = source_of(ctx.rank());
    try {
      RankTimeline t = parse_rank_json(text.str(), source);
      if (!out_dir.empty()) {
        packs.begin_file(static_cast<std::uint32_t>(ctx.rank()));
        send_timeline(t, packs);
      }
      reducer.add(std::move(t), source);
    } catch (const Error& e) {
      reducer.add_problem(source, e.what());
    }
  }
  MpiReduceExchange exchange(ctx.comm());
  Report report = finish_across(reducer, ReduceOptions{}, exchange);
  std::vector<std::string> sources;
  for (int r = 0; r < ctx.size(); ++r) sources.push_back(source_of(r));
  if (!out_dir.empty()) add_critical_paths_across(report, sources, exchange, packs);
  // Every rank exits with rank 0's verdict on the gates: a launcher reports the job's code from
  // whichever rank ends first.
  return ctx.broadcast(ctx.rank() == 0
                           ? write_rank0_report(report, sources, mine, out_dir, format, gates)
                           : kExitOk);
}

}  // namespace commprof
