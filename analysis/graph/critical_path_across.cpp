// SPDX-License-Identifier: MIT
#include "analysis/graph/critical_path_across.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "analysis/byte_codec.hpp"
#include "analysis/graph/critical_report.hpp"
#include "analysis/graph/graph_times.hpp"
#include "analysis/graph/step_graph.hpp"
#include "analysis/reduction_wire.hpp"
#include "analysis/wire_codec.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {
namespace {

// Rounds of the exchange of packed steps: each process then holds, besides what it has not sent
// yet, about an eighth of its own share as received steps.
constexpr int kRounds = 8;

}  // namespace
// The packer's types have a name of their own: CriticalPathPacks::State, visible outside this
// file, holds them.
namespace critical_pack {

// The names, collectives and communicators of one process's ops, each sent once a round.
class Strings {
 public:
  std::uint64_t id(const std::string& s) {
    const auto [it, fresh] = ids_.try_emplace(s, list_.size());
    if (fresh) list_.push_back(s);
    return it->second;
  }
  void write(std::string& out) const {
    put_varint(out, list_.size());
    for (const std::string& s : list_) put_varint_text(out, s);
  }

 private:
  std::vector<std::string> list_;
  std::unordered_map<std::string, std::uint64_t> ids_;
};

// One rank's share of a step graph (a graph holding that rank alone), packed.
static void pack_rank_step(std::string& out, const StepGraph& g, Strings& strings) {
  const GraphRank& r = g.ranks.front();
  put_signed_varint(out, r.rank);
  put_signed_varint(out, r.start_ns);
  put_varint(out, g.ops.size());
  put_varint(out, static_cast<std::uint64_t>(g.ops_with_waits));
  put_varint(out, static_cast<std::uint64_t>(g.transfers_without_peers));
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    put_varint(out, static_cast<std::uint64_t>(op.category));
    put_varint(out, strings.id(op.name));
    put_varint(out, strings.id(op.collective));
    put_varint(out, strings.id(op.comm));
    put_signed_varint(out, op.comm_size);
    put_signed_varint(out, op.seq);
    put_signed_varint(out, op.start_ns - r.start_ns);
    put_signed_varint(out, op.end_ns - op.start_ns);
    put_varint(out, op.preds.size());
    for (const int p : op.preds) put_signed_varint(out, p - static_cast<std::int64_t>(i));
    put_varint(out, op.send_to.size());
    for (const std::int32_t to : op.send_to) put_signed_varint(out, to);
    put_varint(out, op.recv_from.size());
    for (const std::int32_t from : op.recv_from) put_signed_varint(out, from);
  }
}

// Appends the rank steps packed in `in` to `g`, as StepGraphBuilder::add would have.
static void unpack_rank_steps(VarintReader& in, const std::vector<std::string_view>& strings,
                              StepGraph& g, std::unordered_set<int>& ranks) {
  auto text = [&strings](std::uint64_t id) {
    if (id >= strings.size())
      throw Error("critical path message names string " + std::to_string(id));
    return std::string(strings[id]);
  };
  while (!in.done()) {
    GraphRank r;
    r.rank = in.get_int();
    r.start_ns = in.get_signed();
    r.first_op = static_cast<int>(g.ops.size());
    r.ops = static_cast<int>(in.get());
    if (!ranks.insert(r.rank).second) {
      throw Error("rank " + std::to_string(r.rank) + " has step " + std::to_string(g.step) +
                  " twice");
    }
    g.ranks.push_back(r);
    g.ops_with_waits += static_cast<std::int64_t>(in.get());
    g.transfers_without_peers += static_cast<std::int64_t>(in.get());
    for (int i = 0; i < r.ops; ++i) {
      GraphOp op;
      op.rank = r.rank;
      op.index = i;
      op.category = static_cast<Category>(in.get());
      op.name = text(in.get());
      op.collective = text(in.get());
      op.comm = text(in.get());
      op.comm_size = in.get_int();
      op.seq = in.get_signed();
      op.start_ns = r.start_ns + in.get_signed();
      op.end_ns = op.start_ns + in.get_signed();
      op.preds.resize(in.get());
      for (int& p : op.preds) p = r.first_op + i + in.get_int();
      op.send_to.resize(in.get());
      for (std::int32_t& to : op.send_to) to = in.get_int();
      op.recv_from.resize(in.get());
      for (std::int32_t& from : op.recv_from) from = in.get_int();
      g.ops.push_back(std::move(op));
    }
  }
}

