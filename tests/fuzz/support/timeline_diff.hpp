// SPDX-License-Identifier: MIT
// The first field in which two rank timelines differ, for the readers' fuzz targets: both
// readers, and the writer followed by a reader, must agree field by field.
#pragma once

#include <string>

#include "src/timeline/op_record.hpp"

namespace commprof::fuzz {

/// "" when `a` and `b` are equal in every field of the rank file's tables (rank_fields.hpp) and in
/// their configurations (as JSON values); else where they first differ, e.g.
/// "steps[2].ops[0].end_ns: 5 vs 7".
std::string timeline_diff(const RankTimeline& a, const RankTimeline& b);

}  // namespace commprof::fuzz
