// SPDX-License-Identifier: MIT
// Processes of a distributed reduction as threads of one test: a ReduceExchange over in-memory
// mailboxes, for the tests that check the shared reductions against one process.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
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

 private:
  Mailboxes& boxes_;
  int rank_;
};

}  // namespace commprof::test
