// SPDX-License-Identifier: MIT
// Backend::idle_for on the host backend: a wait of a set time on the stream's thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace commprof {

/// Returns once `ns` nanoseconds have passed on the steady clock. It polls instead of sleeping:
/// the gaps it replays are often tens of microseconds, and a sleeping thread wakes tens of
/// microseconds late; the thread computes nothing meanwhile.
inline void wait_on_host(std::uint64_t ns) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point end = Clock::now() + std::chrono::nanoseconds(ns);
  while (Clock::now() < end) {
  }
}

}  // namespace commprof
