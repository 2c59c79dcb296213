// SPDX-License-Identifier: MIT
// The steps of an nsys export: commprof's `step N` ranges in its NVTX domain; for a foreign trace
// the ranges whose name starts with --step-range, or without it the whole capture as one step.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/nsys/nsys_export.hpp"
#include "analysis/nsys/nsys_import.hpp"
#include "analysis/nsys/nsys_schema.hpp"

namespace commprof::nsys {

/// The steps in start order; fails (naming the file) when there are none or a range is damaged.
/// Without commprof's domain and without options.step_range: one step from the first GPU
/// activity's launch (its CUDA API call, else its start) to the last one's end (kernels, and
/// memcpys and memsets where traced).
std::vector<StepRange> read_steps(Db& db, const NsysSchema& schema,
                                  const std::vector<std::int64_t>& commprof_domains,
                                  const NsysImportOptions& options);

}  // namespace commprof::nsys
