// SPDX-License-Identifier: MIT
#include "collectives/bench/bench_report.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "collectives/bench/bench_fields.hpp"
#include "collectives/bench/bench_run_fields.hpp"
#include "src/core/build_config.hpp"

namespace commprof {
namespace {

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string pad(const std::string& text, int width) {
  return text.size() >= static_cast<std::size_t>(width)
             ? text
             : std::string(static_cast<std::size_t>(width) - text.size(), ' ') + text;
}

}  // namespace

void BenchTextPrinter::started(const BenchReport& report) {
  const BenchConfig& c = report.config;
  std::set<std::string> hosts;
  for (const auto& r : report.ranks) hosts.insert(r.host);
  os_ << "# commprof bench " << build::kVersion << ": backend " << report.backend << " ("
      << report.backend_reason << "), " << report.ranks.size() << " ranks on " << hosts.size()
      << " host(s)\n"
      << "# " << bench_run_fields::line_words(report, bench_run_fields::Line::kSettings) << "\n"
      << "# time: per-call time of " << c.iters << " back-to-back calls"
      << (c.graph ? " replayed as one CUDA graph" : "") << " on each rank's stream clock"
      << (report.backend == "cuda" ? " (CUDA events)" : " (steady clock)")
      << "; min/avg/max over ranks, in us\n"
      << "# algbw = size / avg time, busbw = algbw x factor(n), GB/s = 1e9 B/s "
         "(nccl-tests conventions; JSON also has both from the max time)\n";
  const std::size_t shown = std::min<std::size_t>(report.ranks.size(), 16);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = report.ranks[i];
    os_ << "#   rank " << pad(std::to_string(r.rank), 4) << "  host " << r.host << "  local "
        << r.local_rank << "  device " << r.device << '\n';
  }
  if (report.ranks.size() > shown) {
    os_ << "#   ... and " << report.ranks.size() - shown << " more ranks (see bench.json)\n";
  }
  os_.flush();
}

void BenchTextPrinter::measured(const BenchReport& report, const BenchRow& row) {
  if (table_open_ && table_op_ != row.op) op_done(report, table_op_);
  const CollectiveSpec& spec = collective_spec(row.op);
  if (!table_open_) {
    if (bench_fields::routed(row)) {
      // The factor differs per size (the routing's counts round differently): a column.
      os_ << "#\n# " << spec.name << ": n = " << row.nranks << ", busbw factor "
          << spec.factor_formula << " per size (factor column)\n"
          << "#   " << bench_run_fields::line_words(report, bench_run_fields::Line::kRouting)
          << "; size = bytes every rank sends\n"
          << "#   busbw: " << bench_run_fields::kAllToAllvBusbw
          << ", / avg time; imbal = max/mean bytes a rank receives\n";
    } else {
      os_ << "#\n# " << spec.name << ": n = " << row.nranks << ", busbw factor "
          << spec.factor_formula << " = " << fixed(row.busbw_factor, 4) << '\n';
    }
    // The columns' names, then their units, each padded to its width.
    std::string names = "#", units = "#";
    for (const bench_fields::Column& c : bench_fields::kColumns) {
      if (!bench_fields::in_text(c, row)) continue;
      names += pad(std::string(c.field.label), c.width);
      units += pad(std::string(c.unit_line), c.width);
    }
    os_ << names << '\n' << units << '\n';
    table_open_ = true;
    table_op_ = row.op;
  }
  std::string line = " ";
  for (const bench_fields::Column& c : bench_fields::kColumns) {
    if (bench_fields::in_text(c, row)) line += pad(fields::text_cell(c.field, row), c.width);
  }
  os_ << line << '\n';
  os_.flush();
}

void BenchTextPrinter::op_done(const BenchReport& report, CollectiveKind op) {
  if (!table_open_ || table_op_ != op) return;  // no size of this op was measured
  table_open_ = false;
  const BenchConfig& c = report.config;
  std::vector<const BenchRow*> rows;
  for (const BenchRow& row : report.rows) {
    if (row.op == op) rows.push_back(&row);
  }
  // What per-call timing cost, per size: the plain loop against the instrumented one.
  if (c.instrument == Instrument::kCompare || c.instrument == Instrument::kCompareActivity) {
    os_ << "# instrumentation cost ("
        << (c.instrument == Instrument::kCompare ? "per-call events" : "per-call activity records")
        << " + NVTX vs none, fastest of 3 interleaved loops, mean over ranks):\n";
    for (const BenchRow* row : rows) {
      os_ << "#" << pad(std::to_string(row->sizes.bytes), 12)
          << " B: " << fixed(row->plain_time_us, 2) << " us -> "
          << fixed(row->instrumented_time_us, 2) << " us, ratio "
          << fixed(row->plain_time_us > 0 ? row->instrumented_time_us / row->plain_time_us : 0, 4)
          << '\n';
    }
  }
  // The library's own estimate beside the measured time (rank 0's estimate; the mean over ranks).
  if (c.estimate) {
    os_ << "# " << report.cost_model << ": estimated time of one call against the measured "
        << "mean over ranks:\n";
    for (const BenchRow* row : rows) {
      os_ << "#" << pad(std::to_string(row->sizes.bytes), 12) << " B: ";
      if (row->estimate_us < 0) {
        os_ << "no estimate (the model covers collectives of two or more ranks, not grouped "
               "sends and receives)\n";
        continue;
      }
      os_ << "estimate " << fixed(row->estimate_us, 2) << " us, measured "
          << fixed(row->time_avg_us, 2) << " us, measured/estimate "
          << fixed(row->estimate_us > 0 ? row->time_avg_us / row->estimate_us : 0, 3) << '\n';
    }
  }
  double busbw_sum = 0;
  for (const BenchRow* row : rows) busbw_sum += row->busbw_gbps;
  os_ << "# " << collective_spec(op).name << " average busbw over " << rows.size()
      << " sizes: " << fixed(busbw_sum / static_cast<double>(rows.size()), 2) << " GB/s\n";
  os_.flush();
}

