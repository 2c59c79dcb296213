// SPDX-License-Identifier: MIT
// A plain binary encoding for what processes of a distributed reduction send one another:
// numbers as their bytes (every process runs the same build on the same kind of host), strings
// and lists with their length first. Doubles keep their exact bits, so a sum finished on another
// process is the same sum.
//
// Where size matters more than a fixed layout (a run's step graphs cross processes op by op;
// protobuf's numbers in Chakra's traces), numbers go as LEB128 varints instead: 7 bits a byte,
// least significant first, the high bit set on every byte but the last. Signed numbers are
// zig-zagged into them (0, -1, 1, -2 as 0, 1, 2, 3), so a small offset of either sign stays
// short: a time as an offset from its step's start takes 3 to 5 bytes instead of 8.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "src/core/errors.hpp"

namespace commprof {

class ByteWriter {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    bytes_.append(s.data(), s.size());
  }
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

/// Reads what a ByteWriter wrote; reading past the end throws Error (a message cut short).
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  explicit ByteReader(std::string&&) = delete;  // it would read a destroyed temporary
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }
  std::string get_string() { return get_bytes(get<std::uint64_t>()); }
  std::string get_bytes(std::size_t n) { return std::string(take(n)); }
  bool done() const { return at_ == bytes_.size(); }
  std::size_t left() const { return bytes_.size() - at_; }

 private:
  std::string_view take(std::size_t n) {
    if (n > bytes_.size() - at_) throw Error("reduction message cut short");
    const std::string_view out = bytes_.substr(at_, n);
    at_ += n;
    return out;
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
};

// ------------------------------------------------------------------ LEB128 varints
/// The most bytes one varint takes.
inline constexpr std::size_t kMaxVarintBytes = 10;
/// Writes `v` as an unsigned LEB128 varint at `at`, which has room for kMaxVarintBytes; returns
/// the byte after it. Packers of many small records make room for a record at once and write
/// its numbers this way, instead of growing a string byte by byte.
inline char* write_varint(char* at, std::uint64_t v) {
  while (v >= 0x80) {
    *at++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *at++ = static_cast<char>(v);
  return at;
}
/// `v` zig-zagged into a varint, as write_varint.
inline char* write_signed_varint(char* at, std::int64_t v) {
  return write_varint(at,
                      (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}
/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
inline void put_varint(std::string& out, std::uint64_t v) {
  char b[kMaxVarintBytes];
  out.append(b, static_cast<std::size_t>(write_varint(b, v) - b));
}
/// Appends `v` zig-zagged into a varint.
inline void put_signed_varint(std::string& out, std::int64_t v) {
  char b[kMaxVarintBytes];
  out.append(b, static_cast<std::size_t>(write_signed_varint(b, v) - b));
}
/// Appends `s` with its length first, as a varint.
inline void put_varint_text(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

/// Reads what put_varint and its kin wrote. A message cut short, or a number of more than 64
/// bits, throws Error naming the message (`what`: "critical path message").
class VarintReader {
 public:
  VarintReader(std::string_view bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  VarintReader(std::string&&, std::string) = delete;  // it would read a destroyed temporary
  std::uint64_t get() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == bytes_.size()) throw Error(what_ + " cut short");
      const auto b = static_cast<unsigned char>(bytes_[at_++]);
      // The tenth byte holds the 64th bit alone.
      if (shift == 63 && b > 1) break;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    throw Error(what_ + " holds a number too long");
  }
  std::int64_t get_signed() {
    const std::uint64_t u = get();
    return static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1);
  }
  int get_int() { return static_cast<int>(get_signed()); }
  /// Text put_varint_text wrote: a view into the message.
  std::string_view get_text() {
    const std::uint64_t n = get();
    if (n > bytes_.size() - at_) throw Error(what_ + " cut short");
    const std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  std::string what_;
  std::size_t at_ = 0;
};

}  // namespace commprof
