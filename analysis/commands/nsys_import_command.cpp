// SPDX-License-Identifier: MIT
// `commprof import-nsys FILES.sqlite... -o DIR`: Nsight Systems exports -> rank-<R>.json files
// that `commprof report DIR` reduces. Runs on one process (under mpirun only rank 0 works).
// Exit 0: every file imported; 1: a file could not be imported (nothing is left half-written),
// or a multi-rank set holds no COMM at all; 2: usage error.
#include "analysis/commands/nsys_import_command.hpp"

#include <iostream>

#include "analysis/commands/import_options.hpp"
#include "analysis/nsys/nsys_import.hpp"
#include "src/cli/command.hpp"
#include "src/cli/parse.hpp"
#include "src/core/errors.hpp"
#include "src/runtime/rank_context.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

class ImportNsysCommand final : public Command {
 public:
  const char* name() const override { return "import-nsys"; }
  const char* summary() const override {
    return "convert Nsight Systems SQLite exports (one per rank) into rank-<R>.json files for "
           "commprof report";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    ImportArgs::define(visible, hidden,
                       "the launcher's variables nsys recorded, else the file name's _<rank> "
                       "suffix");
    visible.add_options()(
        "step-range", po::value<std::string>(),
        "foreign traces: NVTX ranges whose name starts with this mark the steps (default: "
        "commprof's 'step N' ranges; without either, the whole capture is one step)")(
        "warmup-steps", po::value<int>()->default_value(0),
        "with --step-range: the first N steps are warm-up")("print-rules", po::bool_switch(),
                                                            "print the built-in rules and exit");
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }

  void configure(const po::variables_map& vm) override {
    print_rules_ = vm["print-rules"].as<bool>();
    if (print_rules_) return;
    args_.read(vm, "nsys SQLite exports (one per rank)", "file");
    options_.rank = args_.rank;
    options_.format = args_.format;
    if (vm.count("step-range") != 0) {
      options_.step_range = vm["step-range"].as<std::string>();
      if (options_.step_range.empty()) throw ConfigError("--step-range must not be empty");
    }
    options_.warmup_steps = vm["warmup-steps"].as<int>();
    if (options_.warmup_steps < 0) throw ConfigError("--warmup-steps must not be negative");
    if (options_.warmup_steps > 0 && options_.step_range.empty()) {
      throw ConfigError("--warmup-steps applies to --step-range only (commprof marks its own)");
    }
  }

  std::string backend_name() const override { return ""; }

  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    return run_on_rank_zero(ctx, this, [&] { return run_import(); });
  }

 private:
  // How the COMM ranges were matched: by commprof's tag, or by op name (older commprof).
  static std::string comm_source(const NsysFileSummary& s) {
    if (s.comm_ranges_tagged == 0 && s.comm_ranges_by_name == 0) return "";
    std::string out = "COMM ranges: ";
    if (s.comm_ranges_tagged > 0) out += std::to_string(s.comm_ranges_tagged) + " tagged";
    if (s.comm_ranges_tagged > 0 && s.comm_ranges_by_name > 0) out += ", ";
    if (s.comm_ranges_by_name > 0) {
      out += std::to_string(s.comm_ranges_by_name) +
             " by op name (older commprof: the communicator kind only)";
    }
    return out + "; ";
  }

  int run_import() {
    if (print_rules_) {
      std::cout << RuleSet::default_text();
      return kExitOk;
    }
    RuleSet rules;
    options_.rules = args_.rules(rules);
    const auto summaries = import_nsys_files(args_.inputs, args_.output, options_);
    for (const NsysFileSummary& s : summaries) {
      std::cout << "rank " << s.rank << " (host " << s.host << ", rank from " << s.rank_source
                << (s.commprof_nvtx ? ", commprof NVTX" : ", foreign trace") << "): " << s.steps
                << " steps, ops COMP " << s.ops[index_of(Category::kComp)] << " COMM "
                << s.ops[index_of(Category::kComm)] << " MEM " << s.ops[index_of(Category::kMem)]
                << "; " << s.kernels << " kernels of " << s.activities << " activities, "
                << s.outside_steps << " outside steps, " << s.ignored << " ignored; "
                << comm_source(s) << s.seconds << " s <- " << s.file << std::endl;
      if (s.whole_capture) {
        std::cout
            << "# rank " << s.rank << ": no step markers (commprof's, or --step-range NAME):"
            << " the whole capture, from the first GPU activity's launch to the last one's end ("
            << static_cast<double>(s.capture_ns) / 1e6 << " ms), is one step" << std::endl;
      }
    }
    std::cout << "# wrote " << summaries.size() << " rank file(s) to " << args_.output
              << "; reduce with: commprof report " << args_.output << std::endl;
    return kExitOk;
  }

  ImportArgs args_;
  bool print_rules_ = false;
  NsysImportOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_import_nsys_command() {
  return std::make_unique<ImportNsysCommand>();
}

}  // namespace commprof
