// SPDX-License-Identifier: MIT
// Reading and writing rank-<R>.json: schema "commprof.rank", version 1.
//
// {
//   "schema": "commprof.rank", "version": 1,
//   "rank": 0, "world_size": 4, "local_rank": 0, "host": "node1", "device": "cpu",
//   "backend": "host", "clock_offset_ns": 0, "config": {...},
//   "units": {"time": "ns (host steady clock)", "bytes": "B", "flops": "FLOP"},
//   "steps": [{"index": 0, "warmup": true, "start_ns": ..., "end_ns": ...,
//              "ops": [{"name": "...", "category": "COMM", "stream": "COMM",
//                       "collective": "allreduce", "comm": "dp0", "comm_size": 2, "seq": 3,
//                       "bytes": 1048576, "flops": 0, "start_ns": ..., "end_ns": ...}]}]
// }
//
// An op may also carry the optional fields dtype, count, algo, proto, channels, enqueue_ns and
// graph (what NCCL's profiler plugin reports of a collective), recv_bytes (what a rank received
// in an all-to-all(v), allgatherv or reducescatterv) and "peer_send_bytes", "peer_recv_bytes": [B,
// ...] (what it sent to and received from each rank of the communicator, in its rank order) with
// "comm_rank" (the rank's own index in that order: its own entry), "after": [i, j], the indices
// within its step of the ops its stream waited for (commprof's executor), and of a send or receive
// "send_to" and "recv_from": [r, ...], the world ranks it sent to and received from; each is
// written only when known.
//
// commprof writes it compact, one step to a line: the header up to `"steps":[`, a newline, each
// step followed by a newline, then `]}` and a newline. Strings escape their control characters, so
// these are the file's only newlines, and a file cut short while a step was appended ends in one
// torn line: the readers drop that line, warn, and read the steps before it. The fields are listed
// once, in rank_fields.hpp.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_views.hpp"

namespace commprof {

inline constexpr const char* kRankSchema = "commprof.rank";
inline constexpr int kRankSchemaVersion = 1;

/// How a rank file is written; every reader reads both. kJson: the text above, in
/// rank-<R>.json. kZstd: the same text cut where a writer appends (the head, each step's line,
/// the end), each piece one zstd frame (zstd_frames.hpp), in rank-<R>.json.zst: about a tenth
/// of the bytes (docs/analysis.md, "Rank file formats").
enum class RankFileFormat { kJson, kZstd };
/// "json" or "zstd"; ConfigError naming both otherwise.
RankFileFormat parse_rank_file_format(const std::string& name);
/// A piece of the rank file's text as `format` writes it: the text, or one zstd frame of it.
std::string rank_file_piece(std::string_view text, RankFileFormat format);

void write_rank_json(std::ostream& os, const RankTimeline& timeline);
/// "<dir>/rank-<R>.json", or "<dir>/rank-<R>.json.zst" for kZstd.
std::string rank_file_path(const std::string& dir, int rank,
                           RankFileFormat format = RankFileFormat::kJson);
/// rank_file_path(dir, timeline.rank, format), written atomically; returns the path.
std::string write_rank_file(const std::string& dir, const RankTimeline& timeline,
                            RankFileFormat format = RankFileFormat::kJson);
/// Expands the command line's DIR|FILES: a directory stands for the files rank_file_path names
/// in it, rank-<R>.json and rank-<R>.json.zst (by rank); a file stands for itself. Throws Error
/// naming the path when a directory holds none or cannot be listed.
std::vector<std::string> expand_rank_inputs(const std::vector<std::string>& inputs);
/// expand_rank_inputs, or none where the inputs name none yet: the live views (watch,
/// diagnose --watch) over a job that has not flushed a rank file.
std::vector<std::string> rank_files_so_far(const std::vector<std::string>& inputs);

/// The rank file in pieces, for writers that add steps as they come (RankFileAppender,
/// import-nsys): rank_file_head(t), then append_step_line for each step (`first` for the first),
/// then kRankFileEnd is byte for byte what write_rank_json writes. `rank` names the rank in the
/// error thrown for a step that JSON cannot hold (flops not finite).
std::string rank_file_head(const RankTimeline& header);
void append_step_line(std::string& out, const StepRecord& step, bool first, int rank);
inline constexpr std::string_view kRankFileEnd = "]}\n";

/// Parses a rank file (its JSON text). Untrusted input: any problem (not JSON, wrong schema or
/// version, missing or mistyped field, negative duration, unknown category) throws Error naming
/// `source` and where in it the problem is. A file whose last line is a torn step record (its
/// writer stopped while appending it) is read without that line, and a warning names the file.
RankTimeline parse_rank_json(const std::string& text, const std::string& source);
/// Reads a rank file of either format (a zstd one is known by its first bytes, whatever its
/// name); a zstd file cut short in its last frame is read without that frame, with a warning.
RankTimeline read_rank_file(const std::string& path);

/// Receives one rank file step by step, without the whole timeline in memory.
class RankStepSink {
 public:
  virtual ~RankStepSink() = default;
  /// Every field but the steps, before the first step.
  virtual void header(const RankTimeline& header) = 0;
  virtual void step(const StepView& step) = 0;
  /// The whole file was read and is valid. The views handed to step() are still valid here.
  virtual void end() = 0;
  /// Forget everything received from this file: it is about to be delivered again.
  virtual void restart() = 0;
};

/// Reads `path` into `sink`: the same file content, checks and errors as read_rank_file. Files
/// in the compact form commprof writes (no whitespace, no escapes, plain ASCII strings, header
/// fields before "steps") are read by a single-pass reader straight into the sink; any other
/// file, and any file with a problem, is read by read_rank_file's parser instead (after
/// sink.restart()), so its error names the file and the position in it exactly as that one
/// does. Throws Error; the sink may then hold part of the file.
void stream_rank_file(const std::string& path, RankStepSink& sink);

/// A rank file's header (every field but the steps: its backend, rank, configuration), its
/// steps left unread where stream_rank_file can stop before them. Throws Error as
/// stream_rank_file does.
RankTimeline read_rank_header(const std::string& path);

/// Hands a timeline already in memory to `sink` as a file would be: the header (without its
/// steps, as the sink's contract says), each step, end. Takes the timeline by value: a caller
/// done with it moves it in, and nothing is copied.
void send_timeline(RankTimeline timeline, RankStepSink& sink);

}  // namespace commprof
