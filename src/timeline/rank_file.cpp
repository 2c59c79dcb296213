// SPDX-License-Identifier: MIT
// Writing rank files (schema commprof.rank, see rank_file.hpp) from the field tables of
// rank_fields.hpp. The readers are in rank_file_reader.cpp (complete, names every problem) and
// rank_file_stream.cpp (one pass, fast).
#include "src/timeline/rank_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <system_error>
#include <utility>

#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_fields.hpp"
#include "src/timeline/zstd_frames.hpp"

namespace commprof {
namespace {

// Written by hand rather than through a JSON DOM: a rank of a long run has hundreds of thousands
// of ops, and building one ordered_json per op costs more than the run's own bookkeeping.
// Control characters are escaped, so no string puts a newline into the file (see kRankFileEnd).
void append_value(std::string& out, std::string_view s) {
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
void append_value(std::string& out, const std::string& s) {
  append_value(out, std::string_view(s));
}

// A list (op indices, ranks, bytes per peer) as a JSON array: [3,7].
template <class T>
void append_value(std::string& out, const std::vector<T>& list) {
  out += '[';
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += ',';
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, list[i]);
    out.append(buf, r.ptr);
  }
  out += ']';
}

template <class T>
void append_value(std::string& out, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, Category>) {
    out += '"';
    out += category_name(v);
    out += '"';
  } else {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
  }
}

// `r`'s fields of `table`, each as ,"key":value (the first without the comma when `open`).
template <class Table, class R>
void append_fields(std::string& out, const Table& table, const R& r, bool open) {
  static const R kUnknown{};  // every member at its initial value: "not known"
  rank_fields::for_each(table, [&](const auto& f, std::size_t i) {
    // Not known: left out. The first field is required.
    if (f.optional && r.*(f.record) == kUnknown.*(f.record)) return;
    out += (open && i == 0) ? "\"" : ",\"";
    out += f.key;
    out += "\":";
    append_value(out, r.*(f.record));
  });
}

}  // namespace

std::string rank_file_head(const RankTimeline& t) {
  std::string out = "{\"schema\":";
  append_value(out, std::string_view(kRankSchema));
  out += ",\"version\":";
  append_value(out, kRankSchemaVersion);
  append_fields(out, rank_fields::kHeader, t, /*open=*/false);
  out += ",\"config\":";
  out += t.config.dump();
  out += ",\"units\":{\"time\":\"ns (host steady clock)\",\"bytes\":\"B\",\"flops\":\"FLOP\"}";
  out += ",\"steps\":[\n";
  return out;
}

void append_step_line(std::string& out, const StepRecord& s, bool first, int rank) {
  out += first ? "{" : ",{";
  append_fields(out, rank_fields::kStep, s, /*open=*/true);
  out += ",\"ops\":[";
  for (std::size_t oi = 0; oi < s.ops.size(); ++oi) {
    const OpRecord& op = s.ops[oi];
    if (!std::isfinite(op.flops)) {
      throw Error("rank " + std::to_string(rank) + ": op '" + op.name + "' has flops " +
                  std::to_string(op.flops) + ", which JSON cannot hold");
    }
    out += oi > 0 ? ",{" : "{";
    append_fields(out, rank_fields::kOp, op, /*open=*/true);
    out += '}';
  }
  out += "]}\n";
}

void write_rank_json(std::ostream& os, const RankTimeline& t) {
  std::string out = rank_file_head(t);
  for (std::size_t si = 0; si < t.steps.size(); ++si) {
    append_step_line(out, t.steps[si], si == 0, t.rank);
    if (out.size() > (1u << 20)) {
      os.write(out.data(), static_cast<std::streamsize>(out.size()));
      out.clear();
    }
  }
  out += kRankFileEnd;
  os.write(out.data(), static_cast<std::streamsize>(out.size()));
}

RankFileFormat parse_rank_file_format(const std::string& name) {
  if (name == "json") return RankFileFormat::kJson;
  if (name == "zstd") return RankFileFormat::kZstd;
  throw ConfigError("invalid rank file format '" + name + "': expected json or zstd");
}

std::string rank_file_piece(std::string_view text, RankFileFormat format) {
  return format == RankFileFormat::kZstd ? zstd_frame(text) : std::string(text);
}

std::string rank_file_path(const std::string& dir, int rank, RankFileFormat format) {
  return dir + "/rank-" + std::to_string(rank) +
         (format == RankFileFormat::kZstd ? ".json.zst" : ".json");
}

std::vector<std::string> expand_rank_inputs(const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  // The names rank_file_path gives, in either format.
  static const std::regex kRankFile(R"(rank-([0-9]+)\.json(\.zst)?)");
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!fs::is_directory(input, ec)) {
      files.push_back(input);  // a missing file is named in the report, not fatal
      continue;
    }
    std::vector<std::pair<long long, std::string>> found;
    for (const fs::directory_entry& e : fs::directory_iterator(input, ec)) {
      std::smatch m;
      const std::string name = e.path().filename().string();
      if (std::regex_match(name, m, kRankFile)) found.emplace_back(std::stoll(m[1]), e.path());
    }
    if (ec) throw Error("cannot list directory '" + input + "': " + ec.message());
    if (found.empty()) throw Error("'" + input + "' holds no rank-<R>.json files");
    std::sort(found.begin(), found.end());
    for (auto& f : found) files.push_back(std::move(f.second));
  }
  return files;
}

std::vector<std::string> rank_files_so_far(const std::vector<std::string>& inputs) {
  try {
    return expand_rank_inputs(inputs);
  } catch (const Error&) {
    return {};  // no rank file yet: the job has not written one
  }
}

std::string write_rank_file(const std::string& dir, const RankTimeline& t, RankFileFormat format) {
  const std::string path = rank_file_path(dir, t.rank, format);
  write_file_atomically(path, [&](std::ostream& os) {
    if (format == RankFileFormat::kJson) {
      write_rank_json(os, t);
      return;
    }
    auto put = [&](std::string_view text) {
      const std::string frame = zstd_frame(text);
      os.write(frame.data(), static_cast<std::streamsize>(frame.size()));
    };
    put(rank_file_head(t));
    std::string line;
    for (std::size_t si = 0; si < t.steps.size(); ++si) {
      line.clear();
      append_step_line(line, t.steps[si], si == 0, t.rank);
      put(line);
    }
    put(kRankFileEnd);
  });
  return path;
}

}  // namespace commprof
