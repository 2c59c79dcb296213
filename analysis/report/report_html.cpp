// SPDX-License-Identifier: MIT
// A self-contained HTML page (no network): the numbers and tables are written here as HTML;
// the charts are drawn in the browser by report_html.js (inlined) from a JSON data block. Every
// string that came from a file (host, device, op and stream names, paths, messages) is escaped:
// as HTML in the tables, and as \u003c-style escapes in the data block, whose strings the
// script only ever puts into the page as text.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "analysis/report/report_writers.hpp"
#include "src/core/units.hpp"

namespace commprof {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- the charts' data block
json ranks_data(const Report& r) {
  json out = json::array();
  auto mean = [](const Stat& s) { return s.count ? s.mean : 0.0; };
  for (const RankSummary& s : r.ranks) {
    out.push_back({{"r", s.rank},
                   {"h", s.host},
                   {"step", mean(s.wall_ns)},
                   {"comp", mean(s.comp_ns)},
                   {"comm", mean(s.comm_ns)},
                   {"hidden", mean(s.comm_comp_ns)},
                   {"mem", mean(s.mem_ns)},
                   {"idle", mean(s.idle_ns)}});
  }
  return out;
}

json busbw_data(const Report& r) {
  std::map<std::string, json> series;
  for (const CollectiveRow& c : r.collectives) {
    if (c.busbw_gbps < 0 || c.bytes == 0) continue;
    json& s = series[c.collective + " n=" + std::to_string(c.comm_size)];
    if (s.is_null()) s = json::array();
    s.push_back({c.bytes, c.busbw_gbps});  // rows come sorted by bytes
  }
  json out = {{"peak", r.peak_busbw_gbps > 0 ? json(r.peak_busbw_gbps) : json(nullptr)},
              {"series", json::array()}};
  for (auto& [name, points] : series) out["series"].push_back({{"name", name}, {"points", points}});
  return out;
}

// Per step index over ranks: min, mean and max step time, the slowest rank, mean overlap.
json trend_data(const Report& r) {
  struct Agg {
    Stat wall, overlap;
    bool warmup = false, timed = false;
    int slowest = -1;
    std::int64_t slowest_wall = -1;
  };
  std::map<int, Agg> steps;
  for (const RankSummary& s : r.ranks) {
    for (const StepPoint& p : s.step_points) {
      Agg& a = steps[p.index];
      a.wall.add(static_cast<double>(p.wall_ns));
      if (p.overlap >= 0) a.overlap.add(p.overlap);
      a.warmup = a.warmup || p.warmup;
      a.timed = a.timed || p.ops > 0;
      if (p.wall_ns > a.slowest_wall) {
        a.slowest_wall = p.wall_ns;
        a.slowest = s.rank;
      }
    }
  }
  json out = json::array();
  for (const auto& [index, a] : steps) {
    out.push_back({{"i", index},
                   {"w", a.warmup},
                   {"timed", a.timed},
                   {"min", a.wall.min},
                   {"mean", a.wall.mean},
                   {"max", a.wall.max},
                   {"slow", a.slowest},
                   {"ov", a.overlap.count ? json(a.overlap.mean) : json(nullptr)}});
  }
  return out;
}

std::int64_t step_wall(const RankSummary& s, int index) {
  for (const StepPoint& p : s.step_points)
    if (p.index == index && !p.warmup) return p.wall_ns;
  return -1;
}

json timeline_data(const Report& r) {
  if (r.timelines.empty()) return nullptr;
  std::int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (const RankStep& rs : r.timelines) {
    t0 = std::min(t0, rs.step.start_ns + rs.clock_offset_ns);
    t1 = std::max(t1, rs.step.end_ns + rs.clock_offset_ns);
    for (const OpRecord& op : rs.step.ops) {
      t0 = std::min(t0, op.start_ns + rs.clock_offset_ns);
      t1 = std::max(t1, op.end_ns + rs.clock_offset_ns);
    }
  }
  std::map<std::string, int> names, comms;
  auto id = [](std::map<std::string, int>& table, const std::string& key) {
    return table.try_emplace(key, static_cast<int>(table.size())).first->second;
  };
  std::map<int, const RankSummary*> by_rank;
  for (const RankSummary& s : r.ranks) by_rank[s.rank] = &s;
  json ranks = json::array();
  std::set<int> drawn;
  for (std::size_t k = 0; k < r.timelines.size(); ++k) {
    const RankStep& rs = r.timelines[k];
    drawn.insert(rs.rank);
    // Lanes: COMP, COMM, MEM streams in that order, then by name.
    std::map<std::pair<int, std::string>, json> lanes;
    for (const OpRecord& op : rs.step.ops) {
      json& lane = lanes[{static_cast<int>(index_of(op.category)), op.stream}];
      if (lane.is_null()) lane = json::array();
      const bool comm = op.category == Category::kComm && !op.comm.empty();
      lane.push_back({op.start_ns + rs.clock_offset_ns - t0, op.duration_ns(),
                      static_cast<int>(index_of(op.category)), id(names, op.name), op.bytes,
                      comm ? id(comms, op.comm) : -1, comm ? op.seq : -1});
    }
    json lane_list = json::array();
    for (auto& [key, ops] : lanes) {
      std::sort(ops.begin(), ops.end(), [](const json& a, const json& b) {
        return a[0].get<double>() < b[0].get<double>();
      });
      lane_list.push_back({{"s", key.second}, {"ops", std::move(ops)}});
    }
    std::string tag;
    if (r.timelines.size() > 1 && k == 0) tag = "slowest drawn";
    if (r.timelines.size() > 1 && k + 1 == r.timelines.size()) tag = "fastest drawn";
    ranks.push_back({{"r", rs.rank},
                     {"h", rs.host},
                     {"wall", step_wall(*by_rank.at(rs.rank), r.timeline_step)},
                     {"tag", tag},
                     {"lanes", std::move(lane_list)}});
  }
  json folded = json::array();
  std::vector<std::pair<std::int64_t, const RankSummary*>> rest;
  for (const RankSummary& s : r.ranks) {
    const std::int64_t wall = step_wall(s, r.timeline_step);
    if (wall >= 0 && drawn.count(s.rank) == 0) rest.emplace_back(wall, &s);
  }
  std::sort(rest.begin(), rest.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [wall, s] : rest) folded.push_back({s->rank, s->host, wall});
  json name_list = json::array(), comm_list = json::array();
  name_list.get_ref<json::array_t&>().resize(names.size());
  comm_list.get_ref<json::array_t&>().resize(comms.size());
  for (const auto& [n, i] : names) name_list[static_cast<std::size_t>(i)] = n;
  for (const auto& [c, i] : comms) comm_list[static_cast<std::size_t>(i)] = c;
  return {{"step", r.timeline_step},   {"t0", 0},          {"t1", t1 - t0},
          {"ranks", std::move(ranks)}, {"folded", folded}, {"names", name_list},
          {"comms", comm_list}};
}

// Ranks × instances in start order, binned into at most kColumns columns of equal counts; a
// cell holds the wait the rank caused by arriving last at the instances of its column.
json heatmap_data(const Report& r) {
  constexpr std::size_t kColumns = 240;
  std::vector<const CollectiveInstance*> order;
  for (const CollectiveInstance& c : r.instances) order.push_back(&c);
  std::sort(order.begin(), order.end(),
            [](const CollectiveInstance* a, const CollectiveInstance* b) {
              return a->first_start_ns < b->first_start_ns;
            });
  json rows = json::array();
  std::map<int, int> row_of;
  for (const RankSummary& s : r.ranks) {
    row_of[s.rank] = static_cast<int>(rows.size());
    rows.push_back(s.rank);
  }
  const std::size_t n = order.size();
  const std::size_t cols = std::min(n, kColumns);
  json bins = json::array();
  std::map<std::pair<int, std::size_t>, double> cells;
  double max = 0;
  const std::int64_t t0 = n ? order.front()->first_start_ns : 0;
  for (std::size_t col = 0; col < cols; ++col) {
    const std::size_t lo = col * n / cols, hi = (col + 1) * n / cols;  // [lo, hi)
    bins.push_back(
        {lo, hi - 1, order[lo]->first_start_ns - t0, order[hi - 1]->first_start_ns - t0});
    for (std::size_t i = lo; i < hi; ++i) {
      const CollectiveInstance& c = *order[i];
      const auto row = row_of.find(c.last_rank);
      if (c.wait_caused_ns <= 0 || row == row_of.end()) continue;
      double& v = cells[{row->second, col}];
      v += static_cast<double>(c.wait_caused_ns);
      max = std::max(max, v);
    }
  }
  json cell_list = json::array();
  for (const auto& [key, v] : cells) cell_list.push_back({key.first, key.second, v});
  return {{"rows", rows}, {"bins", bins}, {"instances", n}, {"cells", cell_list}, {"max", max}};
}

// JSON whose text may sit inside a <script> element: '<', '>' and '&' only occur in strings,
// where \u escapes mean the same characters.
std::string script_safe(const json& j) {
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else {
      out += c;
    }
  }
  return out;
}

