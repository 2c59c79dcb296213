// SPDX-License-Identifier: MIT
// An output stream buffer over a POSIX file descriptor that keeps the errno of the first failed
// write. std::ofstream only says that something failed, and errno may be long gone by the time
// a caller asks; a result file's error message has to say why (disk full, file too large).
#pragma once

#include <streambuf>

namespace commprof {

/// Buffers writes to `fd` (not owned, never closed here). After the first failed write every
/// later one fails too, and error() holds that failure's errno (0 while all is well).
class FdBuffer final : public std::streambuf {
 public:
  explicit FdBuffer(int fd);
  FdBuffer(const FdBuffer&) = delete;
  FdBuffer& operator=(const FdBuffer&) = delete;
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool drain();
  bool write_all(const char* p, std::streamsize n);

  int fd_;
  int error_ = 0;
  char buffer_[1 << 16];
};

}  // namespace commprof
