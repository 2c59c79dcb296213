// SPDX-License-Identifier: MIT
// `commprof diagnose DIR...`: reads the rank files one at a time into the diagnosis's facts
// (analysis/diagnosis.hpp); under mpirun or srun process p reads the p-th of N contiguous blocks
// of them, as `report` shares them, and process 0 merges the parts and writes the verdicts.
// --watch does that every --interval seconds while a job rewrites its files and says each stall
// (analysis/diagnosis_watch.hpp) as it is seen.
#include "analysis/commands/diagnose_command.hpp"

#include <mpi.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>

#include "analysis/commands/rank_inputs.hpp"
#include "analysis/diagnosis_fields.hpp"
#include "analysis/diagnosis_inputs.hpp"
#include "analysis/diagnosis_watch.hpp"
#include "analysis/report/text_table.hpp"
#include "analysis/wire_codec.hpp"
#include "src/cli/output_format.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/units.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/runtime/stop_signals.hpp"
#include "src/timeline/rank_file.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

struct DiagnoseConfig {
  std::vector<std::string> inputs;
  OutputFormat format = OutputFormat::kText;
  std::string output;  // "" stdout
  diagnosis::Options options;
  bool watch = false;
  double interval_s = 2.5;  // half the plugin's flush period: a stall said within two of them
  int iterations = 0;       // --watch: 0 until a signal
};

diagnosis::Part read_block(const std::vector<std::string>& files, std::size_t from,
                           std::size_t to) {
  diagnosis::Part part;
  for (std::size_t i = from; i < to; ++i) {
    try {
      diagnosis::add_input(files[i], part);
    } catch (const Error& e) {
      part.unreadable.push_back(e.what());
    }
  }
  return part;
}

const char* kNotRead =
    "Flight Recorder dumps and RAS status are read as files named on the command line (a "
    "directory gives its rank-<R>.json files only); RAS counts launches, not sequence numbers "
    "or transfers";

void write_text(std::ostream& os, const diagnosis::Part& part,
                const std::vector<diagnosis::Problem>& problems) {
  os << "# commprof diagnose: " << part.ranks.size() << " of " << part.world_size << " ranks read; "
     << problems.size() << " problem(s)\n";
  for (const std::string& u : part.unreadable) os << "unreadable: " << u << '\n';
  if (problems.empty())
    os << "no problem: every collective and transfer recorded completed on "
          "every rank, and no rank straggled\n";
  for (const diagnosis::Problem& p : problems) os << p.verdict << '\n';
  for (const std::string& note : diagnosis::notes(part)) os << note << '\n';
  if (problems.empty()) return;
  os << "\n# evidence\n";
  write_table(os, fields::text_rows(diagnosis_fields::kProblems, problems));
}

void write_json(std::ostream& os, const diagnosis::Part& part,
                const std::vector<diagnosis::Problem>& problems) {
  nlohmann::ordered_json j = {
      {"schema", diagnosis_fields::kSchema},
      {"version", diagnosis_fields::kVersion},
      {"units", {{"time", "ns"}}},
      {"world_size", part.world_size},
      {"ranks_read", part.ranks.size()},
      {"unreadable", part.unreadable},
      {"not_read", kNotRead},
      {"problems", fields::json_array(diagnosis_fields::kProblems, problems)}};
  os << j.dump(2) << '\n';
}

// Every process reads its block of `files`; process 0 gets the merged facts (the others an
// empty part).
// This process's block of n files: [first, last).
std::pair<std::size_t, std::size_t> my_block(const RankContext& ctx, std::size_t n) {
  const auto p = static_cast<std::size_t>(ctx.rank());
  const auto np = static_cast<std::size_t>(ctx.size());
  return {n * p / np, n * (p + 1) / np};
}

diagnosis::Part read_shared(RankContext& ctx, const std::vector<std::string>& files) {
  const auto [first, last] = my_block(ctx, files.size());
  diagnosis::Part mine = read_block(files, first, last);
  const std::vector<std::string> parts = ctx.gather(wire::encode(mine));
  diagnosis::Part all;
  if (ctx.rank() != 0) return all;
  for (const std::string& bytes : parts) all.merge(wire::decode<diagnosis::Part>(bytes));
  return all;
}

