// SPDX-License-Identifier: MIT
// Checks the rank-<R>.json files of a `commprof run` (directory in COMMPROF_RUN_DIR, rank count in
// COMMPROF_RUN_NRANKS; rank-<R>.json.zst with COMMPROF_RUN_RANK_FILE_FORMAT=zstd): every rank wrote
// a readable file; steps and ops are there; every collective instance (communicator, sequence
// number) appears on each of its comm_size ranks with the same op and bytes, which is what the
// reducer's matching relies on. With COMMPROF_RUN_OP_TIMING set (the op timing the command line
// asked for, or resolves to), every rank timed its ops that way, the ops of one stream (in order,
// as a CUDA stream runs them) never overlap, and the steps that carry ops are the command line's:
// none with step timing; with sampled timing the last warm-up step and every k-th measured step, k
// and the warm-up count given as COMMPROF_RUN_SAMPLE_EVERY and COMMPROF_RUN_WARMUP_STEPS (never
// read from the files under check); every step otherwise. An alltoallv's bytes per peer
// (peer_send_bytes, peer_recv_bytes) add up to its bytes and recv_bytes, and what rank A says it
// sent rank B is what B says it received from A, A and B being the comm_rank each op names (in
// range, one per rank of the communicator). The uneven all-gather and reduce-scatter (allgatherv,
// reducescatterv: an MoE layer's exchange over expert TP) carry bytes per peer too, checked the
// same way (A to B is what B got from A); their bytes are the whole gathered buffer: what an
// allgatherv's rank received from all, what a reducescatterv's rank sent to all; an allgatherv's
// rank sends every peer the same share, and a reducescatterv's receives the same block size from
// every peer. With COMMPROF_RUN_LOADS_MOVE set (an MoE run routed anew each step), some
// all-to-allv's bytes per peer differ from one step to another.
// Every send and receive (P2P: a pipeline's activations and gradients, a context-parallel ring's
// K/V) names its peers' world ranks (send_to, recv_from), and the step graph pairs them: the k-th
// transfer from A to B of a step is A's k-th send_to B and B's k-th recv_from A. So, per step and
// ordered pair (A, B), A's sends to B and B's receives from A are as many, each pair moving the
// same bytes (a P2P op's bytes are its transfers', count · element size each), and every peer is
// another rank of the run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "src/timeline/rank_file.hpp"
#include "support/test_files.hpp"

