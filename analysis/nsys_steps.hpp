// SPDX-License-Identifier: MIT
// The steps of an nsys export: commprof's `step N` ranges in its NVTX domain, or for a foreign
// trace the ranges whose name starts with --step-range.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/nsys_export.hpp"
#include "analysis/nsys_import.hpp"

namespace commprof::nsys {

/// The steps in start order; fails (naming the file) when there are none or a range is damaged.
std::vector<StepRange> read_steps(Db& db, const std::vector<std::int64_t>& commprof_domains,
                                  const NsysImportOptions& options);

}  // namespace commprof::nsys
