// SPDX-License-Identifier: MIT
#include "analysis/collective_matching.hpp"

#include <algorithm>
#include <optional>

#include "analysis/group_time.hpp"
#include "analysis/reduction_wire.hpp"
#include "analysis/saturating_sum.hpp"
#include "analysis/wire_codec.hpp"
#include "src/collective/collective_kind.hpp"
#include "src/collective/collective_spec.hpp"
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

std::string_view busbw_formula_for(const std::string& collective) {
  if (collective == "send" || collective == "recv") return "1";
  if (collective == "alltoallv") return kBasisFactor;
  try {
    return collective_spec(parse_collective(collective)).factor_formula;
  } catch (const Error&) {
    return "";
  }
}

std::string_view CollectiveInstance::busbw_basis() const {
  if (is_alltoall(collective) && offrank_known()) return kBasisPerPeer;
  return busbw_formula_for(collective);
}

double CollectiveInstance::algbw_gbps() const {
  if (time_ns() <= 0) return 0.0;
  return static_cast<double>(bytes) / static_cast<double>(time_ns());  // B/ns = GB/s
}

double CollectiveInstance::busbw_gbps() const {
  if (is_alltoall(collective) && offrank_known()) {
    return time_ns() > 0 ? static_cast<double>(offrank_bytes) / static_cast<double>(time_ns())
                         : 0.0;
  }
  const double factor = busbw_factor_for(collective, comm_size);
  return factor < 0 ? -1.0 : algbw_gbps() * factor;
}

namespace {

// CollectiveMatcher::offrank_bytes_of, of a record or a view.
template <class Op>
std::optional<std::uint64_t> offrank_of(const Op& op) {
  const auto n = static_cast<std::size_t>(op.comm_size);
  if (op.comm_rank < 0 || op.comm_rank >= op.comm_size || op.peer_send_bytes.size() != n ||
      op.peer_recv_bytes.size() != n) {
    return std::nullopt;
  }
  std::uint64_t sent = 0, received = 0;
  std::size_t peer = 0;
  for (const std::uint64_t b : op.peer_send_bytes) {
    if (peer++ != static_cast<std::size_t>(op.comm_rank)) add_saturating(sent, b);
  }
  peer = 0;
  for (const std::uint64_t b : op.peer_recv_bytes) {
    if (peer++ != static_cast<std::size_t>(op.comm_rank)) add_saturating(received, b);
  }
  return std::max(sent, received);
}

}  // namespace

std::optional<std::uint64_t> CollectiveMatcher::offrank_bytes_of(const OpView& op) {
  return offrank_of(op);
}

std::int64_t CollectiveMatcher::add(int rank, const OpRecord& op, std::int64_t offset,
                                    std::uint64_t order) {
  return add_op(rank, op, offset, order, offrank_of(op));
}

std::int64_t CollectiveMatcher::add(int rank, const OpView& op, std::int64_t offset,
                                    std::uint64_t order) {
  return add_op(rank, op, offset, order, offrank_of(op));
}

std::int64_t CollectiveMatcher::add(int rank, const OpView& op, std::int64_t offset,
                                    std::uint64_t order, std::optional<std::uint64_t> offrank) {
  return add_op(rank, op, offset, order, offrank);
}

std::uint64_t CollectiveMatcher::order_of(std::uint32_t file, std::uint64_t position) {
  constexpr std::uint64_t kLow = (std::uint64_t{1} << 32) - 1;
  return (std::uint64_t{file} << 32) | std::min(position, kLow);
}

std::pair<std::uint32_t, bool> CollectiveMatcher::find_or_add(std::string_view comm,
                                                              std::int64_t seq) {
  // A rank's ops cycle through a handful of communicators: the last few looked up are
  // compared before the name is hashed (names are short: each fits std::string's own buffer).
  std::unordered_map<std::int64_t, std::uint32_t>* found = nullptr;
  for (auto& [name, map] : recent_.entries) {
    if (map != nullptr && name == comm) {
      found = map;
      break;
    }
  }
  if (found == nullptr) {
    found = &index_[std::string(comm)];
    recent_.entries[recent_.next] = {std::string(comm), found};
    recent_.next = (recent_.next + 1) % recent_.entries.size();
  }
  auto& by_seq = *found;
  const auto [it, inserted] =
      by_seq.try_emplace(seq, static_cast<std::uint32_t>(instances_.size()));
  if (inserted) {
    instances_.emplace_back();
    extras_.emplace_back();
  }
  return {it->second, inserted};
}

