// SPDX-License-Identifier: MIT
// Every field of every report table (analysis/report_fields.hpp) reaches every format, read
// back from what the writers wrote: the JSON member (not null), the CSV column (not empty), the
// text header (its cell not n/a), the HTML table's header (its cell not n/a) and the data
// block's key (not null), the Prometheus metric (a sample) or label. The report is the
// three-rank synthetic run with everything that can be missing given: NCCL's algorithm on the
// collectives, --peak-busbw, a serialized baseline, a step without per-op timing per rank, and
// the critical path of the steps with it.
// The format tests iterate the tables, so a field added to one is checked as it is; one list
// names every field (EachTableHoldsTheFieldsListedHere), so that none drops out unseen.
#include "analysis/report_fields.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "analysis/graph/critical_report.hpp"
#include "analysis/reducer.hpp"
#include "analysis/report/format_parsers.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/three_ranks.hpp"
#include "analysis/tools/synthetic_timeline.hpp"
#include "src/timeline/back_to_back.hpp"

namespace commprof {
namespace {

namespace rf = report_fields;
using nlohmann::json;

Report everything_given() {
  const SyntheticSpec spec = testing::three_ranks();
  ReduceOptions options;
  options.peak_busbw_gbps = 100.0;
  Reducer reducer(options);
  StepGraphBuilder graphs;
  for (int r = 0; r < spec.world_size; ++r) {
    RankTimeline t = make_synthetic_rank(spec, r);
    // A stage per rank; runs of back-to-back calls of both collectives (a plugin capture's,
    // which says which calls ran in place).
    t.config =
        JsonObject({{"tp", 1},
                    {"dp", 1},
                    {"pp", spec.world_size},
                    {"back_to_back", back_to_back_json({{"allreduce", 3, 1048576, 1, 4, 40'000, 1},
                                                        {"alltoallv", 3, 3000, 1, 2, 900, 0}})}});
    for (StepRecord& s : t.steps) {
      for (OpRecord& op : s.ops) {
        if (op.category != Category::kComm) continue;
        op.algo = "RING";
        op.proto = "LL128";
        op.in_place = 1;
      }
    }
    // An all-to-allv in every step, its received bytes recorded, for the all-to-all balance of
    // the per-group table; on the same communicator as the rest, so every group row has one.
    for (StepRecord& s : t.steps) {
      OpRecord a2a;
      a2a.name = "ep.dispatch";
      a2a.category = Category::kComm;
      a2a.stream = "COMM";
      a2a.collective = "alltoallv";
      a2a.comm = "world";
      a2a.comm_size = spec.world_size;
      a2a.seq = 1000 + s.index;  // after the synthetic run's own collectives
      a2a.algo = "RING";
      a2a.proto = "LL128";
      a2a.in_place = 0;
      a2a.bytes = 3000;
      a2a.recv_bytes = 1000 + 1000 * static_cast<std::uint64_t>(r);
      a2a.start_ns = s.end_ns - 500 + 100 * r;
      a2a.end_ns = s.end_ns;
      s.ops.push_back(a2a);
    }
    t.steps.back().ops.clear();  // sampled op timing: the last step is plain
    graphs.add(t);
    reducer.add(t, "rank-" + std::to_string(r) + ".json");
  }
  Report report = reducer.finish();
  add_critical_paths(report, graphs.finish());
  SyntheticSpec alone = spec;
  alone.comp_ns = 8000;
  compare_with_baseline(report, testing::reduce(alone), "serial/");
  // Every rank's per-step overlap here is HTA's (whole microseconds, one timed step), so no rank
  // says why they differ; the formats must carry the note where one does (the import_hta_nccl
  // tests check when the reducer writes it).
  for (RankSummary& r : report.ranks) {
    if (r.hta_differs.empty()) r.hta_differs = "per step: mean of 2 step ratio(s), 50.00 %";
    // As a plugin capture's (cut into steps as its reader found them).
    r.steps_from = "detected: 12 calls of dp0 per step, confidence 0.97, 10 steps";
    r.plugin_calls = 6717;
    r.plugin_timed = 53;
    r.plugin_dropped = 2;
  }
  // A finding with every field given (the rules' own are tested in findings_test.cpp).
  Finding f;
  f.rule = "busbw_low";
  f.status = "fired";
  f.cost_ns = 1000;
  f.cost_fraction = 0.1;
  f.ranks = "1";
  f.comm = "world";
  f.ops = "allreduce";
  f.bytes = 4096;
  f.evidence = "busbw 1 GB/s, 1 % of the link's peak";
  f.action = "check NCCL's choice";
  f.shown_in = "busbw-box";
  report.findings = {f};
  return report;
}

template <class Write>
std::string written(Write write, const Report& r) {
  std::ostringstream os;
  write(os, r);
  return os.str();
}

class ReportFields : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    report_ = new Report(everything_given());
    ASSERT_FALSE(report_->collectives.empty());
    ASSERT_TRUE(report_->baseline.has_value());
    ASSERT_FALSE(report_->stages.empty());
  }
  static void TearDownTestSuite() { delete report_; }
  static const Report& report() { return *report_; }

