// SPDX-License-Identifier: MIT
#include "analysis/instance_tables.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/group_time.hpp"
#include "analysis/instance_digest.hpp"
#include "analysis/reduction_wire.hpp"
#include "analysis/report_fields.hpp"
#include "analysis/saturating_sum.hpp"
#include "analysis/wire_codec.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

constexpr std::uint64_t kNone = InstanceDigest::kNone;

// Signed values as unsigned ones in the same order, so that one bisection serves both.
std::uint64_t ordered(std::int64_t v) { return static_cast<std::uint64_t>(v) ^ (1ULL << 63); }
std::int64_t unordered(std::uint64_t v) { return static_cast<std::int64_t>(v ^ (1ULL << 63)); }

using Digest = InstanceDigest;
using SizeKey = InstanceDigest::SizeKey;

// Which busbw an all-to-all(v) row shows: of `per_peer` instances out of `all`.
std::string basis_of(std::int64_t per_peer, std::int64_t all) {
  if (per_peer == all) return std::string(kBasisPerPeer);
  return std::string(per_peer == 0 ? kBasisFactor : kBasisMixed);
}

// This process's share of the digest, with its kReportWorstInstances worst instances: the
// worst of all are among the owners' worst, the order being total.
Digest digest_of(const std::vector<CollectiveInstance>& owned) {
  Digest d;
  for (const CollectiveInstance& c : owned) d.add(c);
  std::vector<const CollectiveInstance*> worst;
  for (const CollectiveInstance& c : owned) worst.push_back(&c);
  const std::size_t keep = std::min(worst.size(), kReportWorstInstances);
  std::partial_sort(worst.begin(), worst.begin() + static_cast<std::ptrdiff_t>(keep), worst.end(),
                    [](const CollectiveInstance* a, const CollectiveInstance* b) {
                      return report_fields::waited_longer(*a, *b);
                    });
  for (std::size_t i = 0; i < keep; ++i) d.worst.push_back(*worst[i]);
  return d;
}

// A question of order over values spread across processes: the smallest value v in [lo, hi]
// with at least `want` values at or below it in list `list` (with `param`), summed over the
// processes. A search on the value, 15 probes a round: at most 16 rounds of small messages,
// whatever the number of values.
struct Question {
  std::uint32_t list = 0;
  std::uint64_t param = 0;
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  std::uint64_t want = 0;
};

constexpr std::uint32_t kStarts = std::numeric_limits<std::uint32_t>::max();  // first starts
constexpr std::uint32_t kStartOrders = kStarts - 1;  // (first start, order) pairs up to (param, v)

// One question's probes of a round: how many values of list `list` (with `param`) lie at or
// below each.
struct Probes {
  std::uint32_t list = 0;
  std::uint64_t param = 0;
  std::vector<std::uint64_t> values;
};

template <class IO>
void transfer(IO& io, Probes& p) {
  io(p.list, p.param, p.values);
}

// What each process holds to answer: per size key its instance times, and the instances' (first
// start, order) pairs, sorted.
struct Answerer {
  std::vector<std::vector<std::uint64_t>> times;              // by size key, ordered()
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keys;  // (ordered(first start), order)

  std::uint64_t count(std::uint32_t list, std::uint64_t param, std::uint64_t v) const {
    if (list == kStarts) {
      return static_cast<std::uint64_t>(
          std::upper_bound(keys.begin(), keys.end(), std::make_pair(v, kNone)) - keys.begin());
    }
    if (list == kStartOrders) {
      return static_cast<std::uint64_t>(
          std::upper_bound(keys.begin(), keys.end(), std::make_pair(param, v)) - keys.begin());
    }
    if (list >= times.size()) throw Error("reduction message names an unknown list");
    const std::vector<std::uint64_t>& t = times[list];
    return static_cast<std::uint64_t>(std::upper_bound(t.begin(), t.end(), v) - t.begin());
  }
};

// Probes a round asks per open question: the interval shrinks about 16-fold a round, so a
// question of 64-bit values takes at most 16 rounds instead of bisection's 64. Each round is a
// broadcast and a gather, whose latency under an oversubscribed mpirun (a few milliseconds) was
// what the end-of-run report of every short run paid.
constexpr std::uint64_t kProbes = 15;

// The probes of [lo, hi): lo + floor((hi - lo) * k / (kProbes + 1)) for k = 1..kProbes, without
// overflow, each once, in increasing order (lo itself when hi - lo is small).
std::vector<std::uint64_t> probes_of(const Question& q) {
  const std::uint64_t r = q.hi - q.lo, parts = kProbes + 1;
  std::vector<std::uint64_t> out;
  for (std::uint64_t k = 1; k <= kProbes; ++k) {
    const std::uint64_t v = q.lo + (r / parts) * k + (r % parts) * k / parts;
    if (out.empty() || v > out.back()) out.push_back(v);
  }
  return out;
}

