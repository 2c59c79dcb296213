// SPDX-License-Identifier: MIT
// The reduction shared among processes (`mpirun -np N commprof report DIR`, and the end of
// `commprof run`): each process reads its share of the rank files and keeps only their
// summaries; collective instances go to an owner process by a hash of (communicator, sequence
// number), which matches them, works out each rank's wait and what the report needs of its
// instances (instance_tables.hpp: sums, its worst instances, counts for questions of order).
// Process 0 never holds every instance: it gathers those tables, then the per-rank summaries in
// batches, and finishes the report. The result is the report one process gives from the same
// files, byte for byte in every format: whatever is summed across processes is an integer, and
// the doubles are derived from such sums on process 0 alone (one process runs the same code).
#pragma once

#include <string>
#include <vector>

#include "analysis/reduce_exchange.hpp"
#include "analysis/reducer.hpp"

namespace commprof {

/// Collective over `exchange`: the processes claim `files` a chunk at a time, in order, as each
/// comes free (ReduceExchange::counter), and read what they claimed. Process 0 returns what
/// reduce_rank_files(files, options) returns; the others an empty Report. `also`, if set, reads
/// this process's files too, once (not the rare second reading, which only settles duplicates).
Report reduce_rank_files_across(const std::vector<std::string>& files, const ReduceOptions& options,
                                ReduceExchange& exchange, FileStepSink* also = nullptr);

/// Collective: finishes a reduction whose share on this process is in `reducer` (its files or
/// timelines added with set_file_index giving each one's place in the job's reading order, and
/// no rank in two places); its collectives are dropped once sent to their owners. Process 0
/// returns the report; the others an empty one.
Report finish_across(Reducer& reducer, const ReduceOptions& options, ReduceExchange& exchange);

}  // namespace commprof
