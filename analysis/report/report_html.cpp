// SPDX-License-Identifier: MIT
// A self-contained HTML page (no network): the key figures are written here as HTML, the tables
// by report_html_tables.cpp; the charts are drawn in the browser by report_html.js (inlined)
// from a JSON data block, which holds the tables' rows and the charts' own data. Every
// string that came from a file (host, device, op and stream names, paths, messages) is escaped:
// as HTML in the tables, and as \u003c-style escapes in the data block, whose strings the
// script only ever puts into the page as text.
#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "analysis/report/report_html_tables.hpp"
#include "analysis/report/report_writers.hpp"
#include "src/core/units.hpp"

namespace commprof {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- the charts' data block
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

// The timeline step's critical path: its segments [start, duration, category (3: host gap),
// rank, op name], the ops' times on the timeline's clock (t0); and its time per rank and
// category [rank, COMP, COMM, MEM, gap ns], most first. Null without a path for the step.
template <class Id>
json critical_path_data(const CriticalPathOfStep* path, std::int64_t t0, const Id& id,
                        std::map<std::string, int>& names) {
  if (path == nullptr || path->segments.empty()) return nullptr;
  json segments = json::array();
  std::map<int, std::array<std::int64_t, 4>> by_rank;
  for (const CriticalSegment& s : path->segments) {
    const int category = s.gap ? 3 : static_cast<int>(index_of(s.category));
    segments.push_back(
        {s.start_ns - t0, s.end_ns - s.start_ns, category, s.rank, id(names, s.name)});
    by_rank[s.rank][static_cast<std::size_t>(category)] += s.end_ns - s.start_ns;
  }
  std::vector<std::pair<std::int64_t, int>> order;  // (−total, rank)
  for (const auto& [rank, t] : by_rank) order.emplace_back(-(t[0] + t[1] + t[2] + t[3]), rank);
  std::sort(order.begin(), order.end());
  json shares = json::array();
  for (const auto& [minus_total, rank] : order) {
    const auto& t = by_rank[rank];
    shares.push_back({rank, t[0], t[1], t[2], t[3]});
  }
  return {{"segments", std::move(segments)},
          {"shares", std::move(shares)},
          {"length", path->segments.back().end_ns - path->segments.front().start_ns}};
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
  const auto id = [](std::map<std::string, int>& table, const std::string& key) {
    return table.try_emplace(key, static_cast<int>(table.size())).first->second;
  };
  std::map<int, const RankSummary*> by_rank;
  for (const RankSummary& s : r.ranks) by_rank[s.rank] = &s;
  const CriticalPathOfStep* path = nullptr;
  for (const CriticalPathOfStep& p : r.critical_paths)
    if (p.step == r.timeline_step) path = &p;
  std::set<std::pair<int, int>> on_path;  // (rank, op) of the ops (not gaps) on the path
  if (path != nullptr) {
    for (const CriticalSegment& s : path->segments)
      if (!s.gap) on_path.insert({s.rank, s.op});
  }
  json ranks = json::array();
  std::set<int> drawn;
  for (std::size_t k = 0; k < r.timelines.size(); ++k) {
    const RankStep& rs = r.timelines[k];
    drawn.insert(rs.rank);
    // Lanes: COMP, COMM, MEM streams in that order, then by name.
    std::map<std::pair<int, std::string>, json> lanes;
    for (std::size_t i = 0; i < rs.step.ops.size(); ++i) {
      const OpRecord& op = rs.step.ops[i];
      json& lane = lanes[{static_cast<int>(index_of(op.category)), op.stream}];
      if (lane.is_null()) lane = json::array();
      const bool comm = op.category == Category::kComm && !op.comm.empty();
      lane.push_back({op.start_ns + rs.clock_offset_ns - t0, op.duration_ns(),
                      static_cast<int>(index_of(op.category)), id(names, op.name), op.bytes,
                      comm ? id(comms, op.comm) : -1, comm ? op.seq : -1,
                      on_path.count({rs.rank, static_cast<int>(i)}) != 0 ? 1 : 0});
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
  json out = {{"step", r.timeline_step}, {"t0", 0},
              {"t1", t1 - t0},           {"ranks", std::move(ranks)},
              {"folded", folded},        {"path", critical_path_data(path, t0, id, names)}};
  for (const auto& [n, i] : names) name_list[static_cast<std::size_t>(i)] = n;
  for (const auto& [c, i] : comms) comm_list[static_cast<std::size_t>(i)] = c;
  out["names"] = std::move(name_list);
  out["comms"] = std::move(comm_list);
  return out;
}

// Ranks × instances in start order, binned into columns of equal counts (Report::wait_columns);
// a rank's cell holds the wait it caused by arriving last at the instances of its column
// (Report::wait_cells). With more ranks than the canvas has rows of pixels (kPixelRows),
// consecutive ranks are binned into equal groups, a row each, whose cell holds the largest and
// the mean of its ranks' cells and the rank of the largest: a straggler stays as dark as it is,
// and can be named.
json heatmap_data(const Report& r) {
  constexpr std::size_t kPixelRows = 520;
  json rows = json::array();
  std::map<int, std::size_t> row_of;
  for (const RankSummary& s : r.ranks) {
    row_of[s.rank] = rows.size();
    rows.push_back(s.rank);
  }
  const std::size_t ranks = rows.size();
  const std::size_t per_group = std::max<std::size_t>(1, (ranks + kPixelRows - 1) / kPixelRows);
  const std::size_t n_groups = (ranks + per_group - 1) / per_group;
  json groups = json::array();  // [first row, last row] of each group
  for (std::size_t g = 0; g < n_groups; ++g)
    groups.push_back({g * per_group, std::min(ranks, (g + 1) * per_group) - 1});
  json bins = json::array();
  const std::int64_t t0 = r.wait_columns.empty() ? 0 : r.wait_columns.front().first_start_ns;
  for (const WaitColumn& c : r.wait_columns) {
    bins.push_back({c.first, c.last, c.first_start_ns - t0, c.last_start_ns - t0});
  }
  std::map<std::pair<std::size_t, std::size_t>, double> cells;  // (row, column) → wait caused
  for (const WaitCell& c : r.wait_cells) {
    const auto row = row_of.find(c.rank);
    if (row == row_of.end()) continue;
    cells[{row->second, static_cast<std::size_t>(c.column)}] +=
        static_cast<double>(c.wait_caused_ns);
  }
  struct Cell {
    double max = 0, sum = 0;
    std::size_t worst_row = 0;
  };
  std::map<std::pair<std::size_t, std::size_t>, Cell> binned;  // (group, column)
  for (const auto& [key, v] : cells) {
    Cell& c = binned[{key.first / per_group, key.second}];
    c.sum += v;
    if (v > c.max) {
      c.max = v;
      c.worst_row = key.first;
    }
  }
  double max = 0;
  json cell_list = json::array();
  for (const auto& [key, c] : binned) {
    const std::size_t size = std::min(ranks, (key.first + 1) * per_group) - key.first * per_group;
    max = std::max(max, c.max);
    cell_list.push_back({key.first, key.second, compact_number(c.max),
                         compact_number(c.sum / static_cast<double>(size)), rows[c.worst_row]});
  }
  return {{"rows", rows},       {"groups", groups},
          {"bins", bins},       {"instances", r.instances_total},
          {"cells", cell_list}, {"max", max}};
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

// ---------------------------------------------------------------- HTML: key figures
void card(std::ostream& os, const std::string& what, const std::string& value,
          const std::string& detail, bool bad = false) {
  os << "<div class='card" << (bad ? " bad" : "") << "'><div class='what'>" << html_escape(what)
     << "</div><div class='value'>" << html_escape(value) << "</div><div class='detail'>"
     << html_escape(detail) << "</div></div>\n";
}

// The findings first: each fired one with its cost, evidence and action, linking to what shows
// it; then the rules that could not run.
void findings_panel(std::ostream& os, const Report& r) {
  os << "<section id='findings'><h2>Findings</h2>\n";
  std::string skipped;
  bool any = false;
  for (const Finding& f : r.findings) {
    if (!f.fired()) {
      skipped += (skipped.empty() ? "" : "; ") + f.rule + " (" + f.status + ")";
      continue;
    }
    if (!any) os << "<ol class='findings'>\n";
    any = true;
    os << "<li><b>" << html_escape(f.rule) << "</b>: ";
    if (f.cost_ns >= 0) {
      os << html_escape(format_duration(f.cost_ns)) << " per step";
      if (f.cost_fraction >= 0)
        os << " (" << html_escape(html_number(f.cost_fraction, ReportUnit::kRatio))
           << " of the step)";
    } else {
      os << "stops the run";
    }
    if (!f.shown_in.empty()) os << " <a href='#" << html_escape(f.shown_in) << "'>see it</a>";
    os << "<br>" << html_escape(f.evidence) << "<br><i>action:</i> " << html_escape(f.action)
       << "</li>\n";
  }
  if (any) {
    os << "</ol>\n";
  } else {
    os << "<p>No finding: no rule evaluated fired.</p>\n";
  }
  if (!skipped.empty()) os << "<p class='hint'>" << html_escape(skipped) << "</p>\n";
  os << "</section>\n";
}

void at_a_glance(std::ostream& os, const Report& r) {
  os << "<section id='glance'><h2>At a glance</h2><div class='cards'>\n";
  for (const AcrossRanks& a : r.across) {
    if (a.stat.count == 0) continue;
    const bool ratio = a.unit == ReportUnit::kRatio;
    auto show = [&](double v) { return html_number(v, a.unit); };
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
      card(os, "straggler", "rank " + std::to_string(top->rank) + " (" + top->host + ")",
           "last at " + std::to_string(top->times_last) + " of " +
               std::to_string(top->collectives) + " collectives; others waited " +
               format_duration(static_cast<double>(top->wait_caused_ns)) + " for it",
           true);
    }
  }
  for (const GroupRow& g : r.groups) {
    if (g.busbw_gbps < 0) continue;
    card(os, "busbw of " + g.group + " collectives", html_number(g.busbw_gbps, ReportUnit::kGBps),
         std::to_string(g.instances) + " collectives on " + std::to_string(g.communicators) +
             " communicator(s)");
  }
  if (r.incomplete_instances > 0) {
    card(os, "incomplete collectives", std::to_string(r.incomplete_instances),
         "recorded by fewer ranks than their communicator has: a hang or a lost rank", true);
  }
  os << "</div></section>\n";
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
    "font-size:12px;pointer-events:none;box-shadow:0 1px 4px rgba(0,0,0,.2);max-width:420px}"
    ".pager{font-size:12px;margin:4px 0}.pager button{margin-left:4px}";

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
  findings_panel(os, r);
  at_a_glance(os, r);

  os << "<section><h2>Timeline of step " << r.timeline_step << "</h2><p class='hint'>";
  if (r.timeline_step >= 0) {
    os << "The measured step with per-op timing whose slowest rank took longest, unless "
          "<code>--timeline-step</code> chose another; "
       << r.timelines.size()
       << " rank(s) drawn, slowest first (the slowest and fastest at this step, and "
          "<code>--timeline-rank</code>); all on rank 0's clock. The step's critical path (the "
          "chain of ops and host gaps its end waited for) is the lane on top, across every "
          "rank, and its ops are outlined on the ranks drawn. Scroll to zoom, drag to pan, "
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
  write_html_tables(os, r);

  json data = {{"tables", html_tables_data(r)},
               {"peak_busbw_gbps", r.peak_busbw_gbps > 0 ? json(r.peak_busbw_gbps) : json(nullptr)},
               {"trend", trend_data(r)},
               {"timeline", timeline_data(r)},
               {"heatmap", heatmap_data(r)}};
  // Headless-browser tests read #render-check: the script fills it after drawing.
  os << "<pre id='render-check' hidden></pre>\n<script type='application/json' "
        "id='commprof-data'>"
     << script_safe(data) << "</script>\n<script>" << kScript << "</script>\n</body></html>\n";
}

}  // namespace commprof
