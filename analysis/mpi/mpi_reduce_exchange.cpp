// SPDX-License-Identifier: MIT
#include "analysis/mpi/mpi_reduce_exchange.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

#include "src/runtime/mpi_check.hpp"

namespace commprof {
namespace {

constexpr std::uint64_t kPiece = std::uint64_t{1} << 30;
constexpr int kTag = 4343;

int piece_length(std::uint64_t length, std::uint64_t offset) {
  return static_cast<int>(std::min(kPiece, length - offset));
}

// Posts the sends (or receives) of `length` bytes at `data` in pieces.
void post(std::vector<MPI_Request>& requests, char* data, std::uint64_t length, int peer,
          MPI_Comm comm, bool send) {
  for (std::uint64_t off = 0; off < length; off += kPiece) {
    MPI_Request request = MPI_REQUEST_NULL;
    if (send) {
      COMMPROF_MPI_CHECK(
          MPI_Isend(data + off, piece_length(length, off), MPI_CHAR, peer, kTag, comm, &request));
    } else {
      COMMPROF_MPI_CHECK(
          MPI_Irecv(data + off, piece_length(length, off), MPI_CHAR, peer, kTag, comm, &request));
    }
    requests.push_back(request);
  }
}

class WindowCounter final : public ClaimCounter {
 public:
  explicit WindowCounter(MPI_Comm comm) {
    int rank = 0;
    COMMPROF_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    void* base = nullptr;
    const MPI_Aint bytes = rank == 0 ? sizeof(std::uint64_t) : 0;
    COMMPROF_MPI_CHECK(
        MPI_Win_allocate(bytes, sizeof(std::uint64_t), MPI_INFO_NULL, comm, &base, &window_));
    COMMPROF_MPI_CHECK(MPI_Win_lock_all(0, window_));
    // Set through the window (its memory starts undefined), and before anyone claims.
    if (rank == 0) {
      std::uint64_t zero = 0;
      COMMPROF_MPI_CHECK(
          MPI_Accumulate(&zero, 1, MPI_UINT64_T, 0, 0, 1, MPI_UINT64_T, MPI_REPLACE, window_));
      COMMPROF_MPI_CHECK(MPI_Win_flush(0, window_));
    }
    COMMPROF_MPI_CHECK(MPI_Barrier(comm));
  }
  ~WindowCounter() override {
    MPI_Win_unlock_all(window_);
    MPI_Win_free(&window_);
  }
  WindowCounter(const WindowCounter&) = delete;
  WindowCounter& operator=(const WindowCounter&) = delete;
  std::uint64_t claim(std::uint64_t n) override {
    std::uint64_t before = 0;
    COMMPROF_MPI_CHECK(MPI_Fetch_and_op(&n, &before, MPI_UINT64_T, 0, 0, MPI_SUM, window_));
    COMMPROF_MPI_CHECK(MPI_Win_flush(0, window_));
    return before;
  }

 private:
  MPI_Win window_ = MPI_WIN_NULL;
};

void wait_all(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return;
  COMMPROF_MPI_CHECK(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  requests.clear();
}

}  // namespace

MpiReduceExchange::MpiReduceExchange(MPI_Comm comm) : comm_(comm) {
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

std::vector<std::string> MpiReduceExchange::all_to_all(const std::vector<std::string>& to) {
  std::vector<std::uint64_t> send_lengths(static_cast<std::size_t>(size_));
  for (int p = 0; p < size_; ++p) send_lengths[static_cast<std::size_t>(p)] = to.at(p).size();
  std::vector<std::uint64_t> recv_lengths(static_cast<std::size_t>(size_));
  COMMPROF_MPI_CHECK(MPI_Alltoall(send_lengths.data(), 1, MPI_UINT64_T, recv_lengths.data(), 1,
                                  MPI_UINT64_T, comm_));
  std::vector<std::string> from(static_cast<std::size_t>(size_));
  std::vector<MPI_Request> requests;
  for (int p = 0; p < size_; ++p) {
    const auto i = static_cast<std::size_t>(p);
    if (p == rank_) {
      from[i] = to[i];
      continue;
    }
    from[i].resize(recv_lengths[i]);
    post(requests, from[i].data(), recv_lengths[i], p, comm_, false);
    // MPI's send buffers are const in MPI 3; Open MPI's older headers want char*.
    post(requests, const_cast<char*>(to[i].data()), send_lengths[i], p, comm_, true);
  }
  wait_all(requests);
  return from;
}

std::vector<std::string> MpiReduceExchange::gather(const std::string& mine) {
  const std::uint64_t length = mine.size();
  std::vector<std::uint64_t> lengths(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  COMMPROF_MPI_CHECK(
      MPI_Gather(&length, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, 0, comm_));
  std::vector<MPI_Request> requests;
  if (rank_ != 0) {
    post(requests, const_cast<char*>(mine.data()), length, 0, comm_, true);
    wait_all(requests);
    return {};
  }
  std::vector<std::string> all(static_cast<std::size_t>(size_));
  all[0] = mine;
  for (int p = 1; p < size_; ++p) {
    const auto i = static_cast<std::size_t>(p);
    all[i].resize(lengths[i]);
    post(requests, all[i].data(), lengths[i], p, comm_, false);
  }
  wait_all(requests);
  return all;
}

std::unique_ptr<ClaimCounter> MpiReduceExchange::counter() {
  return std::make_unique<WindowCounter>(comm_);
}

std::string MpiReduceExchange::broadcast(const std::string& text) {
  std::uint64_t length = text.size();
  COMMPROF_MPI_CHECK(MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm_));
  std::string out = rank_ == 0 ? text : std::string(length, '\0');
  for (std::uint64_t off = 0; off < length; off += kPiece) {
    COMMPROF_MPI_CHECK(MPI_Bcast(out.data() + off, piece_length(length, off), MPI_CHAR, 0, comm_));
  }
  return out;
}

}  // namespace commprof
