// SPDX-License-Identifier: MIT
// Reading a rank file into the diagnosis's key (diagnosis.hpp), and merging processes' parts.
#include "analysis/diagnosis.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/op_record.hpp"

namespace commprof::diagnosis {
namespace {

// The k-th transfer from one world rank to another on a communicator, counted over the file.
using PairCounters = std::map<std::tuple<std::string, int, int>, std::int64_t>;

Key transfer_key(const std::string& comm, int from, int to, PairCounters& counters) {
  return {log::cat(comm, " ", from, "->", to), "p2p", counters[{comm, from, to}]++};
}

// Every key `op` of `rank` touches: a collective's one, a transfer's one per peer.
std::vector<Key> keys_of(const OpRecord& op, int rank, PairCounters& counters) {
  std::vector<Key> out;
  if (op.collective.empty() || op.comm.empty()) return out;
  if (!op.send_to.empty() || !op.recv_from.empty()) {
    for (int to : op.send_to) out.push_back(transfer_key(op.comm, rank, to, counters));
    for (int from : op.recv_from) out.push_back(transfer_key(op.comm, from, rank, counters));
  } else if (op.seq >= 0) {
    out.push_back({op.comm, op.collective, op.seq});
  }
  return out;
}

Args args_of(const OpRecord& op, const Key& key) {
  // A transfer's two sides are a send and a receive (or a sendrecv, whose bytes count both
  // ways): they agree on the count and type of a transfer. The v collectives' sizes differ
  // per rank by design.
  const bool p2p = key.function == "p2p";
  const bool uneven = op.collective == "alltoallv" || op.collective == "allgatherv" ||
                      op.collective == "reducescatterv";
  return {p2p ? "p2p" : op.collective, p2p || uneven ? 0 : op.bytes, uneven ? 0 : op.count,
          op.dtype};
}

KeyState& state_of(Part& part, const Key& key, const OpRecord& op, int step) {
  KeyState& s = part.keys[key];
  if (s.name.empty()) s.name = op.name;
  if (s.step < 0) s.step = step;
  if (s.comm_size == 0) s.comm_size = key.function == "p2p" ? 2 : op.comm_size;
  return s;
}

void add_finished(Part& part, RankFacts& facts, int rank, const OpRecord& op, int step,
                  std::int64_t offset, PairCounters& counters) {
  if (op.category != Category::kComm || op.collective.empty()) return;
  facts.comms.insert(op.comm);
  for (const Key& key : keys_of(op, rank, counters)) {
    KeyState& s = state_of(part, key, op, step);
    s.finished.insert(rank);
    s.args[args_of(op, key)].insert(rank);
    if (key.function != "p2p") part.usual[{op.comm, op.name}][args_of(op, key)].insert(rank);
    const std::int64_t start = op.start_ns + offset;
    s.sum_start += static_cast<double>(start);
    if (start > s.latest_start) {
      s.latest_start = start;
      s.latest_rank = rank;
    }
  }
  if (op.seq >= 0) {
    facts.last_seq[op.comm] = std::max(facts.last_seq[op.comm], op.seq);
    if (facts.last_seq[op.comm] == op.seq) facts.last_name[op.comm] = op.name;
  }
}

void add_step(Part& part, RankFacts& facts, const RankTimeline& t, const StepRecord& step,
              PairCounters& counters) {
  facts.last_step = std::max(facts.last_step, step.index);
  if (step.ops.empty()) return;
  RankFacts::Step& s = facts.steps[step.index];
  s.length = step.end_ns - step.start_ns;
  s.warmup = step.warmup;
  for (const OpRecord& op : step.ops) {
    const std::size_t c = index_of(op.category);
    s.busy[c] += op.duration_ns();
    if (op.duration_ns() > s.longest[c]) {
      s.longest[c] = op.duration_ns();
      s.longest_name[c] = op.name;
    }
    add_finished(part, facts, t.rank, op, step.index, t.clock_offset_ns, counters);
    facts.last_op = log::cat(op.name, " (step ", step.index, ")");
  }
}

// The configuration's "unfinished" list: a run's failed step, or the plugin's in-flight ops.
void add_unfinished(Part& part, int rank, const nlohmann::ordered_json& list, bool kernel_records,
                    PairCounters& counters) {
  for (const auto& e : list) {
    if (!e.is_object() || !e.contains("comm") || !e["comm"].is_string()) continue;
    OpRecord op;
    op.category = Category::kComm;
    op.comm = e["comm"].get<std::string>();
    op.collective = e.value("collective", std::string("collective"));
    op.name = e.value("name", op.collective);
    op.seq = e.value("seq", std::int64_t{-1});
    op.bytes = e.value("bytes", std::uint64_t{0});
    op.count = e.value("count", std::uint64_t{0});
    op.dtype = e.value("dtype", std::string());
    if (e.contains("send_to")) op.send_to = e["send_to"].get<std::vector<std::int32_t>>();
    if (e.contains("recv_from")) op.recv_from = e["recv_from"].get<std::vector<std::int32_t>>();
    const int step = e.value("step", -1);
    // The plugin's kernel channels: begun, or (where the capture has kernel records) not.
    const auto began = e.find("channels_started");
    const bool started_known = began != e.end() && began->is_number_integer();
    const bool started = started_known && began->get<std::int64_t>() > 0;
    const bool graph = e.value("graph", false);
    for (const Key& key : keys_of(op, rank, counters)) {
      KeyState& s = state_of(part, key, op, step);
      s.unfinished.insert(rank);
      s.graph = s.graph || graph;
      if (started) {
        s.gpu_started.insert(rank);
      } else if (started_known && kernel_records) {
        s.gpu_not_started.insert(rank);
      }
      if (op.bytes != 0 || op.count != 0) s.args[args_of(op, key)].insert(rank);
    }
    part.ranks[rank].comms.insert(op.comm);
  }
}

}  // namespace

void add_rank_timeline(const RankTimeline& t, Part& part) {
  part.world_size = std::max(part.world_size, t.world_size);
  RankFacts& facts = part.ranks[t.rank];
  facts.host = t.host;
  facts.source = t.backend == "nccl-profiler" ? "nccl-profiler" : "run";
  PairCounters counters;
  for (const StepRecord& step : t.steps) add_step(part, facts, t, step, counters);
  const nlohmann::ordered_json& config = t.config.json();
  if (const auto c = config.find("communicators"); c != config.end() && c->is_array()) {
    for (const auto& comm : *c) {
      if (!comm.is_object() || !comm.contains("name") || !comm["name"].is_string()) continue;
      const std::string name = comm["name"].get<std::string>();
      facts.comms.insert(name);
      if (const auto n = comm.find("collectives"); n != comm.end() && n->is_number_integer())
        facts.launched[name] = n->get<std::int64_t>();
    }
  }
  const auto steps = config.find("steps");
  const auto warmup = config.find("warmup_steps");
  if (steps != config.end() && steps->is_number_integer() && warmup != config.end() &&
      warmup->is_number_integer())
    facts.planned_steps = steps->get<int>() + warmup->get<int>();
  if (const auto f = config.find("failed_step"); f != config.end() && f->is_number_integer())
    facts.failed_step = f->get<int>();
  if (const auto e = config.find("error"); e != config.end() && e->is_string())
    facts.error = e->get<std::string>();
  // A capture whose every call's kernel channels reported can tell a call not started.
  const auto without = config.find("without_kernel_records");
  const bool kernel_records = t.backend == "nccl-profiler" && without != config.end() &&
                              without->is_number_integer() && without->get<std::int64_t>() == 0;
  if (const auto u = config.find("unfinished"); u != config.end() && u->is_array())
    add_unfinished(part, t.rank, *u, kernel_records, counters);
}

namespace {

// Flight Recorder's element types, by PyTorch's names (c10 ScalarType), in bytes.
std::uint64_t element_bytes(const std::string& t) {
  static const std::map<std::string, std::uint64_t> kBytes = {
      {"Float", 4},        {"Double", 8},        {"Half", 2},          {"BFloat16", 2},
      {"Int", 4},          {"Long", 8},          {"Short", 2},         {"Char", 1},
      {"Byte", 1},         {"Bool", 1},          {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1},
      {"ComplexFloat", 8}, {"ComplexDouble", 16}};
  const auto it = kBytes.find(t);
  return it == kBytes.end() ? 0 : it->second;
}

// "nccl:all_reduce" -> "allreduce" (commprof's names: lower case, no separators).
std::string fr_function(const std::string& profiling_name) {
  const std::size_t colon = profiling_name.find(':');
  std::string out;
  for (char c : profiling_name.substr(colon == std::string::npos ? 0 : colon + 1))
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The member itself, not a copy (a dump's entries are the whole ring).
const nlohmann::json& member(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null())
    throw Error(log::cat(where, ": no '", key, "' (not a Flight Recorder dump?)"));
  return *it;
}

template <class T>
T field(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& m = member(j, key, where);
  try {
    return m.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(log::cat(where, ": '", key, "' is ",
                         m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                         ", not of the expected type"));
  }
}

// A field that is a number in the pickle and text in the JSON form (pg_status's).
std::int64_t number_or_text(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_string()) return std::stoll(v.get<std::string>());
  return -1;
}

// A dump entry's creation and completion on the wall clock, kept as the key's extremes.
void note_wall_clock(const nlohmann::json& e, bool completed, int rank, KeyState& s) {
  const auto created = e.find("time_created_ns");
  if (created != e.end() && created->is_number_integer()) {
    const std::int64_t t = created->get<std::int64_t>();
    if (t > s.latest_created) {
      s.latest_created = t;
      s.latest_created_rank = rank;
    }
  }
  const auto done = e.find("time_discovered_completed_ns");
  if (completed && done != e.end() && done->is_number_integer()) {
    const std::int64_t t = done->get<std::int64_t>();
    if (t > 0 && (s.earliest_completed == 0 || t < s.earliest_completed)) {
      s.earliest_completed = t;
      s.earliest_completed_rank = rank;
    }
  }
}

}  // namespace

void add_flight_recorder(int rank, const nlohmann::json& dump, const std::string& source,
                         Part& part) {
  if (!dump.is_object()) throw Error(source + ": not a Flight Recorder dump (no dict at its top)");
  const nlohmann::json& config = member(dump, "pg_config", source);
  const nlohmann::json& entries = member(dump, "entries", source);
  if (!entries.is_array()) throw Error(source + ": 'entries' is no list");
  RankFacts& facts = part.ranks[rank];
  facts.source = "flight-recorder";
  bool started_known = false;
  // Whether the dump records start times at all (some entry has one).
  const bool dump_timed = std::any_of(entries.begin(), entries.end(), [](const nlohmann::json& e) {
    const auto t = e.find("time_discovered_started_ns");
    return t != e.end() && t->is_number() && t->get<std::int64_t>() > 0;
  });
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json& e = entries[i];
    const std::string where = log::cat(source, ": entries[", i, "]");
    const auto pg = field<std::vector<std::string>>(e, "process_group", where);
    if (pg.size() != 2) throw Error(where + ": 'process_group' is no (name, description) pair");
    std::string comm = log::cat("pg", pg[0], ":", pg[1]);
    int comm_size = 0;
    if (const auto c = config.find(pg[0]); c != config.end() && c->contains("ranks")) {
      const std::string ranks = (*c)["ranks"].is_string() ? (*c)["ranks"].get<std::string>() : "";
      comm_size =
          ranks.empty() ? 0 : 1 + static_cast<int>(std::count(ranks.begin(), ranks.end(), ','));
      part.world_size = std::max(part.world_size, comm_size);
    }
    const bool p2p = e.value("is_p2p", false);
    const std::string state = field<std::string>(e, "state", where);
    OpRecord op;
    op.category = Category::kComm;
    op.comm = p2p ? comm + " p2p" : comm;
    op.name = field<std::string>(e, "profiling_name", where);
    op.collective = p2p ? "p2p" : fr_function(op.name);
    op.comm_size = p2p ? 2 : comm_size;
    op.seq = field<std::int64_t>(e, p2p ? "p2p_seq_id" : "collective_seq_id", where);
    const auto sizes = field<std::vector<std::vector<std::int64_t>>>(e, "input_sizes", where);
    const auto types = field<std::vector<std::string>>(e, "input_dtypes", where);
    op.count = 0;
    for (std::size_t t = 0; t < sizes.size(); ++t) {
      std::uint64_t n = 1;
      for (std::int64_t d : sizes[t]) n *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
      op.count += n;
      op.bytes += n * (t < types.size() ? element_bytes(types[t]) : 0);
    }
    op.dtype = types.empty() ? "" : types.front();
    const Key key{op.comm, op.collective, op.seq};
    KeyState& s = state_of(part, key, op, -1);
    s.args[args_of(op, key)].insert(rank);
    facts.comms.insert(op.comm);
    note_wall_clock(e, state == "completed", rank, s);
    const auto started = e.find("time_discovered_started_ns");
    started_known = started_known || (started != e.end() && started->is_number() &&
                                      started->get<std::int64_t>() > 0);
    if (state == "completed") {
      s.finished.insert(rank);
      if (facts.last_seq.count(op.comm) == 0 || facts.last_seq[op.comm] <= op.seq) {
        facts.last_seq[op.comm] = op.seq;
        facts.last_name[op.comm] = op.name;
      }
      facts.last_op = log::cat(op.name, " #", op.seq, " on ", op.comm);
    } else if (state == "scheduled" || state == "started") {
      s.unfinished.insert(rank);
      // With start times recorded (TORCH_NCCL_ENABLE_TIMING=1) "scheduled" means not started.
      if (state == "started") {
        s.gpu_started.insert(rank);
      } else if (dump_timed) {
        s.gpu_not_started.insert(rank);
      }
    } else {
      throw Error(
          log::cat(where, ": state '", state, "' is none of scheduled, started, completed"));
    }
  }
  if (!started_known && !entries.empty())
    part.source_notes.push_back(log::cat(
        "note: ", source,
        " holds no start times (PyTorch records them with "
        "TORCH_NCCL_ENABLE_TIMING=1): it cannot tell a collective started on the GPU from one "
        "only scheduled"));
  if (const auto status = dump.find("pg_status"); status != dump.end() && status->is_object()) {
    for (const auto& [pg, st] : status->items()) {
      if (!st.is_object()) continue;
      const std::int64_t enqueued =
          number_or_text(st.value("last_enqueued_collective", nlohmann::json()));
      const std::int64_t completed =
          number_or_text(st.value("last_completed_collective", nlohmann::json()));
      const std::int64_t started =
          number_or_text(st.value("last_started_collective", nlohmann::json()));
      if (enqueued > completed)
        part.source_notes.push_back(
            log::cat("note: rank ", rank, " (Flight Recorder), process group ", pg,
                     ": last enqueued #", enqueued, ", last started #",
                     started < 0 ? std::string("not known") : std::to_string(started),
                     ", last completed #", completed));
    }
  }
}

