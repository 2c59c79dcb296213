// SPDX-License-Identifier: MIT
// Checks a report `commprof report` wrote against the rank files it was made from, read here with
// nlohmann::json alone (none of commprof's readers or reductions), as a user of each format would:
//
//   report_check text   REPORT.txt  RANK_FILE_OR_DIR...   a "Per rank" row for every rank: its
//                                                         host, device, measured steps and mean
//                                                         step time
//   report_check json   REPORT.json RANK_FILE_OR_DIR...   every rank with its step and op counts
//                                                         and step-time statistics; the
//                                                         collectives and their instance counts
//   report_check chrome TRACE.json  RANK_FILE_OR_DIR...   one complete ("X") event per op of every
//                                                         step, on its rank's process and its
//                                                         stream's thread, at the op's time
//   report_check csv    CSV_DIR/    RANK_FILE_OR_DIR...   every table, each with the rows these
//                                                         rank files call for
//
// Step time is a measured step's end − start; with sampled op timing, the step time of a rank is
// taken over its plain steps (those without ops) where it has any, as the report says it does.
// Prints each finding and exits 1 if there was any, 0 otherwise (2: bad arguments or unreadable
// input).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

int failures = 0;

template <class... T>
void fail(const T&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  std::cout << "FAIL: " << os.str() << '\n';
  ++failures;
}

[[noreturn]] void die(const std::string& what) {
  std::cerr << "report_check: " << what << '\n';
  std::exit(2);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read '" + path + "'");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

json read_json(const std::string& path) {
  try {
    return json::parse(read_text(path));
  } catch (const json::exception& e) {
    die("'" + path + "' is not JSON: " + e.what());
  }
}

/// Min, max, mean and count of a set of step times (ns), computed here.
struct Times {
  std::vector<std::int64_t> v;
  double mean() const {
    double sum = 0;
    for (std::int64_t x : v) sum += static_cast<double>(x);
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  }
  std::int64_t min() const { return *std::min_element(v.begin(), v.end()); }
  std::int64_t max() const { return *std::max_element(v.begin(), v.end()); }
};

/// What one rank file says, as the checks need it.
struct Rank {
  int rank = -1;
  std::string host, device, file;
  std::int64_t clock_offset_ns = 0;
  int warmup_steps = 0, measured_steps = 0, timed_steps = 0;
  std::int64_t measured_ops = 0;
  Times timed, plain;
  Times comp_union;  ///< per timed step, |∪ COMP ops|
  int stage = -1;    ///< pipeline stage by the run's layout (config tp, dp, pp); -1: no pipeline
  /// communicator kind → Σ over timed steps of |∪ its COMM ops| and of the part outside ∪COMP.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> group_comm;
  /// stream → (start + clock offset, duration) of every op of every step, warm-up included.
  std::map<std::string, std::multiset<std::pair<std::int64_t, std::int64_t>>> ops_by_stream;
  /// The step time the report gives: plain steps where there are any.
  const Times& step_times() const { return plain.v.empty() ? timed : plain; }
};

using Spans = std::vector<std::pair<std::int64_t, std::int64_t>>;  // [start, end)

/// The spans merged: sorted, disjoint, none empty.
Spans merged(Spans s) {
  std::sort(s.begin(), s.end());
  Spans out;
  for (const auto& [a, b] : s) {
    if (b <= a) continue;
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.emplace_back(a, b);
    }
  }
  return out;
}

std::int64_t length(const Spans& merged_spans) {
  std::int64_t n = 0;
  for (const auto& [a, b] : merged_spans) n += b - a;
  return n;
}

/// |A ∩ B| of two merged span lists.
std::int64_t overlap(const Spans& a, const Spans& b) {
  std::int64_t n = 0;
  std::size_t i = 0, k = 0;
  while (i < a.size() && k < b.size()) {
    n += std::max<std::int64_t>(
        0, std::min(a[i].second, b[k].second) - std::max(a[i].first, b[k].first));
    (a[i].second < b[k].second ? i : k)++;
  }
  return n;
}

