// SPDX-License-Identifier: MIT
// The report's formats. Each writer takes a std::ostream& so tests can read what it wrote.
//   text  : tables for a terminal (rank 0's stdout, report.txt)
//   json  : schema "commprof.report" v1, every field named with its unit (…_ns, …_gbps)
//   csv   : one file per field table (report_csv_tables), and the problems
//   html  : one self-contained page: tables, and charts its script draws in SVG and on canvas
//           (report_html.cpp, report_html.js)
//   chrome: Trace Event Format for Perfetto / chrome://tracing (see chrome_trace.hpp)
//   prometheus: text exposition format 0.0.4, for node_exporter's textfile collector
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/report.hpp"

namespace commprof {

void write_report_text(std::ostream& os, const Report& report);
void write_report_json(std::ostream& os, const Report& report);
void write_report_html(std::ostream& os, const Report& report);
void write_report_prometheus(std::ostream& os, const Report& report);

/// One CSV table: a name (the file is <name>.csv) and its text, header line first.
struct CsvTable {
  std::string name;
  std::string text;
};
std::vector<CsvTable> report_csv_tables(const Report& report);
/// All tables in one stream, each preceded by a line "# table: <name>" and followed by a blank
/// line (what `--format csv` writes without -o, or with -o naming a file).
void write_report_csv(std::ostream& os, const Report& report);

/// Escapes text for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace commprof
