// SPDX-License-Identifier: MIT
#include "analysis/nsys/nsys_export.hpp"

#include "src/timeline/op_record.hpp"

namespace commprof::nsys {

std::int64_t bounded_time(const Db& db, std::int64_t t, const char* what, const char* detail) {
  if (t < -kMaxTimeNs || t > kMaxTimeNs) {
    db.fail(std::string(what) + detail + " at " + std::to_string(t) +
            " ns: times lie within +-2^60 ns");
  }
  return t;
}

// A start and end read from one row: each bounded, the end not before the start.
void check_span(const Db& db, std::int64_t start, std::int64_t end, const char* what) {
  bounded_time(db, start, what);
  bounded_time(db, end, what);
  if (end < start) {
    db.fail(std::string(what) + " ends (" + std::to_string(end) + " ns) before it starts (" +
            std::to_string(start) + " ns)");
  }
}

std::string in_list(const std::vector<std::int64_t>& ids) {
  std::string s;
  for (std::int64_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

}  // namespace commprof::nsys
