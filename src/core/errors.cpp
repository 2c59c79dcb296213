// SPDX-License-Identifier: MIT
#include "src/core/errors.hpp"

#include <sstream>

#include "src/core/log.hpp"

namespace commprof {

std::string describe_failure(const char* what, const char* file, int line,
                             const std::string& detail) {
  std::ostringstream os;
  os << what << " failed at " << file << ':' << line << " on " << log::identity() << ": " << detail;
  return os.str();
}

}  // namespace commprof
