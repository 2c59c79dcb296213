// SPDX-License-Identifier: MIT
// The complete rank-file reader: simdjson On-Demand over any valid JSON, with every problem named
// by file and position (steps[i].ops[j], byte offsets). Compiled for AVX2 where the build says so
// (COMMPROF_READER_HASWELL in analysis/CMakeLists.txt).
#include <simdjson.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <type_traits>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_fields.hpp"
#include "src/timeline/rank_file.hpp"
#include "src/timeline/rank_file_detail.hpp"
#include "src/timeline/step_detection.hpp"
#include "src/timeline/zstd_frames.hpp"

namespace commprof {
namespace {

namespace sj = simdjson::ondemand;

// Where the parser is, for messages: "<file>: steps[3].ops[7]". Built only when something fails.
struct Where {
  const std::string& source;
  const char* base = nullptr;  // start of the text, for byte offsets
  long step = -1;
  long op = -1;
  std::string str() const {
    std::string w = source;
    if (step >= 0) w += ": steps[" + std::to_string(step) + "]";
    if (op >= 0) w += ".ops[" + std::to_string(op) + "]";
    return w;
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(str() + ": " + what); }
};

const char* type_name(sj::value& v) {
  sj::json_type t;
  if (v.type().get(t)) return "invalid";
  switch (t) {
    case sj::json_type::array:
      return "array";
    case sj::json_type::object:
      return "object";
    case sj::json_type::number:
      return "number";
    case sj::json_type::string:
      return "string";
    case sj::json_type::boolean:
      return "boolean";
    case sj::json_type::null:
      return "null";
  }
  return "?";
}

[[noreturn]] void wrong_type(const Where& w, std::string_view key, sj::value& v,
                             const char* expected) {
  w.fail("field '" + std::string(key) + "' has the wrong type (" + type_name(v) + ", expected " +
         expected + ")");
}

std::int64_t get_i64(const Where& w, std::string_view key, sj::value v) {
  std::int64_t x = 0;
  if (v.get_int64().get(x)) wrong_type(w, key, v, "an integer");
  return x;
}
// A time: an integer within [-kMaxTimeNs, kMaxTimeNs].
std::int64_t get_time(const Where& w, std::string_view key, sj::value v) {
  const std::int64_t x = get_i64(w, key, v);
  if (x < -kMaxTimeNs || x > kMaxTimeNs) {
    w.fail("field '" + std::string(key) + "' is out of range (" + std::to_string(x) +
           "; times are within +-2^60 ns)");
  }
  return x;
}
int get_int(const Where& w, std::string_view key, sj::value v) {
  const std::int64_t x = get_i64(w, key, v);
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) {
    w.fail("field '" + std::string(key) + "' is out of range (" + std::to_string(x) + ")");
  }
  return static_cast<int>(x);
}
std::uint64_t get_u64(const Where& w, std::string_view key, sj::value v) {
  std::uint64_t x = 0;
  if (v.get_uint64().get(x)) wrong_type(w, key, v, "a non-negative integer");
  return x;
}
double get_f64(const Where& w, std::string_view key, sj::value v) {
  double x = 0;
  if (v.get_double().get(x)) wrong_type(w, key, v, "a number");
  return x;
}
bool get_bool(const Where& w, std::string_view key, sj::value v) {
  bool x = false;
  if (v.get_bool().get(x)) wrong_type(w, key, v, "a boolean");
  return x;
}
std::string_view get_str(const Where& w, std::string_view key, sj::value v) {
  // Fast path: a string without escapes is its raw token minus the quotes (stage 1 already
  // validated UTF-8), which skips simdjson's out-of-line unescaping call.
  const std::string_view tok = v.raw_json_token();
  if (tok.size() >= 2 && tok.front() == '"') {
    const std::size_t close = tok.find_last_of('"');
    if (close > 0 && tok.substr(1, close - 1).find('\\') == std::string_view::npos) {
      return tok.substr(1, close - 1);
    }
  }
  std::string_view x;
  if (v.get_string().get(x)) wrong_type(w, key, v, "a string");
  return x;
}

// A value of the type of the member it goes to, checked as the field table says.
template <class T>
void read_value(const Where& w, std::string_view key, sj::value v, rank_fields::Check check,
                T& out) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    out = check == rank_fields::Check::kTime ? get_time(w, key, v) : get_i64(w, key, v);
  } else if constexpr (std::is_same_v<T, int>) {
    out = get_int(w, key, v);
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    out = get_u64(w, key, v);
  } else if constexpr (std::is_same_v<T, double>) {
    out = get_f64(w, key, v);
  } else if constexpr (std::is_same_v<T, bool>) {
    out = get_bool(w, key, v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = get_str(w, key, v);
  } else if constexpr (std::is_same_v<T, std::vector<std::int32_t>>) {
    sj::array list;
    if (v.get_array().get(list)) wrong_type(w, key, v, "an array of op indices");
    out.clear();
    for (auto element : list) {
      sj::value index;
      if (element.get(index)) w.fail("field '" + std::string(key) + "' is not valid JSON");
      out.push_back(get_int(w, key, index));
    }
  } else if constexpr (std::is_same_v<T, std::vector<std::uint64_t>>) {
    sj::array list;
    if (v.get_array().get(list)) wrong_type(w, key, v, "an array of byte counts");
    out.clear();
    for (auto element : list) {
      sj::value count;
      if (element.get(count)) w.fail("field '" + std::string(key) + "' is not valid JSON");
      out.push_back(get_u64(w, key, count));
    }
  } else {
    static_assert(std::is_same_v<T, Category>, "a rank-file field of a type no reader knows");
    const std::string_view name = get_str(w, key, v);
    const std::optional<Category> c = category_from_name(name);
    if (!c) w.fail("unknown category '" + std::string(name) + "' (expected COMP, COMM or MEM)");
    out = *c;
  }
}

