// SPDX-License-Identifier: MIT
// `commprof compare BASE NEW [--fail-if T...]`. BASE and NEW are each a directory of rank files,
// rank files, or a report JSON. Exit 0: no threshold crossed; 3: at least one crossed (a CI job
// gates on it); 1: a run could not be read; 2: usage error. Runs on rank 0 only under mpirun.
#include "analysis/commands/compare_command.hpp"

#include <iostream>

#include "analysis/compare/comparison_writers.hpp"
#include "src/cli/output_format.hpp"
#include "src/cli/parse.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/standard_output.hpp"
#include "src/runtime/rank_context.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

struct CompareConfig {
  std::string base, next;
  std::vector<Threshold> thresholds;
  OutputFormat format = OutputFormat::kText;
  std::string output;
};

int run_compare(const CompareConfig& cfg) {
  const Comparison c =
      compare_runs(load_run_metrics(cfg.base), load_run_metrics(cfg.next), cfg.thresholds);
  auto write = [&](std::ostream& os) {
    if (cfg.format == OutputFormat::kJson) {
      write_comparison_json(os, c);
    } else if (cfg.format == OutputFormat::kHtml) {
      write_comparison_html(os, c);
    } else {
      write_comparison_text(os, c);
    }
  };
  if (cfg.output.empty()) {
    write_to_stdout("the comparison", write);
  } else {
    write_file_atomically(cfg.output, write);
  }
  if (c.crossed > 0) {
    // Said on stderr too, so a CI log shows it whatever the format and destination.
    std::cerr << "commprof compare: " << c.crossed
              << " metric(s) crossed a --fail-if threshold (exit 3)" << std::endl;
    return kExitRegression;
  }
  return kExitOk;
}

class CompareCommand final : public Command {
 public:
  const char* name() const override { return "compare"; }
  const char* summary() const override {
    return "compare two runs (result directories or report JSON): step time, busy time, "
           "overlap, busbw, straggler; exit 3 when a --fail-if threshold is crossed";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()(
        "fail-if", po::value<std::vector<std::string>>()->multitoken(),
        "thresholds, e.g. 'step>+5%' 'busbw<-3%' 'overlap<-2pp' 'busbw[dp]<-10%': exit 3 when "
        "the change from BASE to NEW crosses one. Metrics: step, comp, comm, mem, busy, "
        "exposed, idle, overlap, hidden, busbw, straggler")(
        "format", po::value<std::string>()->default_value("text"),
        "text, json (schema commprof.compare v1) or html (self-contained page)")(
        "output,o", po::value<std::string>(), "write here instead of stdout");
    hidden.add_options()("runs", po::value<std::vector<std::string>>(), "BASE and NEW");
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("runs", -1);
  }

  void configure(const po::variables_map& vm) override {
    const auto runs =
        vm.count("runs") ? vm["runs"].as<std::vector<std::string>>() : std::vector<std::string>{};
    if (runs.size() != 2) {
      throw ConfigError(
          "expected two runs, BASE and NEW (result directories, rank files or "
          "report JSON), got " +
          std::to_string(runs.size()));
    }
    cfg_.base = runs[0];
    cfg_.next = runs[1];
    if (vm.count("fail-if") != 0) {
      for (const std::string& t : vm["fail-if"].as<std::vector<std::string>>())
        cfg_.thresholds.push_back(parse_threshold(t));
    }
    cfg_.format =
        parse_output_format(vm["format"].as<std::string>(),
                            {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kHtml});
    if (vm.count("output") != 0) cfg_.output = vm["output"].as<std::string>();
  }

  std::string backend_name() const override { return ""; }

  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    return run_on_rank_zero(ctx, this, [&] { return run_compare(cfg_); });
  }

 private:
  CompareConfig cfg_;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

}  // namespace commprof
