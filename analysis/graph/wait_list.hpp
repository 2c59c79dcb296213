// SPDX-License-Identifier: MIT
// The waits of a step graph's op: a list of op indices that holds up to four in itself.
//
// Why: most ops wait for one or two others (the op before on their stream, a recorded wait). As a
// std::vector each list was an allocation of its own, and the walks over a step's half a million
// ops (16,384 ranks of 30) spent most of their time fetching those lists from wherever the heap
// had put them. Held in the op, they come with it. It takes the room of a std::vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace commprof {

class WaitList {
 public:
  using value_type = int;
  using iterator = int*;
  using const_iterator = const int*;

  WaitList() {}
  WaitList(std::initializer_list<int> values) { assign(values.begin(), values.end()); }
  WaitList(const WaitList& other) { assign(other.begin(), other.end()); }
  WaitList(WaitList&& other) noexcept { take(other); }
  WaitList& operator=(const WaitList& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  WaitList& operator=(WaitList&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~WaitList() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int* begin() { return data(); }
  int* end() { return data() + size_; }
  const int* begin() const { return data(); }
  const int* end() const { return data() + size_; }
  int& operator[](std::size_t i) { return data()[i]; }
  int operator[](std::size_t i) const { return data()[i]; }

  /// Empties the list; storage it took from the heap is kept for what comes next.
  void clear() { size_ = 0; }
  void push_back(int value) {
    if (size_ == capacity_) grow(2 * static_cast<std::size_t>(capacity_));
    data()[size_++] = value;
  }
  /// `n` entries: those there are kept, new ones are 0.
  void resize(std::size_t n) {
    if (n > capacity_) grow(n);
    if (n > size_) std::fill(data() + size_, data() + n, 0);
    size_ = static_cast<std::uint32_t>(n);
  }
  template <class It>
  void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }
  std::vector<int> to_vector() const { return std::vector<int>(begin(), end()); }

  friend bool operator==(const WaitList& a, const WaitList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const WaitList& a, const WaitList& b) { return !(a == b); }
  friend bool operator==(const WaitList& a, const std::vector<int>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const WaitList& a, const std::vector<int>& b) { return !(a == b); }

 private:
  static constexpr std::uint32_t kInline = 4;
  bool on_heap() const { return capacity_ > kInline; }
  int* data() { return on_heap() ? heap_ : inline_; }
  const int* data() const { return on_heap() ? heap_ : inline_; }
  void grow(std::size_t n) {
    int* bigger = new int[n];
    const int* from = data();
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = from[i];
    if (on_heap()) delete[] heap_;
    heap_ = bigger;
    capacity_ = static_cast<std::uint32_t>(n);
  }
  void release() {
    if (on_heap()) delete[] heap_;
    capacity_ = kInline;
    size_ = 0;
  }
  // Takes `other`'s entries (its heap storage, or a copy of those it holds itself); `other` is
  // left empty. This list holds nothing on the heap beforehand.
  void take(WaitList& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.on_heap()) {
      heap_ = other.heap_;
    } else {
      std::copy(other.inline_, other.inline_ + other.size_, inline_);
    }
    other.capacity_ = kInline;
    other.size_ = 0;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInline;
  union {
    int inline_[kInline];
    int* heap_;
  };
};

}  // namespace commprof
