// SPDX-License-Identifier: MIT
// `commprof report DIR|FILES...`: the offline reducer. On one process, or under mpirun / srun
// shared among the job's processes (distributed_reduction.hpp), which give the same report;
// process 0 writes it (--format chrome: process 0 alone reads and writes). Exit 0: every file was
// reduced; 1: a file could not be read (the report still names it and reduces the rest) or nothing
// was readable; 2: usage error.
#include "analysis/commands/report_command.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <tuple>

#include "analysis/byte_codec.hpp"
#include "analysis/commands/capture_pairing.hpp"
#include "analysis/commands/finding_gates.hpp"
#include "analysis/commands/rank_inputs.hpp"
#include "analysis/distributed_reduction.hpp"
#include "analysis/findings.hpp"
#include "analysis/graph/critical_path_across.hpp"
#include "analysis/mpi/mpi_reduce_exchange.hpp"
#include "analysis/reducer.hpp"
#include "analysis/report/chrome_trace.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/report/step_timelines.hpp"
#include "src/cli/command.hpp"
#include "src/cli/output_format.hpp"
#include "src/cli/parse.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/standard_output.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/timeline/rank_file.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

struct ReportConfig {
  std::vector<std::string> inputs;
  OutputFormat format = OutputFormat::kText;
  std::string output;  ///< "" = stdout
  std::string baseline;
  ReduceOptions reduce;
  TimelineOptions timeline;
  bool critical_path = true;
  FindingGates findings;   ///< --target-overlap, --fail-if finding:RULE
  std::string merged_out;  ///< a capture paired with traces: where the merged files go ("" fresh)
};

// The report's rank files: the inputs', or where they pair a plugin capture with traces of the
// same job, the merged files' (capture_pairing.hpp), saying on stderr how each rank met.
std::vector<std::string> report_files(const ReportConfig& cfg) {
  const PairedInputs paired = pair_capture_with_traces(cfg.inputs, cfg.merged_out);
  for (const std::string& line : paired.lines) std::cerr << line << '\n';
  return expand_rank_inputs(paired.inputs);
}

// Writes through `write` to `path` atomically, or to stdout when `path` is empty; either
// way a failed write throws Error naming the destination and the reason.
void emit(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty()) {
    write_to_stdout("the report", write);
  } else {
    write_file_atomically(path, write);
  }
}

// 1 where a file could not be read (named on stderr as in the report), else 0.
int exit_code(const Report& report, std::size_t files) {
  if (report.ranks.empty()) {
    std::cerr << "commprof report: error: none of the " << files << " rank file(s) could be read"
              << std::endl;
    for (const FileProblem& p : report.problems) std::cerr << "  " << p.message << std::endl;
    return kExitFailure;
  }
  if (!report.problems.empty()) {
    std::cerr << "commprof report: " << report.problems.size()
              << " rank file(s) could not be read (named in the report); the others were "
                 "reduced:"
              << std::endl;
    for (const FileProblem& p : report.problems) std::cerr << "  " << p.message << std::endl;
    return kExitFailure;
  }
  return kExitOk;
}

// What the report is made of: the files read, their report, and the baseline's where asked.
struct Reduced {
  std::vector<std::string> files;
  Report report;
  std::optional<Report> baseline;
  /// The critical path (its rows, or the warning why there is none), where asked for.
  std::optional<Report> critical;
};

// Collective over `exchange`: the critical path of `reduced`'s files, the reduction's problem
// files left out, into reduced.critical on process 0, from the steps the reduction packed.
void find_critical_path(const ReportConfig& cfg, Reduced& reduced, ReduceExchange& exchange,
                        CriticalPathPacks& packs) {
  if (!cfg.critical_path) return;
  Report critical;
  critical.problems = reduced.report.problems;
  add_critical_paths_across(critical, reduced.files, exchange, packs);
  if (exchange.rank() == 0) reduced.critical = std::move(critical);
}

