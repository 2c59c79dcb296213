// SPDX-License-Identifier: MIT
#include "analysis/hta_scope.hpp"

#include <algorithm>

namespace commprof {

namespace {

constexpr std::int64_t kUs = 1000;

std::int64_t floor_us(std::int64_t ns) { return (ns >= 0 ? ns : ns - (kUs - 1)) / kUs * kUs; }
std::int64_t ceil_us(std::int64_t ns) { return -floor_us(-ns); }

std::optional<double> part(std::int64_t of, std::int64_t whole) {
  if (whole <= 0) return std::nullopt;
  return static_cast<double>(of) / static_cast<double>(whole);
}

}  // namespace

std::optional<double> HtaFigures::overlap() const { return part(comm_comp_ns, comm_ns); }
std::optional<double> HtaFigures::idle() const { return part(span_ns - busy_ns, span_ns); }
std::optional<double> HtaFigures::compute() const { return part(comp_ns, span_ns); }
std::optional<double> HtaFigures::non_compute() const { return part(busy_ns - comp_ns, span_ns); }

void HtaScope::add_op(Category category, std::int64_t start_ns, std::int64_t end_ns) {
  const std::int64_t begin = ceil_us(start_ns);
  const std::int64_t end = floor_us(end_ns);
  // One that rounds to an instant still bounds the span (HTA's merge keeps it); one that
  // rounds to less than nothing is left out.
  if (end < begin) return;
  latest_.first = std::min(latest_.first, begin);
  latest_.last = std::max(latest_.last, end);
  latest_.all.push_back({begin, end});
  if (category == Category::kComm) latest_.comm.push_back({begin, end});
  if (category == Category::kComp) latest_.comp.push_back({begin, end});
}

void HtaScope::fold_latest() {
  if (!have_latest_) return;
  merge_canonical(pooled_.comm, latest_.comm);
  merge_canonical(pooled_.comp, latest_.comp);
  merge_canonical(pooled_.all, latest_.all);
  pooled_.first = std::min(pooled_.first, latest_.first);
  pooled_.last = std::max(pooled_.last, latest_.last);
  ++pooled_steps_;
  have_latest_ = false;
}

HtaFigures HtaScope::measure(const Pool& pool) {
  HtaFigures f;
  f.comm_ns = total_length(pool.comm);
  f.comp_ns = total_length(pool.comp);
  f.comm_comp_ns = intersection_length(pool.comm, pool.comp);
  f.busy_ns = total_length(pool.all);
  if (pool.last >= pool.first) f.span_ns = pool.last - pool.first;
  return f;
}

HtaFigures HtaScope::figures() const {
  HtaFigures f;
  if (pooled_steps_ > 0) {
    f = measure(pooled_);
    f.steps = pooled_steps_;
  } else if (have_latest_) {
    f = measure(latest_);
    f.steps = 1;
  }
  f.steps_of = pooled_steps_ + (have_latest_ ? 1 : 0);
  return f;
}

}  // namespace commprof
