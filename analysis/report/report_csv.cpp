// SPDX-License-Identifier: MIT
// CSV tables: one per report section, units in the column names, empty cells for n/a.
#include <cstdio>
#include <ostream>
#include <sstream>

#include "analysis/report/report_writers.hpp"

namespace commprof {
namespace {

std::string cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
std::string num_or_empty(double v) { return v < 0 ? "" : num(v); }
std::string mean_or_empty(const Stat& s) { return s.count > 0 ? num(s.mean) : ""; }

class Csv {
 public:
  explicit Csv(std::initializer_list<std::string> header) { row(header); }
  void row(const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << cell(cells[i]);
    out_ << '\n';
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

}  // namespace

std::vector<CsvTable> report_csv_tables(const Report& r) {
  std::vector<CsvTable> tables;
  Csv ranks({"rank", "host", "device", "steps", "step_time_ns", "comp_busy_ns", "comm_busy_ns",
             "mem_busy_ns", "overlap", "hidden_fraction", "exposed_comm_ns", "idle_ns",
             "step_time_min_ns", "step_time_max_ns"});
  for (const RankSummary& s : r.ranks) {
    ranks.row({std::to_string(s.rank), s.host, s.device, std::to_string(s.steps),
               mean_or_empty(s.wall_ns), mean_or_empty(s.comp_ns), mean_or_empty(s.comm_ns),
               mean_or_empty(s.mem_ns), mean_or_empty(s.overlap), mean_or_empty(s.hidden_fraction),
               mean_or_empty(s.exposed_comm_ns), mean_or_empty(s.idle_ns),
               s.wall_ns.count ? num(s.wall_ns.min) : "",
               s.wall_ns.count ? num(s.wall_ns.max) : ""});
  }
  tables.push_back({"ranks", ranks.str()});

  Csv across({"metric", "unit", "min", "mean", "max", "worst_rank", "worst_host"});
  for (const AcrossRanks& a : r.across) {
    const bool any = a.stat.count > 0;
    across.row({a.metric, a.unit, any ? num(a.stat.min) : "", any ? num(a.stat.mean) : "",
                any ? num(a.stat.max) : "", any ? std::to_string(a.worst_rank) : "",
                any ? a.worst_host : ""});
  }
  tables.push_back({"across_ranks", across.str()});

  Csv groups({"group", "communicators", "min_size", "max_size", "collectives", "incomplete",
              "bytes", "time_ns", "busbw_gbps", "mean_start_skew_ns", "wait_ns"});
  for (const GroupRow& g : r.groups) {
    groups.row({g.group, std::to_string(g.communicators), std::to_string(g.min_size),
                std::to_string(g.max_size), std::to_string(g.instances),
                std::to_string(g.incomplete), std::to_string(g.bytes), num(g.time_ns),
                num_or_empty(g.busbw_gbps), num(g.mean_skew_ns), std::to_string(g.wait_ns)});
  }
  tables.push_back({"groups", groups.str()});

  Csv colls({"collective", "comm_size", "bytes", "count", "p50_time_ns", "p95_time_ns",
             "algbw_gbps", "busbw_gbps", "peak_busbw_fraction", "mean_start_skew_ns", "wait_ns"});
  for (const CollectiveRow& c : r.collectives) {
    colls.row({c.collective, std::to_string(c.comm_size), std::to_string(c.bytes),
               std::to_string(c.count), num(c.p50_ns), num(c.p95_ns), num(c.algbw_gbps),
               num_or_empty(c.busbw_gbps), num_or_empty(c.peak_fraction), num(c.mean_skew_ns),
               std::to_string(c.wait_ns)});
  }
  tables.push_back({"collectives", colls.str()});

  Csv stragglers({"rank", "collectives", "times_last", "times_first", "wait_ns", "wait_caused_ns"});
  for (const RankWait& w : r.waits) {
    stragglers.row({std::to_string(w.rank), std::to_string(w.collectives),
                    std::to_string(w.times_last), std::to_string(w.times_first),
                    std::to_string(w.wait_ns), std::to_string(w.wait_caused_ns)});
  }
  tables.push_back({"stragglers", stragglers.str()});

  Csv problems({"file", "problem"});
  for (const FileProblem& p : r.problems) problems.row({p.file, p.message});
  for (int m : r.missing_ranks) problems.row({"", "rank " + std::to_string(m) + " is missing"});
  tables.push_back({"problems", problems.str()});
  return tables;
}

void write_report_csv(std::ostream& os, const Report& r) {
  for (const CsvTable& t : report_csv_tables(r))
    os << "# table: " << t.name << '\n' << t.text << '\n';
}

}  // namespace commprof