// ---------------------------------------------------------------- HTML: text and tables
std::string pct(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * ratio);
  return buf;
}
std::string gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB/s", v);
  return buf;
}
std::string raw(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A sortable table: header cells, then rows of (text, sort value or empty) cells.
class Table {
 public:
  Table(std::ostream& os, const char* id, std::initializer_list<const char*> headers) : os_(os) {
    os_ << "<div class='scroll'><table class='sortable' id='" << id << "'><thead><tr>";
    for (const char* h : headers) os_ << "<th>" << h << "</th>";
    os_ << "</tr></thead><tbody>\n";
  }
  ~Table() { os_ << "</tbody></table></div>\n"; }
  Table& row() {
    if (open_) os_ << "</tr>\n";
    os_ << "<tr>";
    open_ = true;
    return *this;
  }
  Table& text(const std::string& t) {
    os_ << "<td>" << html_escape(t) << "</td>";
    return *this;
  }
  Table& value(const std::string& shown, double v) {
    os_ << "<td data-v='" << raw(v) << "'>" << html_escape(shown) << "</td>";
    return *this;
  }
  Table& count(std::int64_t v) { return value(std::to_string(v), static_cast<double>(v)); }
  Table& time(const Stat& s) { return s.count ? value(format_duration(s.mean), s.mean) : na(); }
  Table& time(double ns) { return value(format_duration(ns), ns); }
  Table& ratio(const Stat& s) { return s.count ? value(pct(s.mean), s.mean) : na(); }
  Table& bw(double v) { return v < 0 ? na() : value(gbps(v), v); }
  Table& na() {
    os_ << "<td>n/a</td>";
    return *this;
  }
  void end() {
    if (open_) os_ << "</tr>\n";
    open_ = false;
  }

 private:
  std::ostream& os_;
  bool open_ = false;
};

const std::string* host_of(const Report& r, int rank) {
  for (const RankSummary& s : r.ranks)
    if (s.rank == rank) return &s.host;
  return nullptr;
}

void card(std::ostream& os, const std::string& what, const std::string& value,
          const std::string& detail, bool bad = false) {
  os << "<div class='card" << (bad ? " bad" : "") << "'><div class='what'>" << html_escape(what)
     << "</div><div class='value'>" << html_escape(value) << "</div><div class='detail'>"
     << html_escape(detail) << "</div></div>\n";
}

void at_a_glance(std::ostream& os, const Report& r) {
  os << "<section id='glance'><h2>At a glance</h2><div class='cards'>\n";
  for (const AcrossRanks& a : r.across) {
    if (a.stat.count == 0) continue;
    const bool ratio = a.unit == "ratio";
    auto show = [&](double v) { return ratio ? pct(v) : format_duration(v); };
    const std::string worst = "worst: rank " + std::to_string(a.worst_rank) + " (" + a.worst_host +
                              ") " + show(ratio ? a.stat.min : a.stat.max) + "; ranks " +
                              show(a.stat.min) + " to " + show(a.stat.max);
    if (a.metric == "step_time") card(os, "step time (mean over ranks)", show(a.stat.mean), worst);
    if (a.metric == "overlap")
      card(os, "communication hidden by compute", show(a.stat.mean), worst);
    if (a.metric == "exposed_comm")
      card(os, "exposed communication per step", show(a.stat.mean), worst);
  }
  if (!r.waits.empty()) {
    const RankWait* top = &r.waits.front();
    for (const RankWait& w : r.waits)
      if (w.wait_caused_ns > top->wait_caused_ns) top = &w;
    if (top->wait_caused_ns > 0) {
      const std::string* host = host_of(r, top->rank);
      card(os, "straggler", "rank " + std::to_string(top->rank) + (host ? " (" + *host + ")" : ""),
           "last at " + std::to_string(top->times_last) + " of " +
               std::to_string(top->collectives) + " collectives; others waited " +
               format_duration(static_cast<double>(top->wait_caused_ns)) + " for it",
           true);
    }
  }
  for (const GroupRow& g : r.groups) {
    if (g.busbw_gbps < 0) continue;
    card(os, "busbw of " + g.group + " collectives", gbps(g.busbw_gbps),
         std::to_string(g.instances) + " collectives on " + std::to_string(g.communicators) +
             " communicator(s)");
  }
  if (r.incomplete_instances > 0) {
    card(os, "incomplete collectives", std::to_string(r.incomplete_instances),
         "recorded by fewer ranks than their communicator has: a hang or a lost rank", true);
  }
  os << "</div></section>\n";
}

void tables(std::ostream& os, const Report& r) {
  os << "<section id='tables'><h2>Tables</h2><p class='hint'>Click a column header to sort. "
        "Per-rank values are means per measured step.</p>\n<h3>Per rank</h3>\n";
  {
    Table t(os, "table-ranks",
            {"rank", "host", "device", "steps", "step", "COMP", "COMM", "MEM", "overlap", "hidden",
             "exposed", "idle"});
    for (const RankSummary& s : r.ranks) {
      t.row().count(s.rank).text(s.host).text(s.device).count(s.steps).time(s.wall_ns);
      t.time(s.comp_ns).time(s.comm_ns).time(s.mem_ns).ratio(s.overlap).ratio(s.hidden_fraction);
      t.time(s.exposed_comm_ns).time(s.idle_ns);
    }
    t.end();
  }
  os << "<h3>Across ranks (each rank's mean step)</h3>\n";
  {
    Table t(os, "table-across", {"metric", "min", "mean", "max", "worst rank", "worst host"});
    for (const AcrossRanks& a : r.across) {
      t.row().text(a.metric);
      if (a.stat.count == 0) {
        t.na().na().na().na().na();
        continue;
      }
      const bool ratio = a.unit == "ratio";
      for (double v : {a.stat.min, a.stat.mean, a.stat.max})
        t.value(ratio ? pct(v) : format_duration(v), v);
      t.count(a.worst_rank).text(a.worst_host);
    }
    t.end();
  }
  os << "<h3>Communicator groups</h3>\n";
  {
    Table t(os, "table-groups",
            {"group", "communicators", "size (ranks)", "collectives", "bytes", "time", "busbw",
             "mean start skew", "wait"});
    for (const GroupRow& g : r.groups) {
      t.row().text(g.group).count(g.communicators);
      t.value(g.min_size == g.max_size
                  ? std::to_string(g.min_size)
                  : std::to_string(g.min_size) + "-" + std::to_string(g.max_size),
              g.max_size);
      t.count(g.instances).value(format_bytes(g.bytes), static_cast<double>(g.bytes));
      t.time(g.time_ns).bw(g.busbw_gbps).time(g.mean_skew_ns).time(static_cast<double>(g.wait_ns));
    }
    t.end();
  }
  os << "<h3>Collectives by message size</h3><p class='hint'>time: the shortest rank's duration "
        "per call (the transfer without waiting); busbw = bytes / p50 × the collective's bus "
        "factor.</p>\n";
  {
    Table t(os, "table-collectives",
            {"collective", "n (ranks)", "bytes", "count", "p50", "p95", "algbw", "busbw", "of peak",
             "mean start skew", "wait"});
    for (const CollectiveRow& c : r.collectives) {
      t.row().text(c.collective).count(c.comm_size);
      t.value(format_bytes(c.bytes), static_cast<double>(c.bytes)).count(c.count);
      t.time(c.p50_ns).time(c.p95_ns).bw(c.algbw_gbps).bw(c.busbw_gbps);
      if (c.peak_fraction < 0) {
        t.na();
      } else {
        t.value(pct(c.peak_fraction), c.peak_fraction);
      }
      t.time(c.mean_skew_ns).time(static_cast<double>(c.wait_ns));
    }
    t.end();
  }
  os << "<h3>Stragglers (ranks the others waited for most first)</h3>\n";
  {
    std::vector<RankWait> waits = r.waits;
    std::stable_sort(waits.begin(), waits.end(), [](const RankWait& a, const RankWait& b) {
      return a.wait_caused_ns > b.wait_caused_ns;
    });
    Table t(os, "table-stragglers",
            {"rank", "host", "arrived last", "last (%)", "wait caused", "own wait", "collectives"});
    for (const RankWait& w : waits) {
      const std::string* host = host_of(r, w.rank);
      const double share = static_cast<double>(w.times_last) /
                           static_cast<double>(std::max<std::int64_t>(1, w.collectives));
      t.row().count(w.rank).text(host ? *host : "?").count(w.times_last).value(pct(share), share);
      t.time(static_cast<double>(w.wait_caused_ns)).time(static_cast<double>(w.wait_ns));
      t.count(w.collectives);
    }
    t.end();
  }
  if (r.baseline) {
    const BaselineComparison& b = *r.baseline;
    os << "<h3>Against the serialized baseline (" << html_escape(b.source) << ")</h3>\n";
    Table t(os, "table-baseline", {"quantity", "run", "baseline", "change"});
    t.row().text("step time").time(b.run_step_ns).time(b.baseline_step_ns);
    if (b.speedup) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "speed-up %.3fx", *b.speedup);
      t.value(buf, *b.speedup);
    } else {
      t.na();
    }
    t.row().text("COMM busy per step").time(b.run_comm_ns).time(b.baseline_comm_ns);
    t.value("hidden " + format_duration(b.comm_hidden_ns), b.comm_hidden_ns);
    for (const Interference& in : b.interference) {
      t.row().text(in.category + " ops overlapped (" + std::to_string(in.ops) + ")");
      t.time(in.run_mean_ns).time(in.baseline_mean_ns);
      if (in.slowdown) {
        t.value(pct(*in.slowdown), *in.slowdown);
      } else {
        t.na();
      }
    }
    t.end();
  }
  os << "</section>\n";
}

