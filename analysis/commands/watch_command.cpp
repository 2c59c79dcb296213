// SPDX-License-Identifier: MIT
// `commprof watch DIR...`: every --interval seconds, the communication each rank file gained since
// the last refresh (analysis/watch_window.hpp), the collectives left unfinished longer than
// --stall-s, and the files that stopped changing. Under mpirun or srun each process reads the
// p-th of N contiguous blocks of the files and process 0 prints the merged refresh. Ends at Ctrl-C
// (SIGINT) or SIGTERM, exit 0, or after --iterations refreshes.
#include "analysis/commands/watch_command.hpp"

#include <mpi.h>
#include <sys/stat.h>

#include <ctime>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/commands/rank_inputs.hpp"
#include "analysis/commands/watch_fields.hpp"
#include "analysis/report/text_table.hpp"
#include "analysis/watch_window.hpp"
#include "analysis/wire_codec.hpp"
#include "src/cli/output_format.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/units.hpp"
#include "src/fields/field_prometheus.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/runtime/stop_signals.hpp"
#include "src/timeline/rank_file.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

struct WatchConfig {
  std::vector<std::string> inputs;
  double interval_s = 5.0;  // the plugin's default flush period
  double stall_s = 60.0;
  double quiet_s = 0.0;  // 0: three intervals
  int iterations = 0;    // 0: until a signal
  OutputFormat format = OutputFormat::kText;
  std::string prometheus;  // rewritten at every refresh; "" none
};

double realtime_s() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// What this process remembers of a file between refreshes.
struct Seen {
  double mtime_s = -1;
  std::int64_t last_end_ns = INT64_MIN;  // of the ops already counted, on the file's own clock
  int rank = -1;
  std::vector<WatchStall> stalls;  // as of the file's last reading (ages then)
  double read_at_s = 0;
};

// Reads one file's ops that ended after `seen.last_end_ns` into `part`, and its unfinished list.
class FileWindow final : public RankStepSink {
 public:
  FileWindow(WatchPart& part, Seen& seen) : part_(part), seen_(seen) {}
  void header(const RankTimeline& h) override {
    rank_ = h.rank;
    offset_ = h.clock_offset_ns;
    stalls_.clear();
    const nlohmann::ordered_json& c = h.config.json();
    const auto list = c.find("unfinished");
    if (list == c.end() || !list->is_array()) return;
    const auto taken = c.find("snapshot_ns");
    for (const auto& u : *list) {
      WatchStall s;
      s.rank = h.rank;
      s.comm = u.value("comm", "");
      s.collective = u.value("collective", "");
      s.seq = u.value("seq", std::int64_t{-1});
      // Its age when the file was written; the time since then is added at each refresh.
      if (taken != c.end() && taken->is_number_integer())
        s.age_s = static_cast<double>(taken->get<std::int64_t>() -
                                      u.value("enqueue_ns", taken->get<std::int64_t>())) *
                  1e-9;
      stalls_.push_back(std::move(s));
    }
  }
  void step(const StepView& step) override {
    for (const OpView& op : *step.ops) {
      if (op.category != Category::kComm || op.collective.empty()) continue;
      if (op.end_ns <= seen_.last_end_ns) continue;  // counted at an earlier refresh
      part_.add(rank_, offset_, op);
      if (op.end_ns > newest_) newest_ = op.end_ns;
    }
  }
  void end() override {
    seen_.rank = rank_;
    if (newest_ > seen_.last_end_ns) seen_.last_end_ns = newest_;
    seen_.stalls = std::move(stalls_);
  }
  void restart() override {
    // The slow path delivers the file again: nothing from the first delivery may count twice.
    part_ = WatchPart{};
    newest_ = INT64_MIN;
  }

 private:
  WatchPart& part_;
  Seen& seen_;
  int rank_ = 0;
  std::int64_t offset_ = 0;
  std::int64_t newest_ = INT64_MIN;
  std::vector<WatchStall> stalls_;
};