int run_diagnose(RankContext& ctx, const DiagnoseConfig& cfg) {
  const std::vector<std::string> files = expand_rank_inputs(cfg.inputs);
  diagnosis::check_one_dump_per_rank(files);
  const diagnosis::Part all = read_shared(ctx, files);
  if (ctx.rank() != 0) return kExitOk;
  // Verdicts over two jobs' records would be wrong, not merely incomplete: refused.
  if (const std::string mixed = diagnosis::different_jobs(all); !mixed.empty()) throw Error(mixed);
  const std::vector<diagnosis::Problem> problems = diagnosis::diagnose(all, cfg.options);
  auto write = [&](std::ostream& os) {
    if (cfg.format == OutputFormat::kJson) {
      write_json(os, all, problems);
    } else {
      write_text(os, all, problems);
    }
  };
  if (cfg.output.empty()) {
    write(std::cout);
  } else {
    write_file_atomically(cfg.output, write);
  }
  for (const std::string& u : all.unreadable) log::warn(u);
  if (!all.unreadable.empty()) return kExitFailure;
  return problems.empty() ? kExitOk : kExitProblems;
}

// The latest change of any of `files` (seconds); 0 when none can be read.
double newest_change_s(const std::vector<std::string>& files) {
  double newest = 0;
  for (const std::string& f : files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) continue;
    const double t =
        static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) * 1e-9;
    if (t > newest) newest = t;
  }
  return newest;
}

std::string utc_now() { return utc_text(std::time(nullptr), "%H:%M:%S"); }

// Until `interval_s` has passed, a signal came, or a file of some process's block changed since
// `since` (each process's own newest change before its read): every process watches its block
// a tenth of an interval at a time (20 ms at least), and all agree when to stop waiting. True
// when some process saw a change.
bool wait_for_change(RankContext& ctx, const std::vector<std::string>& block, double since,
                     double interval_s) {
  const double tick = std::max(0.02, interval_s / 10);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval_s);
  constexpr int kChanged = 1, kStopped = 2;
  while (std::chrono::steady_clock::now() < until) {
    pause_unless_stopped(tick);
    // One collective a tick for both questions; a change wins over a stop, as it is read first.
    const int seen = ctx.any_bits((newest_change_s(block) > since ? kChanged : 0) |
                                  (stop_signal() != 0 ? kStopped : 0));
    if ((seen & kChanged) != 0) return true;
    if ((seen & kStopped) != 0) return false;
  }
  return false;
}

// --watch: re-diagnose every interval, or as soon as a file changed; process 0 prints a line per
// refresh and each problem as StallTracker says it (analysis/diagnosis_watch.hpp). A stall is
// so said at the refresh right after the write that confirms it. Exit 4 when one was said, 0
// otherwise (at Ctrl-C or --iterations).
int run_watch(RankContext& ctx, const DiagnoseConfig& cfg) {
  install_stop_signals();
  // The interval is half the plugin's flush period: files unchanged for two flush periods
  // belong to a job that stopped writing.
  diagnosis::StallTracker tracker(4 * cfg.interval_s);
  double last_change = -1;
  bool woken_by_change = false;
  for (int refresh = 1;; ++refresh) {
    const std::vector<std::string> files = rank_files_so_far(cfg.inputs);
    // The files read_shared reads here: this process watches their times between refreshes.
    const auto [first, last] = my_block(ctx, files.size());
    const std::vector<std::string> block(files.begin() + static_cast<std::ptrdiff_t>(first),
                                         files.begin() + static_cast<std::ptrdiff_t>(last));
    const double before_read = newest_change_s(block);
    // Taken before the read, as `before_read` is: a write during the read wakes the next wait
    // and counts as a rewrite at the next refresh, not at none.
    const double change = ctx.rank() == 0 ? newest_change_s(files) : 0;
    const diagnosis::Part all = read_shared(ctx, files);
    if (ctx.rank() == 0) {
      const std::vector<diagnosis::Problem> problems = diagnosis::diagnose(all, cfg.options);
      const bool rewritten = woken_by_change || (last_change >= 0 && change > last_change);
      last_change = change;
      // The files' times are on the realtime clock.
      const double now =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      const std::vector<std::string> lines = tracker.refresh(problems, change, now);
      std::cout << "# " << utc_now() << " UTC refresh " << refresh << ": " << all.ranks.size()
                << " of " << all.world_size << " ranks read, " << problems.size()
                << " not complete or straggling"
                << (rewritten || refresh == 1 ? "" : ", no file rewritten") << '\n';
      for (const std::string& line : lines) std::cout << line << '\n';
      std::cout.flush();
    }
    if (ctx.any(stop_signal() != 0 || refresh == cfg.iterations)) {
      return ctx.broadcast(tracker.said_any() ? 1 : 0) != 0 ? kExitProblems : kExitOk;
    }
    woken_by_change = wait_for_change(ctx, block, before_read, cfg.interval_s);
  }
}

