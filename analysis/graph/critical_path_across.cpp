// SPDX-License-Identifier: MIT
#include "analysis/graph/critical_path_across.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

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

// The names, collectives and communicators of one process's ops.
class Strings {
 public:
  std::uint64_t id(std::string_view s) {
    const auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    // A deque keeps each string where it is, so the map's key can view it.
    list_.emplace_back(s);
    ids_.emplace(list_.back(), list_.size() - 1);
    return list_.size() - 1;
  }
  const std::string& operator[](std::uint64_t id) const { return list_[id]; }
  void write(std::string& out) const {
    put_varint(out, list_.size());
    for (const std::string& s : list_) put_varint_text(out, s);
  }

 private:
  std::deque<std::string> list_;
  std::unordered_map<std::string_view, std::uint64_t> ids_;
};

// What an op is apart from its times, sequence number and the ranks it sends to or receives
// from: ops of one kind recur step after step and rank after rank, so a round sends each kind
// once (with the strings they name) and each op names its kind. An op packs to about 8 bytes
// instead of 20, and the packed steps are what a process holds until they are sent.
struct OpKind {
  std::uint64_t category = 0, name = 0, collective = 0, comm = 0;  // the strings' ids
  std::int64_t comm_size = 0;
  std::uint64_t has_seq = 0;                            // 0: its seq is -1 and not sent
  std::uint64_t preds = 0, send_to = 0, recv_from = 0;  // how many of each it has
  bool operator==(const OpKind& o) const {
    return std::tie(category, name, collective, comm, comm_size, has_seq, preds, send_to,
                    recv_from) == std::tie(o.category, o.name, o.collective, o.comm, o.comm_size,
                                           o.has_seq, o.preds, o.send_to, o.recv_from);
  }
};

