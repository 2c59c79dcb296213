// SPDX-License-Identifier: MIT
#include "src/backend/host/host_stream.hpp"

#include <chrono>
#include <utility>

#include "src/core/errors.hpp"

namespace commprof {

HostStream::HostStream(std::string name) : name_(std::move(name)) {
  worker_ = std::thread([this] { loop(); });
}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void HostStream::enqueue(std::function<void()> task, bool is_work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(Task{std::move(task), is_work});
  }
  wake_.notify_one();
}

void HostStream::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop requested and nothing left
    Task task = std::move(queue_.front());
    queue_.pop_front();
    const bool skip = task.is_work && failure_ != nullptr;
    running_task_ = true;
    lock.unlock();
    std::exception_ptr error;
    if (!skip) {
      try {
        task.fn();
      } catch (...) {
        error = std::current_exception();
      }
    }
    lock.lock();
    running_task_ = false;
    if (error && !failure_) failure_ = error;
    if (queue_.empty()) idle_.notify_all();
  }
}

void HostStream::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !running_task_; });
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

bool HostStream::drain_for(double timeout_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool done = idle_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                   [this] { return queue_.empty() && !running_task_; });
  if (done && failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  return done;
}

}  // namespace commprof
