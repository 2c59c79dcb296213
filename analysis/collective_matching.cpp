// SPDX-License-Identifier: MIT
#include "analysis/collective_matching.hpp"

#include <algorithm>

#include "analysis/saturating_sum.hpp"
#include "collectives/collective_spec.hpp"
#include "src/backend/kinds/collective_kind.hpp"
#include "src/core/errors.hpp"

namespace commprof {

double busbw_factor_for(const std::string& collective, int n) {
  if (collective == "send" || collective == "recv") return 1.0;
  if (n < 1) return -1.0;
  try {
    return collective_spec(parse_collective(collective)).busbw_factor(n);
  } catch (const Error&) {
    return -1.0;
  }
}

double CollectiveInstance::algbw_gbps() const {
  if (time_ns() <= 0) return 0.0;
  return static_cast<double>(bytes) / static_cast<double>(time_ns());  // B/ns = GB/s
}

double CollectiveInstance::busbw_gbps() const {
  const double factor = busbw_factor_for(collective, comm_size);
  return factor < 0 ? -1.0 : algbw_gbps() * factor;
}

void CollectiveMatcher::add(int rank, const OpRecord& op, std::int64_t offset) {
  add_op(rank, op, offset);
}

void CollectiveMatcher::add(int rank, const OpView& op, std::int64_t offset) {
  add_op(rank, op, offset);
}

template <class Op>
void CollectiveMatcher::add_op(int rank, const Op& op, std::int64_t offset) {
  if (op.category != Category::kComm || op.collective.empty() || op.comm.empty() || op.seq < 0) {
    return;
  }
  const std::int64_t start = op.start_ns + offset;
  const std::int64_t end = op.end_ns + offset;
  const std::int64_t duration = op.end_ns - op.start_ns;
  // Communicator names are short: the key usually fits std::string's inline buffer.
  auto& by_seq = index_[std::string(op.comm)];
  const auto [it, inserted] =
      by_seq.try_emplace(op.seq, static_cast<std::uint32_t>(instances_.size()));
  if (inserted) {
    CollectiveInstance c;
    c.comm = std::string(op.comm);
    c.seq = op.seq;
    c.collective = std::string(op.collective);
    c.comm_size = op.comm_size;
    c.bytes = op.bytes;
    c.first_start_ns = c.last_start_ns = start;
    c.first_rank = c.last_rank = rank;
    c.min_end_ns = c.max_end_ns = end;
    c.min_duration_ns = c.max_duration_ns = duration;
    instances_.push_back(std::move(c));
  }
  CollectiveInstance& c = instances_[it->second];
  if (c.algo.empty() && !op.algo.empty()) {
    c.algo = std::string(op.algo) + (op.proto.empty() ? "" : "/" + std::string(op.proto));
  }
  if (!inserted) {
    // An alltoallv's ranks send what their routing gives each: their bytes differ by design.
    // The instance keeps the most any rank sent.
    const bool uneven = c.collective == "alltoallv";
    if (c.collective != op.collective || (!uneven && c.bytes != op.bytes) ||
        c.comm_size != op.comm_size) {
      c.consistent = false;
    }
    if (uneven) c.bytes = std::max(c.bytes, op.bytes);
    // Ties go to the lower rank, so results do not depend on file order.
    if (start < c.first_start_ns || (start == c.first_start_ns && rank < c.first_rank)) {
      c.first_start_ns = start;
      c.first_rank = rank;
    }
    if (start > c.last_start_ns || (start == c.last_start_ns && rank < c.last_rank)) {
      c.last_start_ns = start;
      c.last_rank = rank;
    }
    c.min_end_ns = std::min(c.min_end_ns, end);
    c.max_end_ns = std::max(c.max_end_ns, end);
    c.min_duration_ns = std::min(c.min_duration_ns, duration);
    c.max_duration_ns = std::max(c.max_duration_ns, duration);
  }
  ++c.ranks_seen;
  c.sum_duration_ns_ += static_cast<double>(duration);
  c.sum_start_ns_ += static_cast<double>(start);
  records_.push_back({it->second, rank, start});
}

void CollectiveMatcher::finish(int world_size) {
  int ranks = world_size;
  for (const Record& r : records_) ranks = std::max(ranks, r.rank + 1);
  waits_.assign(static_cast<std::size_t>(ranks), RankWait{});
  for (int r = 0; r < ranks; ++r) waits_[static_cast<std::size_t>(r)].rank = r;
  for (CollectiveInstance& c : instances_) {
    c.mean_duration_ns = c.sum_duration_ns_ / c.ranks_seen;
    c.wait_caused_ns = 0;
  }
  for (const Record& r : records_) {
    CollectiveInstance& c = instances_[r.instance];
    RankWait& w = waits_[static_cast<std::size_t>(r.rank)];
    const std::int64_t wait = c.last_start_ns - r.start_ns;
    ++w.collectives;
    add_saturating(w.wait_ns, wait);
    add_saturating(c.wait_caused_ns, wait);
  }
  for (const CollectiveInstance& c : instances_) {
    if (c.ranks_seen < 2) continue;  // nobody to wait for, nobody to be first against
    RankWait& last = waits_[static_cast<std::size_t>(c.last_rank)];
    ++last.times_last;
    add_saturating(last.wait_caused_ns, c.wait_caused_ns);
    ++waits_[static_cast<std::size_t>(c.first_rank)].times_first;
  }
  // Sorted by instance then rank, so wait_of() can binary-search: a counting sort by instance
  // (linear, for millions of records), then by rank within each instance, where ranks read in
  // order already are.
  std::vector<std::size_t> first(instances_.size() + 1, 0);
  for (const Record& r : records_) ++first[r.instance + 1];
  for (std::size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  std::vector<Record> sorted(records_.size());
  {
    std::vector<std::size_t> next(first.begin(), first.end() - 1);
    for (const Record& r : records_) sorted[next[r.instance]++] = r;
  }
  const auto by_rank = [](const Record& a, const Record& b) { return a.rank < b.rank; };
  for (std::size_t i = 0; i + 1 < first.size(); ++i) {
    const auto begin = sorted.begin() + static_cast<std::ptrdiff_t>(first[i]);
    const auto end = sorted.begin() + static_cast<std::ptrdiff_t>(first[i + 1]);
    if (!std::is_sorted(begin, end, by_rank)) std::sort(begin, end, by_rank);
  }
  records_ = std::move(sorted);
}

std::int64_t CollectiveMatcher::wait_of(std::size_t i, int rank) const {
  const Record key{static_cast<std::uint32_t>(i), rank, 0};
  const auto it =
      std::lower_bound(records_.begin(), records_.end(), key, [](const Record& a, const Record& b) {
        return a.instance < b.instance || (a.instance == b.instance && a.rank < b.rank);
      });
  if (it == records_.end() || it->instance != key.instance || it->rank != rank) return -1;
  return instances_[i].last_start_ns - it->start_ns;
}

std::int64_t CollectiveMatcher::find(const std::string& comm, std::int64_t seq) const {
  const auto by_seq = index_.find(comm);
  if (by_seq == index_.end()) return -1;
  const auto it = by_seq->second.find(seq);
  return it == by_seq->second.end() ? -1 : static_cast<std::int64_t>(it->second);
}

}  // namespace commprof
