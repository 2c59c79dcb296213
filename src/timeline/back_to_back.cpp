// SPDX-License-Identifier: MIT
#include "src/timeline/back_to_back.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace commprof {
namespace {

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

// One call of a communicator, timed (`op`) or listed untimed; its communicator by number.
struct Call {
  std::uint32_t comm = 0;
  std::int64_t seq = 0;
  std::string_view collective;
  std::uint64_t bytes = 0;
  int in_place = -1;
  const OpRecord* op = nullptr;
  bool same_kind(const Call& o) const {
    return collective == o.collective && bytes == o.bytes && in_place == o.in_place;
  }
};

// Every call in (communicator, number) order, one per number (the timed one where a number is
// listed twice), each with the run of consecutive numbers of one kind it belongs to: two calls
// have only like calls between them exactly when they are of one run.
struct Numbered {
  std::vector<Call> calls;
  std::vector<std::uint32_t> run;
};

Numbered number_calls(const std::vector<OpRecord>& ops, const std::vector<NumberedKind>& untimed) {
  std::unordered_map<std::string_view, std::uint32_t> comm_ids;
  const auto id = [&](std::string_view comm) {
    return comm_ids.emplace(comm, static_cast<std::uint32_t>(comm_ids.size())).first->second;
  };
  Numbered n;
  n.calls.reserve(ops.size() + untimed.size());
  for (const NumberedKind& u : untimed)
    n.calls.push_back({id(u.comm), u.seq, u.collective, u.bytes, u.in_place, nullptr});
  for (const OpRecord& op : ops) {
    if (op.category != Category::kComm || op.collective.empty() || op.seq < 0) continue;
    n.calls.push_back({id(op.comm), op.seq, op.collective, op.bytes, op.in_place, &op});
  }
  std::sort(n.calls.begin(), n.calls.end(), [](const Call& a, const Call& b) {
    if (a.comm != b.comm) return a.comm < b.comm;
    if (a.seq != b.seq) return a.seq < b.seq;
    return a.op != nullptr && b.op == nullptr;  // the timed one first
  });
  n.calls.erase(
      std::unique(n.calls.begin(), n.calls.end(),
                  [](const Call& a, const Call& b) { return a.comm == b.comm && a.seq == b.seq; }),
      n.calls.end());
  n.run.resize(n.calls.size());
  for (std::size_t i = 1; i < n.calls.size(); ++i) {
    const Call& a = n.calls[i - 1];
    const Call& b = n.calls[i];
    const bool joins = a.comm == b.comm && b.seq == a.seq + 1 && a.same_kind(b);
    n.run[i] = joins ? n.run[i - 1] : n.run[i - 1] + 1;
  }
  return n;
}

}  // namespace

std::vector<BackToBackSums> back_to_back_runs(const std::vector<OpRecord>& ops,
                                              const std::vector<NumberedKind>& untimed) {
  const Numbered n = number_calls(ops, untimed);
  std::map<std::tuple<std::string, int, std::uint64_t, int>, BackToBackSums> sums;
  for (std::size_t begin = 0; begin < n.calls.size();) {
    // One communicator's timed calls, in their order, with where each is in n.calls.
    std::size_t end = begin;
    std::vector<const OpRecord*> calls;
    std::vector<std::size_t> at;
    for (; end < n.calls.size() && n.calls[end].comm == n.calls[begin].comm; ++end) {
      if (n.calls[end].op == nullptr) continue;
      calls.push_back(n.calls[end].op);
      at.push_back(end);
    }
    begin = end;
    const std::vector<bool> not_own = lapped(calls);
    for (std::size_t i = 0; i + 1 < calls.size(); ++i) {
      const OpRecord& a = *calls[i];
      const OpRecord& b = *calls[i + 1];
      if (not_own[i] || not_own[i + 1] || n.run[at[i]] != n.run[at[i + 1]] ||
          a.comm_size != b.comm_size)
        continue;
      const std::int64_t span = b.start_ns - a.start_ns;
      const std::int64_t apart = b.seq - a.seq;
      const std::int64_t kernel = a.end_ns - a.start_ns;
      if (span <= 0 || kernel <= 0 ||
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