/// "ep0" → "ep", "tp0_1" → "tp": a communicator's kind, as docs/analysis.md defines it.
std::string kind_of(const std::string& comm) {
  std::size_t n = comm.size();
  while (n > 0 && std::string("0123456789_.-").find(comm[n - 1]) != std::string::npos) --n;
  return n == 0 ? comm : comm.substr(0, n);
}

/// The collectives of the measured steps: (collective, comm size, bytes) → distinct instances
/// (communicator, sequence number), and per rank the instances it took part in.
struct Collectives {
  std::map<std::tuple<std::string, int, std::uint64_t>,
           std::set<std::pair<std::string, std::int64_t>>>
      by_size;
  std::set<std::pair<std::string, std::int64_t>> instances;
  std::set<std::string> communicators;
  std::map<int, std::set<std::pair<std::string, std::int64_t>>> of_rank;
};

std::vector<std::string> rank_file_paths(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    if (!fs::is_directory(in)) {
      files.push_back(in);
      continue;
    }
    for (const auto& e : fs::directory_iterator(in)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("rank-", 0) == 0 && name.size() > 10 &&
          name.compare(name.size() - 5, 5, ".json") == 0) {
        files.push_back(e.path().string());
      }
    }
  }
  if (files.empty()) die("no rank file among the inputs");
  return files;
}

void read_ranks(const std::vector<std::string>& inputs, std::map<int, Rank>& ranks,
                Collectives& colls) {
  for (const std::string& path : rank_file_paths(inputs)) {
    const json j = read_json(path);
    Rank r;
    r.rank = j.at("rank").get<int>();
    r.host = j.at("host").get<std::string>();
    r.device = j.at("device").get<std::string>();
    r.file = path;
    r.clock_offset_ns = j.at("clock_offset_ns").get<std::int64_t>();
    // The workloads place ranks TP fastest, then DP, then PP (workloads/layout.cpp).
    if (j.contains("config") && j.at("config").is_object()) {
      const json& c = j.at("config");
      const int tp = c.value("tp", 0), dp = c.value("dp", 0), pp = c.value("pp", 0);
      if (pp >= 2 && tp >= 1 && dp >= 1) r.stage = r.rank / (tp * dp);
    }
    for (const json& step : j.at("steps")) {
      const json& ops = step.at("ops");
      for (const json& op : ops) {
        const std::int64_t start = op.at("start_ns").get<std::int64_t>();
        r.ops_by_stream[op.at("stream").get<std::string>()].insert(
            {start + r.clock_offset_ns, op.at("end_ns").get<std::int64_t>() - start});
      }
      if (step.at("warmup").get<bool>()) {
        ++r.warmup_steps;
        continue;
      }
      ++r.measured_steps;
      const std::int64_t wall =
          step.at("end_ns").get<std::int64_t>() - step.at("start_ns").get<std::int64_t>();
      (ops.empty() ? r.plain : r.timed).v.push_back(wall);
      if (!ops.empty()) {
        ++r.timed_steps;
        std::vector<std::pair<std::int64_t, std::int64_t>> comp;  // [start, end)
        for (const json& op : ops) {
          if (op.at("category") == "COMP")
            comp.emplace_back(op.at("start_ns").get<std::int64_t>(),
                              op.at("end_ns").get<std::int64_t>());
        }
        std::sort(comp.begin(), comp.end());
        std::int64_t covered = 0, reach = std::numeric_limits<std::int64_t>::min();
        for (const auto& [a, b] : comp) {
          if (b > reach) covered += b - std::max(a, reach);
          reach = std::max(reach, b);
        }
        r.comp_union.v.push_back(covered);
        const Spans comp_spans = merged(comp);
        std::map<std::string, Spans> by_kind;
        for (const json& op : ops) {
          const std::string comm = op.value("comm", "");
          if (op.at("category") != "COMM" || comm.empty()) continue;
          by_kind[kind_of(comm)].emplace_back(op.at("start_ns").get<std::int64_t>(),
                                              op.at("end_ns").get<std::int64_t>());
        }
        for (const auto& [kind, spans] : by_kind) {
          const Spans m = merged(spans);
          auto& [busy, exposed] = r.group_comm[kind];
          busy += length(m);
          exposed += length(m) - overlap(m, comp_spans);
        }
      }
      r.measured_ops += static_cast<std::int64_t>(ops.size());
      for (const json& op : ops) {
        // Point-to-point transfers carry no sequence number (-1): they are no collective instance.
        if (op.at("category") != "COMM" || op.at("collective").get<std::string>().empty() ||
            op.at("seq").get<std::int64_t>() < 0)
          continue;
        const std::pair<std::string, std::int64_t> id{op.at("comm").get<std::string>(),
                                                      op.at("seq").get<std::int64_t>()};
        colls
            .by_size[{op.at("collective").get<std::string>(), op.at("comm_size").get<int>(),
                      op.at("bytes").get<std::uint64_t>()}]
            .insert(id);
        colls.instances.insert(id);
        colls.communicators.insert(id.first);
        colls.of_rank[r.rank].insert(id);
      }
    }
    if (!ranks.emplace(r.rank, r).second) die("rank " + std::to_string(r.rank) + " given twice");
  }
}

