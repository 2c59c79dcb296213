// SPDX-License-Identifier: MIT
// The generic formats of a field table (src/fields/field_formats.hpp) on a hand-made table: what
// text, JSON and CSV show of each kind of value, n/a, scaling and the fields one format leaves
// out. Every output that writes its own text (project, whatif, the links file) relies on these.
#include "src/fields/field_formats.hpp"

#include <gtest/gtest.h>

#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace commprof {
namespace {

struct Sample {
  int index = 0;
  std::string name;
  double time_ns = 0.0;
  std::optional<double> overlap;
  bool checked = false;
};

std::string index_text(const Sample& s) { return "#" + std::to_string(s.index); }

constexpr fields::Field<Sample> kSampleFields[] = {
    fields::field<&Sample::index>("index", ReportUnit::kId, "idx", "Its place.")
        .text_by(&index_text)
        .in_text_only(),
    fields::field<&Sample::name>("name", ReportUnit::kText, "name", "Its name."),
    fields::field<&Sample::time_ns>("time_ns", ReportUnit::kNs, "time(ms)", "Its time.")
        .shown_as("%.3f", 1, 1e6),
    fields::field<&Sample::overlap>("overlap", ReportUnit::kRatio, "overlap(%)", "Its overlap.")
        .shown_as("%.1f", 100),
    fields::field<&Sample::checked>("checked", ReportUnit::kFlag, "checked", "Checked or not.")
        .in_json_only(),
};
constexpr fields::Table<Sample> kSamples{
    "samples", "samples", {}, {}, {}, kSampleFields, std::size(kSampleFields)};

TEST(FieldFormats, TextShowsLabelsAndScaledNumbersAndNa) {
  const Sample s{3, "a,b", 2500000.0, 0.25, true};
  const Sample none{4, "c", 1000.0, std::nullopt, false};
  const auto rows = fields::text_rows(kSamples, std::vector<Sample>{s, none});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"idx", "name", "time(ms)", "overlap(%)"}));
  // 2 500 000 ns = 2.500 ms; 0.25 = 25.0 %; the JSON-only flag is not a column.
  EXPECT_EQ(rows[1], (std::vector<std::string>{"#3", "a,b", "2.500", "25.0"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"#4", "c", "0.001", "n/a"}));
}

TEST(FieldFormats, TextColumnPutsOneRowsFieldsDown) {
  const Sample s{1, "x", 1500000.0, 0.5, false};
  const auto rows = fields::text_column(kSamples, s, {"figure", "value"});
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[3], (std::vector<std::string>{"time(ms)", "1.500"}));
  EXPECT_EQ(rows[4], (std::vector<std::string>{"overlap(%)", "50.0"}));
}

TEST(FieldFormats, JsonKeysInOrderWithNullForNa) {
  const Sample s{3, "a,b", 2500000.0, std::nullopt, true};
  const nlohmann::ordered_json j = fields::json_object(kSamples, s);
  EXPECT_EQ(j.dump(), R"({"name":"a,b","time_ns":2500000.0,"overlap":null,"checked":true})");
  EXPECT_EQ(fields::json_array(kSamples, std::vector<Sample>{s, s}).size(), 2u);
}

TEST(FieldFormats, CsvQuotesTextAndLeavesNaEmpty) {
  const Sample s{3, "say \"hi\", then", 0.5, std::nullopt, false};
  EXPECT_EQ(fields::csv_header(kSamples), "name,time_ns,overlap,checked\n");
  EXPECT_EQ(fields::csv_line(kSamples, s), "\"say \"\"hi\"\", then\",0.5,,false\n");
}

}  // namespace
}  // namespace commprof