namespace commprof {
namespace {

// What the run's environment says to check.
struct Expected {
  std::string dir = test::env("COMMPROF_RUN_DIR");
  int nranks = std::atoi(test::env("COMMPROF_RUN_NRANKS").c_str());
  int steps = std::atoi(test::env("COMMPROF_RUN_STEPS").c_str());
  std::string timing = test::env("COMMPROF_RUN_OP_TIMING");
};

using InstanceKey = std::pair<std::string, std::int64_t>;  // (comm, seq)
using PeerBytes = std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>>;

// What the ranks' files say, gathered over every rank and step, checked across ranks at the end.
struct Seen {
  // (comm, seq) → (collective, bytes, comm_size, ranks seen)
  std::map<InstanceKey, std::tuple<std::string, std::uint64_t, int, std::set<int>>> instances;
  std::map<InstanceKey, std::pair<std::uint64_t, std::uint64_t>>
      alltoallv_bytes;  // (comm, seq) -> Σ sent, Σ received over its ranks
  // (comm, seq) -> comm_rank -> its bytes to and from each peer
  std::map<InstanceKey, std::map<int, PeerBytes>> alltoallv_peers;
  bool any_comm = false;
  std::size_t uneven_ops = 0;  // allgatherv and reducescatterv records
  // (rank, alltoallv op name) -> the distinct bytes received per peer over the steps
  std::map<std::pair<int, std::string>, std::set<std::vector<std::uint64_t>>> loads;
  // (step, sender, receiver) -> the bytes of each transfer, in record order, as the sender and
  // the receiver recorded them
  std::map<std::tuple<int, int, int>, PeerBytes> transfers;
  std::size_t p2p_ops = 0;
};

// COMMPROF_RUN_RANK_FILE_FORMAT=zstd: rank-<R>.json.zst, read by the product's reader (its
// frames against libzstd: ZstdRankFile.*), and no plain rank-<R>.json beside it.
RankTimeline read_rank(const Expected& want, int r) {
  const std::string base = want.dir + "/rank-" + std::to_string(r) + ".json";
  const bool zstd = test::env("COMMPROF_RUN_RANK_FILE_FORMAT") == "zstd";
  EXPECT_FALSE(std::filesystem::exists(zstd ? base : base + ".zst")) << "rank " << r;
  RankTimeline t = read_rank_file(zstd ? base + ".zst" : base);
  EXPECT_EQ(t.rank, r);
  EXPECT_EQ(t.world_size, want.nranks);
  EXPECT_EQ(t.backend, "host");
  if (!want.timing.empty()) {
    EXPECT_NE(t.config.dump().find("\"op_timing\":\"" + want.timing + "\""), std::string::npos)
        << "rank " << r << " config: " << t.config.dump();
  }
  return t;
}

void check_step_count(const Expected& want, const RankTimeline& t, int r) {
  // COMMPROF_RUN_STEPS=-1: a run stopped early; every rank must have stopped at the same step.
  static std::size_t first_count = t.steps.size();
  if (want.steps >= 0) {
    ASSERT_EQ(static_cast<int>(t.steps.size()), want.steps) << "rank " << r;
    EXPECT_TRUE(t.steps.front().warmup);
    EXPECT_FALSE(t.steps.back().warmup);
  } else {
    ASSERT_GE(t.steps.size(), 1u) << "rank " << r;
    EXPECT_EQ(t.steps.size(), first_count) << "rank " << r << " stopped at another step";
  }
}

// Which steps carry ops (README.md, --op-timing): sampled timing the last warm-up step and every
// k-th measured step, step timing none, every other timing all. Without COMMPROF_RUN_OP_TIMING
// (runs checked for their consistency only) the file's own configuration says which.
struct Sampling {
  bool sampled = false;
  int every = 1;
  int warmups = 0;
  bool timed(const Expected& want, int step) const {
    if (!sampled) return want.timing != "step";
    return step >= warmups ? (step - warmups) % every == 0 : step == warmups - 1;
  }
};

void read_sampling(const Expected& want, const RankTimeline& t, int r, Sampling& out) {
  const auto& cfg = t.config.json();
  out.sampled = want.timing.empty() ? cfg.contains("op_timing") && cfg.at("op_timing") == "sampled"
                                    : want.timing == "sampled";
  if (out.sampled && !want.timing.empty()) {
    ASSERT_FALSE(test::env("COMMPROF_RUN_SAMPLE_EVERY").empty())
        << "sampled: k of the command line";
    ASSERT_FALSE(test::env("COMMPROF_RUN_WARMUP_STEPS").empty()) << "sampled: its warm-up steps";
    out.every = std::atoi(test::env("COMMPROF_RUN_SAMPLE_EVERY").c_str());
    out.warmups = std::atoi(test::env("COMMPROF_RUN_WARMUP_STEPS").c_str());
    EXPECT_EQ(cfg.value("sample_every", -1), out.every) << "rank " << r;
    EXPECT_EQ(cfg.value("warmup_steps", -1), out.warmups) << "rank " << r;
  } else if (out.sampled) {
    out.every = cfg.at("sample_every").get<int>();
    out.warmups = cfg.value("warmup_steps", 0);
  }
}

// A send or receive names its peers' world ranks; each leg moves an equal share of its bytes.
void add_transfer(const Expected& want, const StepRecord& s, const OpRecord& op, int r,
                  Seen& seen) {
  ++seen.p2p_ops;
  const std::size_t legs = op.send_to.size() + op.recv_from.size();
  ASSERT_GT(legs, 0u) << "rank " << r << " step " << s.index << " " << op.name
                      << ": a transfer without send_to or recv_from";
  EXPECT_EQ(op.send_to.empty(), op.collective == "recv") << op.name;
  EXPECT_EQ(op.recv_from.empty(), op.collective == "send") << op.name;
  EXPECT_EQ(op.bytes % legs, 0u) << op.name << ": bytes not a whole count per transfer";
  const std::uint64_t each = op.bytes / legs;
  for (const std::int32_t to : op.send_to) {
    EXPECT_TRUE(to >= 0 && to < want.nranks && to != r) << op.name << ": sends to " << to;
    seen.transfers[{s.index, r, to}].first.push_back(each);
  }
  for (const std::int32_t from : op.recv_from) {
    EXPECT_TRUE(from >= 0 && from < want.nranks && from != r) << op.name << ": from " << from;
    seen.transfers[{s.index, from, r}].second.push_back(each);
  }
}

// One rank's bytes per peer of an instance, under the comm_rank it names (one per rank).
void add_peer_lists(const OpRecord& op, Seen& seen) {
  ASSERT_EQ(op.peer_send_bytes.size(), static_cast<std::size_t>(op.comm_size)) << op.name;
  ASSERT_EQ(op.peer_recv_bytes.size(), static_cast<std::size_t>(op.comm_size)) << op.name;
  ASSERT_GE(op.comm_rank, 0) << op.name << ": no comm_rank beside its bytes per peer";
  ASSERT_LT(op.comm_rank, op.comm_size) << op.name;
  const bool first = seen.alltoallv_peers[{op.comm, op.seq}]
                         .try_emplace(op.comm_rank, op.peer_send_bytes, op.peer_recv_bytes)
                         .second;
  EXPECT_TRUE(first) << op.name << ": two ranks name comm_rank " << op.comm_rank;
}

void add_alltoallv(const OpRecord& op, int r, Seen& seen) {
  EXPECT_GT(op.recv_bytes, 0u) << op.name << ": no recv_bytes";
  auto& [sent, received] = seen.alltoallv_bytes[{op.comm, op.seq}];
  sent += op.bytes;
  received += op.recv_bytes;
  ASSERT_NO_FATAL_FAILURE(add_peer_lists(op, seen));
  std::uint64_t to = 0, from = 0;
  for (const std::uint64_t b : op.peer_send_bytes) to += b;
  for (const std::uint64_t b : op.peer_recv_bytes) from += b;
  EXPECT_EQ(to, op.bytes) << op.name << ": bytes per peer against bytes";
  EXPECT_EQ(from, op.recv_bytes) << op.name << ": bytes per peer against recv_bytes";
  seen.loads[{r, op.name}].insert(op.peer_recv_bytes);
}

// An allgatherv's bytes are what it received from all, a reducescatterv's what it sent to all;
// the other direction is one equal share per peer.
void add_uneven(const OpRecord& op, Seen& seen) {
  const bool gatherv = op.collective == "allgatherv";
  ASSERT_NO_FATAL_FAILURE(add_peer_lists(op, seen));
  const auto& whole = gatherv ? op.peer_recv_bytes : op.peer_send_bytes;
  const auto& share = gatherv ? op.peer_send_bytes : op.peer_recv_bytes;
  std::uint64_t total = 0;
  for (const std::uint64_t b : whole) total += b;
  EXPECT_EQ(total, op.bytes) << op.name << ": bytes per peer against bytes";
  for (const std::uint64_t b : share) {
    EXPECT_EQ(b, whole[static_cast<std::size_t>(op.comm_rank)]) << op.name;
  }
  ++seen.uneven_ops;
}

void add_comm_op(const Expected& want, const StepRecord& s, const OpRecord& op, int r, Seen& seen) {
  seen.any_comm = true;
  if (op.collective == "send" || op.collective == "recv" || op.collective == "sendrecv") {
    ASSERT_NO_FATAL_FAILURE(add_transfer(want, s, op, r, seen));
  }
  if (op.seq < 0) return;  // point-to-point: not matched by sequence number
  auto& [coll, bytes, size, ranks] = seen.instances[{op.comm, op.seq}];
  if (ranks.empty()) {
    coll = op.collective;
    bytes = op.bytes;
    size = op.comm_size;
  }
  EXPECT_EQ(coll, op.collective) << op.comm << " #" << op.seq;
  // An alltoallv's ranks send what their routing gives each.
  if (op.collective != "alltoallv") EXPECT_EQ(bytes, op.bytes) << op.comm << " #" << op.seq;
  if (op.collective == "alltoallv") ASSERT_NO_FATAL_FAILURE(add_alltoallv(op, r, seen));
  if (op.collective == "allgatherv" || op.collective == "reducescatterv") {
    ASSERT_NO_FATAL_FAILURE(add_uneven(op, seen));
  }
  ranks.insert(r);
}

void add_step(const Expected& want, const Sampling& sampling, const StepRecord& s, int r,
              Seen& seen) {
  ASSERT_EQ(s.ops.empty(), !sampling.timed(want, s.index)) << "rank " << r << " step " << s.index;
  EXPECT_LE(s.start_ns, s.end_ns);
  std::map<std::string, std::int64_t> stream_end;
  for (const OpRecord& op : s.ops) {
    if (!want.timing.empty()) {
      // Records are in submission order, which is each stream's execution order.
      std::int64_t& last = stream_end[op.stream];
      EXPECT_LE(last, op.start_ns) << op.name << " starts before its stream's previous op ended";
      last = op.end_ns;
    }
    EXPECT_LE(s.start_ns, op.start_ns) << op.name;
    EXPECT_LE(op.start_ns, op.end_ns) << op.name;
    EXPECT_LE(op.end_ns, s.end_ns) << op.name;
    if (op.category == Category::kComm) ASSERT_NO_FATAL_FAILURE(add_comm_op(want, s, op, r, seen));
  }
}

// What rank A says it sent rank B is what B says it received from A: per instance by comm_rank,
// per step and ordered pair for transfers; every (comm, seq) on each of its comm_size ranks.
void check_across_ranks(const Expected& want, const Seen& seen) {
  // Step timing records no ops, so no collective either.
  EXPECT_TRUE(seen.any_comm || want.nranks == 1 || want.timing == "step");
  // What an alltoallv's ranks sent is what they received: the recorded splits agree.
  for (const auto& [key, bytes] : seen.alltoallv_bytes) {
    EXPECT_EQ(bytes.first, bytes.second) << key.first << " #" << key.second << ": sent, received";
  }
  for (const auto& [key, ranks] : seen.alltoallv_peers) {
    std::vector<const PeerBytes*> by_peer;
    for (const auto& [rank, lists] : ranks) by_peer.push_back(&lists);  // comm_rank order
    for (std::size_t a = 0; a < by_peer.size(); ++a) {
      for (std::size_t b = 0; b < by_peer.size() && b < by_peer[a]->first.size(); ++b) {
        ASSERT_LT(a, by_peer[b]->second.size());
        EXPECT_EQ(by_peer[a]->first[b], by_peer[b]->second[a])
            << key.first << " #" << key.second << ": peer " << a << " to peer " << b;
      }
    }
  }
  for (const auto& [key, bytes] : seen.transfers) {
    const auto& [step, from, to] = key;
    EXPECT_EQ(bytes.first, bytes.second)
        << "step " << step << ": the transfers rank " << from << " sent rank " << to
        << " (bytes each, in order) against what rank " << to << " received from rank " << from;
  }
  for (const auto& [key, value] : seen.instances) {
    const auto& [coll, bytes, size, ranks] = value;
    // Each step renumbers nothing: a (comm, seq) is one call, on every member, once per run.
    EXPECT_EQ(static_cast<int>(ranks.size()), size)
        << key.first << " #" << key.second << " " << coll;
  }
}

// What the run's variant promised to record (set by the test for that run).
void check_variant(const Seen& seen) {
  // A run with expert TP (COMMPROF_RUN_EXPERT_TP set) records them.
  if (!test::env("COMMPROF_RUN_EXPERT_TP").empty()) {
    EXPECT_GT(seen.uneven_ops, 0u) << "no allgatherv or reducescatterv recorded";
  }
  if (!test::env("COMMPROF_RUN_LOADS_MOVE").empty()) {
    std::size_t moved = 0;
    for (const auto& [key, loads] : seen.loads) moved += loads.size() > 1 ? 1 : 0;
    EXPECT_GT(moved, 0u) << "every all-to-allv received the same bytes per peer at every step";
  }
  // A pipeline or context-parallel run (COMMPROF_RUN_P2P set) records transfers.
  if (!test::env("COMMPROF_RUN_P2P").empty()) {
    EXPECT_GT(seen.p2p_ops, 0u) << "no send or receive recorded";
  }
}

TEST(RankFiles, EveryRankWroteAConsistentTimeline) {
  const Expected want;
  ASSERT_FALSE(want.dir.empty());
  ASSERT_GT(want.nranks, 0);
  Seen seen;
  for (int r = 0; r < want.nranks; ++r) {
    const RankTimeline t = read_rank(want, r);
    ASSERT_NO_FATAL_FAILURE(check_step_count(want, t, r));
    Sampling sampling;
    ASSERT_NO_FATAL_FAILURE(read_sampling(want, t, r, sampling));
    for (const StepRecord& s : t.steps)
      ASSERT_NO_FATAL_FAILURE(add_step(want, sampling, s, r, seen));
  }
  check_variant(seen);
  check_across_ranks(want, seen);
}

}  // namespace
}  // namespace commprof
