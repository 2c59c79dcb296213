// SPDX-License-Identifier: MIT
// report_check csv: every table of the CSV directory, each with the rows these rank files call
// for (ranks, groups, collectives, stragglers, critical path, stages...).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "report_check.hpp"

namespace report_check {

namespace fs = std::filesystem;

namespace {

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

// Each table this report writes, and nothing else: a new table comes with its check here.
void check_files(const std::string& dir) {
  const std::set<std::string> tables = {
      "ranks",           "across_ranks",        "groups",        "group_times",  "collectives",
      "worst_instances", "stragglers",          "baseline",      "interference", "problems",
      "stages",          "critical_path_steps", "critical_path", "findings"};
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.insert(e.path().filename().string());
  for (const std::string& f : files) {
    if (f.size() < 5 || f.compare(f.size() - 4, 4, ".csv") != 0 ||
        tables.count(f.substr(0, f.size() - 4)) == 0) {
      fail("unexpected file ", f, " in ", dir);
    }
  }
}

// The findings: each fired or not evaluated; a fired one costs a time (a hang excepted) of
// at most its step.
void check_findings(const std::string& dir) {
  for (const auto& f : table(dir, "findings")) {
    const std::string& status = f.at("status");
    if (status == "fired") {
      if (f.at("rule") != "hang" &&
          (f.at("cost_ns").empty() || std::stod(f.at("cost_fraction")) > 1.0 ||
           std::stod(f.at("cost_ns")) < 0)) {
        fail("findings.csv: ", f.at("rule"), " fired without a cost within its step");
      }
    } else if (status.rfind("not evaluated: ", 0) != 0) {
      fail("findings.csv: ", f.at("rule"), " has status '", status, "'");
    }
  }
}

// A row per rank file, with its host, device, steps and mean step; across ranks, each metric once,
// its worst rank one of the files'.
void check_ranks(const std::string& dir, const std::map<int, Rank>& ranks) {
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
}

// Groups: together they hold every communicator and every collective instance once.
void check_groups(const std::string& dir, const std::map<int, Rank>& ranks,
                  const Collectives& colls) {
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
}

// A row per (collective, comm size, bytes) of the files, with its count.
void check_collectives(const std::string& dir, const Collectives& colls) {
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
}

// Stragglers: a row per rank that took part in a collective, with how many.
void check_stragglers(const std::string& dir, const Collectives& colls) {
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
}

// Worst instances: the instances that made ranks wait longest, at most 100, each one of the
// rank files' instances, none twice.
void check_worst_instances(const std::string& dir, const Collectives& colls) {
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
}

// Critical path: a row per measured step with per-op timing (the most any rank has), whose
// parts (COMP, COMM, MEM, host gaps) add up to the path, no longer than the step; its shares
// name ranks of the files and add up to the whole where none is left out (at most 100 rows).
void check_critical_path(const std::string& dir, const std::map<int, Rank>& ranks) {
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
}

// Per pipeline stage: its ranks, and the means over them of their mean timed step, |∪ COMP| and
// bubble (1 − COMP / step), each computed here from the rank files.
void check_stages(const std::string& dir, const std::map<int, Rank>& ranks) {
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
}

}  // namespace

void check_csv(const std::string& dir, const std::map<int, Rank>& ranks, const Collectives& colls) {
  check_files(dir);
  check_findings(dir);
  check_ranks(dir, ranks);
  check_groups(dir, ranks, colls);
  check_collectives(dir, colls);
  check_stragglers(dir, colls);
  check_worst_instances(dir, colls);
  check_critical_path(dir, ranks);
  // No --baseline: its tables hold the header alone.
  for (const char* name : {"baseline", "interference"}) {
    const auto rows = table(dir, name);
    if (!rows.empty()) fail(name, ".csv: ", rows.size(), " rows without a baseline");
  }
  check_stages(dir, ranks);
  const auto problems = table(dir, "problems");
  if (!problems.empty()) fail("problems.csv: ", problems.size(), " rows, expected none");
}

}  // namespace report_check