 private:
  static Report* report_;
};
Report* ReportFields::report_ = nullptr;

// The rows of a table in the JSON report: an array, or an object's members (across ranks), or
// the baseline object itself, whose interference rows are inside it.
std::vector<json> json_rows(const json& j, std::string_view table) {
  const std::string name(table);
  const json& where = name == rf::kInterference.name ? j.at("baseline").at(name)
                      : name == rf::kBaseline.name   ? json::array({j.at(name)})
                                                     : j.at(name);
  std::vector<json> rows;
  for (const auto& item : where.items()) rows.push_back(item.value());
  return rows;
}

TEST_F(ReportFields, EveryFieldIsAJsonMemberOfEveryRow) {
  const json j = json::parse(written(write_report_json, report()));
  rf::for_each_table([&](const auto& table) {
    const std::vector<json> rows = json_rows(j, table.name);
    ASSERT_FALSE(rows.empty()) << table.name;
    for (const json& row : rows) {
      for (const auto& f : table) {
        const std::string key(f.key);
        ASSERT_TRUE(row.contains(key)) << table.name << "." << key;
        const json& v = row.at(key);
        EXPECT_FALSE(v.is_null()) << table.name << "." << key << " is n/a in " << row.dump();
        if (v.is_object()) {
          EXPECT_GT(v.at("count").get<int>(), 0) << table.name << "." << key;
        }
      }
    }
  });
}

// Every table's fields by JSON key, in order, written out here: the tests above iterate the
// product's table, so a field dropped from it (or renamed) would drop out of them unseen; here it
// fails, and so does a table added or removed without this list.
const std::vector<std::pair<std::string, std::string>> kFieldsByTable = {
    {"findings", "rule status cost_ns cost_fraction ranks comm ops bytes evidence action shown_in"},
    {"ranks",
     "rank host device steps step_time_ns comp_busy_ns comm_busy_ns mem_busy_ns "
     "overlap hidden_fraction exposed_comm_ns idle_ns busy_ns comm_comp_overlap_ns "
     "timed_step_time_ns plain_step_time_ns timed_steps warmup_steps ops "
     "clock_offset_ns backend steps_from plugin_calls plugin_timed plugin_dropped file hta_steps "
     "hta_overlap hta_idle hta_compute "
     "hta_non_compute "
     "hta_span_ns hta_differs"},
    {"across_ranks", "metric unit min mean max worst_rank worst_host stddev count"},
    {"stages", "stage ranks step_time_ns comp_busy_ns busy_ns bubble_fraction"},
    {"groups",
     "group communicators min_size max_size collectives bytes time_ns busbw_gbps "
     "mean_start_skew_ns wait_ns incomplete busbw_basis"},
    {"group_times",
     "group ranks comm_busy_ns exposed_comm_ns exposed_comm_max_ns exposed_worst_rank "
     "alltoalls recv_mean_bytes recv_max_bytes recv_imbalance recv_busiest_rank "
     "alltoall_wait_ns"},
    {"collectives",
     "collective comm_size bytes count p50_time_ns p95_time_ns algbw_gbps busbw_gbps "
     "peak_busbw_fraction back_to_back_busbw_gbps mean_start_skew_ns wait_ns nccl_algo "
     "busbw_basis placement"},
    {"stragglers",
     "rank host times_last last_fraction wait_caused_ns wait_ns collectives "
     "times_first"},
    {"worst_instances",
     "comm seq collective comm_size bytes ranks_seen consistent time_ns "
     "max_duration_ns mean_duration_ns start_skew_ns end_skew_ns first_rank last_rank "
     "wait_ns algbw_gbps busbw_gbps busbw_basis nccl_algo"},
    {"baseline",
     "source run_step_time_ns baseline_step_time_ns speedup comm_hidden_ns "
     "run_comm_busy_ns baseline_comm_busy_ns"},
    {"interference", "category names ops run_mean_ns baseline_mean_ns slowdown"},
    {"critical_path_steps",
     "step step_time_ns path_ns exposed_comm_ns comp_ns comm_ns mem_ns gap_ns ops "
     "ranks straggler_rank straggler_at straggler_late_ns straggler_cause "
     "straggler_excess_ns"},
    {"critical_path", "rank category op comm mean_ns share steps"},
};

TEST_F(ReportFields, EachTableHoldsTheFieldsListedHere) {
  const json j = json::parse(written(write_report_json, report()));
  std::size_t n = 0;
  rf::for_each_table([&](const auto& table) {
    ASSERT_LT(n, kFieldsByTable.size()) << table.name << ": a table this test does not list";
    const auto& [name, text] = kFieldsByTable[n++];
    ASSERT_EQ(table.name, name);
    std::vector<std::string> listed;
    std::istringstream words(text);
    for (std::string w; words >> w;) listed.push_back(w);
    std::vector<std::string> keys;
    for (const auto& f : table) keys.emplace_back(f.key);
    EXPECT_EQ(keys, listed) << name;
    // and in what the JSON writer wrote, read as JSON
    for (const json& row : json_rows(j, name)) {
      for (const std::string& key : listed) EXPECT_TRUE(row.contains(key)) << name << "." << key;
    }
  });
  EXPECT_EQ(n, kFieldsByTable.size());
}

TEST_F(ReportFields, EveryFieldIsACsvColumn) {
  std::map<std::string, testing::CsvRows> tables;
  for (const CsvTable& t : report_csv_tables(report())) tables[t.name] = testing::parse_csv(t.text);
  rf::for_each_table([&](const auto& table) {
    const testing::CsvRows& rows = tables[std::string(table.name)];
    ASSERT_GE(rows.size(), 2u) << table.name;
    auto expect_column = [&](const std::string& column) {
      const auto at = std::find(rows[0].begin(), rows[0].end(), column);
      ASSERT_NE(at, rows[0].end()) << table.name << " has no column " << column;
      EXPECT_NE(rows[1][static_cast<std::size_t>(at - rows[0].begin())], "")
          << table.name << "." << column;
    };
    for (const auto& f : table) {
      expect_column(std::string(f.key));
      if (f.min_max) {
        expect_column(rf::min_max_column(f.key, "min"));
        expect_column(rf::min_max_column(f.key, "max"));
      }
    }
  });
}

// The text report's tables: heading ("## ...") → its header and first row, cells split where
// two spaces part them.
std::multimap<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>>
text_tables(const std::string& text) {
  static const std::regex gap(" {2,}");
  auto cells = [](const std::string& line) {
    const std::string trimmed = line.substr(line.find_first_not_of(' '));
    return std::vector<std::string>(
        std::sregex_token_iterator(trimmed.begin(), trimmed.end(), gap, -1),
        std::sregex_token_iterator());
  };
  std::multimap<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> out;
  std::istringstream in(text);
  std::string line, header, first;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) != 0) continue;
    if (std::getline(in, header) && std::getline(in, first)) {
      out.emplace(line.substr(3), std::make_pair(cells(header), cells(first)));
    }
  }
  return out;
}

