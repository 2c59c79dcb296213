// SPDX-License-Identifier: MIT
// What `commprof bench` writes: the text tables rank 0 prints, bench.json (schema
// commprof.bench, version 1) and bench.csv. Writers take a stream so tests can read them.
#pragma once

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "collectives/bench/bench.hpp"

namespace commprof {

inline constexpr const char* kBenchSchema = "commprof.bench";
inline constexpr int kBenchSchemaVersion = 1;

/// One table per op: size, count, type, redop, root, time min/avg/max (us), algbw and busbw
/// (GB/s, from the average time), #wrong; header lines start with '#', as in nccl-tests.
void write_bench_text(std::ostream& os, const BenchReport& report);
nlohmann::ordered_json bench_to_json(const BenchReport& report);
/// One line per op and size, with a header row; units in the column names.
void write_bench_csv(std::ostream& os, const BenchReport& report);

}  // namespace commprof
