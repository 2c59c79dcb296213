// SPDX-License-Identifier: MIT
// The nsys SQLite importer (see nsys_import.hpp for the memory behaviour): who the file's rank is
// (probe_nsys_file), and the import composed of its parts: the schema check (nsys_schema), the
// commprof domain (nsys_domain), the steps (nsys_steps) and the pass over the activities
// (nsys_activities).
#include "analysis/nsys/nsys_import.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <unordered_map>

#include "analysis/import_rank.hpp"
#include "analysis/nsys/nsys_activities.hpp"
#include "analysis/nsys/nsys_domain.hpp"
#include "analysis/nsys/nsys_export.hpp"
#include "analysis/nsys/nsys_schema.hpp"
#include "analysis/nsys/nsys_steps.hpp"
#include "analysis/nsys/sqlite_reader.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {
namespace {

// "KEY=VALUE;KEY=VALUE" (nsys' DeviceEnvironment) -> the value of `key`.
std::optional<std::string> env_value(const std::string& env, const std::string& key) {
  std::size_t pos = 0;
  while (pos <= env.size()) {
    std::size_t end = env.find(';', pos);
    if (end == std::string::npos) end = env.size();
    const std::string item = env.substr(pos, end - pos);
    if (item.size() > key.size() && item.compare(0, key.size(), key) == 0 &&
        item[key.size()] == '=') {
      return item.substr(key.size() + 1);
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::optional<int> to_int(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return std::stoi(s);
}

}  // namespace

std::string collective_from_nccl_kernel(const std::string& kernel) {
  static const std::regex re(R"(^nccl(?:Symk)?(?:Dev)?Kernel_([A-Za-z]+))");
  std::smatch m;
  if (!std::regex_search(kernel, m, re)) return "";
  std::string k = m[1].str();
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
  if (k == "allreduce" || k == "allgather" || k == "reducescatter" || k == "broadcast" ||
      k == "reduce" || k == "alltoall" || k == "sendrecv" || k == "send" || k == "recv") {
    return k;
  }
  return "";
}

NsysFileInfo probe_nsys_file(const std::string& path, int rank, int position) {
  Db db(path);
  NsysFileInfo info;
  info.file = path;
  if (!db.has_table(nsys::kKernelTable)) {
    db.fail("missing table " + std::string(nsys::kKernelTable) +
            ": not an nsys export with CUDA traced (nsys profile -t cuda,nvtx, then nsys "
            "export --type sqlite)");
  }
  std::string env;
  if (db.has_table("TARGET_INFO_SYSTEM_ENV")) {
    Stmt s(db,
           "SELECT name, value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN "
           "('Hostname', 'DeviceEnvironment')");
    while (s.step()) {
      if (s.text(0) == "Hostname") info.host = s.text(1);
      if (s.text(0) == "DeviceEnvironment") env = s.text(1);
    }
  }
  // Rank (analysis/import_rank.hpp): --rank; else the launcher's environment as nsys recorded
  // it, else the file name's _<rank> suffix; else the file's position among the inputs.
  // commprof's order of the variables (src/runtime/launcher_env.cpp): SLURM_PROCID after the MPI
  // launchers' variables, since a launcher started inside a batch job passes on the job's
  // SLURM_PROCID=0.
  std::optional<ImportRank> recorded;
  for (const char* key :
       {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}) {
    const auto v = env_value(env, key);
    if (v && to_int(*v)) {
      recorded = ImportRank{*to_int(*v), key};
      break;
    }
  }
  for (const char* key : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"}) {
    const auto v = env_value(env, key);
    if (v && to_int(*v)) {
      info.world_size = *to_int(*v);
      break;
    }
  }
  for (const char* key : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "LOCAL_RANK"}) {
    const auto v = env_value(env, key);
    if (v && to_int(*v)) {
      info.local_rank = *to_int(*v);
      break;
    }
  }
  const std::string stem = std::filesystem::path(path).stem().string();
  static const std::regex name_re(R"(^(?:(.*)_)?([0-9]+)$)");
  std::smatch m;
  const bool name_matches = std::regex_match(stem, m, name_re);
  if (!recorded && name_matches) recorded = ImportRank{std::stoi(m[2].str()), "file name"};
  const ImportRank r = import_rank(rank, recorded, position);
  info.rank = r.rank;
  info.rank_source = r.source;
  if (info.host.empty() && name_matches && m[1].matched) {
    std::string h = m[1].str();
    if (h.rfind("commprof_", 0) == 0) h = h.substr(9);
    info.host = h;
  }
  if (info.host.empty()) info.host = "unknown";
  if (db.has_table("TARGET_INFO_SESSION_START_TIME")) {
    Stmt s(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
    if (s.step() && !s.null(0)) info.session_start_utc_ns = s.i64(0);
  }
  return info;
}

namespace {

// The rank file's header: who and what the export was; steps come later.
RankTimeline header_of(Db& db, const NsysFileInfo& info, int world_size) {
  RankTimeline tl;
  tl.rank = info.rank;
  tl.world_size = world_size;
  tl.local_rank = info.local_rank;
  tl.host = info.host;
  tl.backend = "nsys";
  tl.clock_offset_ns = 0;
  tl.config = JsonObject(
      nlohmann::ordered_json{{"command", "import-nsys"},
                             {"file", std::filesystem::path(info.file).filename().string()},
                             {"rank_source", info.rank_source},
                             {"session_start_utc_ns", info.session_start_utc_ns}});
  if (db.has_table("TARGET_INFO_GPU")) {
    Stmt s(db, "SELECT name, busLocation FROM TARGET_INFO_GPU WHERE id = (SELECT deviceId FROM " +
                   std::string(nsys::kKernelTable) + " LIMIT 1) LIMIT 1");
    if (s.step()) tl.device = s.text(0) + (s.null(1) ? "" : " (" + s.text(1) + ")");
  }
  if (tl.device.empty()) tl.device = "unknown GPU";

  return tl;
}

}  // namespace

RankTimeline import_nsys_file(const NsysFileInfo& info, const NsysImportOptions& options,
                              std::int64_t time_base_utc_ns, int world_size,
                              NsysFileSummary* summary, const NsysStepSink& on_step) {
  const auto t0 = std::chrono::steady_clock::now();
  const RuleSet& rules = options.rules ? *options.rules : RuleSet::defaults();
  Db db(info.file);
  const nsys::NsysSchema schema = nsys::check_schema(db);
  // A damaged session start must neither overflow the subtraction nor move times out of bounds.
  std::int64_t shift = 0;
  if (__builtin_sub_overflow(info.session_start_utc_ns, time_base_utc_ns, &shift) ||
      shift < -kMaxTimeNs || shift > kMaxTimeNs) {
    db.fail(
        "session start (TARGET_INFO_SESSION_START_TIME) lies more than 2^60 ns from the "
        "earliest file's");
  }

  const RankTimeline tl = header_of(db, info, world_size);
  const nsys::CommprofDomain domain = nsys::find_commprof_domain(db, schema.nvtx);
  NsysFileSummary sum;
  sum.file = info.file;
  sum.rank = info.rank;
  sum.rank_source = info.rank_source;
  sum.host = info.host;
  sum.commprof_nvtx = !domain.ids.empty();
  const std::vector<nsys::StepRange> steps = nsys::read_steps(db, schema, domain.ids, options);
  sum.whole_capture = domain.ids.empty() && options.step_range.empty();
  if (sum.whole_capture) sum.capture_ns = steps.front().end - steps.front().start;
  nsys::ActivityCorrelator(db, rules, schema, domain, steps, shift, world_size, tl, sum, on_step)
      .run();
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (summary) *summary = sum;
  return tl;
}

RankTimeline import_nsys_file(const NsysFileInfo& info, const NsysImportOptions& options,
                              std::int64_t time_base_utc_ns, int world_size,
                              NsysFileSummary* summary) {
  std::vector<StepRecord> steps;
  RankTimeline tl =
      import_nsys_file(info, options, time_base_utc_ns, world_size, summary,
                       [&](const RankTimeline&, StepRecord&& s) { steps.push_back(std::move(s)); });
  tl.steps = std::move(steps);
  return tl;
}

}  // namespace commprof
