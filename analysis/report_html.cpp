// SPDX-License-Identifier: MIT
// A self-contained HTML page: no scripts or styles from the network, charts as inline SVG.
// Charts: per-rank stacked bars (COMP, COMM with its overlapped part hatched, MEM, idle); busbw
// against message size; one measured step of one rank on a per-stream timeline. Every string
// that came from a file (host, device, op and stream names, paths, messages) is escaped.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <sstream>

#include "analysis/report_writers.hpp"

namespace commprof {
namespace {

std::string f(double v, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
std::string us(double ns) { return f(ns / 1e3); }
std::string mean_us(const Stat& s) { return s.count ? us(s.mean) : "n/a"; }
std::string mean_pct(const Stat& s) { return s.count ? f(100.0 * s.mean) : "n/a"; }

const char* kColor[] = {"#43a047", "#e53935", "#1e88e5"};  // COMP, COMM, MEM (NVTX colours)
const char* kPalette[] = {"#e53935", "#1e88e5", "#43a047", "#fb8c00",
                          "#8e24aa", "#00897b", "#6d4c41", "#3949ab"};

constexpr double kW = 900;
constexpr double kH = 300;
constexpr double kLeft = 70;
constexpr double kBottom = 40;
constexpr double kTop = 20;

void axes(std::ostream& os, const std::string& x_label, const std::string& y_label, double y_max,
          const std::string& y_unit) {
  const double plot_h = kH - kTop - kBottom;
  os << "<line x1='" << kLeft << "' y1='" << kTop << "' x2='" << kLeft << "' y2='" << kH - kBottom
     << "' stroke='#333'/><line x1='" << kLeft << "' y1='" << kH - kBottom << "' x2='" << kW - 10
     << "' y2='" << kH - kBottom << "' stroke='#333'/>";
  for (int i = 0; i <= 4; ++i) {
    const double y = kH - kBottom - plot_h * i / 4.0;
    os << "<text x='" << kLeft - 5 << "' y='" << y + 4 << "' text-anchor='end' font-size='11'>"
       << f(y_max * i / 4.0, y_max < 10 ? 2 : 0) << "</text>";
  }
  os << "<text x='" << (kW + kLeft) / 2 << "' y='" << kH - 5
     << "' text-anchor='middle' font-size='12'>" << html_escape(x_label) << "</text>"
     << "<text x='14' y='" << kH / 2 << "' font-size='12' transform='rotate(-90 14 " << kH / 2
     << ")' text-anchor='middle'>" << html_escape(y_label + " (" + y_unit + ")") << "</text>";
}

void rank_bars(std::ostream& os, const Report& r) {
  os << "<h2>Per-rank step breakdown</h2><p>Mean per measured step. COMM's hatched part overlapped "
        "COMP (hidden); the black tick is the step time.</p>\n";
  os << "<svg class='chart' id='chart-ranks' width='" << kW << "' height='" << kH
     << "' xmlns='http://www.w3.org/2000/svg'><defs><pattern id='hatch' width='6' height='6' "
        "patternUnits='userSpaceOnUse' patternTransform='rotate(45)'><rect width='6' height='6' "
        "fill='"
     << kColor[1] << "'/><line x1='0' y1='0' x2='0' y2='6' stroke='#fff' stroke-width='3'/>"
     << "</pattern></defs>";
  double y_max = 1;
  for (const RankSummary& s : r.ranks) {
    y_max = std::max(
        {y_max, s.comp_ns.mean + s.comm_ns.mean + s.mem_ns.mean + s.idle_ns.mean, s.wall_ns.mean});
  }
  axes(os, "rank", "time per step", y_max / 1e3, "us");
  const double plot_w = kW - kLeft - 20;
  const double plot_h = kH - kTop - kBottom;
  const double slot = r.ranks.empty() ? plot_w : plot_w / static_cast<double>(r.ranks.size());
  const double bar = std::max(1.0, slot * 0.8);
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const RankSummary& s = r.ranks[i];
    const double x = kLeft + slot * static_cast<double>(i) + (slot - bar) / 2;
    double y = kH - kBottom;
    auto seg = [&](double ns, const std::string& fill, const char* cls, const std::string& what) {
      const double h = ns / y_max * plot_h;
      if (h <= 0) return;
      y -= h;
      os << "<rect class='" << cls << "' x='" << f(x, 2) << "' y='" << f(y, 2) << "' width='"
         << f(bar, 2) << "' height='" << f(h, 2) << "' fill='" << fill << "'><title>rank " << s.rank
         << " (" << html_escape(s.host) << "): " << what << ' ' << us(ns) << " us</title></rect>";
    };
    const double hidden = s.comm_comp_ns.count ? s.comm_comp_ns.mean : 0.0;
    seg(s.comp_ns.mean, kColor[0], "bar-comp", "COMP");
    seg(hidden, "url(#hatch)", "bar-overlap", "COMM overlapped with COMP");
    seg(s.comm_ns.mean - hidden, kColor[1], "bar-comm", "COMM exposed");
    seg(s.mem_ns.mean, kColor[2], "bar-mem", "MEM");
    seg(s.idle_ns.mean, "#bdbdbd", "bar-idle", "idle");
    const double ty = kH - kBottom - s.wall_ns.mean / y_max * plot_h;
    os << "<line x1='" << f(x, 2) << "' x2='" << f(x + bar, 2) << "' y1='" << f(ty, 2) << "' y2='"
       << f(ty, 2) << "' stroke='#000' stroke-width='2'/>";
    if (r.ranks.size() <= 32) {
      os << "<text x='" << f(x + bar / 2, 2) << "' y='" << kH - kBottom + 14
         << "' font-size='10' text-anchor='middle'>" << s.rank << "</text>";
    }
  }
  os << "</svg>\n<p class='legend'><span style='color:" << kColor[0] << "'>&#9632; COMP</span> "
     << "<span style='color:" << kColor[1] << "'>&#9632; COMM</span> (hatched: overlapped) "
     << "<span style='color:" << kColor[2] << "'>&#9632; MEM</span> "
     << "<span style='color:#999'>&#9632; idle</span></p>\n";
}

void busbw_chart(std::ostream& os, const Report& r) {
  os << "<h2>Bus bandwidth against message size</h2>\n";
  std::map<std::string, std::vector<const CollectiveRow*>> series;
  double x_lo = 1e300;
  double x_hi = 0;
  double y_max = r.peak_busbw_gbps;
  for (const CollectiveRow& c : r.collectives) {
    if (c.busbw_gbps < 0 || c.bytes == 0) continue;
    series[c.collective + " n=" + std::to_string(c.comm_size)].push_back(&c);
    x_lo = std::min(x_lo, std::log2(static_cast<double>(c.bytes)));
    x_hi = std::max(x_hi, std::log2(static_cast<double>(c.bytes)));
    y_max = std::max(y_max, c.busbw_gbps);
  }
  os << "<svg class='chart' id='chart-busbw' width='" << kW << "' height='" << kH
     << "' xmlns='http://www.w3.org/2000/svg'>";
  if (series.empty()) {
    os << "<text x='" << kW / 2 << "' y='" << kH / 2
       << "' text-anchor='middle'>no collectives with a known bus factor</text></svg>\n";
    return;
  }
  y_max = y_max <= 0 ? 1 : y_max * 1.1;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  axes(os, "message size (B, log scale)", "busbw", y_max, "GB/s");
  const double plot_w = kW - kLeft - 30;
  const double plot_h = kH - kTop - kBottom;
  auto px = [&](std::uint64_t b) {
    return kLeft + 10 + (std::log2(static_cast<double>(b)) - x_lo) / (x_hi - x_lo) * (plot_w - 20);
  };
  auto py = [&](double v) { return kH - kBottom - v / y_max * plot_h; };
  for (double e = std::ceil(x_lo); e <= x_hi; e += std::max(1.0, std::floor((x_hi - x_lo) / 8))) {
    const auto b = static_cast<std::uint64_t>(std::exp2(e));
    os << "<text x='" << f(px(b), 1) << "' y='" << kH - kBottom + 14
       << "' font-size='10' text-anchor='middle'>" << b << "</text>";
  }
  if (r.peak_busbw_gbps > 0) {
    os << "<line class='peak' x1='" << kLeft << "' x2='" << kW - 10 << "' y1='"
       << f(py(r.peak_busbw_gbps), 2) << "' y2='" << f(py(r.peak_busbw_gbps), 2)
       << "' stroke='#555' stroke-dasharray='4 3'/><text x='" << kW - 12 << "' y='"
       << f(py(r.peak_busbw_gbps) - 4, 2) << "' font-size='11' text-anchor='end'>peak "
       << f(r.peak_busbw_gbps, 1) << " GB/s</text>";
  }
  int k = 0;
  for (const auto& [name, rows] : series) {
    const char* color = kPalette[k % 8];
    std::string points;
    for (const CollectiveRow* c : rows)
      points += f(px(c->bytes), 2) + "," + f(py(c->busbw_gbps), 2) + " ";
    os << "<polyline fill='none' stroke='" << color << "' points='" << points << "'/>";
    for (const CollectiveRow* c : rows) {
      os << "<circle class='point' cx='" << f(px(c->bytes), 2) << "' cy='"
         << f(py(c->busbw_gbps), 2) << "' r='3' fill='" << color << "'><title>" << html_escape(name)
         << ", " << c->bytes << " B: " << f(c->busbw_gbps, 2) << " GB/s</title></circle>";
    }
    os << "<text x='" << kLeft + 10 << "' y='" << kTop + 12 + 14 * k << "' font-size='11' fill='"
       << color << "'>" << html_escape(name) << "</text>";
    ++k;
  }
  os << "</svg>\n";
}

void step_timeline(std::ostream& os, const Report& r) {
  os << "<h2>Timeline of one step: rank " << r.timeline_rank << "</h2>\n";
  if (!r.timeline_step || r.timeline_step->ops.empty()) {
    os << "<p>No measured step of rank " << r.timeline_rank << " was read.</p>\n";
    return;
  }
  const StepRecord& s = *r.timeline_step;
  std::map<std::string, int> lanes;
  std::int64_t lo = s.start_ns;
  std::int64_t hi = s.end_ns;
  for (const OpRecord& op : s.ops) {
    lanes.try_emplace(op.stream, static_cast<int>(lanes.size()));
    lo = std::min(lo, op.start_ns);
    hi = std::max(hi, op.end_ns);
  }
  const double lane_h = 28;
  const double height = kTop + lane_h * static_cast<double>(lanes.size()) + kBottom;
  const double plot_w = kW - 120 - 20;
  const double span = static_cast<double>(std::max<std::int64_t>(1, hi - lo));
  os << "<p>Step " << s.index << ", " << us(static_cast<double>(hi - lo)) << " us.</p>"
     << "<svg class='chart' id='chart-timeline' width='" << kW << "' height='" << f(height, 0)
     << "' xmlns='http://www.w3.org/2000/svg'>";
  for (const auto& [stream, lane] : lanes) {
    os << "<text x='115' y='" << f(kTop + lane_h * lane + 18, 1)
       << "' text-anchor='end' font-size='12'>" << html_escape(stream) << "</text>";
  }
  for (const OpRecord& op : s.ops) {
    const double x = 120 + static_cast<double>(op.start_ns - lo) / span * plot_w;
    const double w = std::max(0.5, static_cast<double>(op.duration_ns()) / span * plot_w);
    os << "<rect class='op' x='" << f(x, 2) << "' y='" << f(kTop + lane_h * lanes[op.stream] + 4, 1)
       << "' width='" << f(w, 2) << "' height='" << lane_h - 8 << "' fill='"
       << kColor[index_of(op.category)] << "'><title>" << html_escape(op.name) << " ("
       << category_name(op.category) << "): " << us(static_cast<double>(op.duration_ns()))
       << " us</title></rect>";
  }
  const double axis_y = kTop + lane_h * static_cast<double>(lanes.size()) + 14;
  for (int i = 0; i <= 4; ++i) {
    os << "<text x='" << f(120 + plot_w * i / 4, 1) << "' y='" << f(axis_y, 1)
       << "' font-size='10' text-anchor='middle'>" << us(span * i / 4) << "</text>";
  }
  os << "<text x='" << f(120 + plot_w / 2, 1) << "' y='" << f(axis_y + 16, 1)
     << "' font-size='12' text-anchor='middle'>time since step start (us)</text></svg>\n";
}

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
        "<title>commprof report</title><style>body{font-family:sans-serif;margin:24px;color:#222}"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;"
        "text-align:right}td:first-child,th:first-child{text-align:left}.warn{color:#b71c1c}"
        "</style></head><body>\n<h1>commprof report</h1>\n";
  os << "<p>" << r.ranks.size() << " of " << r.world_size << " ranks. Times in us (mean per "
     << "measured step), ratios in %, bandwidth in GB/s (10<sup>9</sup> B/s).</p>\n";
  for (const FileProblem& p : r.problems) {
    os << "<p class='warn'>problem: " << html_escape(p.message) << "</p>\n";
  }
  if (!r.missing_ranks.empty()) {
    os << "<p class='warn'>missing ranks:";
    for (int m : r.missing_ranks) os << ' ' << m;
    os << "</p>\n";
  }
  for (const std::string& w : r.warnings) os << "<p class='warn'>" << html_escape(w) << "</p>\n";
  rank_bars(os, r);
  busbw_chart(os, r);
  step_timeline(os, r);

