// SPDX-License-Identifier: MIT
// commprof's NVTX domain in an nsys export, and its category ids (COMP, COMM, MEM).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analysis/nsys/nsys_export.hpp"
#include "src/timeline/category.hpp"

namespace commprof::nsys {

struct CommprofDomain {
  std::vector<std::int64_t> ids;  ///< empty: not a commprof trace
  std::map<std::int64_t, Category> categories;
};

/// The domain named `commprof` (or, in a capture started by commprof's measured-steps range,
/// that range's domain) and its registered categories; categories default to the fixed ids
/// commprof registers (1 COMP, 2 COMM, 3 MEM).
CommprofDomain find_commprof_domain(Db& db, bool has_nvtx);

}  // namespace commprof::nsys
