// SPDX-License-Identifier: MIT
#include "src/fields/field_formats.hpp"

#include <cstdio>

namespace commprof::fields {

std::string printf_number(std::string_view format, double v) {
  const std::string f(format);
  char buf[64];
  std::snprintf(buf, sizeof buf, f.c_str(), v);
  return buf;
}

std::string csv_quoted(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace commprof::fields
