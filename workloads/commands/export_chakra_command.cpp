// SPDX-License-Identifier: MIT
// `commprof export-chakra DIR|FILES --out PREFIX [--step N]`: one measured step's graph
// (analysis/graph/) as ASTRA-sim's inputs (workloads/prediction/chakra/): PREFIX.<rank>.et, one
// Chakra trace per rank; PREFIX.comm_groups.json, its communicator groups; PREFIX.network.yml, an
// analytical network fitted from the run's collectives; PREFIX.txt, what was written and what it
// loses. Exit 0: written; 1: a file could not be read, the step is not there, an op cannot be
// exported, or a file cannot be written; 2: usage error. Runs on rank 0 only under mpirun.
#include "workloads/commands/export_chakra_command.hpp"

#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/commands/rank_inputs.hpp"
#include "src/cli/output_format.hpp"
#include "src/cli/parse.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/build_config.hpp"
#include "src/core/errors.hpp"
#include "src/core/standard_output.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/timeline/rank_file.hpp"
#include "workloads/prediction/chakra/astra_network.hpp"
#include "workloads/prediction/chakra/chakra_trace.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

inline constexpr const char* kExportSchema = "commprof.export_chakra";

struct ExportChakraConfig {
  std::vector<std::string> inputs;
  std::string prefix;
  int step = -1;  ///< -1: the first measured step
  OutputFormat format = OutputFormat::kText;
};

const StepGraph& chosen_step(const std::vector<StepGraph>& graphs, int step) {
  if (step < 0) return graphs.front();
  std::string have;
  for (const StepGraph& g : graphs) {
    if (g.step == step) return g;
    have += (have.empty() ? "" : ", ") + std::to_string(g.step);
  }
  throw Error("--step " + std::to_string(step) +
              ": no rank measured that step with per-op timing (steps with ops: " + have + ")");
}

// What the export holds and loses, as the note file and the text output say it.
std::vector<std::string> export_lines(const ExportChakraConfig& cfg, const ChakraExport& e,
                                      bool first) {
  std::vector<std::string> l;
  l.push_back("step " + std::to_string(e.step) + (first ? " (the first measured step)" : "") +
              " of " + std::to_string(e.ranks.size()) + " ranks: " + cfg.prefix + ".<rank>.et");
  l.push_back("nodes: " + std::to_string(e.comp_nodes + e.mem_as_comp + e.comm_as_comp) +
              " COMP (of them " + std::to_string(e.mem_as_comp) + " MEM ops and " +
              std::to_string(e.comm_as_comp) + " COMM ops without a Chakra collective), " +
              std::to_string(e.coll_nodes) + " COMM_COLL, " + std::to_string(e.send_nodes) +
              " COMM_SEND, " + std::to_string(e.recv_nodes) + " COMM_RECV; " +
              std::to_string(e.zero_us) + " node(s) rounded to 0 us");
  l.push_back(e.ops_with_waits > 0
                  ? "dependencies: stream order and the " + std::to_string(e.ops_with_waits) +
                        " ops' recorded waits as data_deps, the waits also as ctrl_deps"
                  : "dependencies: stream order alone (the files record no waits), as data_deps");
  for (const std::string& line : chakra_losses()) l.push_back("loses: " + line);
  for (const std::string& n : e.notes) l.push_back("note: " + n);
  return l;
}

void write_notes(std::ostream& os, const ExportChakraConfig& cfg, const ChakraExport& e,
                 const std::vector<std::string>& lines, const std::vector<NetworkDim>& dims) {
  os << "commprof export-chakra: Chakra execution traces (schema ChakraProtoMsg of "
        "mlcommons/chakra et_def.proto) for ASTRA-sim\n";
  for (const std::string& l : lines) os << l << '\n';
  os << "communicator groups (" << cfg.prefix << ".comm_groups.json; pg_name on the nodes):\n";
  for (const ChakraGroup& g : e.groups) {
    os << "  " << g.id << " = " << g.comm << " (" << g.ranks.size() << " of " << g.comm_size
       << " ranks)\n";
  }
  os << "network (" << cfg.prefix << ".network.yml):\n";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    os << "  dimension " << i << ": " << dims[i].kind << ", " << dims[i].npus << " NPUs, "
       << dims[i].bandwidth_gbps << " GB/s (10^9 B/s; " << astra_bandwidth(dims[i].bandwidth_gbps)
       << " GiB/s in the YAML), " << dims[i].latency_ns << " ns; " << dims[i].how << '\n';
  }
  os << "run: AstraSim_Analytical_Congestion_Unaware --workload-configuration=" << cfg.prefix
     << " --comm-group-configuration=" << cfg.prefix << ".comm_groups.json"
     << " --network-configuration=" << cfg.prefix
     << ".network.yml --system-configuration=<system.json> "
        "--remote-memory-configuration=<memory.json>\n";
}

using WrittenFiles = std::vector<std::pair<std::string, std::size_t>>;