// Collective: answers `questions` (process 0's; the others pass none) in place: each one's lo
// becomes its answer.
void bisect(std::vector<Question>& questions, const Answerer& answerer, ReduceExchange& exchange) {
  for (;;) {
    std::vector<Probes> ask;
    std::vector<std::size_t> open;  // the questions asked, by their index in `questions`
    for (std::size_t i = 0; i < questions.size(); ++i) {
      const Question& q = questions[i];
      if (q.lo >= q.hi) continue;
      open.push_back(i);
      ask.push_back({q.list, q.param, probes_of(q)});
    }
    ask = wire::decode<std::vector<Probes>>(exchange.broadcast(wire::encode(ask)));
    if (ask.empty()) return;
    std::vector<std::uint64_t> counts;
    for (const Probes& p : ask) {
      if (p.values.size() > kProbes) throw Error("reduction message asks too many probes");
      for (const std::uint64_t v : p.values) counts.push_back(answerer.count(p.list, p.param, v));
    }
    const std::vector<std::string> all = exchange.gather(wire::encode(counts));
    if (exchange.rank() != 0) continue;
    std::vector<std::uint64_t> sum(counts.size(), 0);
    for (const std::string& bytes : all) {
      const auto theirs = wire::decode<std::vector<std::uint64_t>>(bytes);
      if (theirs.size() != sum.size()) {
        throw Error("reduction message answers " + std::to_string(theirs.size()) + " probes of " +
                    std::to_string(sum.size()));
      }
      for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += theirs[k];
    }
    std::size_t at = 0;
    for (std::size_t j = 0; j < open.size(); ++j) {
      Question& q = questions[open[j]];
      const std::vector<std::uint64_t>& probes = ask[j].values;
      // The smallest probe with enough values at or below it bounds the answer from above; the
      // probe before it, which had too few, from below. None: the answer is past the last.
      std::size_t first = probes.size();
      for (std::size_t k = 0; k < probes.size(); ++k) {
        if (sum[at + k] >= q.want) {
          first = k;
          break;
        }
      }
      if (first < probes.size()) {
        q.hi = probes[first];
        if (first > 0) q.lo = probes[first - 1] + 1;
      } else {
        q.lo = probes.back() + 1;
      }
      at += probes.size();
    }
  }
}

// Nearest-rank percentile: the index in sorted order of the smallest value with at least p% at
// or below it (as the one-process formula over a sorted list).
std::uint64_t percentile_index(std::int64_t n, double p) {
  const double rank = std::ceil(p / 100.0 * static_cast<double>(n));
  const std::uint64_t i = rank < 1.0 ? 0 : static_cast<std::uint64_t>(rank) - 1;
  return std::min(i, static_cast<std::uint64_t>(n - 1));
}

void add_collective_rows(Report& rep, const Digest& d, const std::vector<Question>& answers) {
  std::size_t k = 0;
  for (const auto& [key, s] : d.sizes) {
    CollectiveRow row;
    int in_place = -1;
    std::tie(row.collective, row.comm_size, row.bytes, in_place) = key;
    row.placement = placement_name(in_place);
    row.count = s.count;
    row.p50_ns = static_cast<double>(unordered(answers[k++].lo));
    row.p95_ns = static_cast<double>(unordered(answers[k++].lo));
    row.mean_skew_ns = static_cast<double>(s.skew_ns) / static_cast<double>(s.count);
    row.wait_ns = s.wait_ns;
    std::vector<std::pair<std::uint64_t, std::string>> algos;
    for (const auto& [algo, order] : s.algos) algos.emplace_back(order, algo);
    std::sort(algos.begin(), algos.end());
    for (const auto& [order, algo] : algos) row.algo += (row.algo.empty() ? "" : " ") + algo;
    row.algbw_gbps = row.p50_ns > 0 ? static_cast<double>(row.bytes) / row.p50_ns : 0.0;
    const double factor = busbw_factor_for(row.collective, row.comm_size);
    if (factor >= 0) row.busbw_gbps = row.algbw_gbps * factor;
    row.busbw_basis = is_alltoall(row.collective) ? basis_of(s.offrank_count, s.count)
                                                  : std::string(busbw_formula_for(row.collective));
    if (is_alltoall(row.collective) && factor >= 0 && s.offrank_count > 0) {
      // The mean over the row's instances of what each moved across the bus: the busiest rank's
      // off-rank bytes where known, bytes × (n-1)/n otherwise; over the p50 time.
      const double bus_bytes =
          static_cast<double>(s.offrank_bytes) +
          static_cast<double>(s.count - s.offrank_count) * static_cast<double>(row.bytes) * factor;
      row.busbw_gbps = row.p50_ns > 0 ? bus_bytes / static_cast<double>(s.count) / row.p50_ns : 0.0;
    }
    if (factor >= 0 && rep.peak_busbw_gbps > 0) {
      row.peak_fraction = row.busbw_gbps / rep.peak_busbw_gbps;
    }
    rep.collectives.push_back(row);
  }
}

