// SPDX-License-Identifier: MIT
#include "support/timeline_diff.hpp"

#include <cstring>
#include <sstream>

#include "src/timeline/rank_fields.hpp"

namespace commprof::fuzz {
namespace {

// Streams both values; flops compare by bit pattern (exact, and -0.0 is not 0.0 in a file).
template <class T>
bool differ(std::ostringstream& out, const std::string& where, const T& x, const T& y) {
  if (x == y) return false;
  out << where << ": " << x << " vs " << y;
  return true;
}
bool differ(std::ostringstream& out, const std::string& where, double x, double y) {
  if (std::memcmp(&x, &y, sizeof x) == 0) return false;
  out.precision(17);
  out << where << ": " << x << " vs " << y;
  return true;
}
template <class T>
bool differ(std::ostringstream& out, const std::string& where, const std::vector<T>& x,
            const std::vector<T>& y) {
  if (x == y) return false;
  out << where << ": " << x.size() << " vs " << y.size() << " elements, or different ones";
  return true;
}
bool differ(std::ostringstream& out, const std::string& where, Category x, Category y) {
  return differ(out, where, static_cast<int>(x), static_cast<int>(y));
}
bool differ(std::ostringstream& out, const std::string& where, const JsonObject& x,
            const JsonObject& y) {
  if (x == y) return false;
  out << where << ": " << x.dump() << " vs " << y.dump();
  return true;
}

// Every field of `table` in `a` and `b`; true at the first that differs.
template <class Table, class R>
bool fields_differ(std::ostringstream& out, const std::string& where, const Table& table,
                   const R& a, const R& b) {
  bool found = false;
  rank_fields::for_each(table, [&](const auto& f, std::size_t) {
    found = found || differ(out, where + std::string(f.key), a.*(f.record), b.*(f.record));
  });
  return found;
}

}  // namespace

std::string timeline_diff(const RankTimeline& a, const RankTimeline& b) {
  std::ostringstream out;
  if (fields_differ(out, "", rank_fields::kHeader, a, b) ||
      differ(out, "config", a.config, b.config) ||
      differ(out, "steps.size()", a.steps.size(), b.steps.size())) {
    return out.str();
  }
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const StepRecord& s = a.steps[i];
    const StepRecord& t = b.steps[i];
    const std::string w = "steps[" + std::to_string(i) + "].";
    if (fields_differ(out, w, rank_fields::kStep, s, t) ||
        differ(out, w + "ops.size()", s.ops.size(), t.ops.size())) {
      return out.str();
    }
    for (std::size_t j = 0; j < s.ops.size(); ++j) {
      if (fields_differ(out, w + "ops[" + std::to_string(j) + "].", rank_fields::kOp, s.ops[j],
                        t.ops[j])) {
        return out.str();
      }
    }
  }
  return "";
}

}  // namespace commprof::fuzz
