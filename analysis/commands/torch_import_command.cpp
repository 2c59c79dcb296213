// SPDX-License-Identifier: MIT
// `commprof import-torch TRACES... -o DIR`: PyTorch profiler traces (one per rank, plain or gzip
// JSON) -> rank-<R>.json files that `commprof report DIR` reduces. Runs on one process (under
// mpirun only rank 0 works). Every trace is read before anything is written; each rank file is
// written atomically. Exit 0: imported; 1: a trace could not be imported (nothing written);
// 2: usage error.
#include "analysis/commands/torch_import_command.hpp"

#include <filesystem>
#include <iostream>
#include <set>

#include "analysis/commands/import_options.hpp"
#include "analysis/torch/torch_import.hpp"
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
    ImportArgs::define(visible, hidden, "the trace's distributedInfo");
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }

  void configure(const po::variables_map& vm) override {
    args_.read(vm, "PyTorch profiler traces (one per rank)", "trace");
    options_.rank = args_.rank;
  }

  std::string backend_name() const override { return ""; }

  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    return run_on_rank_zero(ctx, this, [&] { return run_import(); });
  }

 private:
  int run_import() {
    RuleSet rules;
    options_.rules = args_.rules(rules);
    std::vector<RankTimeline> timelines;
    std::vector<TorchImportSummary> summaries(args_.inputs.size());
    std::set<int> ranks;
    const int files = static_cast<int>(args_.inputs.size());
    for (int i = 0; i < files; ++i) {
      timelines.push_back(import_torch_trace(args_.inputs[i], options_, i, files, &summaries[i]));
      if (!ranks.insert(timelines.back().rank).second) {
        throw Error(log::cat(args_.inputs[i], ": rank ", timelines.back().rank,
                             " was already given by another trace"));
      }
    }
    const std::int64_t origin_us = align_torch_origins(timelines, summaries);
    std::filesystem::create_directories(args_.output);
    for (std::size_t i = 0; i < timelines.size(); ++i) {
      write_rank_file(args_.output, timelines[i], args_.format);
      const TorchImportSummary& s = summaries[i];
      std::cout << "rank " << s.rank << " (rank from " << s.rank_source << "): " << s.steps
                << " steps, ops COMP " << s.ops[index_of(Category::kComp)] << " COMM "
                << s.ops[index_of(Category::kComm)] << " MEM " << s.ops[index_of(Category::kMem)]
                << "; " << s.activities << " GPU activities, " << s.outside_steps
                << " outside steps, " << s.ignored << " ignored <- " << s.file << std::endl;
      if (s.origin_us != 0) {
        std::cout << "# rank " << s.rank
                  << ": times are Unix-epoch microseconds (PyTorch before 2.1): moved onto the "
                     "earliest trace's first event, "
                  << origin_us << " us (the rank file's configuration records it as time_origin_us)"
                  << std::endl;
      }
      if (s.whole_trace) {
        std::cout << "# rank " << s.rank
                  << ": no ProfilerStep#N ranges (torch.profiler without a schedule): the whole "
                     "trace, from the first GPU activity's launch to the last one's end, is one "
                     "step"
                  << std::endl;
      }
    }
    std::cout << "# wrote " << timelines.size() << " rank file(s) to " << args_.output
              << "; reduce with: commprof report " << args_.output << std::endl;
    return kExitOk;
  }

  ImportArgs args_;
  TorchImportOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_import_torch_command() {
  return std::make_unique<ImportTorchCommand>();
}

}  // namespace commprof
