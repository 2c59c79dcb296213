// SPDX-License-Identifier: MIT
#include "src/runtime/gather.hpp"

#include "src/runtime/mpi_check.hpp"

namespace commprof {

std::vector<double> gather_doubles(double value, MPI_Comm comm) {
  int rank = 0;
  int size = 1;
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm, &size));
  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(size) : 0);
  COMMPROF_MPI_CHECK(MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm));
  return all;
}

std::vector<std::string> gather_strings(const std::string& value, MPI_Comm comm) {
  int rank = 0;
  int size = 1;
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm, &size));
  int length = static_cast<int>(value.size());
  std::vector<int> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0);
  COMMPROF_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm));
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<char> chars(static_cast<std::size_t>(total));
  COMMPROF_MPI_CHECK(MPI_Gatherv(value.data(), length, MPI_CHAR, chars.data(), lengths.data(),
                                 offsets.data(), MPI_CHAR, 0, comm));
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    out.emplace_back(chars.data() + offsets[r], static_cast<std::size_t>(lengths[r]));
  }
  return out;
}

std::string broadcast_string(const std::string& value, int root, MPI_Comm comm) {
  int rank = 0;
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  int length = rank == root ? static_cast<int>(value.size()) : 0;
  COMMPROF_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, root, comm));
  std::string text = rank == root ? value : std::string(static_cast<std::size_t>(length), '\0');
  COMMPROF_MPI_CHECK(MPI_Bcast(text.data(), length, MPI_CHAR, root, comm));
  return text;
}

}  // namespace commprof
