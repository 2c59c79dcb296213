// SPDX-License-Identifier: MIT
#include "analysis/diagnosis_inputs.hpp"

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "analysis/pickle_values.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof::diagnosis {
namespace {

std::string head_of(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string head(n, '\0');
  in.read(head.data(), static_cast<std::streamsize>(n));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

std::string whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "'");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

InputKind input_kind(const std::string& path) {
  const std::string head = head_of(path, 4096);
  if (head.rfind("\x28\xb5\x2f\xfd", 0) == 0) return InputKind::kRankFile;  // zstd: a rank file
  // Pickle protocol 2 and up starts with PROTO (0x80); a rank file never does.
  if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80)
    return InputKind::kFlightRecorder;
  if (head.find("commprof.rank") != std::string::npos) return InputKind::kRankFile;
  if (head.find("\"pg_config\"") != std::string::npos ||
      head.find("\"entries\"") != std::string::npos)
    return InputKind::kFlightRecorder;
  if (head.find("\"nccl_version\"") != std::string::npos &&
      head.find("\"communicators") != std::string::npos)
    return InputKind::kRasStatus;
  return InputKind::kRankFile;
}

int flight_recorder_rank(const std::string& path) {
  static const std::regex kRank(R"(.*?([0-9]+)(\.pkl|\.pickle|\.json)?$)");
  const std::string name = path.substr(path.find_last_of('/') + 1);
  std::smatch m;
  if (!std::regex_match(name, m, kRank))
    throw Error("'" + path +
                "': cannot tell its rank: PyTorch names a Flight Recorder dump "
                "<TORCH_FR_DUMP_TEMP_FILE><rank>, the rank last in the name");
  return std::stoi(m[1]);
}

void check_one_dump_per_rank(const std::vector<std::string>& paths) {
  std::map<int, std::string> seen;
  for (const std::string& p : paths) {
    if (input_kind(p) != InputKind::kFlightRecorder) continue;
    const int rank = flight_recorder_rank(p);
    const auto [it, fresh] = seen.emplace(rank, p);
    if (!fresh)
      throw Error("two Flight Recorder dumps of rank " + std::to_string(rank) + ": '" + it->second +
                  "' and '" + p + "' (give one per rank, of one job and one moment)");
  }
}

void add_input(const std::string& path, Part& part) {
  switch (input_kind(path)) {
    case InputKind::kRankFile:
      add_rank_timeline(read_rank_file(path), part);
      return;
    case InputKind::kFlightRecorder: {
      const std::string bytes = whole(path);
      nlohmann::json dump;
      if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80) {
        dump = read_pickle(bytes, path);
      } else {
        try {
          dump = nlohmann::json::parse(bytes);
        } catch (const nlohmann::json::parse_error& e) {
          throw Error(path + ": not JSON: " + e.what());
        }
      }
      add_flight_recorder(flight_recorder_rank(path), dump, path, part);
      return;
    }
    case InputKind::kRasStatus: {
      try {
        add_ras_status(nlohmann::json::parse(whole(path)), path, part);
      } catch (const nlohmann::json::parse_error& e) {
        throw Error(path + ": not JSON: " + e.what());
      }
      return;
    }
  }
}

}  // namespace commprof::diagnosis
