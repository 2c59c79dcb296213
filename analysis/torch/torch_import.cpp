// SPDX-License-Identifier: MIT
#include "analysis/torch/torch_import.hpp"

#include <zlib.h>

#include <simdjson.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "analysis/import_rank.hpp"
#include "src/collective/collective_kind.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {
namespace {

using simdjson::dom::element;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(log::cat(path, ": ", what));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A number field of any JSON number type; nullopt when absent or not a number.
std::optional<double> number(const element& e, const char* key) {
  element v;
  if (e[key].get(v) != simdjson::SUCCESS) return std::nullopt;
  switch (v.type()) {
    case simdjson::dom::element_type::DOUBLE:
      return double(v);
    case simdjson::dom::element_type::INT64:
      return static_cast<double>(std::int64_t(v));
    case simdjson::dom::element_type::UINT64:
      return static_cast<double>(std::uint64_t(v));
    default:
      return std::nullopt;
  }
}

std::string text(const element& e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s) != simdjson::SUCCESS) return "";
  return std::string(s);
}

// Kineto times are microseconds with fractions of nanoseconds.
std::int64_t ns_of(double us) { return std::llround(us * 1000.0); }

std::size_t torch_dtype_size(const std::string& dtype) {
  static const std::map<std::string, std::size_t> sizes = {
      {"float", 4},   {"float32", 4},  {"double", 8}, {"float64", 8},       {"half", 2},
      {"float16", 2}, {"bfloat16", 2}, {"int", 4},    {"int32", 4},         {"long", 8},
      {"int64", 8},   {"short", 2},    {"int16", 2},  {"char", 1},          {"int8", 1},
      {"byte", 1},    {"uint8", 1},    {"bool", 1},   {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
  const auto it = sizes.find(lower(dtype));
  return it == sizes.end() ? 0 : it->second;
}

struct GpuActivity {
  ActivityKind kind = ActivityKind::kKernel;
  std::string name;
  std::int64_t start = 0, end = 0, launch = 0;
  std::int64_t device = 0, stream = 0, correlation = -1;
  std::uint64_t bytes = 0;
  element args;
  bool has_args = false;
};

}  // namespace

std::string read_maybe_gzip(const std::string& path) {
  std::ifstream probe(path, std::ios::binary);
  if (!probe) fail(path, "cannot open");
  unsigned char magic[2] = {0, 0};
  probe.read(reinterpret_cast<char*>(magic), 2);
  probe.close();
  if (!(magic[0] == 0x1f && magic[1] == 0x8b)) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream all;
    all << in.rdbuf();
    return all.str();
  }
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) fail(path, "cannot open as gzip");
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(gz, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      const std::string why = gzerror(gz, &code);
      gzclose(gz);
      fail(path, "damaged gzip: " + why);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  gzclose(gz);
  return out;
}

std::string torch_collective_name(const std::string& name) {
  std::string s = lower(name);
  while (!s.empty() && s.front() == '_') s.erase(s.begin());
  for (const char* suffix : {"_coalesced", "_into_tensor", "_base", "_tensor"}) {
    const std::string suf(suffix);
    for (std::size_t at; (at = s.find(suf)) != std::string::npos;) s.erase(at, suf.size());
  }
  if (s == "send" || s == "recv") return s;
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  try {
    return collective_name(parse_collective(s));
  } catch (const ConfigError&) {
    return s;
  }
}

std::string short_kernel_name(const std::string& name) {
  std::string s = name;
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  // "(anonymous namespace)" is part of the qualified name, not the parameter list.
  for (std::size_t at; (at = s.find("(anonymous namespace)")) != std::string::npos;)
    s.replace(at, 21, "anon");
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '<') ++depth;
    if (depth == 0) {
      if (c == '(') break;
      out += c;
    }
    if (c == '>' && depth > 0) --depth;
  }
  const std::size_t colon = out.rfind("::");
  if (colon != std::string::npos) out.erase(0, colon + 2);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? name : out;
}