void add_ras_status(const nlohmann::json& status, const std::string& source, Part& part) {
  const auto comms = status.find("communicators");
  if (comms == status.end() || !comms->is_array())
    throw Error(source + ": no 'communicators' list (not NCCL RAS's JSON status?)");
  for (const auto& c : *comms) {
    const std::string hash = c.value("hash", std::string("?"));
    if (!c.contains("ranks") || !c["ranks"].is_array()) continue;
    std::map<std::string, std::map<int, std::int64_t>> counts;  // kind -> rank -> launched
    for (const auto& r : c["ranks"]) {
      if (!r.contains("collective_counts") || !r["collective_counts"].is_object()) continue;
      for (const auto& [kind, n] : r["collective_counts"].items())
        if (n.is_number_integer()) counts[kind][r.value("rank", -1)] = n.get<std::int64_t>();
    }
    for (const auto& [kind, by_rank] : counts) {
      std::int64_t most = 0;
      for (const auto& [r, n] : by_rank) most = std::max(most, n);
      std::string fewer;
      for (const auto& [r, n] : by_rank)
        if (n < most) fewer += log::cat(fewer.empty() ? "" : ", ", "rank ", r, " ", n);
      if (!fewer.empty())
        part.source_notes.push_back(log::cat("note: NCCL RAS (", source, "), communicator ", hash,
                                             ": ", kind, " launched ", most,
                                             " times on most ranks, fewer on ", fewer,
                                             " (RAS counts launches only: it cannot name "
                                             "the sequence number or a transfer)"));
    }
    if (c.value("missing_ranks_count", 0) > 0)
      part.source_notes.push_back(log::cat("note: NCCL RAS (", source, "), communicator ", hash,
                                           ": ", c["missing_ranks_count"].get<int>(),
                                           " rank(s) did not answer"));
  }
}

