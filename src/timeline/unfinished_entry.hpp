// SPDX-License-Identifier: MIT
// The entry a rank file's configuration lists, under "unfinished", for each communication op a
// failed step submitted and never saw finish: written by the executor when a step times out
// (workloads/commands/unfinished_record.hpp) and by the synthetic faults of the benchmarks and
// tests (analysis/tools/), read by `commprof diagnose` (analysis/diagnosis.cpp). One writer, so
// that what the tools plant is what a real run leaves.
#pragma once

#include <nlohmann/json.hpp>

#include "src/timeline/op_record.hpp"

namespace commprof {

/// {comm, collective, seq, name, step, bytes, count, dtype, send_to, recv_from, state} of `op`,
/// submitted in step `step`: count and dtype only where the op records them (a reader takes
/// their absence as 0 and ""), the peers only for a transfer, the state "submitted" (the host
/// backend cannot say whether a transfer had begun).
nlohmann::ordered_json unfinished_entry(const OpRecord& op, int step);

}  // namespace commprof
