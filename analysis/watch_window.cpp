// SPDX-License-Identifier: MIT
#include "analysis/watch_window.hpp"

#include <algorithm>
#include <cmath>

#include "src/collective/collective_kind.hpp"
#include "src/collective/collective_spec.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

// Bins 2% wide: the width bounds a percentile's error to half of it.
constexpr double kBinRatio = 1.02;

std::uint64_t bucket_of(std::uint64_t bytes) {
  if (bytes == 0) return 0;
  std::uint64_t b = 1;
  while (b <= bytes / 2) b *= 2;
  return b;
}

// The q-quantile's bin of `bins` (nearest rank over `count` calls).
double quantile_ns(const std::map<std::int32_t, std::uint32_t>& bins, std::int64_t count,
                   double q) {
  const auto rank = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(count)));
  std::int64_t seen = 0;
  for (const auto& [bin, n] : bins) {
    seen += n;
    if (seen >= std::max<std::int64_t>(rank, 1)) return watch_bin_ns(bin);
  }
  return bins.empty() ? 0.0 : watch_bin_ns(bins.rbegin()->first);
}

// busbw at the median: the calls' mean S moved in the p50 time, times the bus factor.
double busbw_at(const WatchKey& key, const WatchPart::Calls& c, double p50_ns) {
  if (c.count == 0 || p50_ns <= 0 || c.comm_size < 2) return -1;
  try {
    const CollectiveKind kind = parse_collective(key.collective);
    const double mean_bytes = static_cast<double>(c.bytes) / static_cast<double>(c.count);
    return mean_bytes / p50_ns * collective_spec(kind).busbw_factor(c.comm_size);
  } catch (const ConfigError&) {
    return -1;  // a name NCCL has and we do not (sendrecv pairs, broadcast variants): no factor
  }
}

}  // namespace

std::int32_t watch_bin_of(double ns) {
  return static_cast<std::int32_t>(std::floor(std::log(std::max(ns, 1.0)) / std::log(kBinRatio)));
}

double watch_bin_ns(std::int32_t bin) { return std::pow(kBinRatio, bin + 0.5); }

void WatchPart::add(int rank, std::int64_t clock_offset_ns, const OpView& op) {
  WatchKey key{std::string(op.comm), std::string(op.collective), bucket_of(op.bytes)};
  Calls& c = calls[key];
  ++c.count;
  c.bytes += op.bytes;
  c.comm_size = std::max(c.comm_size, op.comm_size);
  ++c.bins[watch_bin_of(static_cast<double>(op.duration_ns()))];
  if (op.seq < 0 || op.comm.empty()) return;
  Latest& l = instances[{key.comm, op.seq}];
  const std::int64_t start = op.start_ns + clock_offset_ns;
  if (l.ranks++ == 0 || start > l.start_ns) {
    l.start_ns = start;
    l.rank = rank;
  }
  l.key = std::move(key);
}

void WatchPart::merge(WatchPart&& other) {
  for (auto& [key, c] : other.calls) {
    Calls& mine = calls[key];
    mine.count += c.count;
    mine.bytes += c.bytes;
    mine.comm_size = std::max(mine.comm_size, c.comm_size);
    for (const auto& [bin, n] : c.bins) mine.bins[bin] += n;
  }
  for (auto& [id, l] : other.instances) {
    auto [it, fresh] = instances.try_emplace(id, l);
    if (fresh) continue;
    Latest& mine = it->second;
    if (l.start_ns > mine.start_ns) {
      mine.start_ns = l.start_ns;
      mine.rank = l.rank;
    }
    mine.ranks += l.ranks;
  }
  for (WatchStall& s : other.stalls) stalls.push_back(std::move(s));
  for (const auto& [rank, s] : other.quiet_s) quiet_s[rank] = s;
  for (const auto& [rank, t] : other.updated_s) updated_s[rank] = t;
  files += other.files;
  for (std::string& p : other.problems) problems.push_back(std::move(p));
}

std::vector<WatchRow> watch_rows(const WatchPart& part) {
  // Per key: how often each rank was the last to start an instance seen by two ranks or more.
  std::map<WatchKey, std::map<int, std::int64_t>> last;
  for (const auto& [id, l] : part.instances) {
    if (l.ranks >= 2) ++last[l.key][l.rank];
  }
  std::vector<WatchRow> rows;
  for (const auto& [key, c] : part.calls) {
    WatchRow r;
    r.comm = key.comm;
    r.collective = key.collective;
    r.bucket_bytes = key.bucket_bytes;
    r.calls = c.count;
    r.bytes = c.bytes;
    r.p50_ns = quantile_ns(c.bins, c.count, 0.50);
    r.p95_ns = quantile_ns(c.bins, c.count, 0.95);
    r.p99_ns = quantile_ns(c.bins, c.count, 0.99);
    r.busbw_gbps = busbw_at(key, c, r.p50_ns);
    if (const auto it = last.find(key); it != last.end()) {
      for (const auto& [rank, n] : it->second) {
        if (n > r.times_last) {  // ties: the lowest rank, as the map walks them
          r.times_last = n;
          r.slowest_rank = rank;
        }
      }
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace commprof
