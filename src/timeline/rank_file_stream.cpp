// SPDX-License-Identifier: MIT
// The one-pass rank-file reader behind stream_rank_file: no structural index, no copies; on
// anything unusual it hands the file to the complete reader (rank_file_reader.cpp).
#include <simdjson.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "src/core/errors.hpp"
#include "src/timeline/rank_fields.hpp"
#include "src/timeline/rank_file.hpp"
#include "src/timeline/rank_file_detail.hpp"
#include "src/timeline/zstd_frames.hpp"

namespace commprof {

// ---------------------------------------------------------------------------------------------
// The compact reader: one pass over the text, no structural index, no copies. It accepts only a
// strict subset of JSON (no whitespace but after the top-level object, strings of printable
// ASCII without escapes, integers without fraction or exponent, header fields before "steps",
// each of "steps" and "ops" once), which is exactly what write_rank_json produces. Anything else,
// and any problem at all, makes it give up (return false); the caller then reads the file with
// parse_document, which names the problem. So on what it accepts it must agree with
// parse_document field by field: the same fields, the same values, the same checks.

namespace {
namespace compact {

constexpr int kMaxDepth = 64;
// The fields every op must have.
constexpr unsigned kOpRequired = rank_fields::required_mask(rank_fields::kOp);

// A key or value against a literal: inlined compares, no call to memcmp.
template <std::size_t N>
bool is(std::string_view s, const char (&literal)[N]) {
  if (s.size() != N - 1) return false;
  for (std::size_t i = 0; i + 1 < N; ++i) {
    if (s[i] != literal[i]) return false;
  }
  return true;
}

class Reader {
 public:
  Reader(const char* begin, const char* end, RankStepSink& sink)
      : p_(begin), end_(end), sink_(sink) {}

  bool document() {
    RankTimeline t;
    unsigned seen = 0;  // the header table's fields
    bool schema = false, version = false, steps_done = false;
    if (!lit('{')) return false;
    do {
      if (steps_done) return false;  // fields after "steps": let parse_document decide
      std::string_view k;
      if (!str(k) || !lit(':')) return false;
      bool ok = true;
      if (is(k, "schema")) {
        std::string_view v;
        ok = str(v) && v == kRankSchema, schema = true;
      } else if (is(k, "version")) {
        std::int64_t v = 0;
        ok = i64(v) && v == kRankSchemaVersion, version = true;
      } else if (is(k, "config")) {
        const char* start = p_;
        ok = p_ < end_ && *p_ == '{' && skip_value(0);
        if (ok) ok = config(std::string_view(start, static_cast<std::size_t>(p_ - start)), t);
      } else if (is(k, "steps")) {
        // The sink needs the header first; every header field, valid, before "steps".
        if (!schema || !version || seen != all_of(rank_fields::kHeader) || t.rank < 0 ||
            t.world_size < 1 || t.rank >= t.world_size) {
          return false;
        }
        // A plugin capture is cut into steps as a whole (step_detection.hpp): the full parser.
        if (t.backend == "nccl-profiler") return false;
        sink_.header(t);
        ok = steps();
        steps_done = true;
      } else if (!fields_value(rank_fields::kHeader, k, t, seen, ok)) {
        ok = skip_value(0);
      }
      if (!ok) return false;
    } while (lit(','));
    if (!lit('}') || !steps_done) return false;
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    return p_ == end_;
  }

 private:
  const char* p_;
  const char* end_;
  RankStepSink& sink_;
  std::vector<OpView> ops_;
  // The step's lists ("after", "send_to", "recv_from"; "peer_send_bytes", "peer_recv_bytes"),
  // one after another in the storage of their element type; each op's span is set once the
  // step's ops are read (the storage may move while they are).
  template <class T>
  struct Lists {
    struct List {
      std::size_t op, begin, size;
      ListView<T> OpView::*member;
    };
    std::vector<T> values;
    std::vector<List> lists;
    void clear() {
      values.clear();
      lists.clear();
    }
    void place(std::vector<OpView>& ops) const {
      for (const List& a : lists)
        ops[a.op].*(a.member) = ListView<T>(values.data() + a.begin, a.size);
    }
  };
  Lists<std::int32_t> indices_;
  Lists<std::uint64_t> peer_bytes_;