std::vector<std::string> split_ws(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> out;
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

/// Lines of `text` from the one after `header` to the next empty line.
std::vector<std::string> section(const std::string& text, const std::string& header) {
  std::istringstream is(text);
  std::vector<std::string> out;
  bool in = false;
  for (std::string line; std::getline(is, line);) {
    if (!in) {
      in = line == header;
      continue;
    }
    if (line.empty()) break;
    out.push_back(line);
  }
  if (!in) fail("no section '", header, "'");
  return out;
}

// --- text --------------------------------------------------------------------------------------
void check_text(const std::string& path, const std::map<int, Rank>& ranks) {
  const std::string text = read_text(path);
  const std::string n = std::to_string(ranks.size());
  const std::string first =
      "# commprof report: " + n + " of " + n + " ranks, from " + n + " rank file(s)";
  if (text.rfind(first + "\n", 0) != 0) fail("the report does not begin with '", first, "'");
  const std::vector<std::string> rows = section(text, "## Per rank");
  // The header row, then one row per rank: rank, host, device, steps(#), step(us), ...
  if (rows.size() != ranks.size() + 1) {
    fail("'Per rank' holds ", rows.size(), " rows, expected a header and ", ranks.size());
  }
  std::set<int> seen;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> cells = split_ws(rows[i]);
    const auto it = cells.empty() ? ranks.end() : ranks.find(std::atoi(cells[0].c_str()));
    if (it == ranks.end()) {
      fail("'Per rank' row of no rank given: '", rows[i], "'");
      continue;
    }
    const Rank& r = it->second;
    seen.insert(r.rank);
    std::vector<std::string> want = {std::to_string(r.rank), r.host};
    for (const std::string& w : split_ws(r.device)) want.push_back(w);
    want.push_back(std::to_string(r.measured_steps));
    if (cells.size() <= want.size() || !std::equal(want.begin(), want.end(), cells.begin())) {
      fail("rank ", r.rank, ": row '", rows[i], "', expected it to begin with rank, host '", r.host,
           "', device '", r.device, "' and ", r.measured_steps, " steps");
      continue;
    }
    // step(us), printed to 0.1 µs.
    const double shown = std::atof(cells[want.size()].c_str());
    const double mean_us = r.step_times().mean() / 1e3;
    if (std::fabs(shown - mean_us) > 0.05 + 1e-9 * mean_us) {
      fail("rank ", r.rank, ": step(us) ", cells[want.size()], ", the rank file's steps say ",
           mean_us);
    }
  }
  if (seen.size() != ranks.size()) fail("'Per rank' rows name ", seen.size(), " of ", n, " ranks");
}

