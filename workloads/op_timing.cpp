// SPDX-License-Identifier: MIT
#include "workloads/op_timing.hpp"

#include "src/core/name_table.hpp"

namespace commprof {

namespace {
constexpr NamedValue<OpTimingMode> kOpTimingNames[] = {
    {OpTimingMode::kAuto, "auto"}, {OpTimingMode::kActivity, "activity"},
    {OpTimingMode::kPair, "pair"}, {OpTimingMode::kShared, "shared"},
    {OpTimingMode::kStep, "step"}, {OpTimingMode::kSampled, "sampled"}};
}  // namespace

OpTimingMode parse_op_timing(const std::string& text) {
  return parse_name(kOpTimingNames, text, "unknown --op-timing");
}

const char* op_timing_name(OpTimingMode t) { return name_of(kOpTimingNames, t); }

OpTimingChoice choose_op_timing(OpTimingMode requested, bool activity_everywhere) {
  switch (requested) {
    case OpTimingMode::kAuto:
      if (activity_everywhere) return {OpTimingMode::kSampled, false, false};
      return {OpTimingMode::kPair, false, true};
    case OpTimingMode::kActivity:
    case OpTimingMode::kSampled:
      return {requested, !activity_everywhere, false};
    default:
      return {requested, false, false};
  }
}

}  // namespace commprof
