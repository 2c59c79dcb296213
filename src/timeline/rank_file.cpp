// SPDX-License-Identifier: MIT
#include "src/timeline/rank_file.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

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

// Written by hand rather than through a JSON DOM: a rank of a long run has hundreds of thousands
// of ops, and building one ordered_json per op costs more than the run's own bookkeeping.
void append_string(std::string& out, const std::string& s) {
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

template <class T>
void append_number(std::string& out, T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void write_rank_json(std::ostream& os, const RankTimeline& t) {
  std::string out;
  out.reserve(4096);
  out += "{\"schema\":";
  append_string(out, kRankSchema);
  out += ",\"version\":";
  append_number(out, kRankSchemaVersion);
  out += ",\"rank\":";
  append_number(out, t.rank);
  out += ",\"world_size\":";
  append_number(out, t.world_size);
  out += ",\"local_rank\":";
  append_number(out, t.local_rank);
  out += ",\"host\":";
  append_string(out, t.host);
  out += ",\"device\":";
  append_string(out, t.device);
  out += ",\"backend\":";
  append_string(out, t.backend);
  out += ",\"clock_offset_ns\":";
  append_number(out, t.clock_offset_ns);
  out += ",\"config\":";
  // Validated and normalised: a malformed config must not make the whole file unreadable.
  out += ordered_json::parse(t.config_json.empty() ? "{}" : t.config_json).dump();
  out += ",\"units\":{\"time\":\"ns (host steady clock)\",\"bytes\":\"B\",\"flops\":\"FLOP\"}";
  out += ",\"steps\":[";
  for (std::size_t si = 0; si < t.steps.size(); ++si) {
    const StepRecord& s = t.steps[si];
    if (si > 0) out += ',';
    out += "{\"index\":";
    append_number(out, s.index);
    out += s.warmup ? ",\"warmup\":true" : ",\"warmup\":false";
    out += ",\"start_ns\":";
    append_number(out, s.start_ns);
    out += ",\"end_ns\":";
    append_number(out, s.end_ns);
    out += ",\"ops\":[";
    for (std::size_t oi = 0; oi < s.ops.size(); ++oi) {
      const OpRecord& op = s.ops[oi];
      if (!std::isfinite(op.flops)) {
        throw Error("rank " + std::to_string(t.rank) + ": op '" + op.name + "' has flops " +
                    std::to_string(op.flops) + ", which JSON cannot hold");
      }
      out += oi > 0 ? ",{\"name\":" : "{\"name\":";
      append_string(out, op.name);
      out += ",\"category\":\"";
      out += category_name(op.category);
      out += "\",\"stream\":";
      append_string(out, op.stream);
      out += ",\"collective\":";
      append_string(out, op.collective);
      out += ",\"comm\":";
      append_string(out, op.comm);
      out += ",\"comm_size\":";
      append_number(out, op.comm_size);
      out += ",\"seq\":";
      append_number(out, op.seq);
      out += ",\"bytes\":";
      append_number(out, op.bytes);
      out += ",\"flops\":";
      append_number(out, op.flops);
      out += ",\"start_ns\":";
      append_number(out, op.start_ns);
      out += ",\"end_ns\":";
      append_number(out, op.end_ns);
      out += '}';
      if (out.size() > (1u << 20)) {
        os.write(out.data(), static_cast<std::streamsize>(out.size()));
        out.clear();
      }
    }
    out += "]}";
  }
  out += "]}\n";
  os.write(out.data(), static_cast<std::streamsize>(out.size()));
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