// Reads the field `key` of `table` into `r` and marks it in `seen`; false when `table` has no
// such field (one of a later writer: skipped).
template <class Table, class R>
bool read_field(const Where& w, const Table& table, std::string_view key, sj::value v, R& r,
                unsigned& seen) {
  return rank_fields::find(table, key, [&](const auto& f, std::size_t i) {
    read_value(w, f.key, v, f.check, r.*(f.record));
    seen |= 1u << i;
  });
}

// Every required field of `table` must have been read.
template <class Table>
void require_all(const Where& w, unsigned seen, const Table& table) {
  rank_fields::for_each(table, [&](const auto& f, std::size_t i) {
    if (!f.optional && (seen & (1u << i)) == 0) {
      w.fail("missing field '" + std::string(f.key) + "'");
    }
  });
}

template <class Table, class R>
void check_record(const Where& w, const Table& table, const R& r) {
  const std::string problem = rank_fields::record_problem(table, r);
  if (!problem.empty()) w.fail(problem);
}

// An op's key as written: plain ASCII up to its closing quote. Ops are most of a file, so their
// keys are not unescaped; an escaped spelling of a known key (it keeps its backslash here) merely
// reads as an unknown field, and the op is then missing that field.
std::string_view raw_key(const char* raw) {
  const char* end = raw;
  while (*end != '"') ++end;
  return {raw, static_cast<std::size_t>(end - raw)};
}

OpRecord parse_op(const Where& w, sj::object obj) {
  OpRecord op;
  unsigned seen = 0;
  for (auto field : obj) {
    // The value first: on broken JSON it throws, before the key (then null) is looked at.
    sj::value v = field.value();
    read_field(w, rank_fields::kOp, raw_key(field.key().value_unsafe().raw()), v, op, seen);
  }
  require_all(w, seen, rank_fields::kOp);
  check_record(w, rank_fields::kOp, op);
  return op;
}

StepRecord parse_step(Where& w, sj::object obj) {
  StepRecord s;
  unsigned seen = 0;
  bool has_ops = false;
  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    sj::value v = field.value();
    if (key == "ops") {
      sj::array ops;
      if (v.get_array().get(ops)) w.fail("'ops' is not an array");
      for (auto element : ops) {
        ++w.op;
        sj::object o;
        if (element.get_object().get(o)) w.fail("is not an object");
        s.ops.push_back(parse_op(w, o));
      }
      w.op = -1;
      has_ops = true;
    } else {
      read_field(w, rank_fields::kStep, key, v, s, seen);
    }
  }
  if (!has_ops) w.fail("'ops' is not an array");
  require_all(w, seen, rank_fields::kStep);
  check_record(w, rank_fields::kStep, s);
  return s;
}
}  // namespace

