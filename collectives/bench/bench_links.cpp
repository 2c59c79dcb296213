// SPDX-License-Identifier: MIT
#include "collectives/bench/bench_links.hpp"

namespace commprof {

std::vector<LinkSample> link_samples(const BenchReport& report) {
  bool one_host = true;
  for (const BenchRankInfo& r : report.ranks) one_host = one_host && r.host == report.ranks[0].host;
  std::vector<LinkSample> points;
  for (const BenchRow& row : report.rows) {
    if (!(row.time_avg_us > 0) || row.nranks < 2) continue;
    LinkSample p;
    p.collective = row.op;  // sendrecv: the model's point-to-point transfer
    p.link = one_host ? LinkClass::kIntraNode : LinkClass::kInterNode;
    p.ranks = row.nranks;
    p.bytes = row.sizes.bytes;
    p.time_us = row.time_avg_us;
    points.push_back(p);
  }
  return points;
}

}  // namespace commprof
