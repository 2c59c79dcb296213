// SPDX-License-Identifier: MIT
// `commprof compare`'s formats from a hand-built comparison: every field of its table
// (analysis/compare/comparison_fields.hpp) reaches the text and HTML headers and the JSON, in
// the table's order, and the change is the one worked out by hand.
#include "analysis/compare/comparison_fields.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/compare/comparison_writers.hpp"

namespace commprof {
namespace {

namespace cf = comparison_fields;

Comparison hand_comparison() {
  Comparison c;
  MetricComparison step;
  step.base_metric = {"busbw", "dp", MetricUnit::kGBps, true, 100.0, 1.0, 4, "base note"};
  step.new_metric = step.base_metric;
  step.new_metric.value = 110.0;
  step.in_base = step.in_new = true;
  step.delta = 10.0;
  step.relative = 0.1;  // +10.00%
  step.noise = 2.0;
  step.crossed = {"busbw>+5%"};
  MetricComparison gone;
  gone.base_metric = {"step", "", MetricUnit::kNanoseconds, false, 5e6, std::nullopt, 4, ""};
  gone.in_base = true;
  c.rows = {step, gone};
  c.crossed = 1;
  return c;
}

TEST(ComparisonWriters, EveryFieldReachesTextHtmlAndJson) {
  const Comparison c = hand_comparison();
  std::ostringstream text, html, json;
  write_comparison_text(text, c);
  write_comparison_html(html, c);
  write_comparison_json(json, c);

  std::string header = "\n";
  std::size_t html_headers = 0;
  for (const auto& f : cf::kComparison) {
    if (!fields::in_text(f)) continue;
    header += (header == "\n" ? " " : " +") + std::string(f.label);
    ++html_headers;
  }
  EXPECT_TRUE(std::regex_search(text.str(), std::regex(header + "\n"))) << text.str();
  // 100 -> 110 GB/s is +10.00 GB/s, +10.00%, beyond a noise of 2.
  EXPECT_TRUE(std::regex_search(
      text.str(),
      std::regex(R"(\n busbw\[dp\] +100\.00 GB/s +110\.00 GB/s +\+10\.00 GB/s +\+10\.00% +)"
                 R"(±2\.00 GB/s +better, beyond noise  CROSSED busbw>\+5%\n)")))
      << text.str();
  std::size_t th = 0;
  for (std::size_t at = html.str().find("<th title="); at != std::string::npos;
       at = html.str().find("<th title=", at + 1)) {
    ++th;
  }
  EXPECT_EQ(th, html_headers);

  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(json.str());
  std::vector<std::string> expected;
  for (const auto& f : cf::kComparison) {
    if (fields::in_json(f)) expected.emplace_back(f.key);
  }
  expected.emplace_back("crossed");
  for (const auto& m : j.at("metrics")) {
    std::vector<std::string> keys;
    for (auto it = m.begin(); it != m.end(); ++it) keys.push_back(it.key());
    EXPECT_EQ(keys, expected);
  }
  EXPECT_EQ(j.at("metrics").at(0).at("relative"), 0.1);
  EXPECT_TRUE(j.at("metrics").at(1).at("new").is_null());  // only in base
  EXPECT_TRUE(j.at("metrics").at(1).at("worse").is_null());
}

}  // namespace
}  // namespace commprof