TEST_F(ReportFields, EveryFieldHasATextColumn) {
  const auto tables = text_tables(written(write_report_text, report()));
  rf::for_each_table([&](const auto& table) {
    for (const auto& f : table) {
      const std::string header = rf::text_header(f);
      bool found = false;
      for (const auto& [heading, t] : tables) {
        if (heading.rfind(std::string(table.title), 0) != 0) continue;
        const auto at = std::find(t.first.begin(), t.first.end(), header);
        if (at == t.first.end()) continue;
        found = true;
        EXPECT_NE(t.second.at(static_cast<std::size_t>(at - t.first.begin())), "n/a")
            << heading << ": " << header;
      }
      EXPECT_TRUE(found) << "no text table '" << table.title << "' has a column " << header;
    }
  });
}

// The header cells and the first row's cells of the HTML table `id`.
std::pair<std::vector<std::string>, std::vector<std::string>> html_table(const std::string& html,
                                                                         std::string_view id) {
  const auto begin = html.find("id='" + std::string(id) + "'");
  EXPECT_NE(begin, std::string::npos) << id;
  const std::string table = html.substr(begin, html.find("</table>", begin) - begin);
  auto cells = [](const std::string& part, const std::regex& cell) {
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(part.begin(), part.end(), cell);
         it != std::sregex_iterator(); ++it) {
      out.push_back((*it)[1]);
    }
    return out;
  };
  const auto body = table.find("<tbody>");
  const std::string first_row = table.substr(body, table.find("</tr>", body) - body);
  return {cells(table.substr(0, body), std::regex("<th[^>]*>([^<]*)</th>")),
          cells(first_row, std::regex("<td[^>]*>([^<]*)</td>"))};
}