// This process's block of `files` read into a part.
WatchPart read_block(const std::vector<std::string>& files, std::size_t first, std::size_t last,
                     std::map<std::string, Seen>& seen, const WatchConfig& cfg) {
  WatchPart part;
  const double now = realtime_s();
  const double quiet_after = cfg.quiet_s > 0 ? cfg.quiet_s : 3 * cfg.interval_s;
  for (std::size_t i = first; i < last; ++i) {
    const std::string& path = files[i];
    Seen& s = seen[path];
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) continue;  // gone between the listing and now
    ++part.files;
    const double mtime =
        static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) * 1e-9;
    if (mtime != s.mtime_s) {
      WatchPart mine;
      FileWindow window(mine, s);
      try {
        stream_rank_file(path, window);
        s.mtime_s = mtime;
        part.merge(std::move(mine));
      } catch (const Error& e) {
        part.problems.push_back(path + ": " + e.what());  // torn mid-rewrite: next refresh
      }
    }
    for (WatchStall stall : s.stalls) {
      stall.age_s += now - s.mtime_s;
      if (stall.age_s >= cfg.stall_s) part.stalls.push_back(std::move(stall));
    }
    if (s.rank >= 0) part.updated_s[s.rank] = mtime;
    if (s.rank >= 0 && now - mtime > quiet_after) part.quiet_s[s.rank] = now - mtime;
  }
  return part;
}

std::string utc_clock(double t) { return utc_text(static_cast<std::int64_t>(t), "%H:%M:%S"); }

void print_refresh(const WatchConfig& cfg, int refresh, const WatchPart& all, double at) {
  const std::vector<WatchRow> rows = watch_rows(all);
  if (cfg.format == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["schema"] = "commprof.watch";
    j["version"] = 1;
    j["refresh"] = refresh;
    j["time_unix_s"] = at;
    j["files"] = all.files;
    j["window"] = refresh == 1 ? "since the files began" : "since the last refresh";
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const WatchRow& r : rows) list.push_back(fields::json_object(watch_fields::kRows, r));
    j["collectives"] = std::move(list);
    nlohmann::ordered_json stalls = nlohmann::ordered_json::array();
    for (const WatchStall& s : all.stalls)
      stalls.push_back({{"rank", s.rank},
                        {"comm", s.comm},
                        {"collective", s.collective},
                        {"seq", s.seq},
                        {"age_s", s.age_s}});
    j["stalls"] = std::move(stalls);
    nlohmann::ordered_json quiet = nlohmann::ordered_json::object();
    for (const auto& [rank, s] : all.quiet_s) quiet[std::to_string(rank)] = s;
    j["quiet_s"] = std::move(quiet);
    j["problems"] = all.problems;
    std::cout << j.dump() << std::endl;
    return;
  }
  std::cout << "# commprof watch: refresh " << refresh << " at " << utc_clock(at) << " UTC, "
            << all.files << " rank file(s); "
            << (refresh == 1 ? "everything the files hold so far"
                             : "what completed since the last refresh")
            << " (times in us, busbw in GB/s)\n";
  if (rows.empty()) {
    std::cout << "# no communication completed\n";
  } else {
    write_table(std::cout, fields::text_rows(watch_fields::kRows, rows));
  }
  for (const WatchStall& s : all.stalls)
    std::cout << "# stalled: " << s.collective << " #" << s.seq << " on " << s.comm
              << " unfinished on rank " << s.rank << " for " << format_number("%.1f", s.age_s)
              << " s (--stall-s " << format_number("%g", cfg.stall_s) << ")\n";
  for (const auto& [rank, s] : all.quiet_s)
    std::cout << "# quiet: rank " << rank << "'s file unchanged for " << format_number("%.1f", s)
              << " s\n";
  for (const std::string& p : all.problems) std::cout << "# unreadable now: " << p << '\n';
  std::cout << std::flush;
}

// The refresh as Prometheus text (node_exporter's textfile collector reads the file whole, so it
// is replaced atomically): the window's table, each rank file's last change (the liveness a
// dashboard alerts on) and each stalled collective's age.
void write_prometheus(const std::string& path, const WatchPart& all, double at) {
  fields::Exposition e;
  e.sample("commprof_watch_refresh_timestamp_seconds", "When commprof watch last refreshed.", {},
           at);
  e.sample("commprof_watch_rank_files", "Rank files read at the last refresh.", {}, all.files);
  fields::add_rows(e, watch_fields::kRows, watch_rows(all));
  for (const auto& [rank, t] : all.updated_s)
    e.sample("commprof_rank_file_updated_timestamp_seconds",
             "When the rank's file last changed (its writer is alive).",
             {{"rank", std::to_string(rank)}}, t);
  for (const WatchStall& s : all.stalls)
    e.sample("commprof_unfinished_seconds",
             "How long a collective has been enqueued and unfinished on a rank.",
             {{"rank", std::to_string(s.rank)},
              {"comm_name", s.comm},
              {"collective", s.collective},
              {"seq", std::to_string(s.seq)}},
             s.age_s);
  write_file_atomically(path, [&](std::ostream& os) { e.write(os); });
}

