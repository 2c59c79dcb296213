// SPDX-License-Identifier: MIT
// `commprof whatif`'s figures table (workloads/commands/whatif_fields.hpp): each figure's text
// label names its unit and its text, JSON and CSV values are those worked out by hand.
#include "workloads/commands/whatif_fields.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace commprof {
namespace {

TEST(WhatIfFields, EveryFigureInEveryFormatWithItsUnit) {
  WhatIfFigures f;
  f.step_ns = 46600.0;  // 46.6 us
  f.exposed_comm_ns = 1250.0;
  f.comm_ns = 20000.0;
  f.overlap = 0.875;  // 87.5 %
  f.path_ns = 40000.0;
  f.gap_ns = 0.0;
  const auto& t = whatif_fields::kFigures;
  EXPECT_EQ(fields::text_labels(t),
            (std::vector<std::string>{"step(us)", "exposed comm(us)", "COMM busy(us)", "overlap(%)",
                                      "critical path(us)", "of it host gaps(us)"}));
  EXPECT_EQ(fields::text_cells(t, f),
            (std::vector<std::string>{"46.6", "1.2", "20.0", "87.5", "40.0", "0.0"}));
  EXPECT_EQ(fields::json_object(t, f).dump(),
            R"({"step_time_ns":46600.0,"exposed_comm_ns":1250.0,"comm_busy_ns":20000.0,)"
            R"("overlap":0.875,"critical_path_ns":40000.0,"critical_path_gap_ns":0.0})");
  EXPECT_EQ(fields::csv_header(t),
            "step_time_ns,exposed_comm_ns,comm_busy_ns,overlap,critical_path_ns,"
            "critical_path_gap_ns\n");
  f.overlap.reset();  // no COMM: n/a in text, null in JSON, empty in CSV
  EXPECT_EQ(fields::text_cells(t, f)[3], "n/a");
  EXPECT_TRUE(fields::json_object(t, f).at("overlap").is_null());
  EXPECT_EQ(fields::csv_line(t, f), "46600,1250,20000,,40000,0\n");
}

}  // namespace
}  // namespace commprof
