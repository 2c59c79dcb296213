// SPDX-License-Identifier: MIT
// libFuzzer target: the interval algebra (analysis/interval_set). Not only "no crash": every
// result is checked against properties.
//  - narrow inputs (times in [-8, 120)): against a brute-force model, one bit per nanosecond:
//    union, intersection, difference, length and covered() must equal the bitwise OR, AND,
//    AND-NOT and population counts;
//  - wide inputs (any times of the algebra's domain): the canonical form (sorted, disjoint,
//    non-touching, non-empty), |A u B| + |A n B| = |A| + |B|, |A \ B| = |A| - |A n B|, computed
//    in 128 bits so the check cannot overflow where the code under test might;
//  - the free functions the reducer uses agree with the class.
#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/interval_set.hpp"
#include "src/timeline/op_record.hpp"
#include "support/fuzz_check.hpp"

namespace commprof {
namespace {

constexpr std::int64_t kLo = -8;  // narrow inputs: times in [kLo, kLo + 128)
using Bits = std::bitset<128>;

// Reads the input front to back; past its end every read is 0.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  std::uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
  // A time of the algebra's domain, [-2 kMaxTimeNs, 2 kMaxTimeNs] (interval_set.hpp): wider
  // ones are refused by the readers (a crash this fuzzer found before they were).
  std::int64_t time() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | u8();
    const auto span = static_cast<std::uint64_t>(4 * kMaxTimeNs) + 1;
    return static_cast<std::int64_t>(v % span) - 2 * kMaxTimeNs;
  }
  bool done() const { return p_ >= end_; }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

std::string show(const IntervalSet& s) {
  std::string out;
  for (const Interval& i : s.intervals()) {
    out += "[" + std::to_string(i.begin) + "," + std::to_string(i.end) + ") ";
  }
  return out;
}

void check_canonical(const IntervalSet& s, const char* what) {
  const std::vector<Interval>& v = s.intervals();
  for (std::size_t i = 0; i < v.size(); ++i) {
    FUZZ_CHECK(v[i].begin < v[i].end, std::string(what) + " holds an empty span: " + show(s));
    FUZZ_CHECK(i == 0 || v[i - 1].end < v[i].begin,
               std::string(what) + " is not sorted, disjoint and non-touching: " + show(s));
  }
}

__int128 length128(const IntervalSet& s) {
  __int128 total = 0;
  for (const Interval& i : s.intervals()) total += static_cast<__int128>(i.end) - i.begin;
  return total;
}

Bits model(const std::vector<Interval>& intervals) {
  Bits bits;
  for (const Interval& i : intervals) {
    for (std::int64_t t = i.begin; t < i.end; ++t) bits.set(static_cast<std::size_t>(t - kLo));
  }
  return bits;
}

Bits bits_of(const IntervalSet& s) { return model(s.intervals()); }

std::int64_t count(const Bits& b, std::int64_t begin, std::int64_t end) {
  std::int64_t n = 0;
  for (std::int64_t t = std::max(begin, kLo); t < std::min(end, kLo + 128); ++t) {
    n += b.test(static_cast<std::size_t>(t - kLo)) ? 1 : 0;
  }
  return n;
}

void check_narrow(Bytes& in, const std::vector<Interval>& a_in, const std::vector<Interval>& b_in,
                  const IntervalSet& a, const IntervalSet& b) {
  const Bits ma = model(a_in);
  const Bits mb = model(b_in);
  FUZZ_CHECK(bits_of(a) == ma, "IntervalSet(A) covers other points than A: " + show(a));
  FUZZ_CHECK(a.length() == static_cast<std::int64_t>(ma.count()), "|A| " + show(a));
  FUZZ_CHECK(bits_of(a.unite(b)) == (ma | mb), "A u B " + show(a.unite(b)));
  FUZZ_CHECK(bits_of(a.intersect(b)) == (ma & mb), "A n B " + show(a.intersect(b)));
  FUZZ_CHECK(bits_of(a.subtract(b)) == (ma & ~mb), "A \\ B " + show(a.subtract(b)));
  FUZZ_CHECK(a.unite(b).length() == static_cast<std::int64_t>((ma | mb).count()), "|A u B|");
  // Windows, including empty and reversed ones, anywhere around the sets.
  for (int q = 0; q < 4 && !in.done(); ++q) {
    const std::int64_t lo = static_cast<std::int64_t>(in.u8() % 144) + kLo - 8;
    const std::int64_t hi = static_cast<std::int64_t>(in.u8() % 144) + kLo - 8;
    FUZZ_CHECK(a.covered(lo, hi) == count(ma, lo, hi),
               "covered(" + std::to_string(lo) + "," + std::to_string(hi) + ") of " + show(a));
  }
}

}  // namespace
}  // namespace commprof

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commprof;
  Bytes in(data, size);
  const std::uint8_t header = in.u8();
  const bool narrow = (header & 1) == 0;
  const std::size_t n = in.u8() % 24;  // intervals of A, then of B
  const std::size_t n_b = in.u8() % 24;
  std::vector<Interval> a_in, b_in;
  for (std::size_t i = 0; i < n + n_b; ++i) {
    Interval iv;
    if (narrow) {
      iv.begin = static_cast<std::int64_t>(in.u8() % 128) + kLo;
      iv.end = static_cast<std::int64_t>(in.u8() % 128) + kLo;  // may be empty or reversed
    } else {
      iv.begin = in.time();
      iv.end = in.time();
    }
    (i < n ? a_in : b_in).push_back(iv);
  }
  const IntervalSet a(a_in);
  const IntervalSet b(b_in);
  const IntervalSet u = a.unite(b);
  const IntervalSet x = a.intersect(b);
  const IntervalSet d = a.subtract(b);
  check_canonical(a, "A");
  check_canonical(b, "B");
  check_canonical(u, "A u B");
  check_canonical(x, "A n B");
  check_canonical(d, "A \\ B");
  FUZZ_CHECK(length128(u) + length128(x) == length128(a) + length128(b),
             "|A u B| + |A n B| != |A| + |B|");
  FUZZ_CHECK(length128(d) == length128(a) - length128(x), "|A \\ B| != |A| - |A n B|");
  FUZZ_CHECK(a.intersect(a).intervals() == a.intervals(), "A n A != A");
  FUZZ_CHECK(a.unite(a).intervals() == a.intervals(), "A u A != A");
  FUZZ_CHECK(a.subtract(a).empty(), "A \\ A not empty");
  FUZZ_CHECK(b.intersect(a).intervals() == x.intervals(), "A n B != B n A");
  FUZZ_CHECK(b.unite(a).intervals() == u.intervals(), "A u B != B u A");

  // The reducer's free functions on the same data.
  std::vector<Interval> canon = a_in;
  make_canonical(canon);
  FUZZ_CHECK(canon == a.intervals(), "make_canonical != IntervalSet");
  FUZZ_CHECK(total_length(canon) == a.length(), "total_length != length()");
  FUZZ_CHECK(intersection_length(a.intervals(), b.intervals()) == x.length(),
             "intersection_length != |A n B|");
  for (const Interval& w : b.intervals()) {
    FUZZ_CHECK(covered_length(canon, w.begin, w.end) == x.covered(w.begin, w.end),
               "covered_length over a span of B != |A n B| there");
  }
  if (narrow) check_narrow(in, a_in, b_in, a, b);
  return 0;
}
