// SPDX-License-Identifier: MIT
// Small vocabularies (workloads, schedules, element types, log levels, ...) as one constexpr table
// of names per enum, read both ways by two generic functions, so a name and its "expected a, b or
// c" message cannot drift apart.
#pragma once

#include <cstddef>
#include <string>

#include "src/core/errors.hpp"

namespace commprof {

/// One spelling of an enum value. A table lists every value once under its canonical name (the
/// one printed), in the order an error lists them; aliases accepted on input follow with
/// `alias` set.
template <class Enum>
struct NamedValue {
  Enum value;
  const char* name;
  bool alias = false;
};

/// The canonical name of `value`, or "?" when the table lacks it.
template <class Enum, std::size_t N>
constexpr const char* name_of(const NamedValue<Enum> (&table)[N], Enum value) {
  for (const NamedValue<Enum>& entry : table) {
    if (!entry.alias && entry.value == value) return entry.name;
  }
  return "?";
}

/// "a, b or c": the canonical names, as an error lists them.
template <class Enum, std::size_t N>
std::string names_of(const NamedValue<Enum> (&table)[N]) {
  std::string canonical[N];
  std::size_t count = 0;
  for (const NamedValue<Enum>& entry : table) {
    if (!entry.alias) canonical[count++] = entry.name;
  }
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += i + 1 == count ? " or " : ", ";
    out += canonical[i];
  }
  return out;
}

/// The value named `text`; otherwise throws ConfigError "<problem> '<text>': expected a, b or c",
/// e.g. problem = "unknown workload".
template <class Enum, std::size_t N>
Enum parse_name(const NamedValue<Enum> (&table)[N], const std::string& text,
                const std::string& problem) {
  for (const NamedValue<Enum>& entry : table) {
    if (text == entry.name) return entry.value;
  }
  throw ConfigError(problem + " '" + text + "': expected " + names_of(table));
}

}  // namespace commprof