namespace {

// Whether a later op (or partial instance) `kind`/`bytes`/`size` agrees with the instance's first.
bool agrees(const CollectiveInstance& c, std::string_view collective, std::uint64_t bytes,
            int comm_size) {
  // An alltoallv's ranks send what their routing gives each: their bytes differ by design.
  const bool uneven = c.collective == "alltoallv";
  return c.collective == collective && (uneven || c.bytes == bytes) && c.comm_size == comm_size;
}

// First arrival: the earliest start, ties to the lower rank, so results do not depend on the
// order ranks are read in; last arrival: the latest start, ties to the lower rank.
void arrive(CollectiveInstance& c, std::int64_t start, int rank) {
  if (start < c.first_start_ns || (start == c.first_start_ns && rank < c.first_rank)) {
    c.first_start_ns = start;
    c.first_rank = rank;
  }
  if (start > c.last_start_ns || (start == c.last_start_ns && rank < c.last_rank)) {
    c.last_start_ns = start;
    c.last_rank = rank;
  }
}

}  // namespace

template <class Op>
std::int64_t CollectiveMatcher::add_op(int rank, const Op& op, std::int64_t offset,
                                       std::uint64_t order, std::optional<std::uint64_t> offrank) {
  if (!takes(op)) return -1;
  const std::int64_t start = op.start_ns + offset;
  const std::int64_t end = op.end_ns + offset;
  const std::int64_t duration = op.end_ns - op.start_ns;
  const auto [i, inserted] = find_or_add(op.comm, op.seq);
  CollectiveInstance& c = instances_[i];
  Extra& extra = extras_[i];
  if (inserted) {
    c.comm = std::string(op.comm);
    c.seq = op.seq;
    c.collective = std::string(op.collective);
    if (is_alltoall(c.collective)) {
      c.phase = std::string(alltoall_phase(op.name));
    }
    c.comm_size = op.comm_size;
    c.bytes = op.bytes;
    c.in_place = op.in_place;
    c.order = order;
    c.first_start_ns = c.last_start_ns = start;
    c.first_rank = c.last_rank = rank;
    c.min_end_ns = c.max_end_ns = end;
    c.min_duration_ns = c.max_duration_ns = duration;
    extra.max_bytes = op.bytes;
  }
  // Whatever the instance's kind (busbw_gbps asks it): sums that do not depend on which op came
  // first add up the same in merge().
  if (offrank) {
    c.offrank_bytes = std::max(c.offrank_bytes, *offrank);
    ++c.offrank_ranks;
  }
  if (c.algo.empty() && !op.algo.empty()) {
    c.algo = std::string(op.algo) + (op.proto.empty() ? "" : "/" + std::string(op.proto));
    extra.algo_order = order;
  }
  if (!inserted) {
    if (!agrees(c, op.collective, op.bytes, op.comm_size)) c.consistent = false;
    if (c.in_place != op.in_place) c.in_place = -1;
    extra.max_bytes = std::max(extra.max_bytes, op.bytes);
    // The instance keeps the most any rank of an alltoallv sent.
    if (c.collective == "alltoallv") c.bytes = extra.max_bytes;
    arrive(c, start, rank);
    c.min_end_ns = std::min(c.min_end_ns, end);
    c.max_end_ns = std::max(c.max_end_ns, end);
    c.min_duration_ns = std::min(c.min_duration_ns, duration);
    c.max_duration_ns = std::max(c.max_duration_ns, duration);
  }
  ++c.ranks_seen;
  add_saturating(c.sum_duration_ns_, duration);
  records_.push_back({i, rank, start});
  return i;
}

namespace {

std::uint64_t owner_hash(std::string_view comm, std::int64_t seq) {
  // FNV-1a: the same on every process (std::hash need not be).
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](unsigned char byte) {
    h ^= byte;
    h *= 1099511628211ULL;
  };
  for (const char ch : comm) mix(static_cast<unsigned char>(ch));
  for (int b = 0; b < 8; ++b)
    mix(static_cast<unsigned char>(static_cast<std::uint64_t>(seq) >> (8 * b)));
  return h;
}