std::string rank_ranges(const std::vector<int>& ascending) {
  std::string out;
  for (std::size_t i = 0; i < ascending.size();) {
    std::size_t j = i;
    while (j + 1 < ascending.size() && ascending[j + 1] == ascending[j] + 1) ++j;
    const std::string sep = out.empty() ? "" : " ";
    if (j - i >= 2) {
      out += log::cat(sep, ascending[i], "-", ascending[j]);
    } else {
      for (std::size_t k = i; k <= j; ++k) out += log::cat(out.empty() ? "" : " ", ascending[k]);
    }
    i = j + 1;
  }
  return out;
}

std::vector<std::string> notes(const Part& part) {
  std::vector<std::string> out = part.source_notes;
  std::map<int, std::vector<int>> ended;  // last step recorded -> ranks ending there early
  for (const auto& [rank, f] : part.ranks) {
    if (f.failed_step < 0 && f.planned_steps > 0 && f.last_step + 1 < f.planned_steps)
      ended[f.last_step].push_back(rank);
  }
  for (const auto& [step, ranks] : ended) {
    const std::string who = rank_ranges(ranks);
    out.push_back(log::cat(
        "note: the record of ", ranks.size() == part.ranks.size() ? "every rank" : "ranks " + who,
        " ends at step ", step, " of ", part.ranks.at(ranks.front()).planned_steps,
        " planned, with no failure recorded: the job was stopped (a signal), or a rank died and "
        "the launcher ended the others before they could record what they waited on; this "
        "source cannot tell which, nor name that rank"));
  }
  if (part.world_size > 0 && part.ranks.size() < static_cast<std::size_t>(part.world_size))
    out.push_back(log::cat("note: ", part.world_size - static_cast<int>(part.ranks.size()), " of ",
                           part.world_size, " ranks have no input"));
  return out;
}