// On the process that writes: the baseline comparison, the report in its format, the exit code.
int write_report(const ReportConfig& cfg, Reduced& reduced) {
  Report& report = reduced.report;
  if (reduced.baseline) {
    const Report& base = *reduced.baseline;
    for (const FileProblem& p : base.problems) {
      report.warnings.push_back("baseline file " + p.file + ": " + p.message);
    }
    if (base.ranks.empty())
      throw Error("baseline '" + cfg.baseline + "': no rank file could be read");
    compare_with_baseline(report, base, cfg.baseline);
  }
  if (reduced.critical) {
    Report& critical = *reduced.critical;
    for (std::string& w : critical.warnings) report.warnings.push_back(std::move(w));
    report.critical_steps = std::move(critical.critical_steps);
    report.critical_shares = std::move(critical.critical_shares);
    report.critical_note = std::move(critical.critical_note);
    report.critical_paths = std::move(critical.critical_paths);
  }
  // The run's configuration, where the files carry one, from the lowest rank's header.
  add_findings(report,
               report.ranks.empty() ? RunFacts{} : run_facts_of_file(report.ranks[0].source),
               cfg.findings.options);
  if (cfg.format == OutputFormat::kText) {
    emit(cfg.output, [&](std::ostream& os) { write_report_text(os, report); });
  } else if (cfg.format == OutputFormat::kJson) {
    emit(cfg.output, [&](std::ostream& os) { write_report_json(os, report); });
  } else if (cfg.format == OutputFormat::kHtml) {
    // The timeline's step is read again from the few rank files it draws.
    load_step_timelines_from_files(report, cfg.timeline);
    emit(cfg.output, [&](std::ostream& os) { write_report_html(os, report); });
  } else if (cfg.format == OutputFormat::kPrometheus) {
    emit(cfg.output, [&](std::ostream& os) { write_report_prometheus(os, report); });
  } else if (cfg.format == OutputFormat::kCsv) {
    std::error_code ec;
    const bool to_dir = !cfg.output.empty() &&
                        (cfg.output.back() == '/' || std::filesystem::is_directory(cfg.output, ec));
    if (to_dir) {
      ensure_directory(cfg.output);
      for (const CsvTable& t : report_csv_tables(report)) {
        write_file_atomically(cfg.output + "/" + t.name + ".csv",
                              [&](std::ostream& os) { os << t.text; });
      }
    } else {
      emit(cfg.output, [&](std::ostream& os) { write_report_csv(os, report); });
    }
  }
  const int code = exit_code(report, reduced.files.size());
  if (code != kExitOk) return code;
  return apply_finding_gates(report, cfg.findings, "report");
}

// One process reads every file.
int run_report(const ReportConfig& cfg) {
  Reduced reduced;
  reduced.files = report_files(cfg);
  if (cfg.format == OutputFormat::kChrome) {
    // Streamed: each rank's events are written as its file is read.
    emit(cfg.output, [&](std::ostream& os) {
      ChromeTraceWriter trace(os);
      reduced.report = reduce_rank_files(reduced.files, cfg.reduce,
                                         [&](const RankTimeline& t) { trace.add(t); });
      trace.finish();
    });
    return exit_code(reduced.report, reduced.files.size());
  }
  // The critical path's steps are packed as the reduction reads each file: one read serves both.
  CriticalPathPacks packs;
  reduced.report =
      reduce_rank_files(reduced.files, cfg.reduce, {}, cfg.critical_path ? &packs : nullptr);
  if (!cfg.baseline.empty()) {
    reduced.baseline = reduce_rank_files(expand_rank_inputs({cfg.baseline}), cfg.reduce);
  }
  SoloExchange alone;
  find_critical_path(cfg, reduced, alone, packs);
  return write_report(cfg, reduced);
}

// The list of files, expanded on process 0 and sent to the others, so every process shares the
// same list; "" and the error where it cannot be expanded.
std::pair<std::vector<std::string>, std::string> shared_inputs(
    const std::function<std::vector<std::string>()>& expand, ReduceExchange& exchange) {
  ByteWriter out;
  if (exchange.rank() == 0) {
    try {
      const std::vector<std::string> files = expand();
      out.put<bool>(true);
      out.put<std::uint64_t>(files.size());
      for (const std::string& f : files) out.put_string(f);
    } catch (const std::exception& e) {
      out = ByteWriter{};
      out.put<bool>(false);
      out.put_string(e.what());
    }
  }
  const std::string bytes = exchange.broadcast(out.take());
  ByteReader in(bytes);
  if (!in.get<bool>()) return {{}, in.get_string()};
  std::vector<std::string> files(in.get<std::uint64_t>());
  for (std::string& f : files) f = in.get_string();
  return {files, ""};
}

// Under mpirun or srun: every process reads its share of the files; process 0 writes.
int run_report_across(const ReportConfig& cfg, RankContext& ctx, const Command* command) {
  MpiReduceExchange exchange(ctx.comm());
  Reduced reduced;
  std::string error;
  std::tie(reduced.files, error) = shared_inputs([&] { return report_files(cfg); }, exchange);
  std::vector<std::string> baseline_files;
  if (error.empty() && !cfg.baseline.empty()) {
    std::tie(baseline_files, error) =
        shared_inputs([&] { return expand_rank_inputs({cfg.baseline}); }, exchange);
  }
  if (!error.empty()) {
    if (ctx.rank() == 0) std::cerr << error_prefix(command) << error << std::endl;
    return kExitFailure;
  }
  // The step graph needs every rank's ops of a step: each process packs its files' steps as it
  // reads them for the reduction, and the steps then go to their owners.
  CriticalPathPacks packs;
  reduced.report = reduce_rank_files_across(reduced.files, cfg.reduce, exchange,
                                            cfg.critical_path ? &packs : nullptr);
  if (!cfg.baseline.empty()) {
    reduced.baseline = reduce_rank_files_across(baseline_files, cfg.reduce, exchange);
  }
  find_critical_path(cfg, reduced, exchange, packs);
  return run_on_rank_zero(ctx, command, [&] { return write_report(cfg, reduced); });
}

