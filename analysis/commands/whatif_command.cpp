// SPDX-License-Identifier: MIT
// `commprof whatif DIR|FILES --scale RULE...`: each measured step's graph (analysis/graph/)
// replayed as measured and with the rules applied; prints the step, exposed communication,
// overlap and critical path of both, and the predicted path by rank, category and op. Exit 0:
// replayed; 1: a file could not be read or a step could not be replayed; 2: usage error. Runs on
// rank 0 only under mpirun.
#include "analysis/commands/whatif_command.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/commands/rank_inputs.hpp"
#include "analysis/graph/what_if.hpp"
#include "analysis/report/text_table.hpp"
#include "src/cli/parse.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/standard_output.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/timeline/rank_file.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

inline constexpr const char* kWhatIfSchema = "commprof.whatif";
constexpr std::size_t kTextShares = 10;

struct WhatIfConfig {
  std::vector<std::string> inputs;
  std::vector<ScaleRule> rules;
  bool serialize = false;
  std::string format = "text";
  std::string output;
};

// One figure of the three runs: its key (JSON, CSV), label and unit, and its value in each.
struct Figure {
  const char* key;
  const char* label;
  const char* unit;  ///< "ns" or "ratio"
  std::optional<double> WhatIfFigures::*optional = nullptr;
  double WhatIfFigures::*value = nullptr;
  std::optional<double> of(const WhatIfFigures& f) const {
    return value != nullptr ? std::optional<double>(f.*value) : f.*optional;
  }
};
const Figure kFigures[] = {
    {"step_time_ns", "step", "ns", nullptr, &WhatIfFigures::step_ns},
    {"exposed_comm_ns", "exposed comm", "ns", nullptr, &WhatIfFigures::exposed_comm_ns},
    {"comm_busy_ns", "COMM busy", "ns", nullptr, &WhatIfFigures::comm_ns},
    {"overlap", "overlap", "ratio", &WhatIfFigures::overlap, nullptr},
    {"critical_path_ns", "critical path", "ns", nullptr, &WhatIfFigures::path_ns},
    {"critical_path_gap_ns", "of it host gaps", "ns", nullptr, &WhatIfFigures::gap_ns},
};

std::string shown(const Figure& f, const std::optional<double>& v) {
  if (!v) return "n/a";
  return std::string(f.unit) == "ns" ? format_number("%.1f", *v / 1e3)
                                     : format_number("%.1f", 100.0 * *v);
}

std::string change(const Figure& f, const WhatIf& w) {
  const std::optional<double> a = f.of(w.replayed), b = f.of(w.predicted);
  if (!a || !b) return "n/a";
  if (std::string(f.unit) != "ns") return format_number("%+.1f", 100.0 * (*b - *a)) + " pp";
  if (*a == 0) return "n/a";
  return format_number("%+.1f", 100.0 * (*b / *a - 1)) + "%";
}

std::string rules_text(const WhatIfConfig& cfg) {
  std::string out;
  for (const ScaleRule& r : cfg.rules) out += (out.empty() ? "" : " ") + r.text;
  return out.empty() ? "none" : out;
}

void write_text(std::ostream& os, const WhatIfConfig& cfg, const WhatIf& w) {
  os << "# commprof whatif: " << w.steps << " measured step(s), changes: " << rules_text(cfg)
     << (cfg.serialize ? ", serialized (every rank's ops one after another)" : "") << '\n'
     << "# times in us (mean per measured step), overlap in %; replayed: the measured steps "
        "replayed unchanged (the model's own error); change: predicted against replayed\n";
  if (!w.paths.critical_note.empty()) os << "# graph: " << w.paths.critical_note << '\n';
  std::vector<std::vector<std::string>> rows = {
      {"figure", "measured", "replayed", "predicted", "change"}};
  for (const Figure& f : kFigures) {
    rows.push_back({std::string(f.label) + (std::string(f.unit) == "ns" ? "(us)" : "(%)"),
                    shown(f, f.of(w.measured)), shown(f, f.of(w.replayed)),
                    shown(f, f.of(w.predicted)), change(f, w)});
  }
  write_table(os, rows);
  os << "\n## Predicted critical path by rank, category, op and communicator (most first)\n";
  std::vector<std::vector<std::string>> shares = {
      {"rank", "category", "op", "comm", "on path(us)", "share(%)", "steps"}};
  for (const CriticalShareRow& s : w.paths.critical_shares) {
    if (shares.size() > kTextShares) break;
    shares.push_back({std::to_string(s.rank), s.category, s.op, s.comm.empty() ? "-" : s.comm,
                      format_number("%.1f", s.mean_ns / 1e3),
                      format_number("%.1f", 100.0 * s.share), std::to_string(s.steps)});
  }
  write_table(os, shares);
}

nlohmann::ordered_json figures_json(const WhatIfFigures& f) {
  nlohmann::ordered_json j;
  for (const Figure& g : kFigures) {
    const std::optional<double> v = g.of(f);
    j[g.key] = v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  }
  return j;
}

nlohmann::ordered_json share_json(const CriticalShareRow& s) {
  return {{"rank", s.rank},       {"category", s.category}, {"op", s.op},      {"comm", s.comm},
          {"mean_ns", s.mean_ns}, {"share", s.share},       {"steps", s.steps}};
}

