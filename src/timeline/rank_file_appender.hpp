// SPDX-License-Identifier: MIT
// A rank file that grows one step at a time, as a run measures them: each step costs one write of
// that step, not a rewrite of the whole file (a rank of a long run holds hundreds of thousands of
// ops), and whatever ends the job later leaves every step measured before it.
#pragma once

#include <cstdint>
#include <string>

#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

/// Writes rank_file_path(dir, header.rank, format) as write_rank_file would write the header with
/// the steps appended so far:
///  - the first step creates the file whole (header, step, end), atomically, so a rank that stops
///    before its first step leaves no file, and one that stops while writing it the previous file
///    (if any) untouched;
///  - every later step overwrites the end `]}\n` with `,{step}\n]}\n` (kZstd: the end's frame with
///    the step's frame and the end's), in one positioned write.
///    A rank stopped during that write leaves one torn last line, which the readers drop (with a
///    warning, keeping every step before it). A write that fails (disk full, a file-size limit)
///    is undone, the file cut back to its steps before, and throws Error naming the file, the
///    system's reason and that the earlier steps are kept.
class RankFileAppender {
 public:
  /// Nothing is written yet. `header`'s steps are ignored. kZstd writes each piece (the head,
  /// each step, the end) as one zstd frame: the same steps-so-far guarantee, a torn frame in
  /// place of a torn line.
  RankFileAppender(const std::string& dir, RankTimeline header,
                   RankFileFormat format = RankFileFormat::kJson);
  ~RankFileAppender();
  RankFileAppender(const RankFileAppender&) = delete;
  RankFileAppender& operator=(const RankFileAppender&) = delete;

  void append(const StepRecord& step);
  /// Closes the file, reporting what the file system deferred (NFS, quotas) as Error. Appending
  /// after it reopens nothing: it throws.
  void close();
  const std::string& path() const { return path_; }

 private:
  void write_at(const std::string& bytes, std::int64_t offset);

  std::string path_;
  RankTimeline header_;
  RankFileFormat format_;
  std::string end_piece_;  ///< the closing `]}\n` as the format writes it
  int fd_ = -1;
  bool closed_ = false;
  std::int64_t end_ = 0;  ///< where the closing piece starts
};

}  // namespace commprof