struct OpKindHash {
  std::size_t operator()(const OpKind& k) const {
    std::uint64_t h = 0;
    for (const std::uint64_t v :
         {k.category, k.name, k.collective, k.comm, static_cast<std::uint64_t>(k.comm_size),
          k.has_seq, k.preds, k.send_to, k.recv_from}) {
      h = (h ^ v) * 0x100000001b3ull;  // FNV-1a's prime over whole numbers
    }
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// The kinds of one process's ops, each sent once a round with the strings they name.
class OpKinds {
 public:
  // The kind of `op` with `preds` waits, at `slot` (its place in its step): a rank's steps
  // mostly repeat their ops, so the kind last seen there is compared before anything is hashed.
  std::uint64_t id_at(std::size_t slot, const OpView& op, std::size_t preds) {
    if (slot >= recent_.size()) recent_.resize(slot + 1);
    Recent& r = recent_[slot];
    const std::uint64_t has_seq = op.seq != -1 ? 1 : 0;
    if (r.known && r.kind.category == static_cast<std::uint64_t>(op.category) &&
        r.kind.comm_size == op.comm_size && r.kind.has_seq == has_seq && r.kind.preds == preds &&
        r.kind.send_to == op.send_to.size() && r.kind.recv_from == op.recv_from.size() &&
        r.name == op.name && r.collective == op.collective && r.comm == op.comm) {
      return r.id;
    }
    OpKind k;
    k.category = static_cast<std::uint64_t>(op.category);
    k.name = strings_.id(op.name);
    k.collective = strings_.id(op.collective);
    k.comm = strings_.id(op.comm);
    k.comm_size = op.comm_size;
    k.has_seq = has_seq;
    k.preds = preds;
    k.send_to = op.send_to.size();
    k.recv_from = op.recv_from.size();
    const auto [it, fresh] = ids_.try_emplace(k, list_.size());
    if (fresh) list_.push_back(k);
    r.known = true;
    r.name = strings_[k.name];
    r.collective = strings_[k.collective];
    r.comm = strings_[k.comm];
    r.kind = k;
    r.id = it->second;
    return it->second;
  }
  void write(std::string& out) const {
    strings_.write(out);
    put_varint(out, list_.size());
    for (const OpKind& k : list_) {
      for (const std::uint64_t v :
           {k.category, k.name, k.collective, k.comm, k.has_seq, k.preds, k.send_to, k.recv_from})
        put_varint(out, v);
      put_signed_varint(out, k.comm_size);
    }
  }

 private:
  struct Recent {
    bool known = false;
    std::string_view name, collective, comm;  // views of strings_' own
    OpKind kind;
    std::uint64_t id = 0;
  };
  Strings strings_;
  std::vector<OpKind> list_;
  std::unordered_map<OpKind, std::uint64_t, OpKindHash> ids_;
  std::vector<Recent> recent_;
};

// A kind as a round's reader holds it: its strings as views into the message.
struct ReadKind {
  Category category = Category::kComp;
  std::string_view name, collective, comm;
  int comm_size = 0;
  bool has_seq = false;
  std::size_t preds = 0, send_to = 0, recv_from = 0;
};

// One rank's step as the graph would hold it (append_rank_step), packed straight from the
// file's views: the graph's ops would be strings and lists built only to be packed. Each op: its
// kind, its seq less the seq sent before it in the step (when it has one), its start less the
// start before it (the step's for the first), its duration, its waits less its own index, the
// ranks it sends to and receives from.
static void pack_rank_step(std::string& out, int rank, std::int64_t clock_offset_ns,
                           const StepView& step, const RankStepPreds& preds, OpKinds& kinds) {
  const std::vector<OpView>& ops = *step.ops;
  put_signed_varint(out, rank);
  put_signed_varint(out, step.start_ns + clock_offset_ns);
  put_varint(out, ops.size());
  put_varint(out, static_cast<std::uint64_t>(preds.ops_with_waits));
  put_varint(out, static_cast<std::uint64_t>(preds.transfers_without_peers));
  std::int64_t seq = 0;
  std::int64_t start = step.start_ns;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpView& op = ops[i];
    const auto p0 = static_cast<std::size_t>(preds.first[i]);
    const auto p1 = static_cast<std::size_t>(preds.first[i + 1]);
    // Room for the op's numbers at once (4 and its lists' elements), trimmed after.
    const std::size_t at = out.size();
    out.resize(at + kMaxVarintBytes * (4 + (p1 - p0) + op.send_to.size() + op.recv_from.size()));
    char* w = out.data() + at;
    w = write_varint(w, kinds.id_at(i, op, p1 - p0));
    if (op.seq != -1) {
      w = write_signed_varint(w, op.seq - seq);
      seq = op.seq;
    }
    w = write_signed_varint(w, op.start_ns - start);
    start = op.start_ns;
    w = write_signed_varint(w, op.end_ns - op.start_ns);
    for (std::size_t k = p0; k < p1; ++k) {
      w = write_signed_varint(w, preds.list[k] - static_cast<std::int64_t>(i));
    }
    for (const std::int32_t to : op.send_to) w = write_signed_varint(w, to);
    for (const std::int32_t from : op.recv_from) w = write_signed_varint(w, from);
    out.resize(static_cast<std::size_t>(w - out.data()));
  }
}

// Appends the rank step packed next in `in` to the first `used` ops of `g`, as
// StepGraphBuilder::add would have, and its times to `t`, as measured_times would: the ops `g`
// holds past those (a step before's) are reused, their storage kept.
static void unpack_rank_step(VarintReader& in, const std::vector<ReadKind>& kinds, StepGraph& g,
                             std::size_t& used, GraphTimes& t) {
  GraphRank r;
  r.rank = in.get_int();
  r.start_ns = in.get_signed();
  r.first_op = static_cast<int>(used);
  r.ops = static_cast<int>(in.get());
  g.ranks.push_back(r);
  g.ops_with_waits += static_cast<std::int64_t>(in.get());
  g.transfers_without_peers += static_cast<std::int64_t>(in.get());
  std::int64_t seq = 0;
  std::int64_t start = r.start_ns;
  for (int i = 0; i < r.ops; ++i) {
    const std::uint64_t id = in.get();
    if (id >= kinds.size())
      throw Error("critical path message names op kind " + std::to_string(id));
    const ReadKind& k = kinds[id];
    // Every field is set here, so that what a step before left in the op is gone (a field
    // added to GraphOp is set here too).
    GraphOp& op = used < g.ops.size() ? g.ops[used] : g.ops.emplace_back();
    ++used;
    op.rank = r.rank;
    op.index = i;
    op.category = k.category;
    op.name.assign(k.name);
    op.stream.clear();  // the path needs its waits, not its streams' names
    op.collective.assign(k.collective);
    op.comm.assign(k.comm);
    op.comm_size = k.comm_size;
    if (k.has_seq) seq += in.get_signed();
    op.seq = k.has_seq ? seq : -1;
    op.bytes = 0;
    op.flops = 0.0;
    start += in.get_signed();
    op.start_ns = start;
    op.end_ns = start + in.get_signed();
    t.start_ns.push_back(op.start_ns);
    t.end_ns.push_back(op.end_ns);
    op.preds.resize(k.preds);
    for (int& p : op.preds) p = r.first_op + i + in.get_int();
    op.collective_id = -1;
    op.send_to.resize(k.send_to);
    for (std::int32_t& to : op.send_to) to = in.get_int();
    op.recv_from.resize(k.recv_from);
    for (std::int32_t& from : op.recv_from) from = in.get_int();
    op.partners.clear();
  }
}

// Reads one process's block of files into packed steps, by step index.
class StepPacker final : public RankStepSink {
 public:
  explicit StepPacker(OpKinds& kinds) : kinds_(kinds) {}
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
    rank_step_preds(rank_, step, preds_);
    pack_rank_step(at->second, rank_, offset_, step, preds_, kinds_);
  }
  // A file's steps are taken whole (take_file, by CriticalPathPacks::end), to be led by the
  // file's place once the reduction has named the files it keeps: nothing to add here.
  void end() override {}
  void restart() override { pending_.clear(); }
  /// The file's packed steps, read whole, instead of end(): in one string of exactly their
  /// size, each step's index then its bytes (put_varint_text). Held until every file is read,
  /// a string per step would cost as much again as the bytes (its own size, the map's node,
  /// the room its growth left): 330 MiB a process instead of 170 at 16,384 ranks.
  std::string take_file() {
    std::size_t size = 0;
    for (const auto& [index, bytes] : pending_) size += 2 * kMaxVarintBytes + bytes.size();
    std::string out;
    out.reserve(size);
    for (const auto& [index, bytes] : pending_) {
      put_signed_varint(out, index);
      put_varint_text(out, bytes);
    }
    pending_.clear();
    out.shrink_to_fit();
    return out;
  }
  std::map<int, std::string>& steps() { return steps_; }

