// SPDX-License-Identifier: MIT
// What the round-trip tests of the shared reduction's messages (wire_codec.hpp) share: a value
// encoded and decoded, and the check that every message cut short is refused with an Error.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "analysis/wire_codec.hpp"
#include "src/core/errors.hpp"

namespace commprof::test {

template <class T>
T round_trip(const T& value) {
  return wire::decode<T>(wire::encode(value));
}

/// Every proper prefix of `value`'s message, and the message with a byte more, is an Error
/// (never a crash, never a value read from the wrong bytes).
template <class T>
void expect_cut_messages_refused(const T& value) {
  const std::string bytes = wire::encode(value);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THROW(wire::decode<T>(std::string_view(bytes).substr(0, n)), Error) << n << " bytes";
  }
  EXPECT_THROW(wire::decode<T>(bytes + '\0'), Error);
}

}  // namespace commprof::test
