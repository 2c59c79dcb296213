// SPDX-License-Identifier: MIT
// Checks a report `commprof report` wrote against the rank files it was made from, read here with
// nlohmann::json alone (none of commprof's readers or reductions), as a user of each format would:
//
//   report_check text   REPORT.txt  RANK_FILE_OR_DIR...   a "Per rank" row for every rank: its
//                                                         host, device, measured steps and mean
//                                                         step time
//   report_check json   REPORT.json RANK_FILE_OR_DIR...   every rank with its step and op counts
//                                                         and step-time statistics; the
//                                                         collectives and their instance counts
//   report_check chrome TRACE.json  RANK_FILE_OR_DIR...   one complete ("X") event per op of every
//                                                         step, on its rank's process and its
//                                                         stream's thread, at the op's time
//   report_check csv    CSV_DIR/    RANK_FILE_OR_DIR...   every table, each with the rows these
//                                                         rank files call for
//
// Step time is a measured step's end − start; with sampled op timing, the step time of a rank is
// taken over its plain steps (those without ops) where it has any, as the report says it does.
// Prints each finding and exits 1 if there was any, 0 otherwise (2: bad arguments or unreadable
// input).
//
// This file: the usage and the verdict; the rank files are read in report_check_rank_files.cpp,
// each format is checked in report_check_<format>.cpp.
#include "report_check.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace report_check {

[[noreturn]] void die(const std::string& what) {
  std::cerr << "report_check: " << what << '\n';
  std::exit(2);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read '" + path + "'");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

json read_json(const std::string& path) {
  try {
    return json::parse(read_text(path));
  } catch (const json::exception& e) {
    die("'" + path + "' is not JSON: " + e.what());
  }
}

/// The check `argv` asks for; the exit status.
int run(int argc, char** argv) {
  if (argc < 4) {
    die("usage: report_check text|json|chrome|csv REPORT RANK_FILE_OR_DIR...");
  }
  const std::string kind = argv[1], report = argv[2];
  std::map<int, Rank> ranks;
  Collectives colls;
  read_ranks(std::vector<std::string>(argv + 3, argv + argc), ranks, colls);
  if (kind == "text") {
    check_text(report, ranks);
  } else if (kind == "json") {
    check_json(report, ranks, colls);
  } else if (kind == "chrome") {
    check_chrome(report, ranks);
  } else if (kind == "csv") {
    check_csv(report, ranks, colls);
  } else {
    die("unknown kind '" + kind + "' (text, json, chrome or csv)");
  }
  if (failures == 0) {
    std::cout << "ok: the " << kind << " report " << report << " agrees with " << ranks.size()
              << " rank file(s)\n";
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace report_check

int main(int argc, char** argv) { return report_check::run(argc, argv); }