  os << "<h2>Per rank</h2><table id='table-ranks'><tr><th>rank</th><th>host</th><th>device</th>"
        "<th>step (us)</th><th>COMP (us)</th><th>COMM (us)</th><th>MEM (us)</th><th>overlap (%)"
        "</th><th>hidden (%)</th><th>exposed (us)</th><th>idle (us)</th></tr>\n";
  for (const RankSummary& s : r.ranks) {
    os << "<tr><td>" << s.rank << "</td><td>" << html_escape(s.host) << "</td><td>"
       << html_escape(s.device) << "</td><td>" << mean_us(s.wall_ns) << "</td><td>"
       << mean_us(s.comp_ns) << "</td><td>" << mean_us(s.comm_ns) << "</td><td>"
       << mean_us(s.mem_ns) << "</td><td>" << mean_pct(s.overlap) << "</td><td>"
       << mean_pct(s.hidden_fraction) << "</td><td>" << mean_us(s.exposed_comm_ns) << "</td><td>"
       << mean_us(s.idle_ns) << "</td></tr>\n";
  }
  os << "</table>\n<h2>Collectives by message size</h2><table id='table-collectives'><tr>"
        "<th>collective</th><th>n (ranks)</th><th>bytes (B)</th><th>count</th><th>p50 (us)</th>"
        "<th>p95 (us)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>peak (%)</th></tr>\n";
  for (const CollectiveRow& c : r.collectives) {
    os << "<tr><td>" << html_escape(c.collective) << "</td><td>" << c.comm_size << "</td><td>"
       << c.bytes << "</td><td>" << c.count << "</td><td>" << us(c.p50_ns) << "</td><td>"
       << us(c.p95_ns) << "</td><td>" << f(c.algbw_gbps, 2) << "</td><td>"
       << (c.busbw_gbps < 0 ? "n/a" : f(c.busbw_gbps, 2)) << "</td><td>"
       << (c.peak_fraction < 0 ? "n/a" : f(100 * c.peak_fraction)) << "</td></tr>\n";
  }
  os << "</table>\n";
  // Headless-browser tests read this: it is filled only when the SVG was laid out.
  os << "<pre id='render-check'></pre><script>(function(){var out=[];"
        "document.querySelectorAll('svg.chart').forEach(function(s){var b=s.getBBox();"
        "out.push(s.id+' '+Math.round(b.width)+'x'+Math.round(b.height)+' shapes='+"
        "s.querySelectorAll('rect,circle,polyline').length);});"
        "document.getElementById('render-check').textContent=out.join('\\n');})();</script>\n"
        "</body></html>\n";
}

}  // namespace commprof
