// SPDX-License-Identifier: MIT
// --format's values: each name parsed to its format, and a format a command does not write
// refused with the names it does, in the words users see.
#include "src/cli/output_format.hpp"

#include <gtest/gtest.h>

#include <string>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

TEST(OutputFormat, EveryNameParsesToItsFormat) {
  for (const OutputFormat f :
       {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kCsv, OutputFormat::kHtml,
        OutputFormat::kChrome, OutputFormat::kPrometheus}) {
    EXPECT_EQ(parse_output_format(format_name(f), {f}), f);
  }
  EXPECT_STREQ(format_name(OutputFormat::kPrometheus), "prometheus");
}

TEST(OutputFormat, AFormatTheCommandDoesNotWriteIsRefusedByName) {
  try {
    parse_output_format("csv", {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kHtml});
    FAIL() << "csv accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "invalid --format 'csv': expected text, json or html");
  }
  try {
    parse_output_format("", {OutputFormat::kText, OutputFormat::kJson});
    FAIL() << "an empty format accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "invalid --format '': expected text or json");
  }
}

}  // namespace
}  // namespace commprof