 private:
  OpKinds& kinds_;
  int rank_ = 0;
  std::int64_t offset_ = 0;
  std::map<int, std::string> pending_;  // this file's, until it was read whole
  std::map<int, std::string> steps_;
  RankStepPreds preds_;  // one's storage for every rank step packed
};

}  // namespace critical_pack
namespace {
using critical_pack::OpKinds;
using critical_pack::ReadKind;
using critical_pack::StepPacker;
using critical_pack::unpack_rank_step;

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

// What process `from` sent this owner in one round: its strings and op kinds, then (step,
// packed ranks).
struct Received {
  std::vector<ReadKind> kinds;
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
  std::vector<std::string_view> strings(in.get());
  for (std::string_view& s : strings) s = in.get_text();
  auto text = [&strings](std::uint64_t id) {
    if (id >= strings.size()) {
      throw Error("critical path message names string " + std::to_string(id) + " of " +
                  std::to_string(strings.size()));
    }
    return strings[id];
  };
  r.kinds.resize(in.get());
  for (ReadKind& k : r.kinds) {
    const std::uint64_t category = in.get();
    if (category > static_cast<std::uint64_t>(Category::kMem)) {
      throw Error("critical path message names category " + std::to_string(category));
    }
    k.category = static_cast<Category>(category);
    k.name = text(in.get());
    k.collective = text(in.get());
    k.comm = text(in.get());
    k.has_seq = in.get() != 0;
    k.preds = in.get();
    k.send_to = in.get();
    k.recv_from = in.get();
    k.comm_size = in.get_int();
  }
  while (!in.done()) {
    const int step = in.get_int();
    r.steps[step] = in.get_text();
  }
  return r;
}

// The critical path of `step`, owned here, from the packed ranks its sources sent this round:
// its graph built in `g` and its measured times in `t`, then summed up. One graph's storage
// serves every step: a large step's ops (491,520 at 16,384 ranks of 30 ops) would otherwise be
// fresh pages to fault in, step after step.
CriticalStepSummary owned_step_path(int step, const std::vector<std::size_t>& sources,
                                    const std::vector<Received>& received, StepGraph& g,
                                    GraphTimes& t) {
  g.step = step;
  g.ranks.clear();
  g.collectives.clear();
  std::size_t used = 0;
  g.ops_with_waits = g.incomplete = g.unmatched_transfers = g.transfers_without_peers = 0;
  t.start_ns.clear();
  t.end_ns.clear();
  // The ranks in the files' order, as one process reading every file adds them (ties in the
  // path go to the op added first): each source's are in that order, led by their file's
  // place, and the sources' chunks of files interleave, so they are merged.
  std::vector<VarintReader> in;
  using Next = std::pair<std::uint64_t, std::size_t>;  // (file, index in `in`)
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  for (const std::size_t q : sources) {
    in.emplace_back(received[q].steps.at(step), "critical path message");
    if (!in.back().done()) next.emplace(in.back().get(), in.size() - 1);
  }
  while (!next.empty()) {
    const std::size_t k = next.top().second;
    next.pop();
    unpack_rank_step(in[k], received[sources[k]].kinds, g, used, t);
    if (!in[k].done()) next.emplace(in[k].get(), k);
  }
  g.ops.resize(used);
  // Ranks sorted, as complete_step_graph keeps them: a rank sent twice is next to itself.
  std::sort(g.ranks.begin(), g.ranks.end(),
            [](const GraphRank& a, const GraphRank& b) { return a.rank < b.rank; });
  for (std::size_t k = 1; k < g.ranks.size(); ++k) {
    if (g.ranks[k].rank == g.ranks[k - 1].rank) {
      throw Error("rank " + std::to_string(g.ranks[k].rank) + " has step " + std::to_string(step) +
                  " twice");
    }
  }
  complete_step_graph(g);
  return summarize_critical_step(g, t);
}

// Calls f(step, bytes) for each step packed in a file's string (StepPacker::take_file).
template <class F>
void each_packed_step(const std::string& file, const F& f) {
  VarintReader in(file, "packed steps");
  while (!in.done()) {
    const int step = in.get_int();
    f(step, in.get_text());
  }
}

// The rank steps of the files `kept` keeps, into `packed` by step, each led by its file's
// place; each file's string is freed once read. Sized first, so that no string grows past
// what it holds.
template <class Kept>
void by_step(std::vector<std::pair<std::uint32_t, std::string>>& files,
             std::map<int, std::string>& packed, const Kept& kept) {
  std::map<int, std::size_t> sizes;
  for (const auto& [index, file] : files) {
    if (!kept(index)) continue;
    each_packed_step(file, [&](int step, std::string_view bytes) {
      sizes[step] += kMaxVarintBytes + bytes.size();
    });
  }
  for (const auto& [step, size] : sizes) packed[step].reserve(size);
  for (auto& [index, file] : files) {
    if (kept(index)) {
      each_packed_step(file, [&, i = index](int step, std::string_view bytes) {
        std::string& out = packed[step];
        put_varint(out, i);
        out += bytes;
      });
    }
    std::string().swap(file);
  }
  files.clear();
}

}  // namespace

