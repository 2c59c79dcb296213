// SPDX-License-Identifier: MIT
#include "analysis/report_fields.hpp"

#include <algorithm>
#include <tuple>

namespace commprof::report_fields {

bool waited_longer(const CollectiveInstance& a, const CollectiveInstance& b) {
  // Equal waits by communicator and sequence number, so every format (and every share of a
  // shared reduction) lists the same instances.
  if (a.wait_caused_ns != b.wait_caused_ns) return a.wait_caused_ns > b.wait_caused_ns;
  return std::tie(a.comm, a.seq) < std::tie(b.comm, b.seq);
}

std::vector<const CollectiveInstance*> worst_instances(const Report& r, std::size_t n) {
  std::vector<const CollectiveInstance*> worst;
  for (const CollectiveInstance& c : r.instances) worst.push_back(&c);
  const std::size_t keep = std::min(worst.size(), n);
  std::partial_sort(worst.begin(), worst.begin() + static_cast<std::ptrdiff_t>(keep), worst.end(),
                    [](const CollectiveInstance* a, const CollectiveInstance* b) {
                      return waited_longer(*a, *b);
                    });
  worst.resize(keep);
  return worst;
}

std::vector<const BaselineComparison*> baseline_rows(const Report& r) {
  if (!r.baseline) return {};
  return {&*r.baseline};
}

std::vector<const Interference*> interference_rows(const Report& r) {
  std::vector<const Interference*> rows;
  if (r.baseline) {
    for (const Interference& i : r.baseline->interference) rows.push_back(&i);
  }
  return rows;
}

std::vector<const CriticalShareRow*> critical_shares(const Report& r, std::size_t n) {
  std::vector<const CriticalShareRow*> rows;
  for (const CriticalShareRow& c : r.critical_shares) {
    if (rows.size() == n) break;
    rows.push_back(&c);
  }
  return rows;
}

}  // namespace commprof::report_fields
