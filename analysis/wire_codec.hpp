// SPDX-License-Identifier: MIT
// One codec per struct for what the processes of a shared reduction send one another.
//
// Why: every struct used to be written by one function and read back by another, field by field
// in lock step (some 330 put/get calls). A field added to the writer and not to the reader, or
// read in another order, went unnoticed until a report came out wrong. Here a struct that
// crosses processes has a single `template <class IO> void transfer(IO& io, T& value)` beside
// it that names each field once, `io(value.a, value.b, ...)`; wire::Writer runs it to write and
// wire::Reader runs the same function to read, so the two cannot drift apart. Numbers, enums,
// strings, vectors, maps, sets, pairs and tuples need no transfer() of their own.
//
// Every message begins with kVersion: a process of another build meets a clear error naming
// both versions instead of misreading the bytes. A message cut short, or with bytes after its
// end, is an Error too (byte_codec.hpp), never a crash.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "analysis/byte_codec.hpp"
#include "src/core/errors.hpp"

namespace commprof::wire {

/// The format of the shared reduction's messages. Raise it whenever a transfer() changes.
inline constexpr std::uint32_t kVersion = 7;

namespace detail {
template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T>
struct is_tuple : std::false_type {};
template <class... E>
struct is_tuple<std::tuple<E...>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class E, class A>
struct is_vector<std::vector<E, A>> : std::true_type {};
template <class T>
struct is_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_map<std::map<K, V, C, A>> : std::true_type {};
template <class T>
struct is_set : std::false_type {};
template <class K, class C, class A>
struct is_set<std::set<K, C, A>> : std::true_type {};
template <class T>
inline constexpr bool is_list_v =
    detail::is_vector<T>::value || detail::is_map<T>::value || detail::is_set<T>::value;
}  // namespace detail

/// A trivially copyable struct whose fields are not all public (Stat's running sums) travels as
/// its bytes, all of them, exactly: `io(wire::raw(value))`. Every process runs the same build on
/// the same kind of host (byte_codec.hpp).
template <class T>
struct Raw {
  static_assert(std::is_trivially_copyable_v<T>);
  T* value;
};
template <class T>
Raw<T> raw(T& value) {
  return {&value};
}
namespace detail {
template <class T>
struct is_raw : std::false_type {};
template <class T>
struct is_raw<Raw<T>> : std::true_type {};
}  // namespace detail

class Writer {
 public:
  Writer() { out_.put(kVersion); }
  /// Writes each value in turn. transfer() takes its value by non-const reference so that one
  /// function serves both directions; writing only reads it.
  template <class... T>
  void operator()(const T&... values) {
    (write(values), ...);
  }
  /// The head of a list of `n` elements, laid out as a vector of them, for lists built one
  /// element at a time: the n elements must follow (Reader::each reads them).
  void list(std::uint64_t n) { out_.put(n); }
  std::string take() { return out_.take(); }

 private:
  template <class T>
  void write(const T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      out_.put(v);
    } else if constexpr (detail::is_raw<T>::value) {
      out_.put(*v.value);
    } else if constexpr (std::is_same_v<T, std::string>) {
      out_.put_string(v);
    } else if constexpr (detail::is_pair<T>::value) {
      write(v.first);
      write(v.second);
    } else if constexpr (detail::is_tuple<T>::value) {
      std::apply([this](const auto&... e) { (write(e), ...); }, v);
    } else if constexpr (detail::is_list_v<T>) {
      out_.put<std::uint64_t>(v.size());
      for (const auto& e : v) write(e);
    } else {
      transfer(*this, const_cast<T&>(v));  // NOLINT: transfer() only reads it here
    }
  }
  ByteWriter out_;
};

class Reader {
 public:
  /// Checks the message's version; throws Error naming both where it is not this build's.
  explicit Reader(std::string_view bytes) : in_(bytes) {
    const auto version = take<std::uint32_t>();
    if (version != kVersion) {
      throw Error("reduction message of format version " + std::to_string(version) +
                  ", but this commprof reads version " + std::to_string(kVersion) +
                  " (are the processes running different builds?)");
    }
  }
  explicit Reader(std::string&&) = delete;  // it would read a destroyed temporary
  /// Reads each value in turn, replacing what it held (a raw() value: what it refers to).
  template <class... T>
  void operator()(T&&... values) {
    (read(values), ...);
  }
  template <class T>
  T read() {
    T value{};
    read(value);
    return value;
  }
  /// Reads a list (Writer::list, or a vector) one element at a time, handing each to `f`.
  template <class T, class F>
  void each(F&& f) {
    for (auto n = list_size(); n > 0; --n) f(read<T>());
  }
  bool done() const { return in_.done(); }
  /// Throws Error unless the whole message has been read.
  void expect_end() const {
    if (!done()) throw Error("reduction message has bytes after its end");
  }

 private:
  template <class T>
  T take() {
    return in_.get<T>();
  }
  // Every element takes a byte at least: a count beyond what is left is a message cut short
  // (or garbled), refused before anything is allocated for it.
  std::uint64_t list_size() {
    const auto n = take<std::uint64_t>();
    if (n > in_.left()) throw Error("reduction message cut short");
    return n;
  }
  template <class T>
  void read(T& v) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      v = take<T>();
    } else if constexpr (detail::is_raw<T>::value) {
      *v.value = in_.get<std::remove_const_t<std::remove_pointer_t<decltype(v.value)>>>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      v = in_.get_bytes(list_size());
    } else if constexpr (detail::is_pair<T>::value) {
      read(v.first);
      read(v.second);
    } else if constexpr (detail::is_tuple<T>::value) {
      std::apply([this](auto&... e) { (read(e), ...); }, v);
    } else if constexpr (detail::is_vector<T>::value) {
      v.clear();
      for (auto n = list_size(); n > 0; --n) read(v.emplace_back());
    } else if constexpr (detail::is_map<T>::value) {
      v.clear();
      for (auto n = list_size(); n > 0; --n) {
        std::pair<typename T::key_type, typename T::mapped_type> e;
        read(e);
        v.insert(v.end(), std::move(e));
      }
    } else if constexpr (detail::is_set<T>::value) {
      v.clear();
      for (auto n = list_size(); n > 0; --n) v.insert(v.end(), read<typename T::key_type>());
    } else {
      transfer(*this, v);
    }
  }
  ByteReader in_;
};

/// A message holding `values`, in order.
template <class... T>
std::string encode(const T&... values) {
  Writer w;
  w(values...);
  return w.take();
}

/// The one value a message holds (encode(value)); throws Error where it holds another version,
/// less, or more.
template <class T>
T decode(std::string_view bytes) {
  Reader r(bytes);
  T value = r.read<T>();
  r.expect_end();
  return value;
}

}  // namespace commprof::wire
