// SPDX-License-Identifier: MIT
// `commprof project DIR [DIR…] --layout tp=…,pp=…,dp=… | --sweep N`: a measured run's step
// predicted at another layout (workloads/prediction/): predicted step, exposed communication,
// overlap and busbw per communicator kind. Several directories are runs of one source, each
// figure their median (source_runs.hpp). --validate runs the mock at the target (every rank of a
// job of the target's size, as `commprof run` does) and prints predicted against measured with the
// error. Exit 0: projected (and validated); 1: a failure while running; 2: usage error, input that
// is not a `commprof run` result, or a layout that does not fit the model. Without --validate it
// runs on rank 0 only under mpirun.
#include "workloads/commands/project_command.hpp"

#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>

#include "analysis/graph/step_graph.hpp"
#include "analysis/group_time.hpp"
#include "analysis/reducer.hpp"
#include "src/cli/common_options.hpp"
#include "src/cli/output_format.hpp"
#include "src/cli/parse.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/standard_output.hpp"
#include "src/runtime/mpi_check.hpp"
#include "src/runtime/output_dir.hpp"
#include "src/runtime/rank_context.hpp"
#include "workloads/commands/mock_run.hpp"
#include "workloads/commands/project_report.hpp"
#include "workloads/execution/executor.hpp"
#include "workloads/layout.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

struct ProjectConfig {
  std::vector<std::string> inputs;
  std::optional<ParallelLayout> layout;
  int sweep = 0;
  std::string links;
  std::vector<std::string> baseline;
  bool overlap_slowdown = true;
  bool rank_spread = true;
  int jitter_draws = 32;
  int gpus_per_node = -1;  // -1: from the run
  OutputFormat format = OutputFormat::kText;
  std::string output;
  bool validate = false;
  int validate_runs = 1;
  std::string validate_out;
  int steps = 0, warmup_steps = -1;  // 0 / -1: as the measured run
};

// Where the target's nodes begin: --gpus-per-node, else the run's ranks per host where it spanned
// several hosts, else one node for every target rank.
int resolve_gpus_per_node(const ProjectConfig& cfg, const MeasuredRun& run, std::string& why) {
  if (cfg.gpus_per_node > 0) {
    why = log::cat(cfg.gpus_per_node, " ranks per node (--gpus-per-node)");
    return cfg.gpus_per_node;
  }
  if (run.rates.hosts > 1) {
    why = log::cat(run.rates.ranks_per_host, " ranks per node, as the run had on its ",
                   run.rates.hosts, " hosts (--gpus-per-node sets it)");
    return run.rates.ranks_per_host;
  }
  why = "every target rank on one node, as the run's ranks were (--gpus-per-node sets it)";
  return 0;
}

// Every rank's estimates, summed at rank 0 over the step's instances: each rank holds a
// group's calls once for each of its communicator's ranks, so it adds its share (1 / ranks).
// Collective over the world, in the order of kGroupNames on every rank (kNone's entry, which no
// call runs on, included: it stays zero).
std::map<std::string, GroupEstimate> summed_estimates(
    RankContext& ctx, const std::map<std::string, GroupEstimate>& mine) {
  std::vector<double> shares;
  for (const NamedValue<Group>& g : kGroupNames) {
    const auto it = g.value == Group::kNone ? mine.end() : mine.find(g.name);
    const GroupEstimate e = it == mine.end() ? GroupEstimate{} : it->second;
    const double share = e.ranks > 0 ? 1.0 / e.ranks : 0.0;
    shares.insert(shares.end(), {static_cast<double>(e.calls) * share,
                                 static_cast<double>(e.estimated) * share, e.ns * share});
  }
  std::vector<double> sums(shares.size(), 0.0);
  COMMPROF_MPI_CHECK(MPI_Reduce(shares.data(), sums.data(), static_cast<int>(shares.size()),
                                MPI_DOUBLE, MPI_SUM, 0, ctx.comm()));
  std::map<std::string, GroupEstimate> out;
  for (std::size_t i = 0; i < std::size(kGroupNames); ++i) {
    const auto calls = static_cast<std::int64_t>(std::llround(sums[3 * i]));
    if (calls == 0) continue;
    GroupEstimate& e = out[kGroupNames[i].name];
    e.calls = calls;
    e.estimated = static_cast<std::int64_t>(std::llround(sums[3 * i + 1]));
    e.ns = sums[3 * i + 2];
  }
  return out;
}