// --- json --------------------------------------------------------------------------------------
void check_stat(const json& stat, const Times& t, const std::string& what) {
  if (stat.at("count").get<std::size_t>() != t.v.size()) {
    fail(what, ": count ", stat.at("count"), ", expected ", t.v.size());
    return;
  }
  if (t.v.empty()) return;
  if (stat.at("min").get<double>() != static_cast<double>(t.min()) ||
      stat.at("max").get<double>() != static_cast<double>(t.max())) {
    fail(what, ": min/max ", stat.at("min"), "/", stat.at("max"), ", expected ", t.min(), "/",
         t.max());
  }
  if (std::fabs(stat.at("mean").get<double>() - t.mean()) > 1e-9 * t.mean() + 1e-6) {
    fail(what, ": mean ", stat.at("mean"), ", expected ", t.mean());
  }
}

void check_json(const std::string& path, const std::map<int, Rank>& ranks,
                const Collectives& colls) {
  const json j = read_json(path);
  if (j.at("schema") != "commprof.report") fail("schema ", j.at("schema"));
  if (j.at("ranks_read").get<std::size_t>() != ranks.size()) {
    fail("ranks_read ", j.at("ranks_read"), ", expected ", ranks.size());
  }
  if (!j.at("problems").empty()) fail("problems: ", j.at("problems").dump());
  if (!j.at("missing_ranks").empty()) fail("missing ranks: ", j.at("missing_ranks").dump());
  std::set<int> seen;
  for (const json& jr : j.at("ranks")) {
    const int rank = jr.at("rank").get<int>();
    const auto it = ranks.find(rank);
    if (it == ranks.end() || !seen.insert(rank).second) {
      fail("ranks[] holds rank ", rank, it == ranks.end() ? ", of no file given" : " twice");
      continue;
    }
    const Rank& r = it->second;
    const std::string at = "rank " + std::to_string(rank);
    if (jr.at("host") != r.host) fail(at, ": host ", jr.at("host"), ", expected ", r.host);
    if (jr.at("steps") != r.measured_steps) {
      fail(at, ": steps ", jr.at("steps"), ", expected ", r.measured_steps);
    }
    if (jr.at("warmup_steps") != r.warmup_steps) {
      fail(at, ": warmup_steps ", jr.at("warmup_steps"), ", expected ", r.warmup_steps);
    }
    if (jr.at("timed_steps") != r.timed_steps) {
      fail(at, ": timed_steps ", jr.at("timed_steps"), ", expected ", r.timed_steps);
    }
    if (jr.at("ops") != r.measured_ops) {
      fail(at, ": ops ", jr.at("ops"), ", expected ", r.measured_ops);
    }
    check_stat(jr.at("timed_step_time_ns"), r.timed, at + " timed_step_time_ns");
    check_stat(jr.at("plain_step_time_ns"), r.plain, at + " plain_step_time_ns");
    check_stat(jr.at("step_time_ns"), r.step_times(), at + " step_time_ns");
  }
  if (seen.size() != ranks.size()) fail("ranks[] holds ", seen.size(), " of ", ranks.size());
  if (j.at("instances_total").get<std::size_t>() != colls.instances.size()) {
    fail("instances_total ", j.at("instances_total"), ", expected ", colls.instances.size());
  }
  std::map<std::tuple<std::string, int, std::uint64_t>, std::size_t> rows;
  for (const json& c : j.at("collectives")) {
    rows[{c.at("collective").get<std::string>(), c.at("comm_size").get<int>(),
          c.at("bytes").get<std::uint64_t>()}] = c.at("count").get<std::size_t>();
  }
  std::map<std::tuple<std::string, int, std::uint64_t>, std::size_t> want;
  for (const auto& [key, ids] : colls.by_size) want[key] = ids.size();
  if (rows != want) {
    fail("collectives[]: ", rows.size(), " rows by (collective, comm size, bytes), expected ",
         want.size(), " with the instance counts of the rank files");
  }
}

// --- chrome ------------------------------------------------------------------------------------
/// "ts"/"dur" in µs with 3 decimals (exact ns) → ns.
std::int64_t ns_of_micros(const json& v) { return std::llround(v.get<double>() * 1e3); }

