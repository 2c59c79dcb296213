// SPDX-License-Identifier: MIT
#include "analysis/pickle_values.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {
namespace {

using Value = std::shared_ptr<nlohmann::json>;
constexpr std::size_t kMaxDepth = 10000;     // values on the stack at once
constexpr std::uint64_t kMaxMemo = 1 << 24;  // memo slots

class Reader {
 public:
  Reader(std::string_view bytes, const std::string& source) : in_(bytes), source_(source) {}

  nlohmann::json run() {
    for (;;) {
      op_at_ = pos_;
      const auto op = static_cast<std::uint8_t>(take(1)[0]);
      if (op == '.') break;  // STOP
      step(op);
    }
    if (stack_.size() != 1 || !marks_.empty())
      fail("STOP with " + std::to_string(stack_.size()) + " values on the stack, not one");
    return *stack_.back();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(log::cat(source_, ": not a pickle of plain values at byte ", op_at_, ": ", what));
  }
  std::string_view take(std::size_t n) {
    if (n > in_.size() - pos_) fail("truncated (it ends inside an opcode's argument)");
    const std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::uint64_t le(std::size_t n) {  // an unsigned little-endian integer of n bytes
    const std::string_view b = take(n);
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<std::uint8_t>(b[i]);
    return v;
  }
  void push(nlohmann::json v) {
    if (stack_.size() >= kMaxDepth) fail("more than 10,000 values on the stack");
    stack_.push_back(std::make_shared<nlohmann::json>(std::move(v)));
  }
  Value pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("a value taken past a mark");
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::vector<Value> pop_mark() {
    if (marks_.empty()) fail("no MARK to take values back to");
    std::vector<Value> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()),
                             stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  nlohmann::json& top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("no value to add to");
    return *stack_.back();
  }
  // A signed little-endian integer of n bytes (LONG1, LONG4), which must fit 64 bits.
  std::int64_t long_of(std::size_t n) {
    if (n > 8) fail("an integer of more than 64 bits");
    if (n == 0) return 0;
    std::uint64_t v = le(n);
    if (n < 8 && (v >> (8 * n - 1)) != 0) v |= ~std::uint64_t{0} << (8 * n);  // sign
    return static_cast<std::int64_t>(v);
  }
  // A key that is no string (a tuple) as its JSON text; bytes that are no UTF-8 inside it are
  // replaced (dump would throw: the fuzzer found such a key).
  std::string key_of(const nlohmann::json& k) const {
    return k.is_string() ? k.get<std::string>()
                         : k.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  void set_items(const std::vector<Value>& kv) {
    if (kv.size() % 2 != 0) fail("SETITEMS with a key but no value");
    nlohmann::json& dict = top();
    if (!dict.is_object()) fail("SETITEMS on a value that is no dict");
    for (std::size_t i = 0; i < kv.size(); i += 2) dict[key_of(*kv[i])] = *kv[i + 1];
  }
  void append(const std::vector<Value>& items) {
    nlohmann::json& list = top();
    if (!list.is_array()) fail("APPENDS on a value that is no list");
    for (const Value& v : items) list.push_back(*v);
  }
  void memo_put(std::uint64_t i) {
    if (i >= kMaxMemo) fail("a memo index beyond 2^24");
    memo_[i] = std::make_shared<nlohmann::json>(top());
    // The stack keeps the memo's value: a list filled later is the one BINGET returns.
    stack_.back() = memo_[i];
  }
  void memo_get(std::uint64_t i) {
    const auto it = memo_.find(i);
    if (it == memo_.end()) fail("BINGET of memo " + std::to_string(i) + ", never put");
    if (stack_.size() >= kMaxDepth) fail("more than 10,000 values on the stack");
    stack_.push_back(std::make_shared<nlohmann::json>(*it->second));
  }
  void tuple_of(std::size_t n) {
    nlohmann::json t = nlohmann::json::array();
    std::vector<Value> items(n);
    for (std::size_t i = n; i-- > 0;) items[i] = pop();
    for (const Value& v : items) t.push_back(*v);
    push(std::move(t));
  }
  void step(std::uint8_t op);

  std::string_view in_;
  const std::string& source_;
  std::size_t pos_ = 0, op_at_ = 0;
  std::vector<Value> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Value> memo_;
};

void Reader::step(std::uint8_t op) {
  switch (op) {
    case 0x80:
      take(1);
      return;  // PROTO
    case 0x95:
      take(8);
      return;  // FRAME: its length; the opcodes follow as usual
    case '(':
      marks_.push_back(stack_.size());
      return;  // MARK
    case '}':
      push(nlohmann::json::object());
      return;  // EMPTY_DICT
    case ']':
      push(nlohmann::json::array());
      return;  // EMPTY_LIST
    case ')':
      push(nlohmann::json::array());
      return;  // EMPTY_TUPLE
    case 'N':
      push(nullptr);
      return;  // NONE
    case 0x88:
      push(true);
      return;  // NEWTRUE
    case 0x89:
      push(false);
      return;  // NEWFALSE
    case 'K':
      push(le(1));
      return;  // BININT1
    case 'M':
      push(le(2));
      return;  // BININT2
    case 'J':
      push(static_cast<std::int32_t>(le(4)));
      return;  // BININT
    case 0x8a:
      push(long_of(le(1)));
      return;  // LONG1
    case 0x8b:
      push(long_of(le(4)));
      return;    // LONG4
    case 'G': {  // BINFLOAT, big-endian
      const std::string_view b = take(8);
      std::uint64_t bits = 0;
      for (char c : b) bits = (bits << 8) | static_cast<std::uint8_t>(c);
      double d = 0;
      std::memcpy(&d, &bits, sizeof d);
      push(d);
      return;
    }
    case 'X':
      push(std::string(take(le(4))));
      return;  // BINUNICODE
    case 0x8c:
      push(std::string(take(le(1))));
      return;  // SHORT_BINUNICODE
    case 0x8d:
      push(std::string(take(le(8))));
      return;    // BINUNICODE8
    case 't': {  // TUPLE
      nlohmann::json t = nlohmann::json::array();
      for (const Value& v : pop_mark()) t.push_back(*v);
      push(std::move(t));
      return;
    }
    case 0x85:
      tuple_of(1);
      return;  // TUPLE1
    case 0x86:
      tuple_of(2);
      return;  // TUPLE2
    case 0x87:
      tuple_of(3);
      return;  // TUPLE3
    case 'a':
      append({pop()});
      return;  // APPEND
    case 'e':
      append(pop_mark());
      return;    // APPENDS
    case 's': {  // SETITEM
      const Value v = pop();
      const Value k = pop();
      set_items({k, v});
      return;
    }
    case 'u':
      set_items(pop_mark());
      return;  // SETITEMS
    case 'q':
      memo_put(le(1));
      return;  // BINPUT
    case 'r':
      memo_put(le(4));
      return;  // LONG_BINPUT
    case 0x94:
      memo_put(memo_.size());
      return;  // MEMOIZE
    case 'h':
      memo_get(le(1));
      return;  // BINGET
    case 'j':
      memo_get(le(4));
      return;  // LONG_BINGET
    case '0':
      pop();
      return;  // POP
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", op);
      fail(log::cat("opcode ", hex,
                    " is not a plain value's (only dicts, lists, tuples, text, "
                    "numbers, booleans and None are read; nothing that names Python code)"));
    }
  }
}

}  // namespace

nlohmann::json read_pickle(std::string_view bytes, const std::string& source) {
  return Reader(bytes, source).run();
}

}  // namespace commprof
