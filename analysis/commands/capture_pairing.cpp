// SPDX-License-Identifier: MIT
#include "analysis/commands/capture_pairing.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "analysis/capture_merge.hpp"
#include "analysis/report/text_table.hpp"
#include "analysis/torch/torch_import.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_file.hpp"

namespace fs = std::filesystem;

namespace commprof {
namespace {

bool trace_name(const fs::path& p) {
  return p.filename().string().find(".pt.trace.json") != std::string::npos;
}

// The trace files an input names: itself, or a directory's traces where it has no rank file.
std::vector<std::string> traces_of(const std::string& input) {
  std::error_code ec;
  if (fs::is_regular_file(input, ec)) {
    return trace_name(input) ? std::vector<std::string>{input} : std::vector<std::string>{};
  }
  if (!fs::is_directory(input, ec)) return {};
  std::vector<std::string> traces;
  for (const auto& e : fs::directory_iterator(input, ec)) {
    const std::string name = e.path().filename().string();
    if (trace_name(e.path())) {
      if (e.is_regular_file()) traces.push_back(e.path().string());
    } else if (name.rfind("rank-", 0) == 0 && name.find(".json") != std::string::npos) {
      return {};  // a directory of rank files
    }
  }
  std::sort(traces.begin(), traces.end());
  return traces;
}

std::string ms(double ns) { return format_number("%.3f", ns / 1e6); }

}  // namespace

std::string fresh_merged_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/commprof-merged-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw Error("cannot make a directory for the merged rank files under " + pattern);
  }
  return pattern;
}

PairedInputs pair_capture_with_traces(const std::vector<std::string>& inputs,
                                      const std::string& merged_dir) {
  std::vector<std::string> traces, others;
  for (const std::string& in : inputs) {
    const std::vector<std::string> t = traces_of(in);
    if (t.empty()) {
      others.push_back(in);
    } else {
      traces.insert(traces.end(), t.begin(), t.end());
    }
  }
  if (traces.empty()) return {inputs, {}};
  if (others.empty()) {
    throw Error(log::cat(traces.size(),
                         " PyTorch trace(s) and no NCCL profiler plugin capture to "
                         "merge them with (`commprof import-torch` makes rank files of traces "
                         "alone)"));
  }
  // The traces on one clock, each of its rank; the captures by rank.
  std::vector<RankTimeline> traced;
  std::vector<TorchImportSummary> summaries;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    summaries.emplace_back();
    traced.push_back(import_torch_trace(traces[i], {}, static_cast<int>(i),
                                        static_cast<int>(traces.size()), &summaries.back()));
  }
  align_torch_origins(traced, summaries);
  std::map<int, RankTimeline> captures;
  for (const std::string& f : expand_rank_inputs(others)) {
    RankTimeline t = read_rank_file(f);
    if (t.backend != "nccl-profiler") {
      throw Error(log::cat(f, " is no NCCL profiler plugin capture (backend ", t.backend,
                           "): a trace pairs with a capture of the same job"));
    }
    const int rank = t.rank;
    if (!captures.emplace(rank, std::move(t)).second)
      throw Error(log::cat("two captures of rank ", rank));
  }
  PairedInputs out;
  const std::string dir = merged_dir.empty() ? fresh_merged_dir() : merged_dir;
  ensure_directory(dir);
  for (const RankTimeline& trace : traced) {
    const auto c = captures.find(trace.rank);
    if (c == captures.end())
      throw Error(log::cat("rank ", trace.rank, " has a trace and no capture"));
    CaptureMerge how;
    write_rank_file(dir, merge_capture_into_trace(c->second, trace, &how), RankFileFormat::kJson);
    out.lines.push_back(log::cat("# merged rank ", how.rank, ": its trace's ",
                                 how.trace_collectives, " collectives are the capture's calls ",
                                 how.first_call, " to ", how.first_call + how.trace_collectives - 1,
                                 " of ", how.capture_calls,
                                 " (in start order); capture clock - trace clock ",
                                 ms(how.offset_ns), " ms, residual ", ms(how.residual_ns), " ms"));
    captures.erase(c);
  }
  if (!captures.empty()) {
    throw Error(log::cat("rank ", captures.begin()->first, " has a capture and no trace"));
  }
  out.lines.push_back(log::cat("# merged ", traced.size(), " rank(s) into ", dir,
                               ": collectives from the NCCL profiler plugin's capture (bytes, "
                               "algorithm, protocol, channels, GPU times), steps and compute "
                               "from the PyTorch trace"));
  out.inputs = {dir};
  return out;
}

}  // namespace commprof