void check_chrome(const std::string& path, const std::map<int, Rank>& ranks) {
  const json j = read_json(path);
  if (!j.contains("traceEvents") || !j.at("traceEvents").is_array()) {
    fail("no traceEvents array");
    return;
  }
  std::map<std::pair<int, int>, std::string> thread_name;  // (pid, tid) → stream
  std::set<int> processes;
  for (const json& e : j.at("traceEvents")) {
    if (e.at("ph") != "M") continue;
    if (e.at("name") == "thread_name") {
      thread_name[{e.at("pid").get<int>(), e.at("tid").get<int>()}] =
          e.at("args").at("name").get<std::string>();
    } else if (e.at("name") == "process_name") {
      processes.insert(e.at("pid").get<int>());
    }
  }
  // (rank, stream) → the events' (ts, dur), in ns.
  std::map<std::pair<int, std::string>, std::multiset<std::pair<std::int64_t, std::int64_t>>> got;
  std::size_t complete = 0;
  for (const json& e : j.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++complete;
    if (!e.contains("name") || !e.at("name").is_string() || !e.contains("ts") ||
        !e.at("ts").is_number() || !e.contains("dur") || !e.at("dur").is_number()) {
      fail("an X event without name, ts or dur: ", e.dump());
      continue;
    }
    const std::pair<int, int> thread{e.at("pid").get<int>(), e.at("tid").get<int>()};
    const auto name = thread_name.find(thread);
    if (name == thread_name.end()) {
      fail("an X event on pid ", thread.first, " tid ", thread.second,
           ", which no thread_name names");
      continue;
    }
    got[{thread.first, name->second}].insert({ns_of_micros(e.at("ts")), ns_of_micros(e.at("dur"))});
  }
  std::size_t want_events = 0;
  for (const auto& [rank, r] : ranks) {
    if (processes.count(rank) == 0) fail("no process_name event for rank ", rank);
    for (const auto& [stream, ops] : r.ops_by_stream) {
      want_events += ops.size();
      const auto it = got.find({rank, stream});
      const std::size_t n = it == got.end() ? 0 : it->second.size();
      if (n != ops.size()) {
        fail("rank ", rank, " stream ", stream, ": ", n, " X events, ", ops.size(), " ops in ",
             r.file);
      } else if (it->second != ops) {
        fail("rank ", rank, " stream ", stream,
             ": the X events' ts/dur differ from the ops' times");
      }
    }
  }
  if (complete != want_events) fail(complete, " X events in all, ", want_events, " ops");
  if (want_events == 0) fail("the rank files hold no op: nothing to check");
}

// --- csv ---------------------------------------------------------------------------------------
/// A CSV file as rows of cells (quoted cells may hold commas; none of the checked ones do).
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream is(read_text(path));
  for (std::string line; std::getline(is, line);) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

/// The table's data rows by column name; fails when the table is missing or has no header.
std::vector<std::map<std::string, std::string>> table(const std::string& dir,
                                                      const std::string& name) {
  const std::string path = dir + "/" + name + ".csv";
  std::vector<std::map<std::string, std::string>> out;
  if (!fs::exists(path)) {
    fail("no table ", name, ".csv in ", dir);
    return out;
  }
  const auto rows = read_csv(path);
  if (rows.empty()) {
    fail(name, ".csv has no header row");
    return out;
  }
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < rows[0].size() && c < rows[i].size(); ++c)
      row[rows[0][c]] = rows[i][c];
    if (rows[i].size() != rows[0].size()) {
      fail(name, ".csv row ", i, " has ", rows[i].size(), " cells, the header ", rows[0].size());
    }
    out.push_back(row);
  }
  return out;
}