// The estimates beside the validation run's own collectives: per communicator kind, the
// instances' times (each its shortest member's, from the last arrival), mean over the steps.
std::vector<EstimateRow> estimate_rows(const std::map<std::string, GroupEstimate>& estimates,
                                       const std::vector<StepGraph>& graphs) {
  std::map<std::string, double> measured;
  for (const StepGraph& g : graphs) {
    for (const GraphCollective& c : g.collectives) {
      measured[std::string(group_of(c.comm))] += static_cast<double>(c.time_ns);
    }
  }
  std::vector<EstimateRow> rows;
  for (const auto& [group, e] : estimates) {
    EstimateRow r;
    r.group = group;
    r.calls = e.calls;
    r.estimated = e.estimated;
    r.estimate_ns = e.ns;
    const auto it = measured.find(group);
    if (it != measured.end()) r.measured_ns = it->second / static_cast<double>(graphs.size());
    rows.push_back(r);
  }
  return rows;
}

class ProjectCommand final : public Command {
 public:
  const char* name() const override { return "project"; }
  const char* summary() const override {
    return "predict a run's step at another layout (--layout tp=2,pp=2,dp=2 or --sweep N) from "
           "its measured rates (the median of several runs' where several directories are "
           "given) and a link model; --validate runs the target and measures the error";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()(
        "layout", po::value<std::string>(),
        "the target: tp=N,pp=N,dp=N[,cp=N,ep=N,etp=N] (missing degrees 1), the run's model and "
        "options otherwise")("sweep", po::value<int>(),
                             "instead of --layout: every tp x pp x cp x dp layout of this many "
                             "ranks (and ep, for a model with experts), ranked by predicted "
                             "step")(
        "links", po::value<std::string>(),
        "the link model for collectives (commprof bench --fit-links FILE); default: fitted "
        "from the run's own collectives per communicator kind")(
        "baseline", po::value<std::string>(),
        "DIR: a second run of the same source (model, options, layout), typically with "
        "--no-overlap: "
        "its ops count as alone when the overlap slowdown is measured")(
        "no-overlap-slowdown", po::bool_switch(),
        "do not apply the measured overlap slowdown: every op of the target takes its time "
        "alone")("no-rank-spread", po::bool_switch(),
                 "do not give target ranks the compute speeds the run's ranks measured on the "
                 "same work: every rank computes at the class rates")(
        "jitter-draws", po::value<int>()->default_value(32),
        "replays with the measured step-to-step compute jitter (each target rank's compute "
        "scaled by a factor drawn from the run's steps), the figures their means; 0: one replay "
        "at the ranks' mean speeds")(
        "gpus-per-node", po::value<int>(),
        "ranks per node of the target (a communicator whose ranks span nodes takes the "
        "inter_node fit); default: the run's ranks per host where it had several hosts, else "
        "one node")("format", po::value<std::string>()->default_value("text"),
                    "text or json (schema commprof.projection v1)")(
        "output,o", po::value<std::string>(), "write here instead of stdout")(
        "validate", po::bool_switch(),
        "run the mock at the target under this job (mpirun -np <target ranks>), as `commprof "
        "run` would, and print predicted against measured step, exposed communication and "
        "overlap with the error in %")(
        "validate-runs", po::value<int>(),
        "with --validate: run the target this many times (default 1): the table compares with "
        "the run of median step and prints every run's step, so the error can be set beside "
        "the machine's own run-to-run spread")(
        "validate-out", po::value<std::string>(),
        "with --validate: where its rank files go (default: <DIR>-validate-tpN-ppN-dpN beside "
        "the input)")("steps", po::value<int>(),
                      "with --validate: measured steps (default: the run's)")(
        "warmup-steps", po::value<int>(), "with --validate: warm-up steps (default: the run's)");
    add_runtime_options(visible);
    hidden.add_options()("inputs", po::value<std::vector<std::string>>(),
                         "a result directory or one run's rank files; several directories: "
                         "runs of one source, combined");
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }

  void configure(const po::variables_map& vm) override {
    runtime_ = read_runtime_options(vm);
    if (vm.count("inputs") == 0) {
      throw ConfigError(
          "no input: give the result directory (or rank files) of a `commprof run`, or several "
          "directories of runs of the same source");
    }
    cfg_.inputs = vm["inputs"].as<std::vector<std::string>>();
    if (vm.count("layout") != 0) cfg_.layout = parse_layout(vm["layout"].as<std::string>());
    if (vm.count("sweep") != 0) {
      cfg_.sweep = vm["sweep"].as<int>();
      if (cfg_.sweep < 1) throw ConfigError("--sweep must be at least 1");
    }
    if (cfg_.layout.has_value() == (cfg_.sweep > 0)) {
      throw ConfigError("give one of --layout tp=N,pp=N,dp=N and --sweep N");
    }
    if (vm.count("links") != 0) cfg_.links = vm["links"].as<std::string>();
    if (vm.count("baseline") != 0) cfg_.baseline = {vm["baseline"].as<std::string>()};
    cfg_.overlap_slowdown = !vm["no-overlap-slowdown"].as<bool>();
    cfg_.rank_spread = !vm["no-rank-spread"].as<bool>();
    cfg_.jitter_draws = vm["jitter-draws"].as<int>();
    if (cfg_.jitter_draws < 0 || cfg_.jitter_draws > 100000) {
      throw ConfigError("--jitter-draws must be from 0 to 100000, not " +
                        std::to_string(cfg_.jitter_draws));
    }
    if (vm.count("gpus-per-node") != 0) {
      cfg_.gpus_per_node = vm["gpus-per-node"].as<int>();
      if (cfg_.gpus_per_node < 1) throw ConfigError("--gpus-per-node must be at least 1");
    }
    cfg_.format = parse_output_format(vm["format"].as<std::string>(),
                                      {OutputFormat::kText, OutputFormat::kJson});
    if (vm.count("output") != 0) cfg_.output = vm["output"].as<std::string>();
    cfg_.validate = vm["validate"].as<bool>();
    if (cfg_.validate && cfg_.sweep > 0) {
      throw ConfigError("--validate checks one layout: use it with --layout, not --sweep");
    }
    for (const char* only : {"validate-out", "validate-runs", "steps", "warmup-steps"}) {
      if (vm.count(only) != 0 && !cfg_.validate) {
        throw ConfigError(std::string("--") + only + " is for --validate");
      }
    }
    if (vm.count("validate-out") != 0) cfg_.validate_out = vm["validate-out"].as<std::string>();
    if (vm.count("validate-runs") != 0) {
      cfg_.validate_runs = vm["validate-runs"].as<int>();
      if (cfg_.validate_runs < 1) throw ConfigError("--validate-runs must be at least 1");
    }
    if (vm.count("steps") != 0) {
      cfg_.steps = vm["steps"].as<int>();
      if (cfg_.steps < 1) throw ConfigError("--steps must be at least 1");
    }
    if (vm.count("warmup-steps") != 0) {
      cfg_.warmup_steps = vm["warmup-steps"].as<int>();
      if (cfg_.warmup_steps < 0) throw ConfigError("--warmup-steps must not be negative");
    }
  }

  std::string backend_name() const override { return cfg_.validate ? runtime_.backend : ""; }
  // The run's op timing is read once MPI is up; the backend is made before: activity records on,
  // as `run`'s default asks, so a run timed that way (sampled) can be matched.
  BackendOptions backend_options() const override {
    BackendOptions options = runtime_.backend_options;
    options.activity_timing = cfg_.validate && needs_activity(OpTimingMode::kAuto);
    return options;
  }