class ReportCommand final : public Command {
 public:
  const char* name() const override { return "report"; }
  const char* summary() const override {
    return "reduce rank-<R>.json files (a directory or files) into an overlap, bandwidth and "
           "straggler report";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()(
        "format", po::value<std::string>()->default_value("text"),
        "text, json (schema commprof.report v1), csv, html (self-contained page with charts), "
        "chrome (Trace Event JSON for Perfetto / chrome://tracing), prometheus (text exposition "
        "for node_exporter's textfile collector)")(
        "output,o", po::value<std::string>(),
        "write here instead of stdout; for csv, a directory (existing, or ending in /) gets one "
        "<table>.csv per table")("peak-busbw", po::value<double>(),
                                 "the link's bus bandwidth in GB/s: adds % of peak")(
        "baseline", po::value<std::string>(),
        "a run with every category serialized (run --no-overlap): speed-up, communication "
        "hidden, interference cost")(
        "timeline-step", po::value<int>(),
        "html: the step whose timeline is drawn (default: the measured step with per-op timing "
        "whose slowest rank took longest)")(
        "timeline-ranks", po::value<int>()->default_value(16),
        "html: ranks drawn on the timeline, the slowest and fastest at that step; the others are "
        "folded to their step time")("timeline-rank", po::value<int>()->default_value(0),
                                     "html: a rank the timeline always draws")(
        "merged-out", po::value<std::string>(),
        "where an NCCL profiler plugin capture given with PyTorch traces of the same job (report "
        "CAPTURE_DIR TRACE_DIR) writes the merged rank files (default: a new directory under "
        "$TMPDIR)")(
        "no-critical-path", po::bool_switch(),
        "leave out the critical path of each step (it packs each rank's steps as the files are "
        "read and builds one step's graph at a time, shared among the processes under mpirun)");
    define_finding_gates(visible);
    add_rank_inputs(hidden);
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }

  void configure(const po::variables_map& vm) override {
    cfg_.inputs = rank_inputs(vm);
    cfg_.format = parse_output_format(
        vm["format"].as<std::string>(),
        {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kCsv, OutputFormat::kHtml,
         OutputFormat::kChrome, OutputFormat::kPrometheus});
    // Every rank's per-step points only for the page that draws them.
    cfg_.reduce.step_points = cfg_.format == OutputFormat::kHtml;
    if (vm.count("output") != 0) cfg_.output = vm["output"].as<std::string>();
    if (vm.count("peak-busbw") != 0) {
      cfg_.reduce.peak_busbw_gbps = vm["peak-busbw"].as<double>();
      if (!(cfg_.reduce.peak_busbw_gbps > 0))
        throw ConfigError("--peak-busbw must be positive (GB/s)");
    }
    if (vm.count("baseline") != 0) {
      cfg_.baseline = vm["baseline"].as<std::string>();
      if (cfg_.format == OutputFormat::kChrome)
        throw ConfigError("--baseline does not apply to --format chrome");
    }
    cfg_.findings = read_finding_gates(vm);
    if (!cfg_.findings.fail_if.empty() && cfg_.format == OutputFormat::kChrome)
      throw ConfigError("--fail-if does not apply to --format chrome (it has no findings)");
    cfg_.critical_path = !vm["no-critical-path"].as<bool>();
    if (vm.count("merged-out") != 0) cfg_.merged_out = vm["merged-out"].as<std::string>();
    cfg_.timeline.always_rank = vm["timeline-rank"].as<int>();
    if (cfg_.timeline.always_rank < 0) throw ConfigError("--timeline-rank must not be negative");
    cfg_.timeline.ranks = vm["timeline-ranks"].as<int>();
    if (cfg_.timeline.ranks < 1) throw ConfigError("--timeline-ranks must be at least 1");
    if (vm.count("timeline-step") != 0) {
      cfg_.timeline.step = vm["timeline-step"].as<int>();
      if (cfg_.timeline.step < 0) throw ConfigError("--timeline-step must not be negative");
    }
  }

  std::string backend_name() const override { return ""; }

  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    // The Chrome trace holds every op of every rank in one stream: one process writes it.
    if (ctx.size() == 1 || cfg_.format == OutputFormat::kChrome) {
      return run_on_rank_zero(ctx, this, [&] { return run_report(cfg_); });
    }
    return run_report_across(cfg_, ctx, this);
  }

 private:
  ReportConfig cfg_;
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace commprof
