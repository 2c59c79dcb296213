// SPDX-License-Identifier: MIT
#include "src/core/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "src/core/errors.hpp"

namespace commprof {

std::uint64_t parse_bytes(const std::string& text) {
  auto fail = [&](const char* why) {
    return ConfigError("invalid byte size '" + text + "': " + why +
                       " (examples: 4096, 64K, 1M, 2G; K/M/G/T are powers of 1024)");
  };
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) throw fail("expected a whole number of bytes");
  std::uint64_t value = 0;
  for (std::size_t j = 0; j < i; ++j) {
    const auto digit = static_cast<std::uint64_t>(text[j] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      throw fail("too large");
    }
    value = value * 10 + digit;
  }
  std::string suffix;
  for (std::size_t j = i; j < text.size(); ++j) {
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[j])));
  }
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else {
    const char unit = suffix[0];
    const std::string rest = suffix.substr(1);
    if (rest != "" && rest != "B" && rest != "IB") throw fail("unknown suffix");
    switch (unit) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        throw fail("unknown suffix");
    }
  }
  if (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) {
    throw fail("too large");
  }
  return value << shift;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0 || value == static_cast<double>(static_cast<std::uint64_t>(value))) {
    std::snprintf(buf, sizeof buf, "%.0f %s", value, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", value, kUnits[unit]);
  }
  return buf;
}

std::string format_duration(double ns) {
  const double a = std::fabs(ns);
  double value = ns;
  const char* unit = "ns";
  if (a >= 1e9) {
    value = ns / 1e9;
    unit = "s";
  } else if (a >= 1e6) {
    value = ns / 1e6;
    unit = "ms";
  } else if (a >= 1e3) {
    value = ns / 1e3;
    unit = "µs";
  }
  const double v = std::fabs(value);
  // 1.25 s, 12.3 µs, 850 ns: three significant digits, never fewer than the integer part.
  const char* format = (unit[0] == 'n' || v >= 100) ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, value, unit);
  return buf;
}

std::string utc_text(std::int64_t t, const char* format) {
  const auto secs = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace commprof
