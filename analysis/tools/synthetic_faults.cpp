// SPDX-License-Identifier: MIT
#include "analysis/tools/synthetic_faults.hpp"

#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/unfinished_entry.hpp"

namespace commprof {
namespace {

// A hung rank's record: the failed step left out; in its configuration every collective of the
// step it submitted up to the one it waits in (its COMM stream never finished any of them, as
// the executor lists them), that one with `bytes`. A transfer (seq -1) is the waited one when
// it is: the collectives all come before it.
void hang(RankTimeline& t, const OpRecord& waited, std::uint64_t bytes) {
  const StepRecord failed = t.steps.back();
  t.steps.pop_back();
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const OpRecord& op : failed.ops) {
    if (op.collective.empty()) continue;
    OpRecord entry = op;
    if (op.seq == waited.seq) entry.bytes = bytes;
    list.push_back(unfinished_entry(entry, failed.index));
    if (op.seq == waited.seq) break;
  }
  const std::string error =
      log::cat("the COMM stream on rank ", t.rank, " (", t.host,
               ") did not finish within --timeout 3 s; last op submitted there: ", waited.name,
               " #", waited.seq, " (a peer rank may have stopped participating)");
  t.config = JsonObject(nlohmann::ordered_json{
      {"failed_step", failed.index}, {"error", error}, {"unfinished", std::move(list)}});
}

// The failed step's all-reduce: its first, or its last.
const OpRecord& allreduce_of(const StepRecord& step, bool last) {
  const OpRecord* found = nullptr;
  for (const OpRecord& op : step.ops) {
    if (op.collective != "allreduce") continue;
    found = &op;
    if (!last) break;
  }
  if (found == nullptr) throw ConfigError("the synthetic step has no all-reduce");
  return *found;
}

// The last step's transfer within rank r's pair, appended after its ops: ranks 2k and 2k + 1
// on "pp<k>", the even rank sending what the odd one receives, as a real run records a
// pipeline's send and receive (seq -1, the peer's world rank).
OpRecord pair_transfer(const StepRecord& step, int rank, std::uint64_t bytes) {
  OpRecord op;
  const bool sender = rank % 2 == 0;
  op.category = Category::kComm;
  op.stream = "COMM";
  op.name = sender ? "pp.send_act.mb0" : "pp.recv_act.mb0";
  op.collective = sender ? "send" : "recv";
  op.comm = log::cat("pp", rank / 2);
  op.comm_size = 2;
  op.seq = -1;
  op.bytes = bytes;
  op.start_ns = step.end_ns;
  op.end_ns = step.end_ns + 1000;
  (sender ? op.send_to : op.recv_from).push_back(sender ? rank + 1 : rank - 1);
  return op;
}

void plant_no_recv(const SyntheticSpec& spec, int fault_rank, RankTimeline& t) {
  if (spec.world_size % 2 != 0 || fault_rank % 2 != 1)
    throw ConfigError("a no-recv fault needs an even number of ranks and an odd (receiving) rank");
  StepRecord& last = t.steps.back();
  const OpRecord transfer = pair_transfer(last, t.rank, spec.bytes);
  if (t.rank == fault_rank) return;  // ends the step without posting its receive
  last.ops.push_back(transfer);
  last.end_ns = transfer.end_ns;
  // Its COMM stream never finished the send, so the step's collectives before it are listed
  // unfinished too, as the executor lists what it submitted (they finished on every other rank).
  if (t.rank == fault_rank - 1) hang(t, transfer, transfer.bytes);
}

}  // namespace

SyntheticFault parse_synthetic_fault(const std::string& text) {
  SyntheticFault f;
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no rank");
    std::size_t used = 0;
    const std::string rest = text.substr(colon + 1);
    f.rank = std::stoi(rest, &used);
    if (used < rest.size()) {
      if (rest[used] != ':' || kind != "slow") throw std::invalid_argument("trailing");
      f.slow_factor = std::stod(rest.substr(used + 1));
    }
  } catch (const std::exception&) {
    throw ConfigError(log::cat("fault '", text, "': KIND:RANK (slow:RANK[:FACTOR])"));
  }
  if (kind == "skip") {
    f.kind = SyntheticFault::Kind::kSkip;
  } else if (kind == "count") {
    f.kind = SyntheticFault::Kind::kCount;
  } else if (kind == "stopped") {
    f.kind = SyntheticFault::Kind::kStopped;
  } else if (kind == "slow") {
    f.kind = SyntheticFault::Kind::kSlow;
  } else if (kind == "no-recv") {
    f.kind = SyntheticFault::Kind::kNoRecv;
  } else {
    throw ConfigError(
        log::cat("fault '", text, "': the kind is none of skip, count, stopped, slow, no-recv"));
  }
  if (f.rank < 0 || f.slow_factor <= 1.0)
    throw ConfigError(log::cat("fault '", text, "': a rank from 0 and a factor above 1"));
  return f;
}

RankTimeline make_faulty_rank(const SyntheticSpec& spec, const SyntheticFault& fault, int rank) {
  using Kind = SyntheticFault::Kind;
  if (fault.kind != Kind::kNone && fault.rank >= spec.world_size)
    throw ConfigError(
        log::cat("fault at rank ", fault.rank, ": the run has ", spec.world_size, " ranks"));
  if (fault.kind == Kind::kSlow) {
    SyntheticSpec slowed = spec;
    slowed.slow_rank = fault.rank;
    slowed.slow_factor = fault.slow_factor;
    return make_synthetic_rank(slowed, rank);
  }
  RankTimeline t = make_synthetic_rank(spec, rank);
  if (fault.kind == Kind::kNone) return t;
  if (fault.kind == Kind::kNoRecv) {
    plant_no_recv(spec, fault.rank, t);
    return t;
  }
  if (spec.tp_size != 0 || spec.steps + spec.warmup_steps < 2)
    throw ConfigError("a hang fault needs tp_size 0 (every collective on world) and two steps");
  StepRecord& last = t.steps.back();
  if (fault.kind == Kind::kSkip) {
    const OpRecord skipped = allreduce_of(last, true);
    if (rank == fault.rank) {
      for (auto it = last.ops.begin(); it != last.ops.end(); ++it) {
        if (it->collective == "allreduce" && it->seq == skipped.seq) {
          last.ops.erase(it);
          break;
        }
      }
    } else {
      hang(t, skipped, skipped.bytes);
    }
  } else if (fault.kind == Kind::kCount) {
    const OpRecord called = allreduce_of(last, false);
    hang(t, called, rank == fault.rank ? called.bytes / 2 : called.bytes);
  } else if (rank == fault.rank) {  // stopped: nothing of the last step
    t.steps.pop_back();
  } else {
    const OpRecord waited = allreduce_of(last, false);
    hang(t, waited, waited.bytes);
  }
  return t;
}

}  // namespace commprof
