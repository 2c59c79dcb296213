// SPDX-License-Identifier: MIT
#include "analysis/interval_set.hpp"

#include <algorithm>

namespace commprof {

IntervalSet::IntervalSet(std::vector<Interval> intervals) {
  intervals.erase(std::remove_if(intervals.begin(), intervals.end(),
                                 [](const Interval& i) { return i.end <= i.begin; }),
                  intervals.end());
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  for (const Interval& i : intervals) {
    // `<=` merges touching spans, so the canonical form is unique and lengths add up exactly.
    if (!spans_.empty() && i.begin <= spans_.back().end) {
      spans_.back().end = std::max(spans_.back().end, i.end);
    } else {
      spans_.push_back(i);
    }
  }
}

std::int64_t IntervalSet::length() const {
  std::int64_t total = 0;
  for (const Interval& i : spans_) total += i.length();
  return total;
}

std::int64_t IntervalSet::covered(std::int64_t begin, std::int64_t end) const {
  if (end <= begin) return 0;
  // First span that ends after `begin`.
  auto it = std::upper_bound(spans_.begin(), spans_.end(), begin,
                             [](std::int64_t t, const Interval& s) { return t < s.end; });
  std::int64_t total = 0;
  for (; it != spans_.end() && it->begin < end; ++it) {
    total += std::min(end, it->end) - std::max(begin, it->begin);
  }
  return total;
}

IntervalSet IntervalSet::unite(const IntervalSet& other) const {
  std::vector<Interval> all = spans_;
  all.insert(all.end(), other.spans_.begin(), other.spans_.end());
  return IntervalSet(std::move(all));
}

IntervalSet IntervalSet::intersect(const IntervalSet& other) const {
  // Both inputs are sorted and disjoint: one linear merge.
  IntervalSet out;
  std::size_t a = 0;
  std::size_t b = 0;
  while (a < spans_.size() && b < other.spans_.size()) {
    const Interval& x = spans_[a];
    const Interval& y = other.spans_[b];
    const std::int64_t lo = std::max(x.begin, y.begin);
    const std::int64_t hi = std::min(x.end, y.end);
    if (lo < hi) out.spans_.push_back({lo, hi});
    if (x.end < y.end) {
      ++a;
    } else {
      ++b;
    }
  }
  return out;
}

IntervalSet IntervalSet::subtract(const IntervalSet& other) const {
  IntervalSet out;
  std::size_t b = 0;
  for (const Interval& x : spans_) {
    std::int64_t cursor = x.begin;
    while (b < other.spans_.size() && other.spans_[b].end <= cursor) ++b;
    for (std::size_t k = b; k < other.spans_.size() && other.spans_[k].begin < x.end; ++k) {
      const Interval& y = other.spans_[k];
      if (y.begin > cursor) out.spans_.push_back({cursor, y.begin});
      cursor = std::max(cursor, y.end);
    }
    if (cursor < x.end) out.spans_.push_back({cursor, x.end});
  }
  return out;
}

}  // namespace commprof