void add_group_rows(Report& rep, const Digest& d) {
  for (const auto& [group, g] : d.groups) {
    GroupRow row;
    row.group = group;
    row.communicators = static_cast<int>(g.comms.size());
    row.min_size = g.min_size;
    row.max_size = g.max_size;
    row.instances = g.instances;
    row.incomplete = g.incomplete;
    row.bytes = g.bytes;
    row.time_ns = static_cast<double>(g.time_ns);
    row.mean_skew_ns = static_cast<double>(g.skew_ns) / static_cast<double>(g.instances);
    row.wait_ns = g.wait_ns;
    // Bytes × factor summed per collective and size (integer sums, then one product each).
    // All-to-all(v)s with bytes per peer add their busiest rank's off-rank bytes instead.
    double bus_bytes = 0.0;
    std::int64_t bus_time = 0, alltoalls = 0, offrank = 0;
    for (const auto& [key, bus] : g.bus) {
      const double factor = busbw_factor_for(key.first, key.second);
      if (factor < 0) continue;
      bus_bytes += static_cast<double>(bus.bytes) * factor + static_cast<double>(bus.offrank_bytes);
      add_saturating(bus_time, bus.time_ns);
      if (is_alltoall(key.first)) {
        alltoalls += bus.count;
        offrank += bus.offrank_count;
      }
    }
    if (bus_time > 0) row.busbw_gbps = bus_bytes / static_cast<double>(bus_time);
    if (alltoalls > 0) row.busbw_basis = basis_of(offrank, alltoalls);
    rep.groups.push_back(row);
  }
}

std::vector<std::string> instance_warnings(const Digest& d) {
  std::vector<std::string> out;
  if (d.incomplete > 0) {
    out.push_back(std::to_string(d.incomplete) +
                  " collective(s) were recorded by fewer ranks than their "
                  "communicator has; first: " +
                  d.first_incomplete.text);
  }
  if (d.inconsistent > 0) {
    out.push_back(std::to_string(d.inconsistent) +
                  " collective(s) differ across ranks in kind, bytes or communicator "
                  "size; first: " +
                  d.first_inconsistent.text);
  }
  return out;
}

// The heatmap's cells, gathered a few columns at a time: process 0 never holds more than the
// cells themselves and one batch of every owner's share.
constexpr std::size_t kColumnBatches = 8;

void gather_cells(const std::vector<CollectiveInstance>& owned,
                  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& bounds,
                  std::size_t columns, Report& rep, ReduceExchange& exchange) {
  std::vector<WaitCell> mine;  // by column, then rank
  for (const CollectiveInstance& c : owned) {
    if (c.wait_caused_ns <= 0) continue;
    const auto column = std::upper_bound(bounds.begin(), bounds.end(),
                                         std::make_pair(ordered(c.first_start_ns), c.order)) -
                        bounds.begin();
    mine.push_back({c.last_rank, static_cast<int>(column), c.wait_caused_ns});
  }
  const auto by_column = [](const WaitCell& a, const WaitCell& b) {
    return std::tie(a.column, a.rank) < std::tie(b.column, b.rank);
  };
  const auto combine = [](std::vector<WaitCell>& cells, std::size_t from) {
    std::size_t out = from;
    for (std::size_t i = from; i < cells.size(); ++i) {
      if (out > from && cells[out - 1].rank == cells[i].rank &&
          cells[out - 1].column == cells[i].column) {
        add_saturating(cells[out - 1].wait_caused_ns, cells[i].wait_caused_ns);
      } else {
        cells[out++] = cells[i];
      }
    }
    cells.resize(out);
  };
  std::sort(mine.begin(), mine.end(), by_column);
  combine(mine, 0);
  std::size_t at = 0;
  for (std::size_t batch = 0; batch < kColumnBatches; ++batch) {
    const auto end = static_cast<int>((batch + 1) * columns / kColumnBatches);
    const std::size_t first = at;
    while (at < mine.size() && mine[at].column < end) ++at;
    const std::vector<std::string> all = exchange.gather(
        wire::encode(std::vector<WaitCell>(mine.begin() + static_cast<std::ptrdiff_t>(first),
                                           mine.begin() + static_cast<std::ptrdiff_t>(at))));
    if (exchange.rank() != 0) continue;
    const std::size_t from = rep.wait_cells.size();
    for (const std::string& bytes : all) {
      for (const WaitCell& cell : wire::decode<std::vector<WaitCell>>(bytes)) {
        rep.wait_cells.push_back(cell);
      }
    }
    std::sort(rep.wait_cells.begin() + static_cast<std::ptrdiff_t>(from), rep.wait_cells.end(),
              by_column);
    combine(rep.wait_cells, from);
  }
  std::sort(rep.wait_cells.begin(), rep.wait_cells.end(), [](const WaitCell& a, const WaitCell& b) {
    return std::tie(a.rank, a.column) < std::tie(b.rank, b.column);
  });
}

}  // namespace