namespace detail {

RankTimeline parse_document(const simdjson::padded_string_view text, const std::string& source) {
  // One parser per thread, reused: its buffers grow to the largest file once.
  thread_local sj::parser parser;
  Where w{source, text.data()};
  sj::document doc;
  try {
    if (auto error = parser.iterate(text).get(doc)) {
      throw Error(source + ": not valid JSON: " + simdjson::error_message(error));
    }
    sj::object top;
    if (doc.get_object().get(top)) throw Error(source + ": top level is not a JSON object");
    RankTimeline t;
    unsigned seen = 0;  // the header table's fields
    bool schema = false, version = false, steps_read = false;
    for (auto field : top) {
      std::string_view key = field.unescaped_key();
      sj::value v = field.value();
      if (key == "schema") {
        const std::string_view name = get_str(w, key, v);
        if (name != kRankSchema) {
          w.fail("schema is '" + std::string(name) + "', expected '" + kRankSchema + "'");
        }
        schema = true;
      } else if (key == "version") {
        const int number = get_int(w, key, v);
        if (number != kRankSchemaVersion) {
          w.fail("schema version " + std::to_string(number) + " is not supported " +
                 "(this commprof reads version " + std::to_string(kRankSchemaVersion) + ")");
        }
        version = true;
      } else if (key == "config") {
        sj::object config;
        std::string_view raw;
        if (v.get_object().get(config) || config.raw_json().get(raw)) {
          w.fail("field 'config' is not an object");
        }
        try {
          t.config = JsonObject::parse(raw);
        } catch (const Error&) {
          w.fail("field 'config' is not valid JSON");
        }
      } else if (key == "steps") {
        if (!schema || !version) w.fail("'schema' and 'version' must come before 'steps'");
        sj::array steps;
        if (v.get_array().get(steps)) w.fail("'steps' is not an array");
        for (auto element : steps) {
          ++w.step;
          sj::object so;
          if (element.get_object().get(so)) w.fail("is not an object");
          t.steps.push_back(parse_step(w, so));
        }
        w.step = -1;
        steps_read = true;
      } else {
        read_field(w, rank_fields::kHeader, key, v, t, seen);
      }
    }
    if (!steps_read) w.fail("'steps' is not an array");
    if (!schema) w.fail("missing field 'schema'");
    if (!version) w.fail("missing field 'version'");
    require_all(w, seen, rank_fields::kHeader);
    if (t.rank < 0 || t.world_size < 1 || t.rank >= t.world_size) {
      throw Error(source + ": rank " + std::to_string(t.rank) + " is not within world_size " +
                  std::to_string(t.world_size));
    }
    return t;
  } catch (const simdjson::simdjson_error& e) {
    // Structural errors (truncated file, bad literal, broken UTF-8) surface while iterating.
    std::string at;
    const char* location = nullptr;
    if (!doc.current_location().get(location) && location >= text.data()) {
      at = " at byte " + std::to_string(location - text.data());
    } else {
      at = " (at or near the end of the text)";
    }
    throw Error(w.str() + ": not valid JSON" + at + ": " + e.what());
  }
}

namespace {

// Where the last line of `text` starts (a final newline is not a line of its own); none when the
// text is one line.
std::optional<std::size_t> last_line_start(std::string_view text) {
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  if (end == 0) return std::nullopt;
  const std::size_t newline = text.rfind('\n', end - 1);
  if (newline == std::string_view::npos) return std::nullopt;
  return newline + 1;
}

}  // namespace

// The file as written, or its whole steps where its writer stopped within its last line.
RankTimeline read_whole_steps(const simdjson::padded_string_view text, const std::string& source) {
  try {
    return parse_document(text, source);
  } catch (const Error&) {
    const std::exception_ptr original = std::current_exception();
    const std::string_view all(text);
    // `kept` closed as the writer closes the file, or nothing when that is not a valid file.
    auto closed = [&](std::string_view kept) -> std::optional<RankTimeline> {
      try {
        return parse_document(
            simdjson::padded_string(std::string(kept) + std::string(kRankFileEnd)), source);
      } catch (const Error&) {
        return std::nullopt;
      }
    };
    // The writer stopped after a step's line, before the end: every step is whole.
    if (!all.empty() && all.back() == '\n') {
      if (std::optional<RankTimeline> t = closed(all)) {
        log::warn(source + ": it ends without its closing ']}' (the writer stopped after its " +
                  "last step); read its " + std::to_string(t->steps.size()) + " steps");
        return std::move(*t);
      }
    }
    // The writer stopped within a step's line: the steps before it are whole.
    if (const std::optional<std::size_t> cut = last_line_start(all)) {
      if (std::optional<RankTimeline> t = closed(all.substr(0, *cut))) {
        log::warn(source + ": its last line is a torn step record (the writer stopped while " +
                  "appending it); dropped it (" + std::to_string(all.size() - *cut) +
                  " bytes), read the " + std::to_string(t->steps.size()) + " steps before it");
        return std::move(*t);
      }
    }
    std::rethrow_exception(original);
  }
}

// A plugin capture (one step holding the whole job) is cut into its training steps here, so that
// every reader of rank files sees the same steps (step_detection.hpp).
RankTimeline parse_or_recover(const simdjson::padded_string_view text, const std::string& source) {
  RankTimeline t = read_whole_steps(text, source);
  cut_plugin_capture(t);
  return t;
}

void check_reader_cpu(const std::string& path) {
#if defined(__AVX2__) && (defined(__GNUC__) || defined(__clang__))
  // This file is compiled for Haswell (AVX2) so simdjson's On-Demand front end runs its SIMD
  // kernels (COMMPROF_READER_HASWELL in analysis/CMakeLists.txt); refuse cleanly elsewhere.
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("bmi")) {
    throw Error("cannot read '" + path +
                "': this commprof was built with "
                "COMMPROF_READER_HASWELL=ON and this CPU lacks AVX2; rebuild with it OFF");
  }
#endif
}

}  // namespace detail

RankTimeline parse_rank_json(const std::string& text, const std::string& source) {
  const simdjson::padded_string padded(text);
  return detail::parse_or_recover(padded, source);
}

RankTimeline read_rank_file(const std::string& path) {
  detail::check_reader_cpu(path);
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text)) {
    throw Error("cannot read '" + path + "': " + std::strerror(errno));
  }
  const std::string_view bytes(text.data(), text.size());
  if (starts_with_zstd_frame(bytes)) {
    std::string json;
    read_zstd_frames(bytes, path, json);
    return detail::parse_or_recover(simdjson::padded_string(json), path);
  }
  return detail::parse_or_recover(text, path);
}

}  // namespace commprof
