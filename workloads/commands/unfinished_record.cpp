// SPDX-License-Identifier: MIT
#include "workloads/commands/unfinished_record.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/unfinished_entry.hpp"

namespace commprof {

void record_unfinished(const std::string& dir, const std::string& path, RankTimeline header,
                       int step, const std::vector<OpRecord>& ops, const std::string& error,
                       RankFileFormat format) {
  try {
    if (std::filesystem::exists(path)) header.steps = read_rank_file(path).steps;
    nlohmann::ordered_json config = header.config.json();
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const OpRecord& op : ops) list.push_back(unfinished_entry(op, step));
    config["failed_step"] = step;
    config["error"] = error;
    config["unfinished"] = std::move(list);
    header.config = JsonObject(std::move(config));
    write_rank_file(dir, header, format);
  } catch (const std::exception& e) {
    log::warn(log::cat("could not record the unfinished communication of step ", step, " in ", path,
                       ": ", e.what()));
  }
}

}  // namespace commprof