int run_watch(RankContext& ctx, const WatchConfig& cfg) {
  install_stop_signals();
  std::map<std::string, Seen> seen;
  for (int refresh = 1;; ++refresh) {
    const std::vector<std::string> files = rank_files_so_far(cfg.inputs);
    const auto n = files.size();
    const auto p = static_cast<std::size_t>(ctx.rank());
    const auto np = static_cast<std::size_t>(ctx.size());
    WatchPart part = read_block(files, n * p / np, n * (p + 1) / np, seen, cfg);
    const std::vector<std::string> parts = ctx.gather(wire::encode(part));
    if (ctx.rank() == 0) {
      WatchPart all;
      for (const std::string& bytes : parts) all.merge(wire::decode<WatchPart>(bytes));
      const double at = realtime_s();
      print_refresh(cfg, refresh, all, at);
      if (!cfg.prometheus.empty()) write_prometheus(cfg.prometheus, all, at);
    }
    if (ctx.any(stop_signal() != 0 || refresh == cfg.iterations)) return kExitOk;
    pause_unless_stopped(cfg.interval_s);
  }
}

class WatchCommand final : public Command {
 public:
  const char* name() const override { return "watch"; }
  const char* summary() const override {
    return "a live view of rank files while the job runs (the NCCL profiler plugin's, or a "
           "run's): per communicator the last window's p50/p95/p99 and busbw, the slowest rank, "
           "stalled collectives";
  }
  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()("interval", po::value<double>()->default_value(5.0),
                          "seconds between refreshes (the plugin rewrites its files every "
                          "COMMPROF_PLUGIN_FLUSH_S, 5 by default)")(
        "stall-s", po::value<double>()->default_value(60.0),
        "name a collective unfinished for longer than this (s), from the plugin's list of them")(
        "quiet-s", po::value<double>()->default_value(0.0),
        "name a rank whose file has not changed for longer than this (s); 0: three intervals")(
        "iterations", po::value<int>()->default_value(0),
        "stop after this many refreshes; 0: until Ctrl-C (SIGINT) or SIGTERM, exit 0")(
        "format", po::value<std::string>()->default_value("text"),
        "text, or json (one object a refresh, schema commprof.watch v1)")(
        "prometheus", po::value<std::string>(),
        "also rewrite this file at every refresh as Prometheus text (node_exporter's textfile "
        "collector): the window's figures, each rank file's last change, the stalls");
    add_rank_inputs(hidden);
  }
  void define_positional(po::positional_options_description& positional) override {
    positional.add("inputs", -1);
  }
  void configure(const po::variables_map& vm) override {
    cfg_.inputs = rank_inputs(vm);
    cfg_.interval_s = vm["interval"].as<double>();
    cfg_.stall_s = vm["stall-s"].as<double>();
    cfg_.quiet_s = vm["quiet-s"].as<double>();
    cfg_.iterations = vm["iterations"].as<int>();
    if (!(cfg_.interval_s > 0)) throw ConfigError("--interval must be positive (seconds)");
    if (!(cfg_.stall_s >= 0)) throw ConfigError("--stall-s must not be negative (seconds)");
    if (!(cfg_.quiet_s >= 0)) throw ConfigError("--quiet-s must not be negative (seconds)");
    if (cfg_.iterations < 0) throw ConfigError("--iterations must not be negative");
    cfg_.format = parse_output_format(vm["format"].as<std::string>(),
                                      {OutputFormat::kText, OutputFormat::kJson});
    if (vm.count("prometheus") != 0) cfg_.prometheus = vm["prometheus"].as<std::string>();
  }
  std::string backend_name() const override { return ""; }
  int run(RankContext& ctx, Backend*, const BackendChoice&) override {
    return run_watch(ctx, cfg_);
  }

 private:
  WatchConfig cfg_;
};

}  // namespace

std::unique_ptr<Command> make_watch_command() { return std::make_unique<WatchCommand>(); }

}  // namespace commprof