// One instance as one process matched it, for its owner's merge: what matching set, which op
// gave the algorithm, the most bytes any member sent, and each member's (rank, start).
struct InstancePartial {
  CollectiveInstance instance;
  std::uint64_t algo_order = 0;
  std::uint64_t max_bytes = 0;
  std::vector<std::pair<std::int32_t, std::int64_t>> members;
};

template <class IO>
void transfer(IO& io, InstancePartial& p) {
  io(p.instance, p.algo_order, p.max_bytes, p.members);
}

}  // namespace

std::vector<std::string> CollectiveMatcher::partials(int owners) const {
  std::vector<std::vector<Record>> members(instances_.size());
  for (const Record& r : records_) members[r.instance].push_back(r);
  std::vector<std::vector<std::size_t>> owned(static_cast<std::size_t>(owners));
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const CollectiveInstance& c = instances_[i];
    owned[owner_hash(c.comm, c.seq) % static_cast<std::uint64_t>(owners)].push_back(i);
  }
  std::vector<std::string> buffers;
  for (const std::vector<std::size_t>& list : owned) {
    wire::Writer w;
    w.list(list.size());
    for (const std::size_t i : list) {
      InstancePartial part{instances_[i], extras_[i].algo_order, extras_[i].max_bytes, {}};
      for (const Record& r : members[i]) part.members.emplace_back(r.rank, r.start_ns);
      w(part);
    }
    buffers.push_back(w.take());
  }
  return buffers;
}

void CollectiveMatcher::merge(std::string_view partials) {
  wire::Reader in(partials);
  in.each<InstancePartial>([&](const InstancePartial& part) {
    const CollectiveInstance& p = part.instance;
    const Extra pe{part.algo_order, part.max_bytes};
    const auto [i, inserted] = find_or_add(p.comm, p.seq);
    CollectiveInstance& c = instances_[i];
    Extra& extra = extras_[i];
    if (inserted) {
      c = p;
      extra = pe;
    } else {
      // The instance is what adding both sets of ops in reading order gives: the earlier
      // first op sets kind, size and place; every member must agree with it.
      const bool p_first = p.order < c.order;
      const CollectiveInstance& first = p_first ? p : c;
      const CollectiveInstance& second = p_first ? c : p;
      const bool consistent = c.consistent && p.consistent &&
                              agrees(first, second.collective, second.bytes, second.comm_size);
      if (p_first) {
        c.collective = p.collective;
        c.comm_size = p.comm_size;
        c.bytes = p.bytes;
        c.order = p.order;
      }
      c.consistent = consistent;
      if (c.in_place != p.in_place) c.in_place = -1;
      extra.max_bytes = std::max(extra.max_bytes, pe.max_bytes);
      if (c.collective == "alltoallv") c.bytes = extra.max_bytes;
      if (!p.algo.empty() && (c.algo.empty() || pe.algo_order < extra.algo_order)) {
        c.algo = p.algo;
        extra.algo_order = pe.algo_order;
      }
      arrive(c, p.first_start_ns, p.first_rank);
      arrive(c, p.last_start_ns, p.last_rank);
      c.min_end_ns = std::min(c.min_end_ns, p.min_end_ns);
      c.max_end_ns = std::max(c.max_end_ns, p.max_end_ns);
      c.min_duration_ns = std::min(c.min_duration_ns, p.min_duration_ns);
      c.max_duration_ns = std::max(c.max_duration_ns, p.max_duration_ns);
      c.ranks_seen += p.ranks_seen;
      c.offrank_bytes = std::max(c.offrank_bytes, p.offrank_bytes);
      c.offrank_ranks += p.offrank_ranks;
      add_saturating(c.sum_duration_ns_, p.sum_duration_ns_);
    }
    for (const auto& [rank, start_ns] : part.members) records_.push_back({i, rank, start_ns});
  });
  in.expect_end();
}

void CollectiveMatcher::finish(int world_size) {
  int ranks = world_size;
  for (const Record& r : records_) ranks = std::max(ranks, r.rank + 1);
  waits_.assign(static_cast<std::size_t>(ranks), RankWait{});
  for (int r = 0; r < ranks; ++r) waits_[static_cast<std::size_t>(r)].rank = r;
  for (CollectiveInstance& c : instances_) {
    c.mean_duration_ns = static_cast<double>(c.sum_duration_ns_) / c.ranks_seen;
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
