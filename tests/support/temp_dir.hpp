// SPDX-License-Identifier: MIT
// Paths under gtest's TempDir() of this process's own (the pid appended): two build trees running
// ctest at once, or a binary's tests run as parallel processes, share TempDir() (/tmp), and a
// fixed name let one remove the other's files under it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace commprof::test {

/// TempDir()/<name>_<pid>; nothing is created.
inline std::string own_temp_path(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "_" + std::to_string(::getpid());
}

/// own_temp_path(name) as an empty directory (whatever an earlier run left there removed).
inline std::string fresh_temp_dir(const std::string& name) {
  const std::string dir = own_temp_path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace commprof::test
