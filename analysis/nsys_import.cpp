// SPDX-License-Identifier: MIT
// The nsys SQLite importer (see nsys_import.hpp for the memory behaviour).
//
// One streamed pass per file, in launch order:
//   activities  kernels ∪ memcpys ∪ memsets, LEFT JOIN the runtime call that launched each
//               (correlationId), ORDER BY the call's start (the GPU start when there is none);
//   NVTX ranges commprof's op ranges ORDER BY start, merged in as the launches pass them; a
//               per-thread stack of open ranges gives the innermost range around each launch.
// A launch inside commprof's op range R joins the op of R (one op per range, spanning its
// activities, as commprof times it); any other activity is an op named by its kernel. Steps are
// found by time containment of the launch in the step ranges. Classification runs at the end,
// when every stream's marks (which commprof categories launched work onto it) are known.
#include "analysis/nsys_import.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <unordered_map>

#include "analysis/sqlite_reader.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/op_range_text.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {
namespace {

// Times as rank files keep them (within +-2^60 ns, src/timeline/op_record.hpp): a damaged export
// fails here, naming the file and what was out of bounds, instead of yielding rank files that
// `commprof report` would refuse. `what` (+ `detail`) names the row; the message is only built
// on failure, since this runs for every activity of the export.
std::int64_t bounded_time(const Db& db, std::int64_t t, const char* what, const char* detail = "") {
  if (t < -kMaxTimeNs || t > kMaxTimeNs) {
    db.fail(std::string(what) + detail + " at " + std::to_string(t) +
            " ns: times lie within +-2^60 ns");
  }
  return t;
}

// A start and end read from one row: each bounded, the end not before the start.
void check_span(const Db& db, std::int64_t start, std::int64_t end, const char* what) {
  bounded_time(db, start, what);
  bounded_time(db, end, what);
  if (end < start) {
    db.fail(std::string(what) + " ends (" + std::to_string(end) + " ns) before it starts (" +
            std::to_string(start) + " ns)");
  }
}

// How errors name an activity row, by ActivityKind.
constexpr const char* kActivityRow[] = {"a kernel activity", "a memcpy activity",
                                        "a memset activity"};
static_assert(static_cast<int>(ActivityKind::kMemset) == 2, "kActivityRow follows ActivityKind");

constexpr const char* kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr const char* kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr const char* kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr const char* kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr const char* kNvtxTable = "NVTX_EVENTS";

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

std::string memcpy_name(std::int64_t copy_kind) {
  // ENUM_CUDA_MEMCPY_OPER
  switch (copy_kind) {
    case 1:
      return "Memcpy HtoD";
    case 2:
      return "Memcpy DtoH";
    case 3:
      return "Memcpy HtoA";
    case 4:
      return "Memcpy AtoH";
    case 5:
      return "Memcpy AtoA";
    case 6:
      return "Memcpy AtoD";
    case 7:
      return "Memcpy DtoA";
    case 8:
      return "Memcpy DtoD";
    case 9:
      return "Memcpy HtoH";
    case 10:
      return "Memcpy PtoP";
    default:
      return "Memcpy";
  }
}

// --- Steps --------------------------------------------------------------------------------------

struct StepRange {
  std::int64_t start = 0;
  std::int64_t end = 0;
  int index = 0;
  bool warmup = false;
};

std::string in_list(const std::vector<std::int64_t>& ids) {
  std::string s;
  for (std::int64_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

std::vector<StepRange> read_steps(Db& db, const std::vector<std::int64_t>& commprof_domains,
                                  const NsysImportOptions& options) {
  std::vector<StepRange> steps;
  if (!db.has_table(kNvtxTable)) {
    db.fail("no " + std::string(kNvtxTable) +
            " table, so no steps: profile with -t cuda,nvtx (commprof marks its steps in NVTX)");
  }
  const std::string text = "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))";
  if (!options.step_range.empty()) {
    Stmt s(db, "SELECT n.start, n.end, " + text + " FROM " + kNvtxTable +
                   " n WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL ORDER BY n.start");
    while (s.step()) {
      const std::string t = s.text(2);
      if (t.compare(0, options.step_range.size(), options.step_range) != 0) continue;
      StepRange r;
      r.start = s.i64(0);
      r.end = s.i64(1);
      check_span(db, r.start, r.end, "an NVTX step range");
      r.index = static_cast<int>(steps.size());
      r.warmup = r.index < options.warmup_steps;
      steps.push_back(r);
    }
    if (steps.empty()) {
      db.fail("no NVTX range named '" + options.step_range + "...' (--step-range)");
    }
  } else {
    if (commprof_domains.empty()) {
      db.fail(
          "no commprof NVTX domain: not a commprof trace. Name the NVTX range that marks a "
          "step with --step-range NAME");
    }
    static const std::regex step_re(R"(^step ([0-9]+)( \(warm-up\))?$)");
    Stmt s(db, "SELECT n.start, n.end, " + text + " FROM " + kNvtxTable +
                   " n WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL AND n.category IS "
                   "NULL AND n.domainId IN (" +
                   in_list(commprof_domains) + ") ORDER BY n.start");
    while (s.step()) {
      std::smatch m;
      const std::string t = s.text(2);
      if (!std::regex_match(t, m, step_re)) continue;
      StepRange r;
      r.start = s.i64(0);
      r.end = s.i64(1);
      check_span(db, r.start, r.end, "an NVTX step range");
      r.index = std::stoi(m[1].str());
      r.warmup = m[2].matched;
      steps.push_back(r);
    }
    if (steps.empty()) db.fail("commprof NVTX domain present but no 'step N' ranges");
  }
  return steps;
}

// --- The main pass ------------------------------------------------------------------------------

struct OpenRange {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint64_t id = 0;
  Category category = Category::kComp;
  std::string name;
  std::uint64_t bytes = 0;
  std::string collective;  ///< COMM ranges: from the range's tag, else from the op name
  std::string comm;
  int comm_size = 0;  ///< from the tag; 0: unknown (the world size is used)
  std::int64_t seq = -1;
};

struct ActKey {
  ActivityKind kind;
  std::uint32_t name;  ///< index into the interned names
  std::int64_t stream;
  bool operator==(const ActKey& o) const {
    return kind == o.kind && name == o.name && stream == o.stream;
  }
};
struct ActKeyHash {
  std::size_t operator()(const ActKey& k) const {
    return std::hash<std::int64_t>()(k.stream * 1000003 + k.name * 4 + static_cast<int>(k.kind));
  }
};

struct PendingOp {
  OpRecord rec;
  std::optional<Category> range;    ///< commprof op range around the launch
  std::int64_t stream = 0;          ///< stream of the first activity
  std::vector<std::uint32_t> acts;  ///< distinct ActKeys of its activities
};

const std::vector<std::string>& known_collectives() {
  static const std::vector<std::string> names = {"allreduce", "allgather", "reducescatter",
                                                 "broadcast", "reduce",    "alltoall",
                                                 "sendrecv",  "send",      "recv"};
  return names;
}

// "dp.bucket0.allreduce" -> ("allreduce", "dp"); ("", "") when no component names a collective.
std::pair<std::string, std::string> collective_of_op_name(const std::string& name) {
  std::vector<std::string> parts;
  std::stringstream ss(name);
  std::string p;
  while (std::getline(ss, p, '.')) parts.push_back(p);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    for (const std::string& c : known_collectives()) {
      if (*it == c) return {c, parts.front()};
    }
  }
  return {"", ""};
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

NsysFileInfo probe_nsys_file(const std::string& path) {
  Db db(path);
  NsysFileInfo info;
  info.file = path;
  if (!db.has_table(kKernelTable)) {
    db.fail("missing table " + std::string(kKernelTable) +
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
  // Rank: the launcher's environment as nsys recorded it, else the file name's _<rank> suffix.
  // commprof's order (src/runtime/launcher_env.cpp): SLURM_PROCID after the MPI launchers'
  // variables, since a launcher started inside a batch job passes on the job's SLURM_PROCID=0.
  for (const char* key :
       {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}) {
    const auto v = env_value(env, key);
    if (v && to_int(*v)) {
      info.rank = *to_int(*v);
      info.rank_source = key;
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
  if (info.rank < 0 && name_matches) {
    info.rank = std::stoi(m[2].str());
    info.rank_source = "file name";
  }
  if (info.rank < 0) {
    db.fail(
        "cannot tell the rank: no OMPI_COMM_WORLD_RANK / SLURM_PROCID in the recorded "
        "environment and no _<rank> suffix in the file name (e.g. commprof_host_3.sqlite)");
  }
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

RankTimeline import_nsys_file(const NsysFileInfo& info, const NsysImportOptions& options,
                              std::int64_t time_base_utc_ns, int world_size,
                              NsysFileSummary* summary, const NsysStepSink& on_step) {
  const auto t0 = std::chrono::steady_clock::now();
  const RuleSet& rules = options.rules ? *options.rules : RuleSet::defaults();
  Db db(info.file);
  if (!db.has_table(kKernelTable)) db.fail("missing table " + std::string(kKernelTable));
  const std::vector<std::string> act_cols = {"start", "end", "streamId", "correlationId",
                                             "globalPid"};
  std::vector<std::string> kernel_cols = act_cols;
  kernel_cols.push_back("shortName");
  db.require_columns(kKernelTable, kernel_cols);
  if (!db.has_table("StringIds")) db.fail("missing table StringIds (kernel and NVTX names)");
  const bool has_memcpy = db.has_table(kMemcpyTable);
  const bool has_memset = db.has_table(kMemsetTable);
  if (has_memcpy)
    db.require_columns(kMemcpyTable, {"start", "end", "streamId", "bytes", "copyKind"});
  if (has_memset) db.require_columns(kMemsetTable, {"start", "end", "streamId", "bytes"});
  const bool has_runtime = db.has_table(kRuntimeTable);
  if (has_runtime) db.require_columns(kRuntimeTable, {"start", "correlationId", "globalTid"});
  const bool has_nvtx = db.has_table(kNvtxTable);
  if (has_nvtx) {
    db.require_columns(kNvtxTable, {"start", "end", "eventType", "category", "text", "textId",
                                    "globalTid", "domainId", "uint64Value"});
  }
  // A damaged session start must neither overflow the subtraction nor move times out of bounds.
  std::int64_t shift = 0;
  if (__builtin_sub_overflow(info.session_start_utc_ns, time_base_utc_ns, &shift) ||
      shift < -kMaxTimeNs || shift > kMaxTimeNs) {
    db.fail(
        "session start (TARGET_INFO_SESSION_START_TIME) lies more than 2^60 ns from the "
        "earliest file's");
  }

  RankTimeline tl;
  tl.rank = info.rank;
  tl.world_size = world_size;
  tl.local_rank = info.local_rank;
  tl.host = info.host;
  tl.backend = "nsys";
  tl.clock_offset_ns = 0;
  {
    std::ostringstream cfg;
    const std::string file = std::filesystem::path(info.file).filename().string();
    cfg << "{\"command\":\"import-nsys\",\"file\":\"";
    for (char c : file) {
      if (c == '"' || c == '\\') cfg << '\\';
      if (static_cast<unsigned char>(c) >= 0x20) cfg << c;
    }
    cfg << "\",\"rank_source\":\"" << info.rank_source
        << "\",\"session_start_utc_ns\":" << info.session_start_utc_ns << "}";
    tl.config_json = cfg.str();
  }
  if (db.has_table("TARGET_INFO_GPU")) {
    Stmt s(db, "SELECT name, busLocation FROM TARGET_INFO_GPU WHERE id = (SELECT deviceId FROM " +
                   std::string(kKernelTable) + " LIMIT 1) LIMIT 1");
    if (s.step()) tl.device = s.text(0) + (s.null(1) ? "" : " (" + s.text(1) + ")");
  }
  if (tl.device.empty()) tl.device = "unknown GPU";

  // commprof's NVTX domain and category ids (registered names; fixed ids 1..3 as fallback).
  std::vector<std::int64_t> domains;
  std::map<std::int64_t, Category> categories = {
      {1, Category::kComp}, {2, Category::kComm}, {3, Category::kMem}};
  if (has_nvtx) {
    Stmt s(db, std::string("SELECT DISTINCT domainId FROM ") + kNvtxTable +
                   " WHERE eventType = 75 AND text = 'commprof'");
    while (s.step()) domains.push_back(s.i64(0));
    if (domains.empty()) {
      // nsys records a domain's creation only if it happens inside the capture; with
      // --capture-range=nvtx (scripts/nsys-profile-rank.sh) it happened before. The range that
      // started the capture, commprof's measured-steps range, still names the domain.
      Stmt m(db, std::string("SELECT DISTINCT n.domainId FROM ") + kNvtxTable +
                     " n WHERE n.eventType IN (59, 60) AND n.domainId IS NOT NULL AND "
                     "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId)) = '" +
                     kMeasuredStepsRange + "'");
      while (m.step()) domains.push_back(m.i64(0));
    }
    if (!domains.empty()) {
      Stmt c(db, std::string("SELECT category, text FROM ") + kNvtxTable +
                     " WHERE eventType = 33 AND domainId IN (" + in_list(domains) + ")");
      while (c.step()) {
        const std::string t = c.text(1);
        if (t == "COMP") categories[c.i64(0)] = Category::kComp;
        if (t == "COMM") categories[c.i64(0)] = Category::kComm;
        if (t == "MEM") categories[c.i64(0)] = Category::kMem;
      }
    }
  }
  NsysFileSummary sum;
  sum.file = info.file;
  sum.rank = info.rank;
  sum.rank_source = info.rank_source;
  sum.host = info.host;
  sum.commprof_nvtx = !domains.empty();

  const std::vector<StepRange> steps = read_steps(db, domains, options);

  // Activities in launch order.
  std::string acts =
      std::string(
          "SELECT 0 AS kind, start, end, streamId, correlationId, globalPid, 0 AS bytes, ") +
      "shortName AS ref FROM " + kKernelTable;
  if (has_memcpy) {
    acts += std::string(" UNION ALL SELECT 1, start, end, streamId, correlationId, globalPid, ") +
            "bytes, copyKind FROM " + kMemcpyTable;
  }
  if (has_memset) {
    acts += std::string(" UNION ALL SELECT 2, start, end, streamId, correlationId, globalPid, ") +
            "bytes, 0 FROM " + kMemsetTable;
  }
  std::string act_sql;
  if (has_runtime) {
    act_sql =
        "SELECT a.kind, a.start, a.end, a.streamId, a.bytes, a.ref, a.globalPid, "
        "COALESCE(r.start, a.start) AS launch, r.globalTid, "
        "CASE WHEN a.kind = 0 THEN (SELECT value FROM StringIds WHERE id = a.ref) END FROM (" +
        acts + ") a LEFT JOIN " + kRuntimeTable +
        " r ON r.correlationId = a.correlationId ORDER BY launch";
  } else {
    act_sql =
        "SELECT a.kind, a.start, a.end, a.streamId, a.bytes, a.ref, a.globalPid, a.start, "
        "NULL, CASE WHEN a.kind = 0 THEN (SELECT value FROM StringIds WHERE id = a.ref) END "
        "FROM (" +
        acts + ") a ORDER BY a.start";
  }
  // The payload: bytes (uint64) on COMP and MEM ranges and on COMM ranges without a tag; the
  // sequence number (int64) on tagged COMM ranges (src/timeline/op_range_text.hpp).
  const bool has_int64 = has_nvtx && db.has_column(kNvtxTable, "int64Value");
  const std::string nvtx_sql =
      std::string("SELECT n.start, n.end, n.globalTid, n.category, ") +
      "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId)), n.uint64Value, " +
      (has_int64 ? "n.int64Value" : "NULL") + " FROM " + kNvtxTable +
      " n WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL AND n.category IS NOT NULL AND "
      "n.domainId IN (" +
      in_list(domains) + ") ORDER BY n.start";

  // State that lives across both passes: bounded by distinct names and streams.
  std::unordered_map<std::int64_t, std::uint8_t> stream_marks;
  std::unordered_map<std::string, std::uint32_t> name_index;
  std::vector<std::string> names;
  auto intern = [&](const std::string& n) {
    auto [it, added] = name_index.try_emplace(n, static_cast<std::uint32_t>(names.size()));
    if (added) names.push_back(n);
    return it->second;
  };
  std::unordered_map<ActKey, std::uint32_t, ActKeyHash> key_index;
  std::vector<ActKey> keys;
  std::vector<std::array<std::int8_t, 4>> key_class;  // by range category (0: none), -1 unknown
  auto classify_key = [&](std::uint32_t k, std::optional<Category> range) {
    const std::size_t slot = range ? 1 + index_of(*range) : 0;
    std::int8_t& c = key_class[k][slot];
    if (c < 0) {
      ActivityFacts f;
      f.kind = keys[k].kind;
      f.name = names[keys[k].name];
      const auto m = stream_marks.find(keys[k].stream);
      f.stream_marks = m == stream_marks.end() ? 0 : m->second;
      f.range = range;
      c = static_cast<std::int8_t>(rules.classify(f));
    }
    return static_cast<RuleClass>(c);
  };
  auto class_rank = [](RuleClass c) {
    return c == RuleClass::kComm ? 0 : c == RuleClass::kMem ? 1 : c == RuleClass::kComp ? 2 : 3;
  };

  // Turns the pending ops of one step into its StepRecord and hands it on.
  std::unordered_map<std::int64_t, std::int64_t> stream_seq;  // foreign collectives
  auto finish_step = [&](const StepRange& range, std::vector<PendingOp>& ops,
                         std::int64_t last_end) {
    StepRecord st;
    st.index = range.index;
    st.warmup = range.warmup;
    st.start_ns = range.start + shift;
    st.end_ns = ops.empty() ? range.end + shift : std::max(last_end, st.start_ns);
    st.ops.reserve(ops.size());
    for (PendingOp& op : ops) {
      // The op's class is the first of COMM, MEM, COMP among its activities' classes.
      RuleClass cls = RuleClass::kIgnore;
      for (std::uint32_t k : op.acts) {
        const RuleClass c = classify_key(k, op.range);
        if (class_rank(c) < class_rank(cls)) cls = c;
      }
      if (cls == RuleClass::kIgnore) {
        ++sum.ignored;
        continue;
      }
      OpRecord& r = op.rec;
      r.category = cls == RuleClass::kComm  ? Category::kComm
                   : cls == RuleClass::kMem ? Category::kMem
                                            : Category::kComp;
      const auto m = stream_marks.find(op.stream);
      const std::uint8_t marks = m == stream_marks.end() ? 0 : m->second;
      r.stream = "stream" + std::to_string(op.stream);
      for (Category c : kAllCategories) {
        if (marks == (1u << index_of(c))) r.stream = category_name(c);
      }
      if (r.category == Category::kComm) {
        if (r.collective.empty()) {
          // Foreign trace: the kernel names the collective; one stream stands for one
          // communicator and its order for the sequence (TraceLens' fallback).
          for (std::uint32_t k : op.acts) {
            if (keys[k].kind != ActivityKind::kKernel) continue;
            r.collective = collective_from_nccl_kernel(names[keys[k].name]);
            if (!r.collective.empty()) break;
          }
          if (!r.collective.empty()) {
            r.comm = "stream" + std::to_string(op.stream);
            r.seq = stream_seq[op.stream]++;
          }
        }
        if (!r.collective.empty() && r.comm_size == 0) r.comm_size = world_size;
      } else {
        r.collective.clear();
        r.comm.clear();
        r.comm_size = 0;
        r.seq = -1;
      }
      ++sum.ops[index_of(r.category)];
      st.ops.push_back(std::move(r));
    }
    std::stable_sort(st.ops.begin(), st.ops.end(),
                     [](const OpRecord& a, const OpRecord& b) { return a.start_ns < b.start_ns; });
    ++sum.steps;
    on_step(tl, std::move(st));
  };

  // One pass over the activities in launch order. marks_only: only learn which commprof
  // categories launched work onto which stream (needed before any op can be classified).
  auto pass = [&](bool marks_only) {
    Stmt act(db, act_sql);
    std::optional<Stmt> nvtx;
    if (!domains.empty()) nvtx.emplace(db, nvtx_sql);
    bool nvtx_pending = nvtx && nvtx->step();                       // a row read but not yet pushed
    std::unordered_map<std::int64_t, std::vector<OpenRange>> open;  // by globalTid
    std::unordered_map<std::uint64_t, std::size_t> range_op;        // open range id -> pending op
    std::unordered_map<std::string, std::int64_t> comm_seq;
    std::uint64_t next_range_id = 1;
    auto pop_range = [&](std::vector<OpenRange>& stack) {
      range_op.erase(stack.back().id);
      stack.pop_back();
    };
    std::optional<std::int64_t> pid;
    std::size_t cur_step = 0;
    std::size_t emitted = 0;  // steps handed on so far
    std::vector<PendingOp> pending;
    std::int64_t pending_last_end = 0;
    // Hands on every step before `step`. The pending ops belong to step `emitted` (an activity
    // of step k is only added once every step before k has been handed on); later ones are empty.
    auto flush_until = [&](std::size_t step) {
      for (; emitted < step; ++emitted) {
        finish_step(steps[emitted], pending, pending_last_end);
        pending.clear();
        range_op.clear();
        pending_last_end = 0;
      }
    };

    while (act.step()) {
      const auto kind = static_cast<ActivityKind>(act.i64(0));
      const std::int64_t stream = act.i64(3);
      const std::int64_t launch = act.i64(7);
      const std::int64_t tid = act.null(8) ? -1 : act.i64(8);
      if (!marks_only) {
        ++sum.activities;
        if (kind == ActivityKind::kKernel) ++sum.kernels;
      }
      if (!act.null(6)) {
        if (!pid) pid = act.i64(6);
        if (*pid != act.i64(6)) {
          db.fail(
              "GPU activity of more than one process: import-nsys expects one report per rank "
              "(put nsys in front of the application, not of the launcher)");
        }
      }
      // NVTX ranges that began by this launch.
      while (nvtx_pending && nvtx->i64(0) <= launch) {
        const auto c = categories.find(nvtx->i64(3));
        if (c != categories.end()) {
          OpenRange r;
          r.start = nvtx->i64(0);
          r.end = nvtx->i64(1);
          r.id = next_range_id++;
          r.category = c->second;
          r.name = nvtx->text(4);
          r.bytes = nvtx->null(5) ? 0 : static_cast<std::uint64_t>(nvtx->i64(5));
          if (r.category == Category::kComm) {
            ParsedOpRangeText parsed = parse_op_range_text(r.name);
            if (parsed.tag) {
              // commprof names the collective, the communicator (tp1, not just "tp") and its
              // size; the payload is the communicator's own sequence number, the same on every
              // rank of the group whatever the capture left out.
              r.name = std::move(parsed.name);
              r.bytes = parsed.tag->bytes;
              r.collective = std::move(parsed.tag->collective);
              r.comm = std::move(parsed.tag->comm);
              r.comm_size = parsed.tag->comm_size;
              r.seq = !nvtx->null(6) ? nvtx->i64(6) : !nvtx->null(5) ? nvtx->i64(5) : -1;
              if (!marks_only) ++sum.comm_ranges_tagged;
            } else {
              // Exports of commprof before the tag: the collective and the communicator's kind
              // from the op name, the sequence number by counting per kind.
              std::tie(r.collective, r.comm) = collective_of_op_name(r.name);
              if (!r.collective.empty()) r.seq = comm_seq[r.comm]++;
              if (!marks_only) ++sum.comm_ranges_by_name;
            }
          }
          auto& stack = open[nvtx->i64(2)];
          while (!stack.empty() && stack.back().end < r.start) pop_range(stack);
          stack.push_back(std::move(r));
        }
        nvtx_pending = nvtx->step();
      }
      // The innermost commprof op range around the launch, on the launching thread.
      OpenRange* range = nullptr;
      if (tid >= 0) {
        auto it = open.find(tid);
        if (it != open.end()) {
          auto& stack = it->second;
          while (!stack.empty() && stack.back().end < launch) pop_range(stack);
          if (!stack.empty()) range = &stack.back();
        }
      }
      if (marks_only) {
        if (range)
          stream_marks[stream] |= static_cast<std::uint8_t>(1u << index_of(range->category));
        continue;
      }
      // The step.
      while (cur_step < steps.size() && steps[cur_step].end < launch) ++cur_step;
      if (cur_step >= steps.size() || steps[cur_step].start > launch) {
        ++sum.outside_steps;
        continue;
      }
      if (emitted < cur_step) flush_until(cur_step);
      const std::string name = kind == ActivityKind::kKernel   ? act.text(9)
                               : kind == ActivityKind::kMemcpy ? memcpy_name(act.i64(5))
                                                               : std::string("Memset");
      const ActKey key{kind, intern(name), stream};
      auto [kit, added] = key_index.try_emplace(key, static_cast<std::uint32_t>(keys.size()));
      if (added) {
        keys.push_back(key);
        key_class.push_back({-1, -1, -1, -1});
      }
      const char* what = kActivityRow[static_cast<int>(kind)];
      check_span(db, act.i64(1), act.i64(2), what);
      // Both within +-2^60 ns, so the sums cannot overflow; on the job's clock they must stay so.
      const std::int64_t s_ns = bounded_time(db, act.i64(1) + shift, what, " on the job's clock");
      const std::int64_t e_ns = bounded_time(db, act.i64(2) + shift, what, " on the job's clock");
      pending_last_end = std::max(pending_last_end, e_ns);
      if (range) {
        auto found = range_op.find(range->id);
        if (found != range_op.end()) {
          PendingOp& op = pending[found->second];
          op.rec.start_ns = std::min(op.rec.start_ns, s_ns);
          op.rec.end_ns = std::max(op.rec.end_ns, e_ns);
          if (std::find(op.acts.begin(), op.acts.end(), kit->second) == op.acts.end())
            op.acts.push_back(kit->second);
          continue;
        }
      }
      pending.emplace_back();
      PendingOp& op = pending.back();
      op.stream = stream;
      op.acts.push_back(kit->second);
      op.rec.start_ns = s_ns;
      op.rec.end_ns = e_ns;
      if (range) {
        op.range = range->category;
        op.rec.name = range->name;
        op.rec.bytes = range->bytes;
        op.rec.collective = range->collective;
        op.rec.comm = range->comm;
        op.rec.comm_size = range->comm_size;
        op.rec.seq = range->seq;
        range_op[range->id] = pending.size() - 1;
      } else {
        op.rec.name = name;
        op.rec.bytes = kind == ActivityKind::kKernel ? 0 : static_cast<std::uint64_t>(act.i64(4));
      }
    }
    if (!marks_only) flush_until(steps.size());
  };
  if (!domains.empty()) pass(true);
  pass(false);
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
