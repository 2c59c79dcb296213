// SPDX-License-Identifier: MIT
#include "src/timeline/back_to_back.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace commprof {
namespace {

using Kind = std::tuple<std::string, std::uint64_t, int>;  // collective, bytes, in place

// Which later timed calls a call is compared with: the ring holds 64 works a channel, so a
// lapped call's times are those of a call 64 (or 128, ...) works on: the calls up to four laps
// on, and at least the next eight timed ones (one call in K timed: the next is K calls on).
constexpr std::int64_t kRingWorks = 64;
constexpr std::int64_t kLaps = 4;
constexpr std::size_t kLaterCalls = 8;

// Calls whose GPU times are a later call's (see the header): the same start and end, or a start
// after the later call's start (one stream runs a communicator's calls in their order).
std::vector<bool> lapped(const std::vector<const OpRecord*>& ops) {
  std::vector<bool> out(ops.size(), false);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (std::size_t j = i + 1; j < ops.size() && (j <= i + kLaterCalls ||
                                                   ops[j]->seq <= ops[i]->seq + kLaps * kRingWorks);
         ++j) {
      const bool same = ops[j]->start_ns == ops[i]->start_ns && ops[j]->end_ns == ops[i]->end_ns;
      if (same || ops[j]->start_ns < ops[i]->start_ns) out[i] = true;
    }
  }
  return out;
}

}  // namespace

std::vector<BackToBackSums> back_to_back_runs(const std::vector<OpRecord>& ops,
                                              const std::vector<NumberedKind>& untimed) {
  std::map<std::pair<std::string, std::int64_t>, Kind> kind_of;  // (comm, seq) -> kind
  for (const NumberedKind& u : untimed)
    kind_of[{u.comm, u.seq}] = {u.collective, u.bytes, u.in_place};
  std::map<std::string, std::vector<const OpRecord*>> timed;  // comm -> its timed calls
  for (const OpRecord& op : ops) {
    if (op.category != Category::kComm || op.collective.empty() || op.seq < 0) continue;
    kind_of[{op.comm, op.seq}] = {op.collective, op.bytes, op.in_place};
    timed[op.comm].push_back(&op);
  }
  std::map<std::tuple<std::string, int, std::uint64_t, int>, BackToBackSums> sums;
  for (auto& [comm, calls] : timed) {
    std::sort(calls.begin(), calls.end(),
              [](const OpRecord* a, const OpRecord* b) { return a->seq < b->seq; });
    const std::vector<bool> not_own = lapped(calls);
    for (std::size_t i = 0; i + 1 < calls.size(); ++i) {
      const OpRecord& a = *calls[i];
      const OpRecord& b = *calls[i + 1];
      if (not_own[i] || not_own[i + 1] || a.collective != b.collective || a.bytes != b.bytes ||
          a.in_place != b.in_place || a.comm_size != b.comm_size || b.seq <= a.seq)
        continue;
      const Kind kind{a.collective, a.bytes, a.in_place};
      bool alike = true;
      for (std::int64_t q = a.seq + 1; q < b.seq && alike; ++q) {
        const auto k = kind_of.find({comm, q});
        alike = k != kind_of.end() && k->second == kind;
      }
      const std::int64_t span = b.start_ns - a.start_ns;
      const std::int64_t apart = b.seq - a.seq;
      const std::int64_t kernel = a.end_ns - a.start_ns;
      if (!alike || span <= 0 || kernel <= 0 ||
          static_cast<double>(span) >
              kBackToBackMaxRatio * static_cast<double>(kernel) * static_cast<double>(apart))
        continue;
      BackToBackSums& s = sums[{a.collective, a.comm_size, a.bytes, a.in_place}];
      s.collective = a.collective;
      s.comm_size = a.comm_size;
      s.bytes = a.bytes;
      s.in_place = a.in_place;
      ++s.pairs;
      s.calls += apart;
      s.span_ns += span;
    }
  }
  std::vector<BackToBackSums> out;
  for (auto& [key, s] : sums) out.push_back(std::move(s));
  return out;
}

nlohmann::ordered_json back_to_back_json(const std::vector<BackToBackSums>& sums) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const BackToBackSums& s : sums) {
    out.push_back({{"collective", s.collective},
                   {"comm_size", s.comm_size},
                   {"bytes", s.bytes},
                   {"pairs", s.pairs},
                   {"calls", s.calls},
                   {"span_ns", s.span_ns}});
    if (s.in_place >= 0) out.back()["in_place"] = s.in_place;
  }
  return out;
}

std::vector<BackToBackSums> back_to_back_from_json(const nlohmann::ordered_json& config) {
  std::vector<BackToBackSums> out;
  if (!config.is_object()) return out;
  const auto list = config.find("back_to_back");
  if (list == config.end() || !list->is_array()) return out;
  for (const auto& e : *list) {
    if (!e.is_object()) continue;
    BackToBackSums s;
    s.collective = e.value("collective", std::string());
    s.comm_size = e.value("comm_size", 0);
    s.bytes = e.value("bytes", std::uint64_t{0});
    s.in_place = e.value("in_place", -1);
    s.pairs = e.value("pairs", std::int64_t{0});
    s.calls = e.value("calls", std::int64_t{0});
    s.span_ns = e.value("span_ns", std::int64_t{0});
    if (s.calls > 0 && s.span_ns > 0 && !s.collective.empty()) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace commprof
