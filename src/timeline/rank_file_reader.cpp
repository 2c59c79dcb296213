// SPDX-License-Identifier: MIT
// The complete rank-file reader: simdjson On-Demand over any valid JSON, with every problem named
// by file and position (steps[i].ops[j], byte offsets). Compiled for AVX2 where the build says so
// (COMMPROF_READER_HASWELL in analysis/CMakeLists.txt).
#include <simdjson.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"
#include "src/timeline/rank_file_detail.hpp"

namespace commprof {
namespace {

Category parse_category(const std::string& text, const std::string& where) {
  if (const auto c = category_from_name(text)) return *c;
  throw Error(where + ": unknown category '" + text + "' (expected COMP, COMM or MEM)");
}

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

// Compares a raw (escaped) key with a literal; keys are plain ASCII in every writer we know, and
// an escaped spelling of a known key merely reads as an unknown field (then "missing field").
template <std::size_t N>
bool key_is(const char* raw, const char (&literal)[N]) {
  return std::memcmp(raw, literal, N - 1) == 0 && raw[N - 1] == '"';
}

// Fields every op must have, as bits of a mask; names in the same order.
constexpr const char* kOpFields[] = {"name",  "category",  "stream", "collective",
                                     "comm",  "comm_size", "seq",    "bytes",
                                     "flops", "start_ns",  "end_ns"};
constexpr const char* kStepFields[] = {"index", "warmup", "start_ns", "end_ns", "ops"};
constexpr const char* kTopFields[] = {"schema",          "version", "rank",   "world_size",
                                      "local_rank",      "host",    "device", "backend",
                                      "clock_offset_ns", "steps"};

template <std::size_t N>
void require_all(const Where& w, unsigned seen, const char* const (&names)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if ((seen & (1u << i)) == 0) w.fail(std::string("missing field '") + names[i] + "'");
  }
}

OpRecord parse_op(const Where& w, sj::object obj) {
  OpRecord op;
  unsigned seen = 0;
  for (auto field : obj) {
    const char* k = field.key().value_unsafe().raw();
    sj::value v = field.value();
    // Dispatch on the first byte: one or two compares per field, no unescaping.
    switch (k[0]) {
      case 'n':
        if (key_is(k, "name")) op.name = get_str(w, "name", v), seen |= 1u << 0;
        break;
      case 'c':
        if (key_is(k, "category")) {
          const std::string_view c = get_str(w, "category", v);
          if (c == "COMP") {
            op.category = Category::kComp;
          } else if (c == "COMM") {
            op.category = Category::kComm;
          } else if (c == "MEM") {
            op.category = Category::kMem;
          } else {
            op.category = parse_category(std::string(c), w.str());  // throws, naming it
          }
          seen |= 1u << 1;
        } else if (key_is(k, "collective")) {
          op.collective = get_str(w, "collective", v), seen |= 1u << 3;
        } else if (key_is(k, "comm")) {
          op.comm = get_str(w, "comm", v), seen |= 1u << 4;
        } else if (key_is(k, "comm_size")) {
          op.comm_size = get_int(w, "comm_size", v), seen |= 1u << 5;
        }
        break;
      case 's':
        if (key_is(k, "stream")) {
          op.stream = get_str(w, "stream", v), seen |= 1u << 2;
        } else if (key_is(k, "seq")) {
          op.seq = get_i64(w, "seq", v), seen |= 1u << 6;
        } else if (key_is(k, "start_ns")) {
          op.start_ns = get_time(w, "start_ns", v), seen |= 1u << 9;
        }
        break;
      case 'b':
        if (key_is(k, "bytes")) op.bytes = get_u64(w, "bytes", v), seen |= 1u << 7;
        break;
      case 'f':
        if (key_is(k, "flops")) op.flops = get_f64(w, "flops", v), seen |= 1u << 8;
        break;
      case 'e':
        if (key_is(k, "end_ns")) op.end_ns = get_time(w, "end_ns", v), seen |= 1u << 10;
        break;
      default:
        break;  // fields added by later writers are skipped
    }
  }
  require_all(w, seen, kOpFields);
  if (op.end_ns < op.start_ns) w.fail("end_ns is before start_ns");
  if (!(op.flops >= 0.0)) w.fail("flops is negative or not a number");
  if (op.comm_size < 0) w.fail("comm_size is negative");
  return op;
}

// Reads every value once: On-Demand checks only what it reads, and skipping an object checks
// little more than its brackets, so without this a config such as {"a":tru} or {"a"b:1} passed
// (tests/fuzz found it), and writing the timeline again failed.
bool all_valid(sj::value v) {
  sj::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case sj::json_type::object: {
      sj::object o;
      if (v.get_object().get(o)) return false;
      for (auto field : o) {
        std::string_view key;
        sj::value value;
        if (field.unescaped_key().get(key) || field.value().get(value) || !all_valid(value)) {
          return false;
        }
      }
      return true;
    }
    case sj::json_type::array: {
      sj::array a;
      if (v.get_array().get(a)) return false;
      for (auto element : a) {
        sj::value value;
        if (element.get(value) || !all_valid(value)) return false;
      }
      return true;
    }
    case sj::json_type::number: {
      // As a double: JSON allows integers beyond 64 bits (which get_number() refuses, and the
      // one-pass reader accepts); a number beyond a double's range is refused by both.
      double d = 0;
      return !v.get_double().get(d);
    }
    case sj::json_type::string: {
      std::string_view str;
      return !v.get_string().get(str);
    }
    case sj::json_type::boolean: {
      bool b = false;
      return !v.get_bool().get(b);
    }
    case sj::json_type::null: {
      bool null = false;
      return !v.is_null().get(null) && null;
    }
  }
  return false;
}