void check_csv(const std::string& dir, const std::map<int, Rank>& ranks, const Collectives& colls) {
  // Each table this report writes, and nothing else: a new table comes with its check here.
  const std::set<std::string> tables = {
      "ranks",           "across_ranks",        "groups",       "group_times",  "collectives",
      "worst_instances", "stragglers",          "baseline",     "interference", "problems",
      "stages",          "critical_path_steps", "critical_path"};
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.insert(e.path().filename().string());
  for (const std::string& f : files) {
    if (f.size() < 5 || f.compare(f.size() - 4, 4, ".csv") != 0 ||
        tables.count(f.substr(0, f.size() - 4)) == 0) {
      fail("unexpected file ", f, " in ", dir);
    }
  }

  const auto rank_rows = table(dir, "ranks");
  if (rank_rows.size() != ranks.size())
    fail("ranks.csv: ", rank_rows.size(), " rows, expected ", ranks.size());
  for (const auto& row : rank_rows) {
    const auto it = ranks.find(std::atoi(row.at("rank").c_str()));
    if (it == ranks.end()) {
      fail("ranks.csv: a row of rank ", row.at("rank"), ", of no file given");
      continue;
    }
    const Rank& r = it->second;
    if (row.at("host") != r.host || row.at("device") != r.device ||
        row.at("steps") != std::to_string(r.measured_steps)) {
      fail("ranks.csv rank ", r.rank, ": host ", row.at("host"), ", device ", row.at("device"),
           ", steps ", row.at("steps"), "; expected ", r.host, ", ", r.device, ", ",
           r.measured_steps);
    }
    if (std::fabs(std::atof(row.at("step_time_ns").c_str()) - r.step_times().mean()) >
        1e-9 * r.step_times().mean() + 1e-6) {
      fail("ranks.csv rank ", r.rank, ": step_time_ns ", row.at("step_time_ns"), ", expected ",
           r.step_times().mean());
    }
  }

  const auto across = table(dir, "across_ranks");
  if (across.empty()) fail("across_ranks.csv holds no metric");
  std::set<std::string> metrics;
  for (const auto& row : across) {
    if (!metrics.insert(row.at("metric")).second)
      fail("across_ranks.csv: ", row.at("metric"), " twice");
    if (!row.at("worst_rank").empty() &&
        ranks.count(std::atoi(row.at("worst_rank").c_str())) == 0) {
      fail("across_ranks.csv ", row.at("metric"), ": worst rank ", row.at("worst_rank"));
    }
  }

  // Groups: together they hold every communicator and every collective instance once.
  std::size_t communicators = 0, instances = 0;
  for (const auto& row : table(dir, "groups")) {
    communicators += std::stoul(row.at("communicators"));
    instances += std::stoul(row.at("collectives"));
  }
  if (communicators != colls.communicators.size() || instances != colls.instances.size()) {
    fail("groups.csv: ", communicators, " communicators, ", instances,
         " collectives; the rank files hold ", colls.communicators.size(), " and ",
         colls.instances.size());
  }

  // Per communicator kind, the mean over its ranks of each rank's mean per timed step, worked out
  // here from the files' spans.
  std::map<std::string, std::pair<double, double>> per_kind;  // kind → Σ over ranks of means
  std::map<std::string, int> want_ranks;
  for (const auto& [rank, r] : ranks) {
    for (const auto& [kind, sums] : r.group_comm) {
      per_kind[kind].first += static_cast<double>(sums.first) / r.timed_steps;
      per_kind[kind].second += static_cast<double>(sums.second) / r.timed_steps;
      ++want_ranks[kind];
    }
  }
  const auto group_rows = table(dir, "group_times");
  if (group_rows.size() != per_kind.size())
    fail("group_times.csv: ", group_rows.size(), " rows, the rank files have ", per_kind.size(),
         " kinds of communicator");
  for (const auto& row : group_rows) {
    const auto it = per_kind.find(row.at("group"));
    if (it == per_kind.end()) {
      fail("group_times.csv: a row of ", row.at("group"), ", which no rank file has");
      continue;
    }
    const int n = want_ranks[it->first];
    const double busy = it->second.first / n, exposed = it->second.second / n;
    if (std::stoi(row.at("ranks")) != n ||
        std::abs(std::stod(row.at("comm_busy_ns")) - busy) > 1e-6 * std::max(1.0, busy) ||
        std::abs(std::stod(row.at("exposed_comm_ns")) - exposed) > 1e-6 * std::max(1.0, exposed)) {
      fail("group_times.csv ", it->first, ": ", row.at("ranks"), " ranks, COMM ",
           row.at("comm_busy_ns"), " ns, exposed ", row.at("exposed_comm_ns"), " ns; expected ", n,
           ", ", busy, ", ", exposed);
    }
  }

  const auto coll_rows = table(dir, "collectives");
  if (coll_rows.size() != colls.by_size.size()) {
    fail("collectives.csv: ", coll_rows.size(),
         " rows, expected one per (collective, comm size, "
         "bytes): ",
         colls.by_size.size());
  }
  for (const auto& row : coll_rows) {
    const auto it =
        colls.by_size.find({row.at("collective"), std::atoi(row.at("comm_size").c_str()),
                            std::stoull(row.at("bytes"))});
    if (it == colls.by_size.end()) {
      fail("collectives.csv: ", row.at("collective"), " of ", row.at("bytes"), " B on ",
           row.at("comm_size"), " ranks is in no rank file");
    } else if (row.at("count") != std::to_string(it->second.size())) {
      fail("collectives.csv: ", row.at("collective"), " of ", row.at("bytes"), " B: count ",
           row.at("count"), ", expected ", it->second.size());
    }
  }

  // Stragglers: a row per rank that took part in a collective, with how many.
  const auto waits = table(dir, "stragglers");
  if (waits.size() != colls.of_rank.size()) {
    fail("stragglers.csv: ", waits.size(), " rows, expected ", colls.of_rank.size());
  }
  for (const auto& row : waits) {
    const auto it = colls.of_rank.find(std::atoi(row.at("rank").c_str()));
    if (it == colls.of_rank.end() || row.at("collectives") != std::to_string(it->second.size())) {
      fail("stragglers.csv rank ", row.at("rank"), ": ", row.at("collectives"),
           " collectives, the rank files say ",
           it == colls.of_rank.end() ? std::size_t{0} : it->second.size());
    }
  }

  // Worst instances: the instances that made ranks wait longest, at most 100, each one of the
  // rank files' instances, none twice.
  const auto worst = table(dir, "worst_instances");
  if (worst.size() != std::min<std::size_t>(100, colls.instances.size())) {
    fail("worst_instances.csv: ", worst.size(), " rows, expected ",
         std::min<std::size_t>(100, colls.instances.size()));
  }
  std::set<std::pair<std::string, std::int64_t>> seen;
  for (const auto& row : worst) {
    const std::pair<std::string, std::int64_t> key{row.at("comm"), std::stoll(row.at("seq"))};
    if (colls.instances.count(key) == 0 || !seen.insert(key).second) {
      fail("worst_instances.csv: ", key.first, " #", key.second, " is in no rank file, or twice");
    }
  }

  // Critical path: a row per measured step with per-op timing (the most any rank has), whose
  // parts (COMP, COMM, MEM, host gaps) add up to the path, no longer than the step; its shares
  // name ranks of the files and add up to the whole where none is left out (at most 100 rows).
  int timed_steps = 0;
  for (const auto& [r, rank] : ranks) timed_steps = std::max(timed_steps, rank.timed_steps);
  const auto paths = table(dir, "critical_path_steps");
  if (paths.size() != static_cast<std::size_t>(timed_steps))
    fail("critical_path_steps.csv: ", paths.size(), " rows, expected ", timed_steps);
  for (const auto& row : paths) {
    const std::int64_t path = std::stoll(row.at("path_ns"));
    const std::int64_t parts = std::stoll(row.at("comp_ns")) + std::stoll(row.at("comm_ns")) +
                               std::stoll(row.at("mem_ns")) + std::stoll(row.at("gap_ns"));
    if (parts != path || path > std::stoll(row.at("step_time_ns")) || path <= 0) {
      fail("critical_path_steps.csv: step ", row.at("step"), ": path ", path, " ns, its parts ",
           parts, " ns, the step ", row.at("step_time_ns"), " ns");
    }
  }
  const auto shares = table(dir, "critical_path");
  double share = 0;
  for (const auto& row : shares) {
    share += std::stod(row.at("share"));
    if (ranks.count(std::atoi(row.at("rank").c_str())) == 0)
      fail("critical_path.csv: rank ", row.at("rank"), " of no file given");
  }
  if (!paths.empty() && shares.size() < 100 && std::abs(share - 1.0) > 1e-9)
    fail("critical_path.csv: the shares add up to ", share, ", not 1");

  // No --baseline: its tables hold the header alone.
  for (const char* name : {"baseline", "interference"}) {
    const auto rows = table(dir, name);
    if (!rows.empty()) fail(name, ".csv: ", rows.size(), " rows without a baseline");
  }

  // Per pipeline stage: its ranks, and the means over them of their mean timed step, |∪ COMP| and
  // bubble (1 − COMP / step), each computed here from the rank files.
  struct Stage {
    int ranks = 0;
    double step = 0, comp = 0, bubble = 0;
  };
  std::map<int, Stage> stages;
  for (const auto& [id, r] : ranks) {
    if (r.stage < 0 || r.timed.v.empty()) continue;
    Stage& s = stages[r.stage];
    ++s.ranks;
    s.step += r.timed.mean();
    s.comp += r.comp_union.mean();
    s.bubble += 1.0 - r.comp_union.mean() / r.timed.mean();
  }
  const auto stage_rows = table(dir, "stages");
  if (stage_rows.size() != stages.size())
    fail("stages.csv: ", stage_rows.size(), " rows, expected ", stages.size());
  auto near = [](double got, double want) {
    return std::abs(got - want) <= 1e-6 * std::abs(want) + 1.0;
  };
  for (const auto& row : stage_rows) {
    const auto it = stages.find(std::atoi(row.at("stage").c_str()));
    if (it == stages.end()) {
      fail("stages.csv: stage ", row.at("stage"), " has no rank");
      continue;
    }
    const Stage& s = it->second;
    const double n = s.ranks;
    if (std::atoi(row.at("ranks").c_str()) != s.ranks)
      fail("stages.csv: stage ", it->first, ": ranks ", row.at("ranks"), ", expected ", s.ranks);
    if (!near(std::stod(row.at("step_time_ns")), s.step / n))
      fail("stages.csv: stage ", it->first, ": step ", row.at("step_time_ns"), ", expected ",
           s.step / n);
    if (!near(std::stod(row.at("comp_busy_ns")), s.comp / n))
      fail("stages.csv: stage ", it->first, ": COMP busy ", row.at("comp_busy_ns"), ", expected ",
           s.comp / n);
    if (std::abs(std::stod(row.at("bubble_fraction")) - s.bubble / n) > 1e-4)
      fail("stages.csv: stage ", it->first, ": bubble ", row.at("bubble_fraction"), ", expected ",
           s.bubble / n);
  }

  const auto problems = table(dir, "problems");
  if (!problems.empty()) fail("problems.csv: ", problems.size(), " rows, expected none");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    die("usage: report_check text|json|chrome|csv REPORT RANK_FILE_OR_DIR...");
  }
  const std::string kind = argv[1], report = argv[2];
  std::map<int, Rank> ranks;
  Collectives colls;
  read_ranks(std::vector<std::string>(argv + 3, argv + argc), ranks, colls);
  if (kind == "text") {
    check_text(report, ranks);
  } else if (kind == "json") {
    check_json(report, ranks, colls);
  } else if (kind == "chrome") {
    check_chrome(report, ranks);
  } else if (kind == "csv") {
    check_csv(report, ranks, colls);
  } else {
    die("unknown kind '" + kind + "' (text, json, chrome or csv)");
  }
  if (failures == 0) {
    std::cout << "ok: the " << kind << " report " << report << " agrees with " << ranks.size()
              << " rank file(s)\n";
  }
  return failures == 0 ? 0 : 1;
}