TEST_F(ReportFields, EveryFieldIsAnHtmlColumnAndInTheDataBlock) {
  const std::string html = written(write_report_html, report());
  const std::string open = "id='commprof-data'>";
  const auto data_at = html.find(open) + open.size();
  const json data =
      json::parse(html.substr(data_at, html.find("</script>", data_at) - data_at)).at("tables");
  rf::for_each_table([&](const auto& table) {
    const auto [headers, first] = html_table(html, table.html_id);
    const json& block = data.at(std::string(table.name));
    ASSERT_FALSE(block.at("rows").empty()) << table.name;
    for (const auto& f : table) {
      // The text report's header, or the label alone where the cells name their unit.
      const std::string label(f.label);
      const auto at = std::find_if(headers.begin(), headers.end(), [&](const std::string& h) {
        return h == label || h == rf::text_header(f);
      });
      ASSERT_NE(at, headers.end()) << table.html_id << " has no column " << label;
      EXPECT_NE(first.at(static_cast<std::size_t>(at - headers.begin())), "n/a")
          << table.html_id << ": " << label;
      const json& keys = block.at("keys");
      const auto key = std::find(keys.begin(), keys.end(), std::string(f.key));
      ASSERT_NE(key, keys.end()) << table.name << " data has no " << f.key;
      EXPECT_FALSE(block.at("rows")[0][static_cast<std::size_t>(key - keys.begin())].is_null())
          << table.name << "." << f.key;
    }
  });
}

TEST_F(ReportFields, EveryFieldIsAPrometheusSampleOrLabel) {
  const auto series = testing::parse_exposition(written(write_report_prometheus, report()));
  // Whether a sample of `metric` has `label` (name="value" or name=") among its labels.
  auto sampled = [&](const std::string& metric, const std::string& label) {
    return std::any_of(series.begin(), series.end(), [&](const auto& s) {
      const std::string& key = s.first;
      if (key.compare(0, metric.size(), metric) != 0) return false;
      const std::string labels = key.substr(metric.size());
      if (!labels.empty() && labels[0] != '{') return false;  // another metric's name
      return label.empty() || labels.find("{" + label) != std::string::npos ||
             labels.find("," + label) != std::string::npos;
    });
  };
  rf::for_each_table([&](const auto& table) {
    for (const auto& f : table) {
      const std::string what = std::string(table.name) + "." + std::string(f.key);
      if (!f.row_label.empty()) {
        // It names the row: a label of the samples of every number of the table.
        for (const auto& g : table) {
          if (!g.row_label.empty() || g.unit == ReportUnit::kText) continue;
          const std::string metric =
              std::string(g.metric) + (g.unit == ReportUnit::kOfRow ? "_seconds" : "");
          EXPECT_TRUE(sampled(metric, std::string(f.row_label) + "=\""))
              << what << " labels no sample of " << metric;
        }
      } else if (f.unit == ReportUnit::kText) {
        EXPECT_TRUE(sampled(std::string(table.info_metric), std::string(f.key) + "=\""))
            << what << " is no label of " << table.info_metric;
      } else {
        // Of a unit that varies by row, the metric's name ends in the row's base unit.
        const std::string metric =
            std::string(f.metric) + (f.unit == ReportUnit::kOfRow ? "_seconds" : "");
        const std::string label = f.metric_label.empty() ? ""
                                                         : std::string(f.metric_label) + "=\"" +
                                                               std::string(f.metric_value) + "\"";
        EXPECT_TRUE(sampled(metric, label)) << what << ": no sample of " << metric << label;
      }
    }
  });
}

}  // namespace
}  // namespace commprof
