// SPDX-License-Identifier: MIT
// min / mean / max (and the spread) of a quantity over the values it was defined for: what a
// per-step metric is after a rank's steps, and what a field table may hold as one value.
#pragma once

#include <cstdint>
#include <optional>

namespace commprof {

/// min / mean / max of a quantity over the values it was defined for; `count` = 0 means none
/// (printed as n/a, written as null), never NaN.
struct Stat {
  double min = 0.0;
  double mean = 0.0;
  double max = 0.0;
  std::int64_t count = 0;
  void add(double v);
  /// Index (in add() order) of the largest and smallest value added.
  std::int64_t argmax = -1;
  std::int64_t argmin = -1;
  /// The sample standard deviation (n − 1); empty below two values. `commprof compare` uses
  /// it to tell a change from step-to-step noise.
  std::optional<double> stddev() const;

 private:
  double sum_ = 0.0;
  double m2_ = 0.0;  ///< Σ (v − mean)², kept as values arrive (Welford), so no cancellation
};

}  // namespace commprof