namespace {

// Where the trace's times start from. Kineto's "ts" are microseconds on the host's monotonic
// clock since PyTorch 2.1 (with "baseTimeNanoseconds" to make them Unix time); earlier versions
// wrote Unix-epoch microseconds (HTA's own test traces have them), which in nanoseconds lie
// beyond a rank file's ±2^60 ns. Such a trace is moved onto its own earliest event, a whole
// microsecond, subtracted in microseconds before scaling: at 1.7·10^18 ns a double no longer
// holds every nanosecond, at 1.7·10^15 µs it holds every microsecond.
struct TraceClock {
  double origin_us = 0.0;
  std::int64_t ns(double us) const { return ns_of(us - origin_us); }
};

TraceClock clock_of(const simdjson::dom::array& events, const std::string& path) {
  std::optional<double> first, last;
  for (element e : events) {
    if (text(e, "ph") != "X") continue;
    const auto ts = number(e, "ts");
    if (!ts) continue;
    const double end = *ts + number(e, "dur").value_or(0.0);
    first = std::min(first.value_or(*ts), *ts);
    last = std::max(last.value_or(end), end);
  }
  TraceClock clock;
  const double limit_us = static_cast<double>(kMaxTimeNs) / 1000.0;
  if (!first) return clock;
  if (*last > limit_us || *first < -limit_us) clock.origin_us = std::floor(*first);
  if (*last - clock.origin_us > limit_us || *first - clock.origin_us < -limit_us) {
    fail(path, log::cat("events span ", *first, " to ", *last,
                        " us: more than a rank file's 2^60 ns (36 years)"));
  }
  return clock;
}

// The trace's rank, world size and the configuration its rank file records.
void read_header(const element& doc, const std::string& path, const TorchImportOptions& options,
                 int position, int fallback_world, RankTimeline& t, TorchImportSummary& sum) {
  nlohmann::ordered_json config = {{"command", "import-torch"}, {"source", path}};
  element dist;
  std::optional<double> dist_rank, dist_world;
  if (doc["distributedInfo"].get(dist) == simdjson::SUCCESS) {
    dist_rank = number(dist, "rank");
    dist_world = number(dist, "world_size");
    config["distributed"] = nlohmann::ordered_json::parse(simdjson::to_string(dist));
  }
  std::optional<ImportRank> recorded;
  if (dist_rank) recorded = ImportRank{static_cast<int>(*dist_rank), "distributedInfo"};
  const ImportRank rank = import_rank(options.rank, recorded, position);
  t.rank = rank.rank;
  sum.rank_source = rank.source;
  t.world_size = dist_world ? static_cast<int>(*dist_world) : fallback_world;
  if (t.rank < 0 || t.world_size < 1 || t.rank >= std::max(t.world_size, t.rank + 1)) {
    fail(path, log::cat("rank ", t.rank, " of world size ", t.world_size, " is not valid"));
  }
  t.world_size = std::max(t.world_size, t.rank + 1);
  t.backend = "pytorch";
  t.host = "";
  sum.rank = t.rank;
  if (sum.origin_us != 0) config["time_origin_us"] = sum.origin_us;
  std::string device_name;
  if (doc["deviceProperties"].is_array()) {
    simdjson::dom::array props = doc["deviceProperties"].get_array();
    for (element p : props) {
      device_name = text(p, "name");
      break;
    }
  }
  t.device = device_name.empty() ? "unknown" : device_name;
  t.config = JsonObject(std::move(config));
}

// What the trace's events hold: the steps (ProfilerStep#N on the CPU), the launches by
// correlation, and the GPU activities in launch order.
struct TraceEvents {
  std::vector<std::pair<std::int64_t, std::int64_t>> step_windows;
  std::vector<int> step_numbers;
  std::vector<GpuActivity> gpu;
};

TraceEvents read_events(const simdjson::dom::array& events, const TraceClock& clock) {
  TraceEvents out;
  std::map<std::int64_t, std::int64_t> launch_of;  // correlation -> launch time
  for (element e : events) {
    if (text(e, "ph") != "X") continue;
    const std::string cat = text(e, "cat");
    const auto ts = number(e, "ts");
    const auto dur = number(e, "dur");
    if (!ts || !dur) continue;
    element args;
    const bool has_args = e["args"].get(args) == simdjson::SUCCESS;
    if (cat == "user_annotation") {
      const std::string name = text(e, "name");
      if (name.rfind("ProfilerStep#", 0) == 0) {
        out.step_windows.emplace_back(clock.ns(*ts), clock.ns(*ts + *dur));
        out.step_numbers.push_back(std::atoi(name.c_str() + 13));
      }
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (!has_args) continue;
      if (const auto c = number(args, "correlation")) {
        launch_of[static_cast<std::int64_t>(*c)] = clock.ns(*ts);
      }
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      GpuActivity a;
      a.kind = cat == "kernel"       ? ActivityKind::kKernel
               : cat == "gpu_memcpy" ? ActivityKind::kMemcpy
                                     : ActivityKind::kMemset;
      a.name = text(e, "name");
      a.start = clock.ns(*ts);
      a.end = clock.ns(*ts + *dur);
      a.launch = a.start;
      if (has_args) {
        a.args = args;
        a.has_args = true;
        a.device = static_cast<std::int64_t>(number(args, "device").value_or(0));
        a.stream = static_cast<std::int64_t>(number(args, "stream").value_or(0));
        a.correlation = static_cast<std::int64_t>(number(args, "correlation").value_or(-1));
        a.bytes = static_cast<std::uint64_t>(number(args, "bytes").value_or(0));
      }
      out.gpu.push_back(std::move(a));
    }
  }
  for (GpuActivity& a : out.gpu) {
    const auto it = launch_of.find(a.correlation);
    if (it != launch_of.end()) a.launch = it->second;
  }
  std::stable_sort(out.gpu.begin(), out.gpu.end(),
                   [](const GpuActivity& a, const GpuActivity& b) { return a.launch < b.launch; });
  return out;
}

// The steps in time order; without ProfilerStep ranges, one step from the first activity's
// launch to the last one's end.
std::vector<StepRecord> steps_of(TraceEvents& ev, TorchImportSummary& sum) {
  if (ev.step_windows.empty()) {
    sum.whole_trace = true;
    if (!ev.gpu.empty()) {
      std::int64_t first = ev.gpu.front().launch, last = ev.gpu.front().end;
      for (const GpuActivity& a : ev.gpu) {
        first = std::min(first, a.launch);
        last = std::max(last, a.end);
      }
      ev.step_windows.emplace_back(first, last);
      ev.step_numbers.push_back(0);
    }
  }
  std::vector<std::size_t> order(ev.step_windows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return ev.step_windows[a] < ev.step_windows[b]; });
  std::vector<StepRecord> steps;
  for (std::size_t i : order) {
    StepRecord s;
    s.index = ev.step_numbers[i];
    s.start_ns = ev.step_windows[i].first;
    s.end_ns = ev.step_windows[i].second;
    steps.push_back(std::move(s));
  }
  return steps;
}

