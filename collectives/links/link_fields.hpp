// SPDX-License-Identifier: MIT
// The link model file's fields (schema commprof.links), each named once: its key and the member
// that holds it. The writer and the parser (link_model_file.cpp) walk these tables, so a new
// field is one line here. A required field missing from a file is an error naming it; an optional
// one reads as the member's default. (schema, version, source, time_formula, fits and samples are
// structure: the writer and the parser handle them by name.)
#pragma once

#include <string_view>
#include <tuple>

#include "collectives/links/link_model.hpp"

namespace commprof::link_fields {

/// One field of a row of the file: its key, its member, whether a file must have it, and what
/// the parser checks of its value once read (nullptr: its type alone).
template <class Row, class T>
struct Member {
  std::string_view key;
  T Row::*member;
  bool required;
  void (*check)(const T&) = nullptr;
};

template <class Row, class T>
constexpr Member<Row, T> required(std::string_view key, T Row::*member,
                                  void (*check)(const T&) = nullptr) {
  return {key, member, true, check};
}
template <class Row, class T>
constexpr Member<Row, T> optional(std::string_view key, T Row::*member) {
  return {key, member, false, nullptr};
}

/// A fit, in the order the writer writes it.
inline constexpr auto kFit = std::make_tuple(
    required("collective", &LinkFit::collective), required("link", &LinkFit::link),
    optional("group", &LinkFit::group), required("latency_us", &LinkFit::latency_us),
    required("busbw_gbps", &LinkFit::busbw_gbps), optional("points", &LinkFit::points),
    optional("rms_rel_error", &LinkFit::rms_rel_error), optional("ranks", &LinkFit::ranks),
    optional("min_bytes", &LinkFit::min_bytes), optional("max_bytes", &LinkFit::max_bytes));

/// A measured time, in the order the writer writes it.
inline constexpr auto kSample = std::make_tuple(
    required("collective", &LinkSample::collective), required("link", &LinkSample::link),
    optional("group", &LinkSample::group), required("ranks", &LinkSample::ranks),
    required("bytes", &LinkSample::bytes), required("time_us", &LinkSample::time_us));

}  // namespace commprof::link_fields
