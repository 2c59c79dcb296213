// SPDX-License-Identifier: MIT
#include "src/core/fd_buffer.hpp"

#include <unistd.h>

#include <cerrno>

namespace commprof {

FdBuffer::FdBuffer(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }

FdBuffer::int_type FdBuffer::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize FdBuffer::xsputn(const char* s, std::streamsize n) {
  // Large chunks (a rank file is written 1 MiB at a time) go straight to the file.
  if (n < static_cast<std::streamsize>(sizeof buffer_)) return std::streambuf::xsputn(s, n);
  return drain() && write_all(s, n) ? n : 0;
}

int FdBuffer::sync() { return drain() ? 0 : -1; }

bool FdBuffer::drain() {
  const std::streamsize n = pptr() - pbase();
  setp(buffer_, buffer_ + sizeof buffer_);
  return n == 0 ? error_ == 0 : write_all(buffer_, n);
}

bool FdBuffer::write_all(const char* p, std::streamsize n) {
  while (n > 0 && error_ == 0) {
    const ssize_t w = ::write(fd_, p, static_cast<std::size_t>(n));
    if (w > 0) {
      p += w;
      n -= w;
    } else if (w == 0) {
      error_ = EIO;  // no progress and no reason: do not spin
    } else if (errno != EINTR) {
      // ENOSPC, EDQUOT, EIO; EFBIG past a file-size limit (commprof ignores SIGXFSZ).
      error_ = errno;
    }
  }
  return error_ == 0;
}

}  // namespace commprof
