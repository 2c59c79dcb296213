// SPDX-License-Identifier: MIT
#include "src/core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <system_error>

#include "src/core/errors.hpp"
#include "src/core/fd_buffer.hpp"

namespace commprof {
namespace {

std::string reason(int error) { return std::strerror(error); }

// Writes `fd` through `write`, then closes it; returns 0 or the errno of the first failure.
// An exception from `write` closes the file and propagates.
int write_and_close(int fd, const std::function<void(std::ostream&)>& write) {
  FdBuffer buffer(fd);
  std::ostream out(&buffer);
  try {
    write(out);
  } catch (...) {
    ::close(fd);
    throw;
  }
  out.flush();
  int error = buffer.error();
  if (error == 0 && out.fail()) error = EIO;
  // close() reports what the file system deferred (NFS, quotas): a file is only whole after it.
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw Error("cannot write '" + path + "': " + reason(EISDIR));
    // A device, pipe or socket has no previous content to keep, and renaming a temporary file
    // over it would replace it (as root, /dev/full with a regular file): write it in place.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw Error("cannot write '" + path + "': " + reason(errno));
    const int error = write_and_close(fd, write);
    if (error != 0) throw Error("cannot write '" + path + "': " + reason(error));
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const std::string kept = "; the previous '" + path + "', if any, is unchanged";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw Error("cannot write '" + path + "': " + reason(errno) + " (creating '" + tmp + "')");
  }
  int error = 0;
  try {
    error = write_and_close(fd, write);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (error != 0) {
    ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + reason(error) + kept);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + reason(error) + " (renaming '" + tmp + "')" +
                kept);
  }
}

void ensure_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw Error("cannot create output directory '" + dir +
                "': " + (ec ? ec.message() : std::string("not a directory")));
  }
}

void ensure_writable_directory(const std::string& dir) {
  ensure_directory(dir);
  // Host and pid: ranks of several hosts may probe one shared directory at once.
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string probe =
      dir + "/.commprof-write-test." + host + "." + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw Error("cannot write in output directory '" + dir + "': " + reason(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace commprof
