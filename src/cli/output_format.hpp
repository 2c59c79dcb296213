// SPDX-License-Identifier: MIT
// The formats commands write (--format), by name: parsed once into an enum, so each command
// compares an enum and says in one place which formats it writes.
#pragma once

#include <initializer_list>
#include <string>

namespace commprof {

enum class OutputFormat { kText, kJson, kCsv, kHtml, kChrome, kPrometheus };

/// "text", "json", "csv", "html", "chrome", "prometheus".
const char* format_name(OutputFormat f);

/// The format `text` names, if it is one of `allowed`; otherwise ConfigError
/// "invalid --format 'x': expected text, json or csv" (the allowed names, in their order).
OutputFormat parse_output_format(const std::string& text,
                                 std::initializer_list<OutputFormat> allowed);

}  // namespace commprof
