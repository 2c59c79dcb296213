// SPDX-License-Identifier: MIT
#include "src/runtime/gather.hpp"

#include <algorithm>

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

void stream_to_root(const std::string& text, MPI_Comm comm,
                    const std::function<void(int, const std::string&)>& consume) {
  int rank = 0;
  int size = 1;
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm, &size));
  constexpr int kTag = 4242;
  if (rank != 0) {
    // Ranks send only when rank 0 asks, so rank 0 never holds more than one text.
    int go = 0;
    COMMPROF_MPI_CHECK(MPI_Recv(&go, 1, MPI_INT, 0, kTag, comm, MPI_STATUS_IGNORE));
    long long length = static_cast<long long>(text.size());
    COMMPROF_MPI_CHECK(MPI_Send(&length, 1, MPI_LONG_LONG, 0, kTag, comm));
    // Large texts go in chunks: MPI counts are int.
    constexpr long long kChunk = 1 << 30;
    for (long long off = 0; off < length; off += kChunk) {
      const int n = static_cast<int>(std::min(kChunk, length - off));
      COMMPROF_MPI_CHECK(MPI_Send(text.data() + off, n, MPI_CHAR, 0, kTag, comm));
    }
    return;
  }
  consume(0, text);
  std::string buffer;
  for (int r = 1; r < size; ++r) {
    int go = 1;
    COMMPROF_MPI_CHECK(MPI_Send(&go, 1, MPI_INT, r, kTag, comm));
    long long length = 0;
    COMMPROF_MPI_CHECK(MPI_Recv(&length, 1, MPI_LONG_LONG, r, kTag, comm, MPI_STATUS_IGNORE));
    buffer.assign(static_cast<std::size_t>(length), '\0');
    constexpr long long kChunk = 1 << 30;
    for (long long off = 0; off < length; off += kChunk) {
      const int n = static_cast<int>(std::min(kChunk, length - off));
      COMMPROF_MPI_CHECK(
          MPI_Recv(buffer.data() + off, n, MPI_CHAR, r, kTag, comm, MPI_STATUS_IGNORE));
    }
    consume(r, buffer);
  }
}

}  // namespace commprof
