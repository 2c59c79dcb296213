// SPDX-License-Identifier: MIT
#include "src/fields/stat.hpp"

#include <algorithm>
#include <cmath>

namespace commprof {

void Stat::add(double v) {
  if (count == 0 || v < min) {
    min = v;
    argmin = count;
  }
  if (count == 0 || v > max) {
    max = v;
    argmax = count;
  }
  ++count;
  sum_ += v;
  const double previous_mean = count == 1 ? v : mean;
  mean = sum_ / static_cast<double>(count);
  m2_ += (v - previous_mean) * (v - mean);
}

std::optional<double> Stat::stddev() const {
  if (count < 2) return std::nullopt;
  return std::sqrt(std::max(0.0, m2_) / static_cast<double>(count - 1));
}

}  // namespace commprof
