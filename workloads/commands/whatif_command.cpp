// SPDX-License-Identifier: MIT
// `commprof whatif DIR|FILES --scale RULE...`: each measured step's graph (analysis/graph/)
// replayed as measured and with the rules applied; prints the step, exposed communication,
// overlap and critical path of both, and the predicted path by rank, category and op. Exit 0:
// replayed; 1: a file could not be read or a step could not be replayed; 2: usage error. Runs on
// rank 0 only under mpirun. With --ideal it instead idealises every op (Lin et al., "Understanding
// Stragglers in Large Model Training Using What-if Analysis", OSDI'25): the straggler slowdown S
// and its attribution, on rank files or on a trace of the paper's artifact
// (ByteDance-Seed/StragglerAnalysis).
#include "workloads/commands/whatif_command.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/commands/rank_inputs.hpp"
#include "analysis/report/text_table.hpp"
#include "analysis/report_fields.hpp"
#include "src/cli/output_format.hpp"
#include "src/cli/parse.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/standard_output.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/timeline/rank_file.hpp"
#include "workloads/commands/whatif_fields.hpp"
#include "workloads/prediction/ideal_from_steps.hpp"
#include "workloads/prediction/straggler_trace.hpp"
#include "workloads/prediction/what_if.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

inline constexpr const char* kWhatIfSchema = "commprof.whatif";
constexpr std::size_t kTextShares = 10;

struct WhatIfConfig {
  std::vector<std::string> inputs;
  std::vector<ScaleRule> rules;
  bool serialize = false;
  bool ideal = false;
  OutputFormat format = OutputFormat::kText;
  std::string output;
};

using whatif_fields::kFigures;
using FigureField = fields::Field<WhatIfFigures>;

// Predicted against replayed: a time's change in %, the overlap's in percentage points.
std::string change(const FigureField& f, const WhatIf& w) {
  const std::optional<fields::Value> a = fields::defined_value(f, w.replayed),
                                     b = fields::defined_value(f, w.predicted);
  if (!a || !b) return "n/a";
  const double x = fields::as_number(*a), y = fields::as_number(*b);
  if (f.unit != ReportUnit::kNs) return format_number("%+.1f", 100.0 * (y - x)) + " pp";
  if (x == 0) return "n/a";
  return format_number("%+.1f", 100.0 * (y / x - 1)) + "%";
}

// A critical-path share's text: times in us, shares in %, no communicator as "-".
std::string share_cell(const fields::Field<CriticalShareRow>& f, const CriticalShareRow& s) {
  const fields::Value v = f.get(s);
  if (const auto* t = std::get_if<std::string_view>(&v)) return t->empty() ? "-" : std::string(*t);
  const double x = fields::as_number(v);
  if (f.unit == ReportUnit::kNs) return format_number("%.1f", x / 1e3);
  if (f.unit == ReportUnit::kRatio) return format_number("%.1f", 100.0 * x);
  return std::to_string(std::get<std::int64_t>(v));
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
  for (const FigureField& f : kFigures) {
    rows.push_back({std::string(f.label), fields::text_cell(f, w.measured),
                    fields::text_cell(f, w.replayed), fields::text_cell(f, w.predicted),
                    change(f, w)});
  }
  write_table(os, rows);
  os << "\n## Predicted critical path by rank, category, op and communicator (most first)\n";
  const auto& table = report_fields::kCriticalShares;
  std::vector<std::vector<std::string>> shares(1);
  for (const auto& f : table) shares.front().push_back(fields::text_header(f));
  for (const CriticalShareRow& s : w.paths.critical_shares) {
    if (shares.size() > kTextShares) break;
    std::vector<std::string> cells;
    for (const auto& f : table) cells.push_back(share_cell(f, s));
    shares.push_back(std::move(cells));
  }
  write_table(os, shares);
}

nlohmann::ordered_json figures_json(const WhatIfFigures& f) {
  return fields::json_object(kFigures, f);
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
    shares.push_back(fields::json_object(report_fields::kCriticalShares, s));
  }
  j["predicted_critical_path"] = shares;
  os << j.dump(1) << '\n';
}

void write_csv(std::ostream& os, const WhatIf& w) {
  os << "# table: whatif\nfigure,unit,measured,replayed,predicted\n";
  // A row per figure, a column per replay.
  for (const FigureField& f : kFigures) {
    os << f.key << ',' << fields::unit_name(f.unit) << ',' << fields::csv_cell(f, w.measured) << ','
       << fields::csv_cell(f, w.replayed) << ',' << fields::csv_cell(f, w.predicted) << '\n';
  }
  os << "\n# table: predicted_critical_path\n"
     << fields::csv_header(report_fields::kCriticalShares);
  std::size_t n = 0;
  for (const CriticalShareRow& s : w.paths.critical_shares) {
    if (n++ == kReportCriticalShares) break;
    os << fields::csv_line(report_fields::kCriticalShares, s);
  }
}