class DiagnoseCommand final : public Command {
 public:
  const char* name() const override { return "diagnose"; }
  const char* summary() const override {
    return "one verdict per collective or transfer that did not complete everywhere (never "
           "launched, arguments differ, launched not finished, no record), and stragglers; "
           "exit 4 when it finds a problem";
  }
  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()("format", po::value<std::string>()->default_value("text"),
                          "text, or json (schema commprof.diagnosis v1)")(
        "output,o", po::value<std::string>(), "a file instead of stdout")(
        "straggler-share", po::value<double>()->default_value(0.25),
        "name a step's slowest rank when the others' mean wait for it is at least this share "
        "of the step")(
        "watch", po::bool_switch(),
        "re-diagnose every --interval, and as soon as a file changes, while a job rewrites its "
        "files (the NCCL profiler plugin's): say a collective still not complete after a "
        "rewrite as a stall; until Ctrl-C (SIGINT) or SIGTERM, or --iterations")(
        "interval", po::value<double>()->default_value(2.5),
        "--watch: seconds between refreshes (half the plugin's flush period, "
        "COMMPROF_PLUGIN_FLUSH_S, 5 by default: a stall is said within about two of them; "
        "files unchanged for four intervals mean the job stopped writing)")(
        "iterations", po::value<int>()->default_value(0),
        "--watch: stop after this many refreshes; 0: until a signal");
    add_rank_inputs(hidden);
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }
  void configure(const po::variables_map& vm) override {
    cfg_.inputs = rank_inputs(vm);
    cfg_.format = parse_output_format(vm["format"].as<std::string>(),
                                      {OutputFormat::kText, OutputFormat::kJson});
    if (vm.count("output") != 0) cfg_.output = vm["output"].as<std::string>();
    cfg_.options.straggler_share = vm["straggler-share"].as<double>();
    if (!(cfg_.options.straggler_share > 0 && cfg_.options.straggler_share <= 1))
      throw ConfigError("--straggler-share must be in (0, 1]");
    cfg_.watch = vm["watch"].as<bool>();
    cfg_.interval_s = vm["interval"].as<double>();
    cfg_.iterations = vm["iterations"].as<int>();
    if (!(cfg_.interval_s > 0)) throw ConfigError("--interval must be positive (seconds)");
    if (cfg_.iterations < 0) throw ConfigError("--iterations must not be negative");
    if (cfg_.watch && (cfg_.format != OutputFormat::kText || !cfg_.output.empty()))
      throw ConfigError("--watch prints text to the terminal: no --format json or --output");
  }
  std::string backend_name() const override { return ""; }
  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    return cfg_.watch ? run_watch(ctx, cfg_) : run_diagnose(ctx, cfg_);
  }

 private:
  DiagnoseConfig cfg_;
};

}  // namespace

std::unique_ptr<Command> make_diagnose_command() { return std::make_unique<DiagnoseCommand>(); }

}  // namespace commprof
