// SPDX-License-Identifier: MIT
// Memory a backend hands out: device memory, or page-locked host memory for H2D/D2H copies.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

namespace commprof {

enum class MemorySpace { kDevice, kHostPinned };

/// Owns one allocation and frees it through the backend that made it. Move-only.
class Buffer {
 public:
  Buffer() = default;
  Buffer(void* data, std::size_t bytes, MemorySpace space, std::function<void(void*)> release)
      : data_(data), bytes_(bytes), space_(space), release_(std::move(release)) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      space_ = other.space_;
      release_ = std::move(other.release_);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  MemorySpace space() const { return space_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

  void reset() {
    if (data_ != nullptr && release_) release_(data_);
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  MemorySpace space_ = MemorySpace::kDevice;
  std::function<void(void*)> release_;
};

}  // namespace commprof
