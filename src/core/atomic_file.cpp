// SPDX-License-Identifier: MIT
#include "src/core/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "src/core/errors.hpp"

namespace commprof {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error("cannot write '" + tmp + "': " + std::strerror(errno));
    }
    write(out);
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      std::filesystem::remove(tmp);
      throw Error("writing '" + path + "' failed: " + why);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw Error("cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
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

}  // namespace commprof