void BenchTextPrinter::recorded(const BenchReport& report) {
  // Sampled activity timing: the recorded loops ran after every table, so each op says what
  // recording cost once they are done.
  for (CollectiveKind op : report.config.ops) {
    bool first = true;
    for (const BenchRow& row : report.rows) {
      if (row.op != op) continue;
      if (first) {
        os_ << "#\n# " << collective_spec(op).name
            << ": single-call times from one more loop per size with activity records "
               "(sampled); the times above are of the loop without them. What recording cost, "
               "mean over ranks:\n";
        first = false;
      }
      os_ << "#" << pad(std::to_string(row.sizes.bytes), 12)
          << " B: " << fixed(row.plain_time_us, 2) << " us -> "
          << fixed(row.instrumented_time_us, 2) << " us recorded, ratio "
          << fixed(row.plain_time_us > 0 ? row.instrumented_time_us / row.plain_time_us : 0, 4)
          << '\n';
    }
  }
  os_.flush();
}

void BenchTextPrinter::finished(const BenchReport& report) {
  if (table_open_) op_done(report, table_op_);
  os_ << "#\n# verification: ";
  if (!report.config.check) {
    os_ << "off (--check 0)\n";
  } else {
    const auto wrong = report.total_wrong();
    os_ << wrong << " wrong elements " << (wrong == 0 ? "(OK)" : "(FAILED)") << '\n';
  }
  os_.flush();
}

void write_bench_text(std::ostream& os, const BenchReport& report) {
  BenchTextPrinter printer(os);
  printer.started(report);
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const BenchRow& row = report.rows[i];
    printer.measured(report, row);
    if (i + 1 == report.rows.size() || report.rows[i + 1].op != row.op) {
      printer.op_done(report, row.op);
    }
  }
  if (report.config.instrument == Instrument::kActivity) printer.recorded(report);
  printer.finished(report);
}

nlohmann::ordered_json bench_to_json(const BenchReport& report) {
  using nlohmann::ordered_json;
  const BenchConfig& c = report.config;
  ordered_json j;
  j["schema"] = kBenchSchema;
  j["version"] = kBenchSchemaVersion;
  j["commprof_version"] = build::kVersion;
  j["start_time"] = report.start_time;
  j["end_time"] = report.end_time;
  j["config"] = bench_run_fields::config_json(report);
  j["units"] = {{"time", "us"}, {"bandwidth", "GB/s (1e9 bytes/s)"}, {"size", "bytes"}};
  j["time_definition"] =
      "per-call time of the timed loop on each rank's stream clock; bandwidths from the mean "
      "over ranks (algbw_gbps, busbw_gbps) and from the max over ranks (*_from_max)";
  ordered_json ranks = ordered_json::array();
  for (const auto& r : report.ranks) {
    ranks.push_back(
        {{"rank", r.rank}, {"host", r.host}, {"local_rank", r.local_rank}, {"device", r.device}});
  }
  j["ranks"] = ranks;
  if (c.estimate) j["cost_model"] = report.cost_model;
  ordered_json results = ordered_json::array();
  for (const BenchRow& row : report.rows) results.push_back(bench_fields::json_result(c, row));
  j["results"] = results;
  j["verification"] = {{"checked", c.check}, {"wrong", c.check ? report.total_wrong() : -1}};
  return j;
}

void write_bench_csv(std::ostream& os, const BenchReport& report) {
  std::string header;
  for (const bench_fields::Column& c : bench_fields::kColumns) {
    if (bench_fields::in_csv(c)) header += (header.empty() ? "" : ",") + std::string(c.field.key);
  }
  os << header << '\n';
  for (const BenchRow& row : report.rows) {
    std::string line;
    bool first = true;
    for (const bench_fields::Column& c : bench_fields::kColumns) {
      if (!bench_fields::in_csv(c)) continue;
      line += (first ? "" : ",") + bench_fields::csv_cell(c, row);
      first = false;
    }
    os << line << '\n';
  }
}

namespace bench_fields {

std::string adaptive_time(double us) {
  if (us < 1000) return fixed(us, 2);
  if (us < 100000) return fixed(us, 1);
  return fixed(us, 0);
}

std::string csv_cell(const Column& c, const BenchRow& row) {
  const std::optional<fields::Value> v = fields::defined_value(c.field, row);
  if (!v) return "";
  if (const auto* d = std::get_if<double>(&*v)) {
    return fields::printf_number(c.csv_format, *d);
  }
  return fields::csv_cell(c.field, row);
}

nlohmann::ordered_json json_result(const BenchConfig& config, const BenchRow& row) {
  nlohmann::ordered_json item = nlohmann::ordered_json::object();
  for (const JsonSection section : kJsonSections) {
    for (const Column& c : kColumns) {
      if (c.section != section) continue;
      const InJson in = in_json(c, config, row);
      if (in == InJson::kNo) continue;
      const std::string name(json_name(c));
      // A member of an object (time_us.min) lands where the object's first member does.
      if (in == InJson::kNull) {
        item[c.json_object.empty() ? name : std::string(c.json_object)] = nullptr;
        continue;
      }
      nlohmann::ordered_json& into =
          c.json_object.empty() ? item : item[std::string(c.json_object)];
      into[name] = c.json != nullptr ? c.json(row) : fields::json_value(c.field, row);
    }
  }
  return item;
}

}  // namespace bench_fields

}  // namespace commprof