// The artifact's timelines are Chrome-trace JSON; rank files are not.
bool is_straggler_trace(const std::vector<std::string>& inputs) {
  if (inputs.size() != 1) return false;
  const std::string& f = inputs.front();
  auto ends = [&](const std::string& tail) {
    return f.size() >= tail.size() && f.compare(f.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".json") || ends(".json.gz");
}

IdealGraph ideal_input(const WhatIfConfig& cfg, std::string& note) {
  if (is_straggler_trace(cfg.inputs)) {
    note = "StragglerAnalysis timeline, its dependency model";
    return straggler_graph(read_straggler_timeline(cfg.inputs.front()));
  }
  const std::vector<StepGraph> graphs = load_step_graphs(expand_rank_inputs(cfg.inputs));
  std::size_t skipped = 0;
  IdealGraph g = ideal_graph_from_steps(graphs, &skipped);
  note = "rank files' step graphs";
  if (skipped != 0)
    note += "; " + std::to_string(skipped) + " step(s) with other ops than the first left out";
  return g;
}

std::vector<IdealStepRow> ideal_step_rows(const IdealResult& r) {
  std::vector<IdealStepRow> rows = {{"mean", r.nodelay_s * 1e9, r.ideal_s * 1e9, r.slowdown}};
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    rows.push_back({std::to_string(r.steps[i]), r.step_nodelay_s[i] * 1e9, r.step_ideal_s[i] * 1e9,
                    r.step_nodelay_s[i] / r.step_ideal_s[i]});
  }
  return rows;
}

template <class Row>
void text_rows(std::ostream& os, const fields::Table<Row>& table, const std::vector<Row>& rows) {
  std::vector<std::vector<std::string>> cells(1);
  for (const auto& f : table) cells.front().push_back(fields::text_header(f));
  for (const Row& r : rows) {
    std::vector<std::string> line;
    for (const auto& f : table) line.push_back(fields::text_cell(f, r));
    cells.push_back(std::move(line));
  }
  write_table(os, cells);
}

void write_ideal(std::ostream& os, const WhatIfConfig& cfg, const IdealResult& r,
                 const std::string& note) {
  const std::vector<IdealStepRow> steps = ideal_step_rows(r);
  if (cfg.format == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["schema"] = kWhatIfSchema;
    j["version"] = 1;
    j["mode"] = "ideal";
    j["units"] = {{"time", "ns"}, {"slowdown", "measured / ideal"}};
    j["inputs"] = cfg.inputs;
    j["graph_note"] = note;
    j["slowdown"] = r.slowdown;
    nlohmann::ordered_json s = nlohmann::ordered_json::array(), a = s;
    for (const IdealStepRow& row : steps)
      s.push_back(fields::json_object(whatif_fields::kIdealSteps, row));
    for (const IdealShare& x : r.shares)
      a.push_back(fields::json_object(whatif_fields::kIdealShares, x));
    j["steps"] = s;
    j["attribution"] = a;
    os << j.dump(1) << '\n';
  } else if (cfg.format == OutputFormat::kCsv) {
    os << "# table: ideal_steps\n" << fields::csv_header(whatif_fields::kIdealSteps);
    for (const IdealStepRow& row : steps) os << fields::csv_line(whatif_fields::kIdealSteps, row);
    os << "\n# table: ideal_attribution\n" << fields::csv_header(whatif_fields::kIdealShares);
    for (const IdealShare& x : r.shares) os << fields::csv_line(whatif_fields::kIdealShares, x);
  } else {
    os << "# commprof whatif --ideal: " << r.steps.size() << " step(s) (" << note << ")\n"
       << "# straggler slowdown S = " << format_number("%.4f", r.slowdown)
       << " (measured / ideal: launch delays removed; every op at the mean (compute) or median "
          "(communication) of the same op; Lin et al., OSDI'25)\n\n";
    text_rows(os, whatif_fields::kIdealShares, r.shares);
    os << '\n';
    text_rows(os, whatif_fields::kIdealSteps, steps);
  }
}

int run_ideal(const WhatIfConfig& cfg) {
  std::string note;
  const IdealResult r = ideal_analysis(ideal_input(cfg, note));
  auto write = [&](std::ostream& os) { write_ideal(os, cfg, r, note); };
  if (cfg.output.empty()) {
    write_to_stdout("the what-if", write);
  } else {
    write_file_atomically(cfg.output, write);
  }
  return kExitOk;
}

int run_whatif(const WhatIfConfig& cfg) {
  if (cfg.ideal) return run_ideal(cfg);
  const std::vector<std::string> files = expand_rank_inputs(cfg.inputs);
  const std::vector<StepGraph> graphs = load_step_graphs(files);
  if (graphs.empty()) {
    throw Error(
        "the rank files hold no measured step with per-op timing to replay (a run with "
        "--op-timing step, or warm-up steps only)");
  }
  const WhatIf w = what_if(graphs, cfg.rules, cfg.serialize);
  auto write = [&](std::ostream& os) {
    if (cfg.format == OutputFormat::kJson) {
      write_json(os, cfg, w);
    } else if (cfg.format == OutputFormat::kCsv) {
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
        "same plan: what overlap is worth")(
        "ideal", po::bool_switch(),
        "instead: every op at its ideal (the mean (compute) or median (communication) of the "
        "same op over ranks and steps), launch delays removed; prints the straggler slowdown S "
        "= measured / ideal and S attributed by op kind, rank, pipeline stage and step (Lin et "
        "al., OSDI'25). Also reads a ByteDance-Seed/StragglerAnalysis timeline (*.json[.gz])")(
        "output,o", po::value<std::string>(), "write here instead of stdout");
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
    cfg_.ideal = vm["ideal"].as<bool>();
    if (cfg_.ideal && (!cfg_.rules.empty() || cfg_.serialize))
      throw ConfigError(
          "--ideal replaces every op by its ideal: it takes no --scale or --serialize");
    cfg_.format =
        parse_output_format(vm["format"].as<std::string>(),
                            {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kCsv});
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