struct CriticalPathPacks::State {
  OpKinds kinds;
  StepPacker packer{kinds};
  std::uint32_t file = 0;
  bool failed = false;  // the packer's own problem with this file
  // Each file read whole, in reading order, and the packer's problems (file, message).
  std::vector<std::pair<std::uint32_t, std::string>> files;  // StepPacker::take_file's
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
  if (!state_->failed) state_->files.emplace_back(state_->file, state_->packer.take_file());
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
  OpKinds& kinds = state.kinds;
  StepPacker& packer = state.packer;
  Problem problem{kNoProblem, ""};
  const std::size_t n = files.size();
  // The files in reading order, those the reduction left out dropped; the first problem of the
  // packer's with a file it kept, as reading them one by one would have stopped at.
  for (const auto& [index, message] : state.problems) {
    if (index < n && skipped.count(files[index]) == 0 && index < problem.first)
      problem = {index, message};
  }
  by_step(state.files, packer.steps(), [&](std::uint32_t index) {
    return index < problem.first && (index >= n || skipped.count(files[index]) == 0);
  });
  std::string failed = first_problem(problem, exchange);
  if (!failed.empty()) {
    if (me == 0) report.warnings.push_back("no critical path: " + failed);
    return;
  }

  std::vector<CriticalStepSummary> summaries;
  StepGraph g;
  GraphTimes t;  // the measured times of g's ops
  problem = {kNoProblem, ""};
  std::map<int, std::string>& mine = packer.steps();
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::string> to(static_cast<std::size_t>(processes));
    for (std::string& bytes : to) {
      put_varint(bytes, wire::kVersion);
      kinds.write(bytes);
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
        summaries.push_back(owned_step_path(step, sources, received, g, t));
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
