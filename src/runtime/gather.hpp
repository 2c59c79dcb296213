// SPDX-License-Identifier: MIT
// Gathering per-rank values at rank 0, for reports, and one rank's text to every rank.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace commprof {

/// Collective: rank 0 gets every rank's value (index = rank); other ranks get an empty vector.
std::vector<double> gather_doubles(double value, MPI_Comm comm);
std::vector<std::string> gather_strings(const std::string& value, MPI_Comm comm);

/// Collective: every rank gets `root`'s `value` (its length first, then its bytes); the values
/// the other ranks pass are ignored. Any length from empty up to INT_MAX bytes.
std::string broadcast_string(const std::string& value, int root, MPI_Comm comm);

}  // namespace commprof
