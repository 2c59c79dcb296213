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

/// The text rank 0 prints while the sweep runs, each part when it is known and flushed at once:
/// the run's header; per op a table (size, count, type, redop, root, time min/avg/max (us),
/// algbw and busbw (GB/s, from the average time), #wrong) whose header comes with its first row
/// and each row when its size is measured, then what instrumentation cost and the average busbw;
/// with sampled activity timing, per op what recording cost once the recorded loops have run;
/// the verification's verdict. Header lines start with '#', as in nccl-tests.
class BenchTextPrinter final : public BenchProgress {
 public:
  explicit BenchTextPrinter(std::ostream& os) : os_(os) {}
  void started(const BenchReport& report) override;
  void measured(const BenchReport& report, const BenchRow& row) override;
  void op_done(const BenchReport& report, CollectiveKind op) override;
  void recorded(const BenchReport& report) override;
  void finished(const BenchReport& report) override;

 private:
  std::ostream& os_;
  bool table_open_ = false;  ///< an op's table has rows and no end yet
  CollectiveKind table_op_ = CollectiveKind::kAllReduce;
};

/// The same text for a finished report, at once (BenchTextPrinter given the report's steps).
void write_bench_text(std::ostream& os, const BenchReport& report);
/// bench.json: the run (schema, configuration, units, ranks), then one result per row, each the
/// walk of the rows' table (bench_fields::json_result), then the verification.
nlohmann::ordered_json bench_to_json(const BenchReport& report);
/// One line per op and size, with a header row; units in the column names.
void write_bench_csv(std::ostream& os, const BenchReport& report);

}  // namespace commprof
