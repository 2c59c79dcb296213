// SPDX-License-Identifier: MIT
#include "src/timeline/rank_file_appender.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ostream>

#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

RankFileAppender::RankFileAppender(const std::string& dir, RankTimeline header,
                                   RankFileFormat format)
    : path_(rank_file_path(dir, header.rank, format)),
      header_(std::move(header)),
      format_(format),
      end_piece_(rank_file_piece(kRankFileEnd, format)) {
  header_.steps.clear();
}

RankFileAppender::~RankFileAppender() {
  if (fd_ >= 0) ::close(fd_);
}

void RankFileAppender::append(const StepRecord& step) {
  if (closed_) throw Error("internal: step appended to '" + path_ + "' after it was closed");
  std::string line;
  append_step_line(line, step, /*first=*/fd_ < 0, header_.rank);
  const std::string piece = rank_file_piece(line, format_);
  if (fd_ < 0) {
    const std::string text = rank_file_piece(rank_file_head(header_), format_) + piece + end_piece_;
    write_file_atomically(path_, [&](std::ostream& os) {
      os.write(text.data(), static_cast<std::streamsize>(text.size()));
    });
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
    end_ = static_cast<std::int64_t>(text.size() - end_piece_.size());
    return;
  }
  write_at(piece + end_piece_, end_);
  end_ += static_cast<std::int64_t>(piece.size());
}

void RankFileAppender::write_at(const std::string& bytes, std::int64_t offset) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done,
                               static_cast<off_t>(offset + static_cast<std::int64_t>(done)));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int error = n < 0 ? errno : EIO;
    // Undo: cut the file back to the steps before and close it again. Both stay within what the
    // file already had, so neither needs space a full disk or a size limit refuses.
    const bool undone =
        ::ftruncate(fd_, static_cast<off_t>(offset)) == 0 &&
        ::pwrite(fd_, end_piece_.data(), end_piece_.size(), static_cast<off_t>(offset)) ==
            static_cast<ssize_t>(end_piece_.size());
    throw Error("cannot write '" + path_ + "': " + std::strerror(error) +
                (undone ? "; its earlier steps are kept"
                        : "; its last line may be torn (readers drop it and keep the steps "
                          "before)"));
  }
}

void RankFileAppender::close() {
  closed_ = true;
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw Error("cannot write '" + path_ + "': " + std::strerror(errno));
}

}  // namespace commprof
