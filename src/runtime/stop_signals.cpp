// SPDX-License-Identifier: MIT
#include "src/runtime/stop_signals.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

namespace commprof {
namespace {

// The handler runs on whichever thread the kernel picks (a stream's worker thread as often as
// the main one), so a volatile sig_atomic_t is not enough: the store must be visible to the main
// thread's read. A lock-free atomic is both async-signal-safe and a synchronised store.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "a signal handler may only touch lock-free atomics");

extern "C" void record_signal(int signal) { g_signal.store(signal, std::memory_order_relaxed); }

}  // namespace

void install_stop_signals() {
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // MPI and CUDA calls in flight continue; we stop between steps
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int stop_signal() { return g_signal.load(std::memory_order_relaxed); }

void clear_stop_signal() { g_signal.store(0, std::memory_order_relaxed); }

void pause_unless_stopped(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (stop_signal() == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace commprof
