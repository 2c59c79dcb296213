// SPDX-License-Identifier: MIT
#include "src/core/standard_output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <ostream>

#include "src/core/errors.hpp"
#include "src/core/fd_buffer.hpp"

namespace commprof {

void write_to_stdout(const std::string& what, const std::function<void(std::ostream&)>& write) {
  check_stdout();  // what std::cout holds goes first, and must have arrived
  FdBuffer buffer(STDOUT_FILENO);
  std::ostream out(&buffer);
  write(out);
  out.flush();
  if (buffer.error() != 0 || !out) {
    const int error = buffer.error() != 0 ? buffer.error() : EIO;
    throw Error("cannot write " + what + " to standard output: " + std::strerror(error));
  }
}

void check_stdout() {
  errno = 0;
  std::cout.flush();
  // std::cout writes through stdio (synchronised by default). A failed write keeps its data in
  // stdio's buffer, so fflush() tries again and sets errno to the reason.
  const bool stream_failed = !std::cout;
  const bool flush_failed = std::fflush(stdout) != 0;
  if (!stream_failed && !flush_failed && std::ferror(stdout) == 0) return;
  const int error = errno;
  std::cout.clear();
  std::clearerr(stdout);
  throw Error(std::string("cannot write to standard output: ") +
              (error != 0 ? std::strerror(error) : "an earlier write failed"));
}

}  // namespace commprof
