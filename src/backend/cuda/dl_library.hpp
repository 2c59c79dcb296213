// SPDX-License-Identifier: MIT
// Libraries opened at run time rather than linked (CUPTI, cuDNN): a host without one loses only
// the feature it serves, and the binary still starts there. Nothing opened here is closed again:
// CUPTI runs threads of its own that crash the process if its code is unmapped under them, and
// cuDNN's handles live until exit.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace commprof::dl {

/// The first of `names` (file names or paths, in order) that dlopen loads, or nullptr.
inline void* open_first(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  return nullptr;
}

/// Points `fn` at the entry point `name` of `handle`; false (and `fn` null) when it is missing.
template <class F>
bool resolve(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

}  // namespace commprof::dl