// The summary as JSON (schema commprof.export_chakra v1): what was written and how.
void write_summary_json(std::ostream& os, const ChakraExport& e,
                        const std::vector<NetworkDim>& dims, const std::vector<std::string>& lines,
                        const WrittenFiles& written) {
  nlohmann::ordered_json j;
  j["schema"] = kExportSchema;
  j["version"] = 1;
  j["step"] = e.step;
  j["ranks"] = e.ranks.size();
  j["nodes"] = {{"comp", e.comp_nodes + e.mem_as_comp + e.comm_as_comp},
                {"comp_from_mem", e.mem_as_comp},
                {"comp_from_comm", e.comm_as_comp},
                {"comm_coll", e.coll_nodes},
                {"comm_send", e.send_nodes},
                {"comm_recv", e.recv_nodes},
                {"zero_us", e.zero_us}};
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const ChakraGroup& grp : e.groups)
    groups.push_back({{"id", grp.id}, {"comm", grp.comm}, {"ranks", grp.ranks}});
  j["groups"] = groups;
  nlohmann::ordered_json net = nlohmann::ordered_json::array();
  for (const NetworkDim& d : dims) {
    net.push_back({{"kind", d.kind},
                   {"npus", d.npus},
                   {"topology", d.topology},
                   {"bandwidth_gbps", d.bandwidth_gbps},
                   {"latency_ns", d.latency_ns},
                   {"how", d.how}});
  }
  j["network"] = net;
  j["notes"] = lines;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [path, size] : written) out.push_back({{"path", path}, {"bytes", size}});
  j["files"] = out;
  os << j.dump(1) << '\n';
}

int run_export(const ExportChakraConfig& cfg) {
  const std::vector<std::string> files = expand_rank_inputs(cfg.inputs);
  const std::vector<StepGraph> graphs = load_step_graphs(files);
  if (graphs.empty()) {
    throw Error(
        "the rank files hold no measured step with per-op timing to export (a run with "
        "--op-timing step, or warm-up steps only)");
  }
  const StepGraph& g = chosen_step(graphs, cfg.step);
  const std::vector<NetworkDim> dims = measured_network(graphs, g);
  const ChakraExport e = chakra_export(g, dims_of(dims));
  const std::vector<std::string> lines = export_lines(cfg, e, cfg.step < 0);

  const std::filesystem::path parent = std::filesystem::path(cfg.prefix).parent_path();
  if (!parent.empty()) ensure_directory(parent.string());
  const std::string producer = std::string("commprof ") + build::kVersion;
  WrittenFiles written;
  for (const ChakraRankTrace& r : e.ranks) {
    const std::string path = cfg.prefix + "." + std::to_string(r.rank) + ".et";
    const std::string bytes = encode_chakra_trace(e, r, producer);
    write_file_atomically(path, [&](std::ostream& os) {
      os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    });
    written.emplace_back(path, bytes.size());
  }
  auto note = [&](const std::string& path, const std::function<void(std::ostream&)>& write) {
    std::ostringstream text;
    write(text);
    write_file_atomically(path, [&](std::ostream& os) { os << text.str(); });
    written.emplace_back(path, text.str().size());
  };
  note(cfg.prefix + ".comm_groups.json",
       [&](std::ostream& os) { write_comm_groups_json(os, e.groups); });
  note(cfg.prefix + ".network.yml", [&](std::ostream& os) {
    write_network_yaml(os, dims,
                       {"commprof export-chakra: ASTRA-sim analytical network from the measured "
                        "collectives of " +
                            std::to_string(graphs.size()) + " measured step(s)",
                        "bandwidth per link in GiB/s (2^30 B/s, the unit ASTRA-sim reads its "
                        "\"GB/s\" in; the fits below are in 10^9 B/s), latency in ns per step "
                        "of the ring algorithm; see " +
                            cfg.prefix + ".txt"});
  });
  note(cfg.prefix + ".txt", [&](std::ostream& os) { write_notes(os, cfg, e, lines, dims); });

  write_to_stdout("the export summary", [&](std::ostream& os) {
    if (cfg.format == OutputFormat::kJson) {
      write_summary_json(os, e, dims, lines, written);
      return;
    }
    os << "# commprof export-chakra: " << lines.front() << '\n';
    for (std::size_t i = 1; i < lines.size(); ++i) os << "# " << lines[i] << '\n';
    for (const auto& [path, size] : written) os << "wrote " << path << " (" << size << " B)\n";
  });
  return kExitOk;
}

class ExportChakraCommand final : public Command {
 public:
  const char* name() const override { return "export-chakra"; }
  const char* summary() const override {
    return "write one measured step as Chakra execution traces for ASTRA-sim "
           "(PREFIX.<rank>.et), with its communicator groups and a network fitted from the run";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()("out,o", po::value<std::string>(),
                          "path prefix of the files written: PREFIX.<rank>.et, "
                          "PREFIX.comm_groups.json, PREFIX.network.yml, PREFIX.txt")(
        "step", po::value<int>(),
        "the measured step to export (default: the first measured step with per-op timing)")(
        "format", po::value<std::string>()->default_value("text"),
        "what is printed: text, or json (schema commprof.export_chakra v1)");
    add_rank_inputs(hidden);
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }

  void configure(const po::variables_map& vm) override {
    cfg_.inputs = rank_inputs(vm);
    if (vm.count("out") == 0 || vm["out"].as<std::string>().empty()) {
      throw ConfigError("--out PREFIX is required (the files are PREFIX.<rank>.et, ...)");
    }
    cfg_.prefix = vm["out"].as<std::string>();
    if (vm.count("step") != 0) {
      cfg_.step = vm["step"].as<int>();
      if (cfg_.step < 0) throw ConfigError("--step must not be negative");
    }
    cfg_.format = parse_output_format(vm["format"].as<std::string>(),
                                      {OutputFormat::kText, OutputFormat::kJson});
  }

  std::string backend_name() const override { return ""; }

  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    return run_on_rank_zero(ctx, this, [&] { return run_export(cfg_); });
  }

 private:
  ExportChakraConfig cfg_;
};

}  // namespace

std::unique_ptr<Command> make_export_chakra_command() {
  return std::make_unique<ExportChakraCommand>();
}

}  // namespace commprof
