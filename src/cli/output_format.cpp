// SPDX-License-Identifier: MIT
#include "src/cli/output_format.hpp"

#include <cstddef>
#include <iterator>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

struct FormatName {
  OutputFormat format;
  const char* name;
};
constexpr FormatName kFormatNames[] = {
    {OutputFormat::kText, "text"},     {OutputFormat::kJson, "json"},
    {OutputFormat::kCsv, "csv"},       {OutputFormat::kHtml, "html"},
    {OutputFormat::kChrome, "chrome"}, {OutputFormat::kPrometheus, "prometheus"},
};

constexpr bool every_format_in_order() {
  for (std::size_t i = 0; i < std::size(kFormatNames); ++i) {
    if (static_cast<std::size_t>(kFormatNames[i].format) != i) return false;
  }
  return std::size(kFormatNames) == static_cast<std::size_t>(OutputFormat::kPrometheus) + 1;
}
static_assert(every_format_in_order(), "kFormatNames lists every OutputFormat in its order");

}  // namespace

const char* format_name(OutputFormat f) { return kFormatNames[static_cast<std::size_t>(f)].name; }

OutputFormat parse_output_format(const std::string& text,
                                 std::initializer_list<OutputFormat> allowed) {
  std::string expected;
  std::size_t i = 0;
  for (const OutputFormat f : allowed) {
    if (text == format_name(f)) return f;
    expected += i == 0 ? "" : (i + 1 == allowed.size() ? " or " : ", ");
    expected += format_name(f);
    ++i;
  }
  throw ConfigError("invalid --format '" + text + "': expected " + expected);
}

}  // namespace commprof