void Part::merge(Part&& other) {
  world_size = std::max(world_size, other.world_size);
  for (auto& [key, s] : other.keys) {
    auto [it, fresh] = keys.try_emplace(key, std::move(s));
    if (fresh) continue;
    KeyState& mine = it->second;
    if (mine.name.empty()) mine.name = s.name;
    if (mine.step < 0) mine.step = s.step;
    if (mine.comm_size == 0) mine.comm_size = s.comm_size;
    mine.finished.insert(s.finished.begin(), s.finished.end());
    mine.unfinished.insert(s.unfinished.begin(), s.unfinished.end());
    for (auto& [a, who] : s.args) mine.args[a].insert(who.begin(), who.end());
    mine.sum_start += s.sum_start;
    mine.gpu_started.insert(s.gpu_started.begin(), s.gpu_started.end());
    mine.gpu_not_started.insert(s.gpu_not_started.begin(), s.gpu_not_started.end());
    mine.graph = mine.graph || s.graph;
    if (s.latest_created > mine.latest_created) {
      mine.latest_created = s.latest_created;
      mine.latest_created_rank = s.latest_created_rank;
    }
    if (s.earliest_completed > 0 &&
        (mine.earliest_completed == 0 || s.earliest_completed < mine.earliest_completed)) {
      mine.earliest_completed = s.earliest_completed;
      mine.earliest_completed_rank = s.earliest_completed_rank;
    }
    if (s.latest_start > mine.latest_start) {
      mine.latest_start = s.latest_start;
      mine.latest_rank = s.latest_rank;
    }
  }
  for (auto& [rank, facts] : other.ranks) ranks[rank] = std::move(facts);
  for (auto& [name, by_args] : other.usual) {
    for (auto& [a, r] : by_args) usual[name][a].insert(r.begin(), r.end());
  }
  unreadable.insert(unreadable.end(), other.unreadable.begin(), other.unreadable.end());
  source_notes.insert(source_notes.end(), other.source_notes.begin(), other.source_notes.end());
}

std::string different_jobs(const Part& part, std::int64_t tolerance_ns) {
  for (const auto& [key, s] : part.keys) {
    if (s.earliest_completed == 0 || s.latest_created <= s.earliest_completed + tolerance_ns)
      continue;
    return log::cat(
        "the Flight Recorder dumps are not of one job (or their hosts' clocks differ "
        "by more than ",
        tolerance_ns / 1'000'000'000, " s): rank ", s.latest_created_rank, " created ", key.comm,
        " ", key.function, " #", key.seq, " ",
        static_cast<double>((s.latest_created - s.earliest_completed) / 100'000'000) / 10.0,
        " s after rank ", s.earliest_completed_rank, " had completed it");
  }
  return {};
}

}  // namespace commprof::diagnosis