// The config is kept as text (its raw JSON); a second, small parse of that text proves it is JSON.
void check_config(const Where& w, const std::string& raw) {
  thread_local sj::parser parser;
  const simdjson::padded_string text(raw);
  sj::document doc;
  sj::value value;
  bool ok = false;
  try {
    // The text is exactly the object's raw JSON, so nothing can follow it.
    ok = !parser.iterate(text).get(doc) && !doc.get_value().get(value) && all_valid(value);
  } catch (const simdjson::simdjson_error&) {
    ok = false;
  }
  if (!ok) w.fail("field 'config' is not valid JSON");
}

StepRecord parse_step(Where& w, sj::object obj) {
  StepRecord s;
  unsigned seen = 0;
  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    sj::value v = field.value();
    if (key == "index") {
      s.index = get_int(w, key, v), seen |= 1u << 0;
    } else if (key == "warmup") {
      s.warmup = get_bool(w, key, v), seen |= 1u << 1;
    } else if (key == "start_ns") {
      s.start_ns = get_time(w, key, v), seen |= 1u << 2;
    } else if (key == "end_ns") {
      s.end_ns = get_time(w, key, v), seen |= 1u << 3;
    } else if (key == "ops") {
      sj::array ops;
      if (v.get_array().get(ops)) w.fail("'ops' is not an array");
      for (auto element : ops) {
        ++w.op;
        sj::object o;
        if (element.get_object().get(o)) w.fail("is not an object");
        s.ops.push_back(parse_op(w, o));
      }
      w.op = -1;
      seen |= 1u << 4;
    }
  }
  if ((seen & (1u << 4)) == 0) w.fail("'ops' is not an array");
  require_all(w, seen, kStepFields);
  if (s.end_ns < s.start_ns) w.fail("end_ns is before start_ns");
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
    unsigned seen = 0;
    for (auto field : top) {
      std::string_view key = field.unescaped_key();
      sj::value v = field.value();
      if (key == "schema") {
        const std::string_view schema = get_str(w, key, v);
        if (schema != kRankSchema) {
          w.fail("schema is '" + std::string(schema) + "', expected '" + kRankSchema + "'");
        }
        seen |= 1u << 0;
      } else if (key == "version") {
        const int version = get_int(w, key, v);
        if (version != kRankSchemaVersion) {
          w.fail("schema version " + std::to_string(version) + " is not supported " +
                 "(this commprof reads version " + std::to_string(kRankSchemaVersion) + ")");
        }
        seen |= 1u << 1;
      } else if (key == "rank") {
        t.rank = get_int(w, key, v), seen |= 1u << 2;
      } else if (key == "world_size") {
        t.world_size = get_int(w, key, v), seen |= 1u << 3;
      } else if (key == "local_rank") {
        t.local_rank = get_int(w, key, v), seen |= 1u << 4;
      } else if (key == "host") {
        t.host = get_str(w, key, v), seen |= 1u << 5;
      } else if (key == "device") {
        t.device = get_str(w, key, v), seen |= 1u << 6;
      } else if (key == "backend") {
        t.backend = get_str(w, key, v), seen |= 1u << 7;
      } else if (key == "clock_offset_ns") {
        t.clock_offset_ns = get_time(w, key, v), seen |= 1u << 8;
      } else if (key == "config") {
        sj::object config;
        std::string_view raw;
        if (v.get_object().get(config) || config.raw_json().get(raw)) {
          w.fail("field 'config' is not an object");
        }
        t.config_json = std::string(raw);
        check_config(w, t.config_json);
      } else if (key == "steps") {
        if ((seen & 3u) != 3u) w.fail("'schema' and 'version' must come before 'steps'");
        sj::array steps;
        if (v.get_array().get(steps)) w.fail("'steps' is not an array");
        for (auto element : steps) {
          ++w.step;
          sj::object so;
          if (element.get_object().get(so)) w.fail("is not an object");
          t.steps.push_back(parse_step(w, so));
        }
        w.step = -1;
        seen |= 1u << 9;
      }
    }
    if ((seen & (1u << 9)) == 0) w.fail("'steps' is not an array");
    require_all(w, seen, kTopFields);
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
  return detail::parse_document(padded, source);
}

RankTimeline read_rank_file(const std::string& path) {
  detail::check_reader_cpu(path);
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text)) {
    throw Error("cannot read '" + path + "': " + std::strerror(errno));
  }
  return detail::parse_document(text, path);
}

}  // namespace commprof
