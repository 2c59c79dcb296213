// SPDX-License-Identifier: MIT
#include "src/runtime/mpi_check.hpp"

namespace commprof::detail {

void throw_mpi_error(const char* call, const char* file, int line, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    std::snprintf(text, sizeof text, "MPI error code %d", code);
  }
  throw MpiError(describe_failure(call, file, line, text));
}

}  // namespace commprof::detail
