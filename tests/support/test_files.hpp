// SPDX-License-Identifier: MIT
// What test checkers read from outside themselves: an environment variable a CMake test sets
// (the checkers learn their run's paths so) and a file's bytes.
#pragma once

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace commprof::test {

/// The environment variable `name`, or "" when it is not set.
inline std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

/// The whole of a file, as bytes. Throws std::runtime_error naming a file that cannot be read
/// (a test then fails naming it, rather than comparing against nothing).
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace commprof::test
