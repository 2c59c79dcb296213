// SPDX-License-Identifier: MIT
#include "analysis/nsys/nsys_domain.hpp"

#include <string>

#include "src/timeline/op_range_text.hpp"

namespace commprof::nsys {

CommprofDomain find_commprof_domain(Db& db, bool has_nvtx) {
  CommprofDomain d;
  d.categories = {{1, Category::kComp}, {2, Category::kComm}, {3, Category::kMem}};
  std::vector<std::int64_t>& domains = d.ids;
  std::map<std::int64_t, Category>& categories = d.categories;
  if (has_nvtx) {
    Stmt s(db, std::string("SELECT DISTINCT domainId FROM ") + kNvtxTable +
                   " WHERE eventType = 75 AND text = 'commprof'");
    while (s.step()) domains.push_back(s.i64(0));
    if (domains.empty()) {
      // nsys records a domain's creation only if it happens inside the capture; with
      // --capture-range=nvtx (scripts/nsys-profile-rank.sh) it happened before. The range that
      // started the capture, commprof's measured-steps range, still names the domain.
      Stmt m(db, std::string("SELECT DISTINCT n.domainId FROM ") + kNvtxTable +
                     " n WHERE n.eventType IN (59, 60) AND n.domainId IS NOT NULL AND " +
                     kNvtxText + " = '" + kMeasuredStepsRange + "'");
      while (m.step()) domains.push_back(m.i64(0));
    }
    if (!domains.empty()) {
      Stmt c(db, std::string("SELECT category, text FROM ") + kNvtxTable +
                     " WHERE eventType = 33 AND domainId IN (" + in_list(domains) + ")");
      while (c.step()) {
        const std::string t = c.text(1);
        if (const auto category = category_from_name(t)) categories[c.i64(0)] = *category;
      }
    }
  }
  return d;
}

}  // namespace commprof::nsys
