// SPDX-License-Identifier: MIT
// Interval algebra on one rank's timeline: the union of a category's ops, and the intersection
// and difference of two such unions. Everything the overlap metrics need, in O(n log n).
#pragma once

#include <cstdint>
#include <vector>

namespace commprof {

/// A half-open span of time [begin, end) in nanoseconds. begin == end is an empty interval: it
/// occupies no time and never contributes to a union, but it is not an error. Times lie within
/// +-2 x kMaxTimeNs (src/timeline/op_record.hpp: a rank file's times, moved by its clock
/// offset), so every length, and the sum of two, fits in 64 bits.
struct Interval {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t length() const { return end > begin ? end - begin : 0; }
  bool operator==(const Interval& o) const { return begin == o.begin && end == o.end; }
};

/// A set of time points kept as sorted, disjoint, non-touching, non-empty intervals (the
/// canonical form). Built from any intervals: unsorted, nested, overlapping, touching or empty.
class IntervalSet {
 public:
  IntervalSet() = default;
  /// The union of `intervals`; O(n log n). Touching intervals ([0,5) and [5,9)) merge.
  explicit IntervalSet(std::vector<Interval> intervals);

  const std::vector<Interval>& intervals() const { return spans_; }
  bool empty() const { return spans_.empty(); }
  /// Total time covered, in ns.
  std::int64_t length() const;
  /// Time of [begin, end) covered by this set; O(log n + k) for k spans crossed.
  std::int64_t covered(std::int64_t begin, std::int64_t end) const;

  IntervalSet unite(const IntervalSet& other) const;
  IntervalSet intersect(const IntervalSet& other) const;
  /// Points of this set that are not in `other`.
  IntervalSet subtract(const IntervalSet& other) const;

 private:
  std::vector<Interval> spans_;
};

/// The same operations on plain vectors already in canonical form, for hot loops that reuse
/// their buffers (the reducer). make_canonical turns any intervals into that form in place.
void make_canonical(std::vector<Interval>& intervals);
std::int64_t total_length(const std::vector<Interval>& canonical);
std::int64_t covered_length(const std::vector<Interval>& canonical, std::int64_t begin,
                            std::int64_t end);
std::int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);
/// `into` ∪ `add`, both canonical, into `into`: O(log n) plus the part of `into` that `add`'s
/// time reaches, so adding a timeline step by step stays linear.
void merge_canonical(std::vector<Interval>& into, const std::vector<Interval>& add);

}  // namespace commprof
