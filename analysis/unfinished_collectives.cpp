// SPDX-License-Identifier: MIT
#include "analysis/unfinished_collectives.hpp"

#include <nlohmann/json.hpp>

#include "src/core/log.hpp"

namespace commprof {

void UnfinishedCollectives::stage_header(int rank, const JsonObject& config) {
  discard();
  staged_rank_ = rank;
  const nlohmann::ordered_json& j = config.json();
  if (!j.is_object()) return;
  if (const auto c = j.find("communicators"); c != j.end() && c->is_array()) {
    for (const auto& comm : *c) {
      if (comm.is_object() && comm.contains("name") && comm["name"].is_string())
        staged_.comms.insert(comm["name"].get<std::string>());
    }
  }
  if (const auto u = j.find("unfinished"); u != j.end() && u->is_array()) {
    for (const auto& op : *u) {
      if (!op.is_object() || !op.contains("comm") || !op["comm"].is_string() ||
          !op.contains("seq") || !op["seq"].is_number_integer())
        continue;
      const std::int64_t seq = op["seq"].get<std::int64_t>();
      if (seq < 0) continue;  // point-to-point: no sequence to set against the others
      const std::string comm = op["comm"].get<std::string>();
      staged_.comms.insert(comm);
      staged_.unfinished[{comm, seq}] = op.contains("collective") && op["collective"].is_string()
                                            ? op["collective"].get<std::string>()
                                            : "collective";
    }
  }
}

void UnfinishedCollectives::stage_finished(std::string_view comm, std::int64_t seq) {
  if (staged_rank_ < 0 || seq < 0) return;
  if (last_seq_ == nullptr || comm != last_comm_) {
    last_comm_.assign(comm);
    last_seq_ = &staged_.last.try_emplace(last_comm_, seq).first->second;
  }
  if (seq > *last_seq_) *last_seq_ = seq;
}

void UnfinishedCollectives::commit() {
  if (staged_rank_ >= 0) {
    RankState& r = ranks_[staged_rank_];
    r.comms.insert(staged_.comms.begin(), staged_.comms.end());
    for (const auto& [comm, seq] : staged_.last) {
      auto [it, fresh] = r.last.try_emplace(comm, seq);
      if (!fresh && seq > it->second) it->second = seq;
    }
    r.unfinished.insert(staged_.unfinished.begin(), staged_.unfinished.end());
  }
  discard();
}

void UnfinishedCollectives::discard() {
  staged_rank_ = -1;
  staged_ = RankState{};
  last_seq_ = nullptr;
}

std::vector<std::string> UnfinishedCollectives::findings() const {
  std::map<Key, std::pair<std::string, std::vector<int>>> open;  // -> (collective, ranks)
  for (const auto& [rank, state] : ranks_) {
    for (const auto& [key, name] : state.unfinished) {
      auto& entry = open[key];
      entry.first = name;
      entry.second.push_back(rank);
    }
  }
  std::vector<std::string> out;
  for (const auto& [key, entry] : open) {
    std::string line =
        log::cat("hang: ", key.comm, " ", entry.first, " #", key.seq, " unfinished on rank");
    if (entry.second.size() > 1) line += "s";
    for (int r : entry.second) line += log::cat(" ", r);
    std::string finished, never;
    for (const auto& [rank, state] : ranks_) {
      if (state.unfinished.count(key) != 0) continue;
      const bool member = state.comms.count(key.comm) != 0 || state.last.count(key.comm) != 0;
      if (!member) continue;
      const auto last = state.last.find(key.comm);
      if (last != state.last.end() && last->second >= key.seq) {
        finished += log::cat(" ", rank);
      } else {
        never += log::cat(
            "; rank ", rank, " never started it (its last on ", key.comm, ": ",
            last == state.last.end() ? std::string("none") : log::cat("#", last->second), ")");
      }
    }
    if (!finished.empty()) line += "; finished on" + finished;
    out.push_back(line + never);
  }
  return out;
}

void UnfinishedCollectives::add(const Ranks& ranks) {
  for (const auto& [rank, state] : ranks) {
    RankState& r = ranks_[rank];
    r.comms.insert(state.comms.begin(), state.comms.end());
    for (const auto& [comm, seq] : state.last) r.last[comm] = seq;
    for (const auto& [key, name] : state.unfinished) r.unfinished[key] = name;
  }
}

}  // namespace commprof