// Reads one process's block of files into packed steps, by step index.
class StepPacker final : public RankStepSink {
 public:
  explicit StepPacker(Strings& strings) : strings_(strings) {}
  void header(const RankTimeline& h) override {
    rank_ = h.rank;
    offset_ = h.clock_offset_ns;
    pending_.clear();
  }
  void step(const StepView& step) override {
    if (step.warmup || step.ops == nullptr || step.ops->empty()) return;
    const auto [at, fresh] = pending_.try_emplace(step.index);
    if (!fresh) {
      throw Error("rank " + std::to_string(rank_) + " has step " + std::to_string(step.index) +
                  " twice");
    }
    // One graph's storage for every rank step packed: a fresh one was an allocation and its
    // growth for each of them (a quarter of the packing's time).
    StepGraph& g = scratch_;
    g.step = step.index;
    g.ranks.clear();
    g.ops.clear();
    g.collectives.clear();
    g.ops_with_waits = g.incomplete = g.unmatched_transfers = g.transfers_without_peers = 0;
    append_rank_step(g, rank_, offset_, step);
    pack_rank_step(at->second, g, strings_);
  }
  void end() override {
    for (auto& [index, bytes] : pending_) steps_[index] += bytes;
    pending_.clear();
  }
  void restart() override { pending_.clear(); }
  /// The file's packed steps, read whole, instead of end().
  std::map<int, std::string> take_pending() { return std::exchange(pending_, {}); }
  std::map<int, std::string>& steps() { return steps_; }

 private:
  Strings& strings_;
  int rank_ = 0;
  std::int64_t offset_ = 0;
  std::map<int, std::string> pending_;  // this file's, until it was read whole
  std::map<int, std::string> steps_;
  StepGraph scratch_;
};

}  // namespace critical_pack
namespace {
using critical_pack::StepPacker;
using critical_pack::Strings;
using critical_pack::unpack_rank_steps;

// The first problem in the files' order, of those found on this process: (order, message).
using Problem = std::pair<std::uint64_t, std::string>;
constexpr std::uint64_t kNoProblem = std::numeric_limits<std::uint64_t>::max();

// Process 0 hears every process's first problem and tells them all the first of all ("": none).
std::string first_problem(const Problem& mine, ReduceExchange& exchange) {
  Problem first{kNoProblem, ""};
  for (const std::string& bytes : exchange.gather(wire::encode(mine))) {
    Problem theirs = wire::decode<Problem>(bytes);
    if (theirs.first < first.first) first = std::move(theirs);
  }
  return exchange.broadcast(first.second);
}

// What process `from` sent this owner in one round: its strings, then (step, packed ranks).
struct Received {
  std::vector<std::string_view> strings;
  std::map<int, std::string_view> steps;
};

Received read_round(const std::string& bytes) {
  Received r;
  VarintReader in(bytes, "critical path message");
  // The packed steps are varints (byte_codec.hpp, for size), led by the version of all.
  if (const std::uint64_t version = in.get(); version != wire::kVersion) {
    throw Error("critical path message of format version " + std::to_string(version) +
                ", but this commprof reads version " + std::to_string(wire::kVersion));
  }
  r.strings.resize(in.get());
  for (std::string_view& s : r.strings) s = in.get_text();
  while (!in.done()) {
    const int step = in.get_int();
    r.steps[step] = in.get_text();
  }
  return r;
}

}  // namespace

struct CriticalPathPacks::State {
  Strings strings;
  StepPacker packer{strings};
  std::uint32_t file = 0;
  bool failed = false;  // the packer's own problem with this file
  // Each file read whole, in reading order, and the packer's problems (file, message).
  std::vector<std::pair<std::uint32_t, std::map<int, std::string>>> files;
  std::vector<std::pair<std::uint32_t, std::string>> problems;
};

CriticalPathPacks::CriticalPathPacks() : state_(std::make_unique<State>()) {}
CriticalPathPacks::~CriticalPathPacks() = default;

void CriticalPathPacks::begin_file(std::uint32_t index) {
  state_->file = index;
  state_->failed = false;
  state_->packer.restart();
}

void CriticalPathPacks::header(const RankTimeline& header) { state_->packer.header(header); }

void CriticalPathPacks::step(const StepView& step) {
  if (state_->failed) return;
  try {
    state_->packer.step(step);
  } catch (const std::exception& e) {
    state_->failed = true;
    state_->problems.emplace_back(state_->file, e.what());
  }
}

void CriticalPathPacks::end() {
  if (!state_->failed) state_->files.emplace_back(state_->file, state_->packer.take_pending());
}

void CriticalPathPacks::restart() {
  // Delivered again (the complete reader after the one-pass one): what this delivery found
  // does not count.
  if (state_->failed && !state_->problems.empty() && state_->problems.back().first == state_->file)
    state_->problems.pop_back();
  state_->failed = false;
  state_->packer.restart();
}

