// SPDX-License-Identifier: MIT
#include "analysis/interval_set.hpp"

#include <algorithm>

namespace commprof {

void make_canonical(std::vector<Interval>& v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](const Interval& i) { return i.end <= i.begin; }),
          v.end());
  const auto before = [](const Interval& a, const Interval& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  };
  // Ops of one stream come in order: most steps are sorted already.
  if (!std::is_sorted(v.begin(), v.end(), before)) std::sort(v.begin(), v.end(), before);
  std::size_t n = 0;
  for (const Interval& i : v) {
    // `<=` merges touching spans, so the canonical form is unique and lengths add up exactly.
    if (n > 0 && i.begin <= v[n - 1].end) {
      v[n - 1].end = std::max(v[n - 1].end, i.end);
    } else {
      v[n++] = i;
    }
  }
  v.resize(n);
}

std::int64_t total_length(const std::vector<Interval>& canonical) {
  std::int64_t total = 0;
  for (const Interval& i : canonical) total += i.length();
  return total;
}

std::int64_t covered_length(const std::vector<Interval>& spans, std::int64_t begin,
                            std::int64_t end) {
  if (end <= begin) return 0;
  // First span that ends after `begin`.
  auto it = std::upper_bound(spans.begin(), spans.end(), begin,
                             [](std::int64_t t, const Interval& s) { return t < s.end; });
  std::int64_t total = 0;
  for (; it != spans.end() && it->begin < end; ++it) {
    total += std::min(end, it->end) - std::max(begin, it->begin);
  }
  return total;
}

std::int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t total = 0;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].begin, b[j].begin);
    const std::int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) total += hi - lo;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

void merge_canonical(std::vector<Interval>& into, const std::vector<Interval>& add) {
  if (add.empty()) return;
  // The spans of `into` that end before `add` begins (and do not touch it) stay as they are.
  const auto from = std::lower_bound(into.begin(), into.end(), add.front().begin,
                                     [](const Interval& s, std::int64_t t) { return s.end < t; });
  std::vector<Interval> tail(from, into.end());
  into.erase(from, into.end());
  tail.insert(tail.end(), add.begin(), add.end());
  make_canonical(tail);
  into.insert(into.end(), tail.begin(), tail.end());
}

IntervalSet::IntervalSet(std::vector<Interval> intervals) : spans_(std::move(intervals)) {
  make_canonical(spans_);
}

std::int64_t IntervalSet::length() const { return total_length(spans_); }

std::int64_t IntervalSet::covered(std::int64_t begin, std::int64_t end) const {
  return covered_length(spans_, begin, end);
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