const char kStyle[] =
    "body{font:14px system-ui,sans-serif;margin:20px 28px;color:#222}"
    "h1{margin:0 0 4px}h2{margin:28px 0 6px;border-bottom:1px solid #ddd}h3{margin:18px 0 4px}"
    ".hint,.legend{color:#555;font-size:12px;margin:4px 0}.warn{color:#b71c1c}"
    ".cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #ccd;border-radius:6px;"
    "padding:8px 12px;min-width:200px;max-width:360px}.card.bad{border-color:#e57373;"
    "background:#fff5f5}.card .what{font-size:12px;color:#555}.card .value{font-size:22px;"
    "font-weight:600}.card .detail{font-size:12px;color:#444}"
    ".scroll{max-height:480px;overflow:auto;content-visibility:auto;contain-intrinsic-size:auto "
    "480px}table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ddd;padding:2px 8px;text-align:right;white-space:nowrap}"
    "th{background:#f3f5f8;position:sticky;top:0;cursor:pointer}"
    "th[data-dir=asc]::after{content:' ▲'}th[data-dir=desc]::after{content:' ▼'}"
    "td:nth-child(2),td:first-child{text-align:left}"
    ".chart{display:block}.chart .axis{stroke:#333}.chart .grid{stroke:#eee}"
    ".chart .tick{font-size:11px;fill:#333}.chart .label{font-size:12px;fill:#222}"
    ".chart .steptick{stroke:#000;stroke-width:2;fill:none}.chart "
    ".peak{stroke:#555;stroke-dasharray:4 3}"
    ".chart .band{fill:#90caf9;opacity:.45}.chart .meanline{fill:none;stroke:#1565c0}"
    ".chart .ovline{fill:none;stroke:#e53935;stroke-dasharray:5 3}"
    ".chart .timed{fill:#1565c0}.chart .plain{fill:#fff;stroke:#1565c0}"
    ".chart .warmup{fill:#eee}"
    "canvas{display:block;cursor:crosshair}#timeline-tools button{margin:0 6px 6px 0}"
    ".tip{position:absolute;background:#fff;border:1px solid #999;padding:4px 8px;"
    "font-size:12px;pointer-events:none;box-shadow:0 1px 4px rgba(0,0,0,.2);max-width:420px}";