  int run(RankContext& ctx, Backend* backend, const BackendChoice&) override {
    if (!cfg_.validate) return on_rank_zero(ctx, [&] { return project_only(); });
    return validate(ctx, *backend);
  }

 private:
  // run_on_rank_zero, but input that is not what the command takes (not a run, a layout that
  // does not fit) is a usage error, exit 2, as a bad option is.
  int on_rank_zero(RankContext& ctx, const std::function<int()>& work) const {
    return run_on_rank_zero(ctx, this, [&] {
      try {
        return work();
      } catch (const ConfigError& e) {
        std::cerr << error_prefix(this) << e.what() << std::endl;
        return static_cast<int>(kExitUsage);
      }
    });
  }

  struct Prepared {
    MeasuredRun run;
    LinkModel links;
    ProjectionOptions options;
    ProjectionBasis basis;
  };

  Prepared prepare() const {
    Prepared p;
    p.run = load_source_runs(cfg_.inputs);
    if (!cfg_.baseline.empty()) add_baseline(p.run, cfg_.baseline);
    p.options.overlap_slowdown = cfg_.overlap_slowdown;
    p.options.rank_spread = cfg_.rank_spread;
    p.options.jitter_draws = cfg_.jitter_draws;
    if (!cfg_.links.empty()) p.links = read_link_model(cfg_.links);
    p.basis.inputs = cfg_.inputs;
    p.basis.links = cfg_.links;
    p.options.gpus_per_node = resolve_gpus_per_node(cfg_, p.run, p.basis.gpus_per_node_why);
    p.basis.gpus_per_node = p.options.gpus_per_node;
    return p;
  }

  void emit(const std::function<void(std::ostream&)>& write) const {
    if (cfg_.output.empty()) {
      write_to_stdout("the projection", write);
    } else {
      write_file_atomically(cfg_.output, write);
    }
  }

  int project_only() const {
    Prepared p = prepare();
    p.options.links = cfg_.links.empty() ? nullptr : &p.links;  // where p now lies
    if (cfg_.sweep > 0) {
      std::vector<std::string> refused;
      const std::vector<Projection> ranked = sweep_layouts(p.run, cfg_.sweep, p.options, &refused);
      if (ranked.empty()) {
        throw ConfigError(log::cat("no layout of ", cfg_.sweep, " ranks fits the run's model",
                                   refused.empty() ? std::string() : ": " + refused.front()));
      }
      emit([&](std::ostream& os) {
        if (cfg_.format == OutputFormat::kJson) {
          write_sweep_json(os, p.run, p.basis, cfg_.sweep, ranked, refused);
        } else {
          write_sweep_text(os, p.run, p.basis, cfg_.sweep, ranked, refused);
        }
      });
      return kExitOk;
    }
    const Projection projection = project(p.run, *cfg_.layout, p.options);
    emit([&](std::ostream& os) { write(os, p, projection, nullptr); });
    return kExitOk;
  }

  void write(std::ostream& os, const Prepared& p, const Projection& projection,
             const Validation* v) const {
    if (cfg_.format == OutputFormat::kJson) {
      write_projection_json(os, p.run, p.basis, projection, v);
    } else {
      write_projection_text(os, p.run, p.basis, projection, v);
    }
  }

  std::string default_validate_out() const {
    std::string base = cfg_.inputs.front();
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    if (!std::filesystem::is_directory(base)) {
      base = std::filesystem::path(base).parent_path().string();
      if (base.empty()) base = ".";
    }
    const ParallelLayout& l = *cfg_.layout;
    std::string out = log::cat(base, "-validate-tp", l.tp, "-pp", l.pp, "-dp", l.dp);
    if (l.cp > 1) out += log::cat("-cp", l.cp);
    if (l.ep > 1) out += log::cat("-ep", l.ep);
    return out;
  }

