// SPDX-License-Identifier: MIT
// import-nsys over a set of files: every file probed first (ranks must be distinct and the set
// consistent), then each imported and its rank file written atomically; on any failure the
// files already written by this call are removed, so a directory never holds half an import.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/nsys/nsys_import.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

std::string write_nsys_rank_file(const std::string& out_dir, const NsysFileInfo& info,
                                 const NsysImportOptions& options, std::int64_t time_base_utc_ns,
                                 int world_size, NsysFileSummary* summary) {
  const std::string path = rank_file_path(out_dir, info.rank, options.format);
  write_file_atomically(path, [&](std::ostream& os) {
    // One step at a time through the rank file's own writer: the importer's files are exactly
    // what commprof writes.
    bool first = true;
    std::string text;
    const RankTimeline header =
        import_nsys_file(info, options, time_base_utc_ns, world_size, summary,
                         [&](const RankTimeline& head, StepRecord&& s) {
                           if (first) os << rank_file_piece(rank_file_head(head), options.format);
                           text.clear();
                           append_step_line(text, s, first, head.rank);
                           first = false;
                           os << rank_file_piece(text, options.format);
                         });
    if (first) os << rank_file_piece(rank_file_head(header), options.format);
    os << rank_file_piece(kRankFileEnd, options.format);
  });
  return path;
}

std::vector<NsysFileSummary> import_nsys_files(const std::vector<std::string>& files,
                                               const std::string& out_dir,
                                               const NsysImportOptions& options) {
  if (files.empty()) throw Error("import-nsys: no input files");
  if (options.rank >= 0 && files.size() != 1) {
    throw Error(
        "--rank names the rank of one file; give one file per call, or let the ranks "
        "come from the recorded environment, the file names or the files' order");
  }
  std::vector<NsysFileInfo> infos;
  std::map<int, std::string> by_rank;
  std::int64_t base = 0;
  bool all_have_start = true;
  int world = static_cast<int>(files.size());
  for (const std::string& f : files) {
    infos.push_back(probe_nsys_file(f, options.rank, static_cast<int>(infos.size())));
    const NsysFileInfo& i = infos.back();
    auto [it, added] = by_rank.try_emplace(i.rank, f);
    if (!added) {
      throw Error(f + ": rank " + std::to_string(i.rank) + " (from " + i.rank_source +
                  ") was already imported from " + it->second);
    }
    world = std::max(world, std::max(i.world_size, i.rank + 1));
    if (i.session_start_utc_ns == 0) all_have_start = false;
    base = infos.size() == 1 ? i.session_start_utc_ns : std::min(base, i.session_start_utc_ns);
  }
  // One clock: every file's times are shifted by its session start (UTC) minus the earliest.
  if (!all_have_start) {
    base = 0;
    for (NsysFileInfo& i : infos) i.session_start_utc_ns = 0;
  }
  ensure_directory(out_dir);
  std::vector<NsysFileSummary> out;
  std::vector<std::string> written;
  std::int64_t comm = 0;
  auto remove_written = [&] {
    for (const std::string& w : written) std::remove(w.c_str());
  };
  try {
    for (const NsysFileInfo& i : infos) {
      NsysFileSummary s;
      written.push_back(write_nsys_rank_file(out_dir, i, options, base, world, &s));
      comm += s.ops[index_of(Category::kComm)];
      out.push_back(s);
    }
  } catch (...) {
    remove_written();  // all files or none: a half-imported set would reduce without complaint
    throw;
  }
  if (files.size() > 1 && comm == 0) {
    remove_written();
    throw Error("import-nsys: " + std::to_string(files.size()) +
                " ranks but not one COMM op: no NCCL kernel and no commprof COMM range in any "
                "step (rules: " +
                (options.rules ? options.rules->source() : RuleSet::defaults().source()) +
                "). Check the classification rules (--rules) and that nsys traced CUDA; no "
                "rank file was written");
  }
  return out;
}

}  // namespace commprof
