// SPDX-License-Identifier: MIT
// A plain binary encoding for what processes of a distributed reduction send one another:
// numbers as their bytes (every process runs the same build on the same kind of host), strings
// and lists with their length first. Doubles keep their exact bits, so a sum finished on another
// process is the same sum.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

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

}  // namespace commprof
