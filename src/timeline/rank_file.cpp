// SPDX-License-Identifier: MIT
#include "src/timeline/rank_file.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json op_to_json(const OpRecord& op) {
  return {{"name", op.name},     {"category", category_name(op.category)},
          {"stream", op.stream}, {"collective", op.collective},
          {"comm", op.comm},     {"comm_size", op.comm_size},
          {"seq", op.seq},       {"bytes", op.bytes},
          {"flops", op.flops},   {"start_ns", op.start_ns},
          {"end_ns", op.end_ns}};
}

// Reads field `key` of `obj` as T, or throws naming the file and the JSON path.
template <class T>
T field(const json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw Error(where + ": missing field '" + key + "'");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw Error(where + ": field '" + key + "' has the wrong type (" + it->type_name() + ")");
  }
}

Category parse_category(const std::string& text, const std::string& where) {
  for (Category c : kAllCategories) {
    if (text == category_name(c)) return c;
  }
  throw Error(where + ": unknown category '" + text + "' (expected COMP, COMM or MEM)");
}

}  // namespace

void write_rank_json(std::ostream& os, const RankTimeline& t) {
  ordered_json j;
  j["schema"] = kRankSchema;
  j["version"] = kRankSchemaVersion;
  j["rank"] = t.rank;
  j["world_size"] = t.world_size;
  j["local_rank"] = t.local_rank;
  j["host"] = t.host;
  j["device"] = t.device;
  j["backend"] = t.backend;
  j["clock_offset_ns"] = t.clock_offset_ns;
  j["config"] = ordered_json::parse(t.config_json.empty() ? "{}" : t.config_json);
  j["units"] = {{"time", "ns (host steady clock)"}, {"bytes", "B"}, {"flops", "FLOP"}};
  ordered_json steps = ordered_json::array();
  for (const StepRecord& s : t.steps) {
    ordered_json ops = ordered_json::array();
    for (const OpRecord& op : s.ops) ops.push_back(op_to_json(op));
    steps.push_back({{"index", s.index},
                     {"warmup", s.warmup},
                     {"start_ns", s.start_ns},
                     {"end_ns", s.end_ns},
                     {"ops", ops}});
  }
  j["steps"] = steps;
  os << j.dump() << '\n';
}

std::string write_rank_file(const std::string& dir, const RankTimeline& t) {
  const std::string path = dir + "/rank-" + std::to_string(t.rank) + ".json";
  write_file_atomically(path, [&](std::ostream& os) { write_rank_json(os, t); });
  return path;
}

RankTimeline parse_rank_json(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(source + ": not valid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
  if (!j.is_object()) throw Error(source + ": top level is not a JSON object");
  const std::string schema = field<std::string>(j, "schema", source);
  if (schema != kRankSchema) {
    throw Error(source + ": schema is '" + schema + "', expected '" + kRankSchema + "'");
  }
  const int version = field<int>(j, "version", source);
  if (version != kRankSchemaVersion) {
    throw Error(source + ": schema version " + std::to_string(version) + " is not supported " +
                "(this commprof reads version " + std::to_string(kRankSchemaVersion) + ")");
  }
  RankTimeline t;
  t.rank = field<int>(j, "rank", source);
  t.world_size = field<int>(j, "world_size", source);
  if (t.rank < 0 || t.world_size < 1 || t.rank >= t.world_size) {
    throw Error(source + ": rank " + std::to_string(t.rank) + " is not within world_size " +
                std::to_string(t.world_size));
  }
  t.local_rank = field<int>(j, "local_rank", source);
  t.host = field<std::string>(j, "host", source);
  t.device = field<std::string>(j, "device", source);
  t.backend = field<std::string>(j, "backend", source);
  t.clock_offset_ns = field<std::int64_t>(j, "clock_offset_ns", source);
  if (j.contains("config")) t.config_json = j["config"].dump();
  const auto steps = j.find("steps");
  if (steps == j.end() || !steps->is_array()) throw Error(source + ": 'steps' is not an array");
  for (std::size_t si = 0; si < steps->size(); ++si) {
    const json& sj = (*steps)[si];
    const std::string swhere = source + ": steps[" + std::to_string(si) + "]";
    if (!sj.is_object()) throw Error(swhere + " is not an object");
    StepRecord s;
    s.index = field<int>(sj, "index", swhere);
    s.warmup = field<bool>(sj, "warmup", swhere);
    s.start_ns = field<std::int64_t>(sj, "start_ns", swhere);
    s.end_ns = field<std::int64_t>(sj, "end_ns", swhere);
    if (s.end_ns < s.start_ns) throw Error(swhere + ": end_ns is before start_ns");
    const auto ops = sj.find("ops");
    if (ops == sj.end() || !ops->is_array()) throw Error(swhere + ": 'ops' is not an array");
    s.ops.reserve(ops->size());
    for (std::size_t oi = 0; oi < ops->size(); ++oi) {
      const json& oj = (*ops)[oi];
      const std::string where = swhere + ".ops[" + std::to_string(oi) + "]";
      if (!oj.is_object()) throw Error(where + " is not an object");
      OpRecord op;
      op.name = field<std::string>(oj, "name", where);
      op.category = parse_category(field<std::string>(oj, "category", where), where);
      op.stream = field<std::string>(oj, "stream", where);
      op.collective = field<std::string>(oj, "collective", where);
      op.comm = field<std::string>(oj, "comm", where);
      op.comm_size = field<int>(oj, "comm_size", where);
      op.seq = field<std::int64_t>(oj, "seq", where);
      op.bytes = field<std::uint64_t>(oj, "bytes", where);
      op.flops = field<double>(oj, "flops", where);
      op.start_ns = field<std::int64_t>(oj, "start_ns", where);
      op.end_ns = field<std::int64_t>(oj, "end_ns", where);
      if (op.end_ns < op.start_ns) throw Error(where + ": end_ns is before start_ns");
      if (!(op.flops >= 0.0)) throw Error(where + ": flops is negative or not a number");
      s.ops.push_back(std::move(op));
    }
    t.steps.push_back(std::move(s));
  }
  return t;
}

RankTimeline read_rank_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_rank_json(text.str(), path);
}

}  // namespace commprof
