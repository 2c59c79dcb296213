// SPDX-License-Identifier: MIT
// Processes of a distributed reduction as threads of one test: a ReduceExchange over in-memory
// mailboxes, for the tests that check the shared reductions against one process.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analysis/reduce_exchange.hpp"

namespace commprof::test {

// Mailboxes shared by `size` threads; each collective is two barrier phases (post, collect).
class Mailboxes {
 public:
  explicit Mailboxes(int size)
      : size_(size),
        box_(static_cast<std::size_t>(size),
             std::vector<std::string>(static_cast<std::size_t>(size))) {}
  int size() const { return size_; }
  std::atomic<std::uint64_t>& count() { return count_; }
  void post(int from, int to, std::string bytes) { box_[from][to] = std::move(bytes); }
  std::string take(int from, int to) { return std::move(box_[from][to]); }
  // Every thread waits here until all have come (a barrier; the tests build as C++17).
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const long long round = round_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++round_;
      all_came_.notify_all();
      return;
    }
    all_came_.wait(lock, [&] { return round_ != round; });
  }

 private:
  int size_;
  std::mutex mutex_;
  std::condition_variable all_came_;
  int arrived_ = 0;
  long long round_ = 0;
  std::vector<std::vector<std::string>> box_;
  std::atomic<std::uint64_t> count_{0};
};

// The threads' shared count: set to 0 once all have come, and not again before all have left.
class ThreadCounter final : public ClaimCounter {
 public:
  explicit ThreadCounter(Mailboxes& boxes) : boxes_(boxes) {}
  ~ThreadCounter() override { boxes_.wait(); }
  ThreadCounter(const ThreadCounter&) = delete;
  ThreadCounter& operator=(const ThreadCounter&) = delete;
  std::uint64_t claim(std::uint64_t n) override { return boxes_.count().fetch_add(n); }

 private:
  Mailboxes& boxes_;
};

class ThreadExchange final : public ReduceExchange {
 public:
  ThreadExchange(Mailboxes& boxes, int rank) : boxes_(boxes), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return boxes_.size(); }
  std::vector<std::string> all_to_all(const std::vector<std::string>& to) override {
    for (int p = 0; p < size(); ++p) boxes_.post(rank_, p, to[static_cast<std::size_t>(p)]);
    boxes_.wait();
    std::vector<std::string> from;
    for (int p = 0; p < size(); ++p) from.push_back(boxes_.take(p, rank_));
    boxes_.wait();
    return from;
  }
  std::vector<std::string> gather(const std::string& mine) override {
    boxes_.post(rank_, 0, mine);
    boxes_.wait();
    std::vector<std::string> all;
    if (rank_ == 0) {
      for (int p = 0; p < size(); ++p) all.push_back(boxes_.take(p, 0));
    }
    boxes_.wait();
    return all;
  }
  std::string broadcast(const std::string& text) override {
    if (rank_ == 0) {
      for (int p = 0; p < size(); ++p) boxes_.post(0, p, text);
    }
    boxes_.wait();
    std::string out = boxes_.take(0, rank_);
    boxes_.wait();
    return out;
  }
  std::unique_ptr<ClaimCounter> counter() override {
    boxes_.wait();
    if (rank_ == 0) boxes_.count() = 0;
    boxes_.wait();
    return std::make_unique<ThreadCounter>(boxes_);
  }

 private:
  Mailboxes& boxes_;
  int rank_;
};

// Whether process `rank` may take its next claim with the shared count at `count`; claims
// beyond every file are always let through, so each process ends.
using MayClaim = std::function<bool(int rank, std::uint64_t count)>;

// A thread's exchange whose claims wait for their turn (MayClaim): which process reads which
// files, which the machine's speed decides in a real run, set by the test.
class TurnsExchange final : public ReduceExchange {
 public:
  TurnsExchange(Mailboxes& boxes, int rank, std::uint64_t files, MayClaim may)
      : boxes_(boxes), inner_(boxes, rank), files_(files), may_(std::move(may)) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::vector<std::string> all_to_all(const std::vector<std::string>& to) override {
    return inner_.all_to_all(to);
  }
  std::vector<std::string> gather(const std::string& mine) override { return inner_.gather(mine); }
  std::string broadcast(const std::string& text) override { return inner_.broadcast(text); }
  std::unique_ptr<ClaimCounter> counter() override {
    return std::make_unique<Turns>(*this, inner_.counter());
  }

 private:
  // Only the process whose turn it is adds to the count, so it cannot move between the test
  // and the claim.
  class Turns final : public ClaimCounter {
   public:
    Turns(TurnsExchange& x, std::unique_ptr<ClaimCounter> shared)
        : x_(x), shared_(std::move(shared)) {}
    std::uint64_t claim(std::uint64_t n) override {
      std::atomic<std::uint64_t>& count = x_.boxes_.count();
      for (;;) {
        const std::uint64_t c = count.load();
        if (c >= x_.files_ || x_.may_(x_.rank(), c)) return count.fetch_add(n);
        std::this_thread::yield();
      }
    }

   private:
    TurnsExchange& x_;
    std::unique_ptr<ClaimCounter> shared_;  // held for its end: every thread leaves together
  };
  Mailboxes& boxes_;
  ThreadExchange inner_;
  std::uint64_t files_;
  MayClaim may_;
};

}  // namespace commprof::test