const char kScript[] =
#include "analysis/report/report_html.js.inc"
    ;

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void write_report_html(std::ostream& os, const Report& r) {
  os << "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width'><title>commprof report</title><style>"
     << kStyle << "</style></head><body>\n<h1>commprof report</h1>\n";
  int steps = 0;
  for (const RankSummary& s : r.ranks) steps = std::max(steps, s.steps);
  os << "<p>" << r.ranks.size() << " of " << r.world_size << " ranks, up to " << steps
     << " measured steps each (warm-up left out). Times in the unit that fits them, ratios in %, "
        "bandwidth in GB/s (10<sup>9</sup> B/s).</p>\n";
  for (const FileProblem& p : r.problems)
    os << "<p class='warn'>problem: " << html_escape(p.message) << "</p>\n";
  if (!r.missing_ranks.empty()) {
    os << "<p class='warn'>missing ranks:";
    for (int m : r.missing_ranks) os << ' ' << m;
    os << "</p>\n";
  }
  for (const std::string& w : r.warnings) os << "<p class='warn'>" << html_escape(w) << "</p>\n";
  at_a_glance(os, r);

  os << "<section><h2>Timeline of step " << r.timeline_step << "</h2><p class='hint'>";
  if (r.timeline_step >= 0) {
    os << "The measured step with per-op timing whose slowest rank took longest, unless "
          "<code>--timeline-step</code> chose another; "
       << r.timelines.size()
       << " rank(s) drawn, slowest first (the slowest and fastest at this step, and "
          "<code>--timeline-rank</code>); all on rank 0's clock. Scroll to zoom, drag to pan, "
          "double-click to reset, hover for an op.";
  }
  os << "</p><div id='timeline-tools'></div><div id='timeline-box'></div></section>\n";
  os << "<section><h2>Stragglers: who made the others wait, and when</h2><div "
        "id='heatmap-box'></div></section>\n";
  os << "<section><h2>Step time and overlap per step</h2><p class='hint'>Blue band: fastest to "
        "slowest rank; line: mean over ranks; dots: the slowest rank (filled: the step carried "
        "per-op timing); dashed red: mean overlap (right axis); grey: warm-up.</p><div "
        "id='trend-box'></div></section>\n";
  os << "<section><h2>Per-rank step breakdown</h2><p class='hint'>Mean per measured step. COMM's "
        "hatched part overlapped COMP (hidden); the black tick is the step time.</p><div "
        "id='ranks-box'></div></section>\n";
  os << "<section><h2>Bus bandwidth against message size</h2><div "
        "id='busbw-box'></div></section>\n";
  tables(os, r);

  json data = {{"ranks", ranks_data(r)},
               {"busbw", busbw_data(r)},
               {"trend", trend_data(r)},
               {"timeline", timeline_data(r)},
               {"heatmap", heatmap_data(r)}};
  // Headless-browser tests read #render-check: the script fills it after drawing.
  os << "<pre id='render-check' hidden></pre>\n<script type='application/json' "
        "id='commprof-data'>"
     << script_safe(data) << "</script>\n<script>" << kScript << "</script>\n</body></html>\n";
}

}  // namespace commprof
