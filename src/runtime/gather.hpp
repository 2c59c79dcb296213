// SPDX-License-Identifier: MIT
// Gathering per-rank values at rank 0, for reports.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

namespace commprof {

/// Collective: rank 0 gets every rank's value (index = rank); other ranks get an empty vector.
std::vector<double> gather_doubles(double value, MPI_Comm comm);
std::vector<std::string> gather_strings(const std::string& value, MPI_Comm comm);

/// Collective: rank 0 calls `consume(rank, text)` for every rank's `text`, in rank order, one
/// at a time (memory for one rank's text at once, however many ranks); others only send.
void stream_to_root(const std::string& text, MPI_Comm comm,
                    const std::function<void(int rank, const std::string& text)>& consume);

}  // namespace commprof
