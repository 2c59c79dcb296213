// SPDX-License-Identifier: MIT
#include "support/timeline_diff.hpp"

#include <cstring>
#include <sstream>

namespace commprof::fuzz {
namespace {

// Streams both values; flops compare by bit pattern (exact, and -0.0 is not 0.0 in a file).
template <class T>
bool differ(std::ostringstream& out, const std::string& where, const T& x, const T& y) {
  if (x == y) return false;
  out << where << ": " << x << " vs " << y;
  return true;
}
bool differ(std::ostringstream& out, const std::string& where, double x, double y) {
  if (std::memcmp(&x, &y, sizeof x) == 0) return false;
  out.precision(17);
  out << where << ": " << x << " vs " << y;
  return true;
}
bool differ(std::ostringstream& out, const std::string& where, Category x, Category y) {
  return differ(out, where, static_cast<int>(x), static_cast<int>(y));
}

}  // namespace

std::string timeline_diff(const RankTimeline& a, const RankTimeline& b, bool with_config) {
  std::ostringstream out;
  if (differ(out, "rank", a.rank, b.rank) ||
      differ(out, "world_size", a.world_size, b.world_size) ||
      differ(out, "local_rank", a.local_rank, b.local_rank) ||
      differ(out, "host", a.host, b.host) || differ(out, "device", a.device, b.device) ||
      differ(out, "backend", a.backend, b.backend) ||
      differ(out, "clock_offset_ns", a.clock_offset_ns, b.clock_offset_ns) ||
      (with_config && differ(out, "config", a.config_json, b.config_json)) ||
      differ(out, "steps.size()", a.steps.size(), b.steps.size())) {
    return out.str();
  }
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const StepRecord& s = a.steps[i];
    const StepRecord& t = b.steps[i];
    const std::string w = "steps[" + std::to_string(i) + "]";
    if (differ(out, w + ".index", s.index, t.index) ||
        differ(out, w + ".warmup", s.warmup, t.warmup) ||
        differ(out, w + ".start_ns", s.start_ns, t.start_ns) ||
        differ(out, w + ".end_ns", s.end_ns, t.end_ns) ||
        differ(out, w + ".ops.size()", s.ops.size(), t.ops.size())) {
      return out.str();
    }
    for (std::size_t j = 0; j < s.ops.size(); ++j) {
      const OpRecord& o = s.ops[j];
      const OpRecord& p = t.ops[j];
      const std::string v = w + ".ops[" + std::to_string(j) + "]";
      if (differ(out, v + ".name", o.name, p.name) ||
          differ(out, v + ".category", o.category, p.category) ||
          differ(out, v + ".stream", o.stream, p.stream) ||
          differ(out, v + ".collective", o.collective, p.collective) ||
          differ(out, v + ".comm", o.comm, p.comm) ||
          differ(out, v + ".comm_size", o.comm_size, p.comm_size) ||
          differ(out, v + ".seq", o.seq, p.seq) || differ(out, v + ".bytes", o.bytes, p.bytes) ||
          differ(out, v + ".flops", o.flops, p.flops) ||
          differ(out, v + ".start_ns", o.start_ns, p.start_ns) ||
          differ(out, v + ".end_ns", o.end_ns, p.end_ns)) {
        return out.str();
      }
    }
  }
  return "";
}

}  // namespace commprof::fuzz