InstanceFindings tabulate_instances(const std::vector<CollectiveInstance>& owned, Report& rep,
                                    ReduceExchange& exchange) {
  const bool root = exchange.rank() == 0;
  Digest d;
  for (const std::string& bytes : exchange.gather(wire::encode(digest_of(owned)))) {
    d.merge(wire::decode<Digest>(bytes));
  }
  // The size keys, numbered as process 0 lists them, name the lists of instance times.
  std::vector<SizeKey> key_list;
  for (const auto& [key, s] : d.sizes) key_list.push_back(key);
  Answerer answerer;
  {
    std::map<SizeKey, std::uint32_t> list_of;
    for (SizeKey& key :
         wire::decode<std::vector<SizeKey>>(exchange.broadcast(wire::encode(key_list)))) {
      list_of.emplace(std::move(key), static_cast<std::uint32_t>(list_of.size()));
    }
    answerer.times.resize(list_of.size());
    for (const CollectiveInstance& c : owned) {
      answerer.times[list_of.at({c.collective, c.comm_size, c.bytes, c.in_place})].push_back(
          ordered(c.time_ns()));
      answerer.keys.emplace_back(ordered(c.first_start_ns), c.order);
    }
    for (std::vector<std::uint64_t>& t : answerer.times) std::sort(t.begin(), t.end());
    std::sort(answerer.keys.begin(), answerer.keys.end());
  }
  // Round 1: the percentiles of each size key's times, and the first start at each bound of the
  // heatmap's columns (columns of equal counts in first-start order).
  const auto n = static_cast<std::size_t>(d.total);
  const std::size_t columns = std::min(n, kWaitColumns);
  std::vector<Question> questions;
  if (root) {
    std::uint32_t list = 0;
    for (const auto& [key, s] : d.sizes) {
      for (const double p : {50.0, 95.0}) {
        questions.push_back({list, 0, ordered(s.min_time_ns), ordered(s.max_time_ns),
                             percentile_index(s.count, p) + 1});
      }
      ++list;
    }
    for (std::size_t c = 0; c < columns; ++c) {
      for (const std::size_t at : {c * n / columns, (c + 1) * n / columns - 1}) {
        questions.push_back({kStarts, 0, ordered(d.min_start_ns), ordered(d.max_start_ns), at + 1});
      }
    }
  }
  bisect(questions, answerer, exchange);
  // Round 2: where instances share a first start, the reading order places them; each column
  // from the second on begins at the (first start, order) pair found here.
  std::vector<Question> orders;
  const std::size_t percentiles = 2 * d.sizes.size();
  if (root) {
    for (std::size_t c = 1; c < columns; ++c) {
      orders.push_back({kStartOrders, questions[percentiles + 2 * c].lo, d.min_order, d.max_order,
                        c * n / columns + 1});
    }
  }
  bisect(orders, answerer, exchange);
  answerer = Answerer{};
  std::vector<std::pair<std::uint64_t, std::uint64_t>> bounds;
  {
    for (std::size_t c = 1; c < columns; ++c) {
      bounds.emplace_back(questions[percentiles + 2 * c].lo, orders[c - 1].lo);
    }
    bounds = wire::decode<decltype(bounds)>(exchange.broadcast(wire::encode(bounds)));
  }
  gather_cells(owned, bounds, bounds.size() + 1, rep, exchange);
  if (!root) return {};

  rep.instances_total = d.total;
  rep.incomplete_instances = d.incomplete;
  rep.inconsistent_instances = d.inconsistent;
  add_collective_rows(rep, d, questions);
  add_group_rows(rep, d);
  for (std::size_t c = 0; c < columns; ++c) {
    WaitColumn w;
    w.first = static_cast<std::int64_t>(c * n / columns);
    w.last = static_cast<std::int64_t>((c + 1) * n / columns - 1);
    w.first_start_ns = unordered(questions[percentiles + 2 * c].lo);
    w.last_start_ns = unordered(questions[percentiles + 2 * c + 1].lo);
    rep.wait_columns.push_back(w);
  }
  std::sort(d.worst.begin(), d.worst.end(), report_fields::waited_longer);
  if (d.worst.size() > kReportWorstInstances) d.worst.resize(kReportWorstInstances);
  rep.instances = std::move(d.worst);
  InstanceFindings found;
  found.warnings = instance_warnings(d);
  found.alltoall_waits = std::move(d.alltoall_waits);
  return found;
}

}  // namespace commprof