  bool lit(char c) {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  template <std::size_t N>
  bool word(const char (&w)[N]) {
    if (static_cast<std::size_t>(end_ - p_) < N - 1 || !is(std::string_view(p_, N - 1), w)) {
      return false;
    }
    p_ += N - 1;
    return true;
  }
  // p_ is copied to a local in the loops below: as a member it would be stored on every byte.
  bool str(std::string_view& out) {
    const char* p = p_;
    if (p >= end_ || *p != '"') return false;
    const char* s = ++p;
#if defined(__SSE2__)
    // 16 bytes at a time to the first byte that is not plain printable ASCII or is a quote
    // (the mapping has no padding: only while 16 bytes remain).
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end_ - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // Signed compare: bytes 0x80-0xff are negative, so below 0x20 like control characters.
      const __m128i stop =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                       _mm_cmplt_epi8(v, space));
      const int mask = _mm_movemask_epi8(stop);
      if (mask != 0) {
        p += __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
      p += 16;
    }
#endif
    for (;; ++p) {
      if (p >= end_) return false;
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') break;
      // Control characters, non-ASCII bytes (UTF-8 left to simdjson) and escapes.
      if (static_cast<unsigned char>(c - 0x20) >= 0x60 || c == '\\') return false;
    }
    out = std::string_view(s, static_cast<std::size_t>(p - s));
    p_ = p + 1;
    return true;
  }
  bool string(std::string& out) {
    std::string_view v;
    if (!str(v)) return false;
    out.assign(v);
    return true;
  }
  // Digits of an integer part: "0" or [1-9][0-9]*; returns their count (0: none, or bad).
  std::size_t digits(std::uint64_t& v) {
    const char* p = p_;
    std::uint64_t x = 0;
    while (p < end_ && static_cast<unsigned>(*p - '0') < 10u) {
      x = x * 10 + static_cast<unsigned>(*p - '0');
      ++p;
    }
    const auto n = static_cast<std::size_t>(p - p_);
    const bool leading_zero = n > 1 && *p_ == '0';
    p_ = p;
    v = x;
    return leading_zero ? 0 : n;
  }
  bool integer_ends() const { return !(p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')); }
  // At most 18 digits: below 10^18 < kMaxTimeNs, so every integer read here is a valid time,
  // as parse_document requires of the time fields.
  static_assert(999'999'999'999'999'999 < kMaxTimeNs);
  bool i64(std::int64_t& out) {
    const bool neg = lit('-');
    std::uint64_t v = 0;
    const std::size_t n = digits(v);
    if (n == 0 || n > 18 || !integer_ends()) return false;
    out = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
    return true;
  }
  bool u64(std::uint64_t& out) {
    const std::size_t n = digits(out);
    return n > 0 && n <= 18 && integer_ends();
  }
  bool int32(int& out) {
    std::int64_t v = 0;
    if (!i64(v) || v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      return false;
    }
    out = static_cast<int>(v);
    return true;
  }
  bool boolean(bool& out) {
    if (word("true")) {
      out = true;
    } else if (word("false")) {
      out = false;
    } else {
      return false;
    }
    return true;
  }
  // A JSON number by the grammar, then converted with correct rounding (as simdjson does).
  bool number_text(const char*& start) {
    start = p_;
    lit('-');
    std::uint64_t ignored = 0;
    if (digits(ignored) == 0) return false;
    if (lit('.') && !any_digits()) return false;
    if (lit('e') || lit('E')) {
      if (!lit('+')) lit('-');
      if (!any_digits()) return false;
    }
    return true;
  }
  bool any_digits() {
    const char* d = p_;
    while (p_ < end_ && static_cast<unsigned>(*p_ - '0') < 10u) ++p_;
    return p_ != d;
  }
  bool f64(double& out) {
    const char* start = nullptr;
    if (!number_text(start)) return false;
    // A plain integer below 2^53 is exactly that double: no correctly-rounded parse needed.
    const char* d = start + (*start == '-' ? 1 : 0);
    if (p_ - d <= 15) {
      std::uint64_t v = 0;
      const char* q = d;
      for (; q < p_ && static_cast<unsigned>(*q - '0') < 10u; ++q) {
        v = v * 10 + static_cast<unsigned>(*q - '0');
      }
      if (q == p_) {
        out = static_cast<double>(v);
        if (d != start) out = -out;
        return true;
      }
    }
    const auto r = std::from_chars(start, p_, out);
    return r.ec == std::errc() && r.ptr == p_ && std::isfinite(out);
  }
  bool skip_value(int depth) {
    if (p_ >= end_ || depth > kMaxDepth) return false;
    std::string_view sv;
    switch (*p_) {
      case '{':
        ++p_;
        if (lit('}')) return true;
        do {
          if (!str(sv) || !lit(':') || !skip_value(depth + 1)) return false;
        } while (lit(','));
        return lit('}');
      case '[':
        ++p_;
        if (lit(']')) return true;
        do {
          if (!skip_value(depth + 1)) return false;
        } while (lit(','));
        return lit(']');
      case '"':
        return str(sv);
      case 't':
        return word("true");
      case 'f':
        return word("false");
      case 'n':
        return word("null");
      default: {
        double d = 0;
        return f64(d);
      }
    }
  }

  // One step to a line, as write_rank_json puts them: a newline may follow "[" and each step.
  bool steps() {
    if (!lit('[')) return false;
    lit('\n');
    if (lit(']')) return true;
    do {
      if (!step()) return false;
      lit('\n');
    } while (lit(','));
    return lit(']');
  }

  bool step() {
    StepView s;
    unsigned seen = 0;
    bool has_ops = false;
    if (!lit('{')) return false;
    do {
      std::string_view k;
      if (!str(k) || !lit(':')) return false;
      bool ok = true;
      if (is(k, "ops")) {
        if (has_ops) return false;  // a second "ops" appends in parse_step
        ok = ops(), has_ops = true;
      } else if (!fields_value(rank_fields::kStep, k, s, seen, ok)) {
        ok = skip_value(0);
      }
      if (!ok) return false;
    } while (lit(','));
    if (!lit('}') || !has_ops ||
        (seen & all_of(rank_fields::kStep)) != all_of(rank_fields::kStep) ||
        !rank_fields::record_valid(rank_fields::kStep, s)) {
      return false;
    }
    s.ops = &ops_;
    sink_.step(s);
    return true;
  }

  bool ops() {
    ops_.clear();
    indices_.clear();
    peer_bytes_.clear();
    if (!lit('[')) return false;
    if (lit(']')) return true;
    do {
      // Read in place: an OpView is ~290 bytes, and building one aside to copy it in cost as
      // much as its parse.
      ops_.emplace_back();
      if (!op_in_order(ops_.back())) return false;
    } while (lit(','));
    indices_.place(ops_);
    peer_bytes_.place(ops_);
    return lit(']');
  }

  // An op read by its table: the writer puts each field in the table's order, the optional ones
  // only where set, so the keys are checked where they must be, as fixed bytes, instead of each
  // being scanned as a string and looked up. Anything else (another order, a field of a later
  // writer, a bad value) reads the op again by the general loop below, which decides.
  bool op_in_order(OpView& o) {
    const char* const start = p_;
    const std::size_t indices = indices_.values.size(), index_lists = indices_.lists.size();
    const std::size_t bytes = peer_bytes_.values.size(), bytes_lists = peer_bytes_.lists.size();
    bool ok = lit('{');
    bool first = true;
    unsigned seen = 0;
    rank_fields::for_each(rank_fields::kOp, [&](const auto& f, std::size_t i) {
      if (!ok) return;
      if (!key_here(f.key, first)) {
        ok = f.optional;
        return;
      }
      first = false;
      ok = field_value(f, o);
      seen |= 1u << i;
    });
    if (ok && lit('}') && (seen & kOpRequired) == kOpRequired &&
        rank_fields::record_valid(rank_fields::kOp, o)) {
      return true;
    }
    p_ = start;
    o = OpView{};
    indices_.values.resize(indices), indices_.lists.resize(index_lists);
    peer_bytes_.values.resize(bytes), peer_bytes_.lists.resize(bytes_lists);
    return op(o);
  }
  // `"key":` here, after a comma unless `first`; moves past it only when it is.
  bool key_here(std::string_view key, bool first) {
    const char* p = p_;
    if (!first) {
      if (p >= end_ || *p != ',') return false;
      ++p;
    }
    if (static_cast<std::size_t>(end_ - p) < key.size() + 3 || p[0] != '"' ||
        std::memcmp(p + 1, key.data(), key.size()) != 0 || p[key.size() + 1] != '"' ||
        p[key.size() + 2] != ':') {
      return false;
    }
    p_ = p + key.size() + 3;
    return true;
  }

  bool op(OpView& o) {
    unsigned seen = 0;
    if (!lit('{')) return false;
    do {
      std::string_view k;
      if (!str(k) || !lit(':')) return false;
      bool ok = true;
      if (!fields_value(rank_fields::kOp, k, o, seen, ok)) ok = skip_value(0);
      if (!ok) return false;
    } while (lit(','));
    return lit('}') && (seen & kOpRequired) == kOpRequired &&
           rank_fields::record_valid(rank_fields::kOp, o);
  }

  // The field `k` of `table`: its value read into `r` (`ok` false when it is not valid) and
  // marked in `seen`. False when `table` has no such field.
  template <class Table, class R>
  bool fields_value(const Table& table, std::string_view k, R& r, unsigned& seen, bool& ok) {
    return rank_fields::find(table, k, [&](const auto& f, std::size_t i) {
      ok = field_value(f, r);
      seen |= 1u << i;
    });
  }
  // The value of field `f` into `r` (a list's span is set when the step's ops are read).
  template <class Field, class R>
  bool field_value(const Field& f, R& r) {
    using V = std::decay_t<decltype(r.*(f.view))>;
    if constexpr (std::is_same_v<V, OpIndices>) {
      return list(f.view, indices_, [this](std::int32_t& x) { return int32(x); });
    } else if constexpr (std::is_same_v<V, PeerBytes>) {
      return list(f.view, peer_bytes_, [this](std::uint64_t& x) { return u64(x); });
    } else {
      return value(r.*(f.view));
    }
  }
  // The fields a record must have (optional ones may be absent).
  template <class Table>
  static constexpr unsigned all_of(const Table& table) {
    return rank_fields::required_mask(table);
  }
  // A value of the member's type. Integers have at most 18 digits here, so every one is also a
  // valid time (rank_fields::Check::kTime) without a further check.
  bool value(std::string_view& out) { return str(out); }
  bool value(std::string& out) { return string(out); }
  bool value(std::int64_t& out) { return i64(out); }
  bool value(std::uint64_t& out) { return u64(out); }
  bool value(int& out) { return int32(out); }
  bool value(double& out) { return f64(out); }
  bool value(bool& out) { return boolean(out); }
  // [i,j,...] of the op being read (the last of ops_) into `member`, each element read by
  // `element`: its span is set when the step's ops are read.
  template <class T, class Element>
  bool list(ListView<T> OpView::*member, Lists<T>& into, Element element) {
    if (!lit('[')) return false;
    const std::size_t begin = into.values.size();
    if (!lit(']')) {
      do {
        T x{};
        if (!element(x)) return false;
        into.values.push_back(x);
      } while (lit(','));
      if (!lit(']')) return false;
    }
    into.lists.push_back({ops_.size() - 1, begin, into.values.size() - begin, member});
    return true;
  }
  bool value(Category& out) {
    std::string_view name;
    if (!str(name)) return false;
    const std::optional<Category> known = category_from_name(name);
    if (known) out = *known;
    return known.has_value();
  }
  // The configuration, parsed as the complete reader does (so both refuse the same texts).
  static bool config(std::string_view raw, RankTimeline& t) {
    try {
      t.config = JsonObject::parse(raw);
      return true;
    } catch (const Error&) {
      return false;
    }
  }
};

}  // namespace compact
}  // namespace

bool detail::read_compact(const char* begin, const char* end, RankStepSink& sink) {
  return compact::Reader(begin, end, sink).document();
}

std::vector<OpView> op_views(const StepRecord& step) {
  std::vector<OpView> views(step.ops.size());
  for (std::size_t i = 0; i < step.ops.size(); ++i) {
    rank_fields::for_each(rank_fields::kOp, [&](const auto& f, std::size_t) {
      views[i].*(f.view) = step.ops[i].*(f.record);
    });
  }
  return views;
}

StepRecord to_step_record(const StepView& view) {
  StepRecord s;
  rank_fields::for_each(rank_fields::kStep,
                        [&](const auto& f, std::size_t) { s.*(f.record) = view.*(f.view); });
  if (view.ops == nullptr) return s;
  s.ops.resize(view.ops->size());
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    rank_fields::for_each(rank_fields::kOp, [&](const auto& f, std::size_t) {
      auto& to = s.ops[i].*(f.record);
      const auto& from = (*view.ops)[i].*(f.view);
      if constexpr (rank_fields::kIsList<std::decay_t<decltype(from)>>) {
        to.assign(from.begin(), from.end());
      } else {
        to = from;
      }
    });
  }
  return s;
}

namespace {

// Reads a whole file into `buffer` (reused from file to file, so its pages are faulted in once)
// with simdjson's padding after it; false on any problem (the caller asks simdjson, for its
// message).
bool load_padded(const std::string& path, std::vector<char>& buffer, std::size_t& size) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  struct stat st {};
  bool ok = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && std::fseek(f, 0, SEEK_END) == 0;
  const long length = ok ? std::ftell(f) : -1;
  ok = ok && length >= 0 && std::fseek(f, 0, SEEK_SET) == 0;
  if (ok) {
    size = static_cast<std::size_t>(length);
    if (buffer.size() < size + simdjson::SIMDJSON_PADDING) {
      buffer.resize(size + simdjson::SIMDJSON_PADDING);
    }
    ok = std::fread(buffer.data(), 1, size, f) == size;
    std::memset(buffer.data() + size, 0, simdjson::SIMDJSON_PADDING);
  }
  std::fclose(f);
  return ok;
}

}  // namespace

// A read-only mapping of a whole regular file, or none (empty, unmappable): no copy of the page
// cache, which for gigabytes of rank files costs more than reading them.
class Mapping {
 public:
  explicit Mapping(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ,
                       MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const char*>(p);
        size_ = static_cast<std::size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  ~Mapping() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

void stream_rank_file(const std::string& path, RankStepSink& sink) {
  detail::check_reader_cpu(path);
  thread_local std::vector<char> buffer;
  // A zstd file: the text of its frames, read as a file of that text. Torn frames are dropped
  // (and named) here, a torn line by the readers.
  auto read_zstd = [&](std::string_view bytes) {
    thread_local std::string text;
    text.clear();
    read_zstd_frames(bytes, path, text);
    const std::size_t size = text.size();
    text.append(simdjson::SIMDJSON_PADDING, '\0');
    const simdjson::padded_string_view padded(text.data(), size, text.size());
    if (detail::read_compact(padded.data(), padded.data() + padded.size(), sink)) {
      sink.end();
      return;
    }
    sink.restart();
    send_timeline(detail::parse_or_recover(padded, path), sink);
  };
  {
    const Mapping map(path);
    if (starts_with_zstd_frame(std::string_view(map.data(), map.size()))) {
      read_zstd(std::string_view(map.data(), map.size()));
      return;
    }
    if (map.data() != nullptr) {
      if (detail::read_compact(map.data(), map.data() + map.size(), sink)) {
        sink.end();
        return;
      }
      sink.restart();
    }
  }
  std::size_t size = 0;
  if (!load_padded(path, buffer, size)) {
    simdjson::padded_string unused;
    if (simdjson::padded_string::load(path).get(unused)) {
      throw Error("cannot read '" + path + "': " + std::strerror(errno));
    }
    throw Error("cannot read '" + path + "': it changed while being read");
  }
  if (starts_with_zstd_frame(std::string_view(buffer.data(), size))) {
    read_zstd(std::string_view(buffer.data(), size));
    return;
  }
  const simdjson::padded_string_view text(buffer.data(), size, buffer.size());
  if (detail::read_compact(text.data(), text.data() + text.size(), sink)) {
    sink.end();
    return;
  }
  sink.restart();
  send_timeline(detail::parse_or_recover(text, path), sink);
}

namespace {

// Keeps the header and stops the reader there: an exception of its own, which no reader catches.
struct HeaderOnly final : RankStepSink {
  struct Done {};
  RankTimeline kept;
  void header(const RankTimeline& h) override {
    kept = h;
    throw Done{};
  }
  void step(const StepView&) override {}
  void end() override {}
  void restart() override {}
};

}  // namespace

RankTimeline read_rank_header(const std::string& path) {
  HeaderOnly sink;
  try {
    stream_rank_file(path, sink);
  } catch (const HeaderOnly::Done&) {
  }
  sink.kept.steps.clear();
  return std::move(sink.kept);
}

void send_timeline(RankTimeline timeline, RankStepSink& sink) {
  const std::vector<StepRecord> steps = std::move(timeline.steps);
  timeline.steps.clear();
  sink.header(timeline);
  for (const StepRecord& s : steps) {
    const std::vector<OpView> views = op_views(s);
    StepView v;
    rank_fields::for_each(rank_fields::kStep,
                          [&](const auto& f, std::size_t) { v.*(f.view) = s.*(f.record); });
    v.ops = &views;
    sink.step(v);
  }
  sink.end();
}

}  // namespace commprof