// The op an activity becomes (its category from `cls`); a COMM op with the collective's record
// gets the collective, communicator, size and bytes, and its place in the communicator's order.
OpRecord op_of(const GpuActivity& a, const std::string& name, RuleClass cls,
               std::map<std::string, std::int64_t>& next_seq) {
  OpRecord op;
  op.name = name;
  op.category = cls == RuleClass::kComm  ? Category::kComm
                : cls == RuleClass::kMem ? Category::kMem
                                         : Category::kComp;
  op.stream = log::cat("cuda:", a.device, ":", a.stream);
  op.start_ns = a.start;
  op.end_ns = a.end;
  op.bytes = a.bytes;
  const std::string coll = a.has_args ? text(a.args, "Collective name") : "";
  if (op.category != Category::kComm || coll.empty()) return op;
  op.collective = torch_collective_name(coll);
  const std::string pg = text(a.args, "Process Group Name");
  const std::string desc = text(a.args, "Process Group Description");
  op.comm = "pg" + pg + (desc.empty() || desc == "undefined" ? "" : ":" + desc);
  op.comm_size = static_cast<int>(number(a.args, "Group size").value_or(0));
  const std::size_t elem = torch_dtype_size(text(a.args, "dtype"));
  const auto in = static_cast<std::uint64_t>(number(a.args, "In msg nelems").value_or(0));
  const auto out = static_cast<std::uint64_t>(number(a.args, "Out msg nelems").value_or(0));
  // S of the bus-bandwidth formulas (docs/reference: nccl-tests): the larger of the two
  // buffers: all-gather's output, reduce-scatter's input, an all-reduce's either.
  op.bytes = std::max(in, out) * elem;
  // NCCL's count: the smaller buffer (all-gather's input, reduce-scatter's output).
  op.count = in > 0 && out > 0 ? std::min(in, out) : std::max(in, out);
  op.dtype = text(a.args, "dtype");
  op.seq = next_seq[op.comm]++;
  op.name = op.collective;
  return op;
}

