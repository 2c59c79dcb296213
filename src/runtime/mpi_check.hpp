// SPDX-License-Identifier: MIT
// The one way commprof calls MPI: every return code checked, the failure named with the call,
// file:line, rank, host and MPI's own error string. Communicators commprof creates use
// MPI_ERRORS_RETURN so that these checks see the codes instead of MPI aborting first.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>

#include "src/core/errors.hpp"

namespace commprof::detail {
[[noreturn]] void throw_mpi_error(const char* call, const char* file, int line, int code);
}  // namespace commprof::detail

#define COMMPROF_MPI_CHECK(call)                                                        \
  do {                                                                                  \
    const int commprof_mpi_rc_ = (call);                                                \
    if (commprof_mpi_rc_ != MPI_SUCCESS) {                                              \
      ::commprof::detail::throw_mpi_error(#call, __FILE__, __LINE__, commprof_mpi_rc_); \
    }                                                                                   \
  } while (0)
