// SPDX-License-Identifier: MIT
// Byte sizes as users type them (K/M/G/T are binary, as in nccl-tests) and as reports print them.
#pragma once

#include <cstdint>
#include <string>

namespace commprof {

/// Parses "4096", "64K", "1M", "2G", "1T", "1MiB", "32KB" (case-insensitive suffix; K = 1024).
/// Throws ConfigError naming the text when it is not a non-negative integer with a known suffix
/// or when the value does not fit in 64 bits.
std::uint64_t parse_bytes(const std::string& text);

/// "1 KiB", "4 MiB", "1.50 GiB", "512 B": for headers and messages, not for tables.
std::string format_bytes(std::uint64_t bytes);

/// A duration in the unit that fits it, three significant digits or more: "850 ns",
/// "12.3 µs", "92.80 ms", "1.25 s" (negative values keep their sign). For reports and
/// messages; tables that must line up keep one unit per column.
std::string format_duration(double ns);

/// `t` (seconds since the epoch) as UTC in strftime's `format` ("%H:%M:%S", ISO 8601's
/// "%Y-%m-%dT%H:%M:%SZ"), for headers and live views.
std::string utc_text(std::int64_t t, const char* format);

/// A byte size option value for Boost.Program_options (see cli/option_values.hpp).
struct ByteSize {
  std::uint64_t bytes = 0;
};

}  // namespace commprof
