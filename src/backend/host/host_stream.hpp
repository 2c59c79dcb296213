// SPDX-License-Identifier: MIT
// An in-order stream run by one worker thread, the host backend's stand-in for a CUDA stream.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace commprof {

/// Runs tasks in submission order on its own thread. Work tasks are skipped once one has
/// failed, but control tasks (stamps, event records and waits) still run, so other streams
/// waiting on this one's events never hang; drain() then rethrows the first failure.
class HostStream {
 public:
  explicit HostStream(std::string name);
  ~HostStream();
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  void enqueue_work(std::function<void()> task) { enqueue(std::move(task), true); }
  void enqueue_control(std::function<void()> task) { enqueue(std::move(task), false); }

  /// Blocks until every task submitted so far has run; rethrows the first failure (once).
  void drain();
  /// Like drain() but gives up after `timeout_s`; returns false if tasks are still pending.
  bool drain_for(double timeout_s);

  const std::string& name() const { return name_; }

 private:
  struct Task {
    std::function<void()> fn;
    bool is_work;
  };
  void enqueue(std::function<void()> task, bool is_work);
  void loop();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Task> queue_;
  bool running_task_ = false;
  bool stop_ = false;
  std::exception_ptr failure_;
  std::thread worker_;
};

}  // namespace commprof
