// SPDX-License-Identifier: MIT
// Writing rank files (schema commprof.rank, see rank_file.hpp). The readers are in
// rank_file_reader.cpp (complete, names every problem) and rank_file_stream.cpp (one pass, fast).
#include "src/timeline/rank_file.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <system_error>

#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using nlohmann::ordered_json;

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

}  // namespace commprof