void write_json(std::ostream& os, const WhatIfConfig& cfg, const WhatIf& w) {
  nlohmann::ordered_json j;
  j["schema"] = kWhatIfSchema;
  j["version"] = 1;
  j["units"] = {{"time", "ns, mean per measured step"}, {"ratio", "fraction in [0, 1]"}};
  j["inputs"] = cfg.inputs;
  nlohmann::ordered_json rules = nlohmann::ordered_json::array();
  for (const ScaleRule& r : cfg.rules) rules.push_back(r.text);
  j["scales"] = rules;
  j["serialize"] = cfg.serialize;
  j["steps"] = w.steps;
  j["graph_note"] = w.paths.critical_note;
  j["measured"] = figures_json(w.measured);
  j["replayed"] = figures_json(w.replayed);
  j["predicted"] = figures_json(w.predicted);
  nlohmann::ordered_json shares = nlohmann::ordered_json::array();
  for (const CriticalShareRow& s : w.paths.critical_shares) {
    if (shares.size() == kReportCriticalShares) break;
    shares.push_back(share_json(s));
  }
  j["predicted_critical_path"] = shares;
  os << j.dump(1) << '\n';
}

std::string csv_number(const std::optional<double>& v) {
  if (!v) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", *v);
  return buf;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void write_csv(std::ostream& os, const WhatIf& w) {
  os << "# table: whatif\nfigure,unit,measured,replayed,predicted\n";
  for (const Figure& f : kFigures) {
    os << f.key << ',' << f.unit << ',' << csv_number(f.of(w.measured)) << ','
       << csv_number(f.of(w.replayed)) << ',' << csv_number(f.of(w.predicted)) << '\n';
  }
  os << "\n# table: predicted_critical_path\nrank,category,op,comm,mean_ns,share,steps\n";
  std::size_t n = 0;
  for (const CriticalShareRow& s : w.paths.critical_shares) {
    if (n++ == kReportCriticalShares) break;
    os << s.rank << ',' << csv_cell(s.category) << ',' << csv_cell(s.op) << ',' << csv_cell(s.comm)
       << ',' << csv_number(s.mean_ns) << ',' << csv_number(s.share) << ',' << s.steps << '\n';
  }
}

int run_whatif(const WhatIfConfig& cfg) {
  const std::vector<std::string> files = expand_rank_inputs(cfg.inputs);
  const std::vector<StepGraph> graphs = load_step_graphs(files);
  if (graphs.empty()) {
    throw Error(
        "the rank files hold no measured step with per-op timing to replay (a run with "
        "--op-timing step, or warm-up steps only)");
  }
  const WhatIf w = what_if(graphs, cfg.rules, cfg.serialize);
  auto write = [&](std::ostream& os) {
    if (cfg.format == "json") {
      write_json(os, cfg, w);
    } else if (cfg.format == "csv") {
      write_csv(os, w);
    } else {
      write_text(os, cfg, w);
    }
  };
  if (cfg.output.empty()) {
    write_to_stdout("the what-if", write);
  } else {
    write_file_atomically(cfg.output, write);
  }
  return kExitOk;
}

class WhatIfCommand final : public Command {
 public:
  const char* name() const override { return "whatif"; }
  const char* summary() const override {
    return "replay a run's step graphs with scaled durations (--scale comp=0.8 'comm[dp]=0.5' "
           "rank3:comp=1.2): predicted step, exposed communication, overlap, critical path";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()(
        "scale", po::value<std::vector<std::string>>()->multitoken(),
        "changes, each [rankR:]KIND[[GROUP]]=FACTOR: KIND comp, comm or mem (that category's "
        "ops) or gap (host gaps); GROUP (comm) a communicator kind (dp) or name (dp0); rankR one "
        "rank only. Rules that match an op multiply; a collective takes the largest factor of "
        "its members' ranks")("format", po::value<std::string>()->default_value("text"),
                              "text, json (schema commprof.whatif v1) or csv")(
        "serialize", po::bool_switch(),
        "every rank's ops one after another in its file's order, as run --no-overlap runs the "
        "same plan: what overlap is worth")("output,o", po::value<std::string>(),
                                            "write here instead of stdout");
    add_rank_inputs(hidden);
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }

  void configure(const po::variables_map& vm) override {
    cfg_.inputs = rank_inputs(vm);
    if (vm.count("scale") != 0) {
      for (const std::string& s : vm["scale"].as<std::vector<std::string>>())
        cfg_.rules.push_back(parse_scale_rule(s));
    }
    cfg_.serialize = vm["serialize"].as<bool>();
    cfg_.format = vm["format"].as<std::string>();
    if (cfg_.format != "text" && cfg_.format != "json" && cfg_.format != "csv")
      throw ConfigError("invalid --format '" + cfg_.format + "': expected text, json or csv");
    if (vm.count("output") != 0) cfg_.output = vm["output"].as<std::string>();
  }

  std::string backend_name() const override { return ""; }

  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    return run_on_rank_zero(ctx, this, [&] { return run_whatif(cfg_); });
  }

 private:
  WhatIfConfig cfg_;
};

}  // namespace

std::unique_ptr<Command> make_whatif_command() { return std::make_unique<WhatIfCommand>(); }

}  // namespace commprof
