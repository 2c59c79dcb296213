// SPDX-License-Identifier: MIT
// `commprof report CAPTURE_DIR TRACE_DIR`: where the inputs pair an NCCL profiler plugin capture
// with traces of the same job (PyTorch profiler traces, or rank files imported from a trace:
// `import-nsys` of each rank's nsys export, `import-torch`), each rank's capture is merged into
// its trace (analysis/capture_merge.hpp) and the report reads the merged rank files:
// collectives from the plugin, steps and compute from the trace, so overlap and idle are known.
#pragma once

#include <string>
#include <vector>

namespace commprof {

struct PairedInputs {
  std::vector<std::string> inputs;  ///< the merged files' directory where paired, else as given
  std::vector<std::string> lines;   ///< how each rank met its trace (stderr)
};

/// A trace input: a file whose name holds ".pt.trace.json", or a directory holding such files
/// and no rank-<R>.json; or, beside a capture, an input whose rank files an importer wrote
/// (backend "nsys" or "pytorch"). Where `inputs` hold none, they are returned as given. Else the
/// other inputs must be plugin captures (backend nccl-profiler) of the same ranks as the traces:
/// each pair is merged and written to `merged_dir` (created; "": fresh_merged_dir()), which becomes
/// the input. Throws Error
/// naming what does not pair (no capture beside the traces, a rank on one side only, a rank file
/// that is no capture, no matching collectives).
PairedInputs pair_capture_with_traces(const std::vector<std::string>& inputs,
                                      const std::string& merged_dir);

/// A fresh directory for merged files under $TMPDIR (or /tmp): "<dir>/commprof-merged-XXXXXX".
std::string fresh_merged_dir();

}  // namespace commprof
