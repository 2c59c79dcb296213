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

// Rank files imported from a trace (`commprof import-nsys`, `commprof import-torch`): the
// backend their importer writes.
bool imported_trace(const std::string& backend) {
  return backend == "nsys" || backend == "pytorch";
}

// The backend of an input's first rank file, or "" where it names none that can be read.
std::string first_backend(const std::string& input) {
  try {
    const std::vector<std::string> files = expand_rank_inputs({input});
    return files.empty() ? "" : read_rank_header(files.front()).backend;
  } catch (const Error&) {
    return "";
  }
}

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
  std::vector<std::string> traces, imported, others;
  for (const std::string& in : inputs) {
    const std::vector<std::string> t = traces_of(in);
    if (!t.empty()) {
      traces.insert(traces.end(), t.begin(), t.end());
    } else if (inputs.size() > 1 && imported_trace(first_backend(in))) {
      imported.push_back(in);
    } else {
      others.push_back(in);
    }
  }
  if (traces.empty() && imported.empty()) return {inputs, {}};
  // Imported rank files pair only with a capture; alone (or beside other runs) they are what
  // the report reads as they are.
  if (traces.empty() && (others.empty() || first_backend(others.front()) != "nccl-profiler")) {
    return {inputs, {}};
  }
  if (others.empty()) {
    throw Error(log::cat(traces.size(),
                         " PyTorch trace(s) and no NCCL profiler plugin capture to "
                         "merge them with (`commprof import-torch` makes rank files of traces "
                         "alone)"));
  }
  // The traces on one clock, each of its rank: PyTorch traces as read here, imported rank
  // files (an nsys export through import-nsys) as their importer wrote them.
  std::vector<RankTimeline> traced;
  std::vector<TorchImportSummary> summaries;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    summaries.emplace_back();
    traced.push_back(import_torch_trace(traces[i], {}, static_cast<int>(i),
                                        static_cast<int>(traces.size()), &summaries.back()));
  }
  if (!traced.empty()) align_torch_origins(traced, summaries);
  const std::string source = traced.empty() ? "imported trace" : "PyTorch trace";
  for (const std::string& f : expand_rank_inputs(imported)) traced.push_back(read_rank_file(f));
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
                               "from the ",
                               source));
  out.inputs = {dir};
  return out;
}

}  // namespace commprof