void add_critical_paths_across(Report& report, const std::vector<std::string>& files,
                               ReduceExchange& exchange, CriticalPathPacks& packs) {
  const int processes = exchange.size();
  const int me = exchange.rank();
  // The files the reduction could not use (unreadable, or a rank read twice) are left out.
  std::unordered_set<std::string> skipped;
  {
    std::vector<std::string> mine;
    if (me == 0) {
      for (const FileProblem& p : report.problems) mine.push_back(p.file);
    }
    for (std::string& file :
         wire::decode<std::vector<std::string>>(exchange.broadcast(wire::encode(mine)))) {
      skipped.insert(std::move(file));
    }
  }

  CriticalPathPacks::State& state = *packs.state_;
  Strings& strings = state.strings;
  StepPacker& packer = state.packer;
  Problem problem{kNoProblem, ""};
  const std::size_t n = files.size();
  // The files in reading order, those the reduction left out dropped; the first problem of the
  // packer's with a file it kept, as reading them one by one would have stopped at.
  for (const auto& [index, message] : state.problems) {
    if (index < n && skipped.count(files[index]) == 0 && index < problem.first)
      problem = {index, message};
  }
  for (auto& [index, steps] : state.files) {
    if (index >= problem.first) break;
    if (index < n && skipped.count(files[index]) != 0) continue;
    for (auto& [step, bytes] : steps) packer.steps()[step] += bytes;
    std::map<int, std::string>().swap(steps);
  }
  state.files.clear();
  for (auto& [index, bytes] : packer.steps()) bytes.shrink_to_fit();
  std::string failed = first_problem(problem, exchange);
  if (!failed.empty()) {
    if (me == 0) report.warnings.push_back("no critical path: " + failed);
    return;
  }

  std::vector<CriticalStepSummary> summaries;
  StepGraph g;
  problem = {kNoProblem, ""};
  std::map<int, std::string>& mine = packer.steps();
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::string> to(static_cast<std::size_t>(processes));
    for (std::string& bytes : to) {
      put_varint(bytes, wire::kVersion);
      strings.write(bytes);
    }
    for (auto it = mine.begin(); it != mine.end();) {
      const int step = it->first;
      const long long s = step < 0 ? -static_cast<long long>(step) : step;
      if ((s / processes) % kRounds != round) {
        ++it;
        continue;
      }
      std::string& out = to[static_cast<std::size_t>(s % processes)];
      put_signed_varint(out, step);
      put_varint_text(out, it->second);
      it = mine.erase(it);
    }
    const std::vector<std::string> from = exchange.all_to_all(to);
    to.clear();
    std::vector<Received> received;
    std::map<int, std::vector<std::size_t>> owned;  // step -> the sources that sent it
    try {
      for (std::size_t q = 0; q < from.size(); ++q) {
        received.push_back(read_round(from[q]));
        for (const auto& [step, bytes] : received.back().steps) owned[step].push_back(q);
      }
      for (const auto& [step, sources] : owned) {
        // One graph's storage for every step: a large step's ops (491,520 at 16,384 ranks of
        // 30 ops) would otherwise be fresh pages to fault in, step after step.
        g.step = step;
        g.ranks.clear();
        g.ops.clear();
        g.collectives.clear();
        g.ops_with_waits = g.incomplete = g.unmatched_transfers = g.transfers_without_peers = 0;
        std::unordered_set<int> ranks;
        for (const std::size_t q : sources) {
          VarintReader in(received[q].steps.at(step), "critical path message");
          unpack_rank_steps(in, received[q].strings, g, ranks);
        }
        complete_step_graph(g);
        summaries.push_back(summarize_critical_step(g, measured_times(g)));
      }
    } catch (const std::exception& e) {
      if (problem.first == kNoProblem) problem = {n, e.what()};
    }
  }
  failed = first_problem(problem, exchange);
  const std::vector<std::string> all = exchange.gather(wire::encode(summaries));
  summaries.clear();
  if (me != 0) return;
  if (!failed.empty()) {
    report.warnings.push_back("no critical path: " + failed);
    return;
  }
  std::map<int, CriticalStepSummary> by_step;
  for (const std::string& bytes : all) {
    wire::Reader in(bytes);
    in.each<CriticalStepSummary>([&](CriticalStepSummary s) {
      const int step = s.row.step;
      by_step.emplace(step, std::move(s));
    });
    in.expect_end();
  }
  CriticalPathRows rows;
  for (auto& [step, s] : by_step) rows.add(std::move(s));
  rows.finish(report);
}

}  // namespace commprof