// Each activity into the step whose window holds its launch, classified by `rules`.
void place_activities(const std::vector<GpuActivity>& gpu, const RuleSet& rules,
                      std::vector<StepRecord>& steps, TorchImportSummary& sum) {
  std::map<std::string, std::int64_t> next_seq;  // per communicator, in launch order
  for (const GpuActivity& a : gpu) {
    // Steps are in start order: the one that can hold the launch is the last starting at or
    // before it (a search, not a scan: traces hold millions of kernels and thousands of steps).
    StepRecord* step = nullptr;
    const auto after = std::upper_bound(
        steps.begin(), steps.end(), a.launch,
        [](std::int64_t launch, const StepRecord& s) { return launch < s.start_ns; });
    if (after != steps.begin() && a.launch <= std::prev(after)->end_ns) step = &*std::prev(after);
    ActivityFacts facts;
    facts.kind = a.kind;
    facts.name = a.kind == ActivityKind::kKernel   ? short_kernel_name(a.name)
                 : a.kind == ActivityKind::kMemset ? "Memset"
                                                   : a.name.substr(0, a.name.find(" ("));
    const RuleClass cls = rules.classify(facts);
    if (cls == RuleClass::kIgnore) {
      ++sum.ignored;
      continue;
    }
    if (step == nullptr) {
      ++sum.outside_steps;
      continue;
    }
    OpRecord op = op_of(a, facts.name, cls, next_seq);
    ++sum.ops[index_of(op.category)];
    if (op.end_ns > step->end_ns) step->end_ns = op.end_ns;
    step->ops.push_back(std::move(op));
  }
}

}  // namespace

RankTimeline import_torch_trace(const std::string& path, const TorchImportOptions& options,
                                int position, int fallback_world, TorchImportSummary* summary) {
  const RuleSet& rules = options.rules != nullptr ? *options.rules : RuleSet::defaults();
  TorchImportSummary local;
  TorchImportSummary& sum = summary != nullptr ? *summary : local;
  sum.file = path;
  const simdjson::padded_string json(read_maybe_gzip(path));
  simdjson::dom::parser parser;
  element doc;
  if (const auto err = parser.parse(json).get(doc); err != simdjson::SUCCESS) {
    fail(path, std::string("not JSON (") + simdjson::error_message(err) + ")");
  }
  simdjson::dom::array events;
  if (doc["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
    fail(path, "no \"traceEvents\" array: not a PyTorch profiler (Chrome trace) file");
  }
  const TraceClock clock = clock_of(events, path);
  sum.origin_us = static_cast<std::int64_t>(clock.origin_us);
  RankTimeline t;
  read_header(doc, path, options, position, fallback_world, t, sum);
  TraceEvents ev = read_events(events, clock);
  sum.activities = static_cast<std::int64_t>(ev.gpu.size());
  t.steps = steps_of(ev, sum);
  place_activities(ev.gpu, rules, t.steps, sum);
  sum.steps = static_cast<int>(t.steps.size());
  return t;
}

std::int64_t align_torch_origins(std::vector<RankTimeline>& timelines,
                                 const std::vector<TorchImportSummary>& summaries) {
  std::optional<std::int64_t> common;
  for (const TorchImportSummary& s : summaries) {
    if (s.origin_us != 0) common = std::min(common.value_or(s.origin_us), s.origin_us);
  }
  if (!common) return 0;
  for (std::size_t i = 0; i < timelines.size() && i < summaries.size(); ++i) {
    if (summaries[i].origin_us == 0) continue;
    // Traces of one job moved onto their own first events: put them back on one clock. The
    // shift is a difference of start times of one job (seconds), far inside ±2^60 ns.
    const std::int64_t shift = (summaries[i].origin_us - *common) * 1000;
    RankTimeline& t = timelines[i];
    for (StepRecord& s : t.steps) {
      s.start_ns += shift;
      s.end_ns += shift;
      for (OpRecord& op : s.ops) {
        op.start_ns += shift;
        op.end_ns += shift;
      }
    }
    nlohmann::ordered_json config = t.config.json();
    config["time_origin_us"] = *common;
    t.config = JsonObject(std::move(config));
  }
  return *common;
}

}  // namespace commprof
