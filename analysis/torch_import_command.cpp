// SPDX-License-Identifier: MIT
// `commprof import-torch TRACES... -o DIR`: PyTorch profiler traces (one per rank, plain or gzip
// JSON) -> rank-<R>.json files that `commprof report DIR` reduces. Runs on one process (under
// mpirun only rank 0 works). Every trace is read before anything is written; each rank file is
// written atomically. Exit 0: imported; 1: a trace could not be imported (nothing written);
// 2: usage error.
#include "analysis/torch_import_command.hpp"

#include <filesystem>
#include <iostream>
#include <set>

#include "analysis/torch_import.hpp"
#include "src/cli/parse.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/timeline/rank_file.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

class ImportTorchCommand final : public Command {
 public:
  const char* name() const override { return "import-torch"; }
  const char* summary() const override {
    return "convert PyTorch profiler traces (Chrome-trace JSON, .json or .json.gz, one per rank) "
           "into rank-<R>.json files for commprof report";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()("output,o", po::value<std::string>(),
                          "directory for rank-<R>.json (created if missing)")(
        "rules", po::value<std::string>(),
        "classification rules file replacing the built-in ones (import-nsys's format)")(
        "rank", po::value<int>(),
        "the rank of the one trace given (default: the trace's distributedInfo, else the order "
        "of the files)");
    hidden.add_options()("inputs", po::value<std::vector<std::string>>(), "traces");
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }

  void configure(const po::variables_map& vm) override {
    if (vm.count("inputs") == 0) {
      throw ConfigError("no input: give the PyTorch profiler traces (one per rank)");
    }
    inputs_ = vm["inputs"].as<std::vector<std::string>>();
    if (vm.count("output") == 0) throw ConfigError("no output directory: give -o DIR");
    output_ = vm["output"].as<std::string>();
    if (vm.count("rules") != 0) rules_path_ = vm["rules"].as<std::string>();
    if (vm.count("rank") != 0) {
      options_.rank = vm["rank"].as<int>();
      if (options_.rank < 0) throw ConfigError("--rank must not be negative");
      if (inputs_.size() != 1) {
        throw ConfigError("--rank names the rank of one trace; " + std::to_string(inputs_.size()) +
                          " were given");
      }
    }
  }

  std::string backend_name() const override { return ""; }

  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    int code = kExitOk;
    if (ctx.rank() == 0) {
      try {
        code = run_import();
      } catch (const std::exception& e) {
        std::cerr << error_prefix(this) << e.what() << std::endl;
        code = kExitFailure;
      }
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, ctx.comm());
    return code;
  }

 private:
  int run_import() {
    RuleSet rules;
    if (!rules_path_.empty()) {
      rules = RuleSet::from_file(rules_path_);
      options_.rules = &rules;
    }
    std::vector<RankTimeline> timelines;
    std::vector<TorchImportSummary> summaries(inputs_.size());
    std::set<int> ranks;
    const int files = static_cast<int>(inputs_.size());
    for (int i = 0; i < files; ++i) {
      timelines.push_back(import_torch_trace(inputs_[i], options_, i, files, &summaries[i]));
      if (!ranks.insert(timelines.back().rank).second) {
        throw Error(log::cat(inputs_[i], ": rank ", timelines.back().rank,
                             " was already given by another trace"));
      }
    }
    std::filesystem::create_directories(output_);
    for (std::size_t i = 0; i < timelines.size(); ++i) {
      write_rank_file(output_, timelines[i]);
      const TorchImportSummary& s = summaries[i];
      std::cout << "rank " << s.rank << " (rank from " << s.rank_source << "): " << s.steps
                << " steps, ops COMP " << s.ops[index_of(Category::kComp)] << " COMM "
                << s.ops[index_of(Category::kComm)] << " MEM " << s.ops[index_of(Category::kMem)]
                << "; " << s.activities << " GPU activities, " << s.outside_steps
                << " outside steps, " << s.ignored << " ignored <- " << s.file << std::endl;
      if (s.whole_trace) {
        std::cout << "# rank " << s.rank
                  << ": no ProfilerStep#N ranges (torch.profiler without a schedule): the whole "
                     "trace, from the first GPU activity's launch to the last one's end, is one "
                     "step"
                  << std::endl;
      }
    }
    std::cout << "# wrote " << timelines.size() << " rank file(s) to " << output_
              << "; reduce with: commprof report " << output_ << std::endl;
    return kExitOk;
  }

  std::vector<std::string> inputs_;
  std::string output_;
  std::string rules_path_;
  TorchImportOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_import_torch_command() {
  return std::make_unique<ImportTorchCommand>();
}

}  // namespace commprof