  // Every rank reads the run (the files must be readable everywhere, as --compute-from's are),
  // rank 0 projects; all agree on any error; every rank runs the mock at the target; rank 0 reads
  // the new rank files back and prints both.
  int validate(RankContext& ctx, Backend& backend) {
    std::optional<Prepared> prepared;
    std::optional<Projection> projection;
    WorkloadConfig target;
    std::string problem;
    try {
      prepared.emplace(prepare());
      prepared->options.links = cfg_.links.empty() ? nullptr : &prepared->links;
      target = target_workload(prepared->run, *cfg_.layout);
      if (ctx.rank() == 0) projection = project(prepared->run, *cfg_.layout, prepared->options);
    } catch (const Error& e) {  // on one rank or all: every rank must hear of it
      problem = e.what();
    }
    ctx.agree(problem.empty(), problem);
    const int world = cfg_.layout->world();
    ctx.agree(ctx.size() == world,
              log::cat("--validate runs the target's ", world, " ranks (", describe(*cfg_.layout),
                       "): start it with mpirun -np ", world, " (this job has ", ctx.size(), ")"));
    ctx.agree(backend.supports(target.shape.dtype), std::string("the ") + backend.name() +
                                                        " backend cannot run the run's " +
                                                        dtype_name(target.shape.dtype));
    const RunSettings& measured = prepared->run.config.settings;
    MockRun mock;
    mock.workload = target;
    mock.settings = measured;
    if (cfg_.steps > 0) mock.settings.steps = cfg_.steps;
    if (cfg_.warmup_steps >= 0) mock.settings.warmup_steps = cfg_.warmup_steps;
    const std::string base = cfg_.validate_out.empty() ? default_validate_out() : cfg_.validate_out;
    // Run k > 1 beside the first, in <base>-run<k>, each with communicators of its own (run_mock
    // makes and frees them) in the same processes: their spread is the machine's run to run.
    std::vector<std::string> dirs;
    MockRunResult first;
    for (int k = 1; k <= cfg_.validate_runs; ++k) {
      mock.out_dir = k == 1 ? base : log::cat(base, "-run", k);
      mock.estimate_collectives = k == 1;
      prepare_output_directory(ctx, mock.out_dir, runtime_.force);
      MockRunResult result = run_mock(ctx, backend, mock);
      if (result.stopped_by != 0) return 128 + result.stopped_by;
      if (k == 1) first = std::move(result);
      dirs.push_back(mock.out_dir);
      if (ctx.rank() == 0 && cfg_.validate_runs > 1) {
        log::info(
            log::cat("validation run ", k, " of ", cfg_.validate_runs, " done: ", mock.out_dir));
      }
    }
    const std::map<std::string, GroupEstimate> estimates = summed_estimates(ctx, first.estimates);
    ctx.barrier();  // every rank's file is closed before rank 0 reads them
    return on_rank_zero(ctx, [&] {
      std::vector<MeasuredValidation> runs;
      std::vector<StepGraph> first_graphs;
      for (const std::string& dir : dirs) {
        std::vector<std::string> files;
        for (int r = 0; r < world; ++r)
          files.push_back(rank_file_path(dir, r, RankFileFormat::kJson));
        std::vector<StepGraph> graphs = load_step_graphs(files);
        if (graphs.empty())
          throw Error("the validation run in " + dir +
                      " holds no measured step with per-op timing");
        runs.push_back({dir, what_if(graphs, {}).measured});
        if (first_graphs.empty()) first_graphs = std::move(graphs);
      }
      Validation v;
      v.steps = mock.settings.steps;
      v.warmup_steps = mock.settings.warmup_steps;
      v.runs = std::move(runs);
      v.choose_median();
      v.estimate_model = first.estimate_model;
      v.no_estimate_why = first.no_estimate_why;
      v.estimates = estimate_rows(estimates, first_graphs);
      emit([&](std::ostream& os) { write(os, *prepared, *projection, &v); });
      return kExitOk;
    });
  }

  RuntimeOptions runtime_;
  ProjectConfig cfg_;
};

}  // namespace

std::unique_ptr<Command> make_project_command() { return std::make_unique<ProjectCommand>(); }

}  // namespace commprof
