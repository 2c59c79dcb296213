// SPDX-License-Identifier: MIT
// The report as Prometheus text exposition (format 0.0.4), for node_exporter's textfile
// collector: every metric a gauge of the finished run, with HELP and TYPE lines, base units in
// the names (seconds, ratio) except where NCCL Inspector's Prometheus output (NCCL 2.28
// plugins/profiler/inspector, NCCL_INSPECTOR_PROM_DUMP=1) already names the same quantity:
// its nccl_bus_bandwidth_gbs is commprof_bus_bandwidth_gbs here, and its label names (node,
// comm_name, nranks, collective) are used where they mean the same thing. Inspector's
// exec time is a mean in microseconds; ours is a percentile in seconds, so it has its own name.
// `promtool check metrics` passes on what this writes (a test runs it).
#include <charconv>
#include <cmath>
#include <ostream>
#include <utility>
#include <vector>

#include "analysis/report/report_writers.hpp"

namespace commprof {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Label values escape backslash, double quote and newline (the exposition format's rules).
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The shortest text that reads back as the same double (what Go's strconv, which Prometheus
// parses with, accepts).
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

class Family {
 public:
  Family(std::ostream& os, const char* name, const char* help) : os_(os), name_(name) {
    os_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n";
  }
  void sample(const Labels& labels, double value) {
    os_ << name_;
    if (!labels.empty()) {
      os_ << '{';
      for (std::size_t i = 0; i < labels.size(); ++i) {
        os_ << (i ? "," : "") << labels[i].first << "=\"" << label_value(labels[i].second) << '"';
      }
      os_ << '}';
    }
    os_ << ' ' << number(value) << '\n';
  }

 private:
  std::ostream& os_;
  const char* name_;
};

Labels rank_labels(const RankSummary& s) {
  return {{"rank", std::to_string(s.rank)}, {"node", s.host}};
}

void per_rank(std::ostream& os, const Report& r) {
  {
    Family f(os, "commprof_step_time_seconds",
             "Mean step time of the rank over its measured steps (plain steps when sampled).");
    for (const RankSummary& s : r.ranks)
      if (s.wall_ns.count > 0) f.sample(rank_labels(s), s.wall_ns.mean / 1e9);
  }
  {
    Family f(os, "commprof_measured_steps", "Measured (non-warm-up) steps of the rank.");
    for (const RankSummary& s : r.ranks) f.sample(rank_labels(s), s.steps);
  }
  {
    Family f(os, "commprof_busy_seconds",
             "Mean busy time per step: the union of the category's ops (all: of every op).");
    for (const RankSummary& s : r.ranks) {
      const std::pair<const char*, const Stat*> cats[] = {
          {"COMP", &s.comp_ns}, {"COMM", &s.comm_ns}, {"MEM", &s.mem_ns}, {"all", &s.busy_ns}};
      for (const auto& [category, stat] : cats) {
        if (stat->count == 0) continue;
        Labels l = rank_labels(s);
        l.emplace_back("category", category);
        f.sample(l, stat->mean / 1e9);
      }
    }
  }
  const std::tuple<const char*, const char*, Stat RankSummary::*, double> rest[] = {
      {"commprof_exposed_comm_seconds", "Mean communication per step that no compute hides.",
       &RankSummary::exposed_comm_ns, 1e9},
      {"commprof_idle_seconds", "Mean time per step with no op running.", &RankSummary::idle_ns,
       1e9},
      {"commprof_overlap_ratio", "Mean |COMM and COMP| / |COMM| per step (HTA's overlap).",
       &RankSummary::overlap, 1.0},
      {"commprof_hidden_ratio", "Mean |COMM and COMP| / min(|COMM|, |COMP|) per step.",
       &RankSummary::hidden_fraction, 1.0},
  };
  for (const auto& [name, help, member, divisor] : rest) {
    Family f(os, name, help);
    for (const RankSummary& s : r.ranks) {
      const Stat& st = s.*member;
      if (st.count > 0) f.sample(rank_labels(s), st.mean / divisor);
    }
  }
}

void per_rank_waits(std::ostream& os, const Report& r) {
  auto host_of = [&](int rank) -> std::string {
    for (const RankSummary& s : r.ranks)
      if (s.rank == rank) return s.host;
    return "";
  };
  auto labels = [&](const RankWait& w) {
    return Labels{{"rank", std::to_string(w.rank)}, {"node", host_of(w.rank)}};
  };
  {
    Family f(os, "commprof_collective_wait_seconds",
             "Time the rank waited for later ranks at collectives, summed over the run.");
    for (const RankWait& w : r.waits) f.sample(labels(w), static_cast<double>(w.wait_ns) / 1e9);
  }
  {
    Family f(os, "commprof_wait_caused_seconds",
             "Time other ranks waited for this rank (it arrived last), summed over the run.");
    for (const RankWait& w : r.waits)
      f.sample(labels(w), static_cast<double>(w.wait_caused_ns) / 1e9);
  }
  {
    Family f(os, "commprof_arrived_last_collectives",
             "Collectives at which this rank arrived last.");
    for (const RankWait& w : r.waits) f.sample(labels(w), static_cast<double>(w.times_last));
  }
}

void per_collective(std::ostream& os, const Report& r) {
  auto labels = [](const CollectiveRow& c) {
    return Labels{{"collective", c.collective},
                  {"nranks", std::to_string(c.comm_size)},
                  {"message_bytes", std::to_string(c.bytes)}};
  };
  {
    Family f(os, "commprof_bus_bandwidth_gbs",
             "Bus bandwidth in GB/s (1e9 B/s) of the p50 instance time, as nccl-tests.");
    for (const CollectiveRow& c : r.collectives)
      if (c.busbw_gbps >= 0) f.sample(labels(c), c.busbw_gbps);
  }
  {
    Family f(os, "commprof_alg_bandwidth_gbs", "Bytes / p50 instance time, GB/s (1e9 B/s).");
    for (const CollectiveRow& c : r.collectives) f.sample(labels(c), c.algbw_gbps);
  }
  {
    Family f(os, "commprof_collective_time_seconds",
             "Instance time (the shortest rank's duration), 50th and 95th percentile.");
    for (const CollectiveRow& c : r.collectives) {
      for (const auto& [p, v] : {std::pair<const char*, double>{"p50", c.p50_ns},
                                 std::pair<const char*, double>{"p95", c.p95_ns}}) {
        Labels l = labels(c);
        l.emplace_back("stat", p);
        f.sample(l, v / 1e9);
      }
    }
  }
  {
    Family f(os, "commprof_collective_instances", "Instances matched across ranks.");
    for (const CollectiveRow& c : r.collectives) f.sample(labels(c), static_cast<double>(c.count));
  }
  {
    Family f(os, "commprof_collective_start_skew_seconds",
             "Mean over instances of last start minus first start.");
    for (const CollectiveRow& c : r.collectives) f.sample(labels(c), c.mean_skew_ns / 1e9);
  }
}

void per_group(std::ostream& os, const Report& r) {
  auto labels = [](const GroupRow& g) { return Labels{{"comm_name", g.group}}; };
  {
    Family f(os, "commprof_group_bus_bandwidth_gbs",
             "Bus bandwidth of every collective of the communicator group, GB/s.");
    for (const GroupRow& g : r.groups)
      if (g.busbw_gbps >= 0) f.sample(labels(g), g.busbw_gbps);
  }
  {
    Family f(os, "commprof_group_wait_caused_seconds",
             "Waiting at the group's collectives, summed over ranks and the run.");
    for (const GroupRow& g : r.groups) f.sample(labels(g), static_cast<double>(g.wait_ns) / 1e9);
  }
  {
    Family f(os, "commprof_group_incomplete_collectives",
             "Instances fewer ranks recorded than the communicator has (a hang or a lost rank).");
    for (const GroupRow& g : r.groups) f.sample(labels(g), static_cast<double>(g.incomplete));
  }
}

}  // namespace

void write_report_prometheus(std::ostream& os, const Report& r) {
  {
    Family f(os, "commprof_world_size", "Ranks the run had.");
    f.sample({}, r.world_size);
  }
  {
    Family f(os, "commprof_ranks_read", "Rank files reduced.");
    f.sample({}, static_cast<double>(r.ranks.size()));
  }
  {
    Family f(os, "commprof_rank_files_unreadable", "Rank files that could not be read.");
    f.sample({}, static_cast<double>(r.problems.size()));
  }
  per_rank(os, r);
  per_rank_waits(os, r);
  per_collective(os, r);
  per_group(os, r);
}

}  // namespace commprof
