// SPDX-License-Identifier: MIT
// `commprof bench`: options, validation, and running the sweep with its outputs.
#include "collectives/commands/bench_command.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "collectives/bench/bench.hpp"
#include "collectives/bench/bench_links.hpp"
#include "collectives/bench/bench_report.hpp"
#include "collectives/links/link_model.hpp"
#include "src/cli/command.hpp"
#include "src/cli/common_options.hpp"
#include "src/cli/option_values.hpp"
#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/output_dir.hpp"
#include "src/runtime/rank_context.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

class BenchCommand final : public Command {
 public:
  const char* name() const override { return "bench"; }
  const char* summary() const override {
    return "collective sweep (nccl-tests style): time, algbw, busbw, verification";
  }

  void define_options(po::options_description& visible, po::options_description& hidden) override {
    visible.add_options()(
        "ops", po::value<std::string>()->default_value("allreduce"),
        "comma-separated: allreduce, allgather, reducescatter, broadcast, reduce, alltoall, "
        "sendrecv, alltoallv; or all (every one but alltoallv)")(
        "min-bytes,b", po::value<ByteSize>()->default_value(ByteSize{1024}, "1K"),
        "smallest size (K/M/G = KiB/MiB/GiB)")(
        "max-bytes,e", po::value<ByteSize>()->default_value(ByteSize{16ull << 20}, "16M"),
        "largest size")("step-factor,f", po::value<std::uint64_t>()->default_value(4),
                        "multiply the size by this between steps (>= 2)")(
        "iters,n", po::value<int>()->default_value(20), "timed iterations per size")(
        "warmup,w", po::value<int>()->default_value(5), "untimed iterations per size")(
        "dtype,d", po::value<std::string>()->default_value("float"),
        "float, double, int32, int64, bfloat16, half (bf16/half: cuda backend)")(
        "check,c", po::value<bool>()->default_value(true),
        "verify every result exactly (0 to skip); #wrong counts wrong elements")(
        "root,r", po::value<int>()->default_value(0), "root rank of broadcast and reduce")(
        "instrument", po::value<std::string>()->default_value("0"),
        "0: two stamps (events) around the timed loop, as nccl-tests times; 1: also one "
        "between calls (single-call min/max in JSON); activity: the timed loop unrecorded, "
        "then one more loop with the device's activity records (CUPTI kernel times, nothing "
        "added to the stream) for single-call times and their cost; activity-every: record the "
        "timed loop itself; both / activity-both: time each size plain and as 1 / "
        "activity-every, interleaved, and report what that costs")(
        "out,o", po::value<std::string>(), "write bench.json and bench.csv into this directory")(
        "fit-links", po::value<std::string>(),
        "fit the link model (time = latency per ring step x steps + bus bytes / busbw) to the "
        "sweep's times per collective and link class (intra_node: every rank on one host, else "
        "inter_node) and write it to this JSON file (schema commprof.links v1) for `commprof "
        "project --links`; an existing file's points are kept and refitted with this sweep's, so "
        "sweeps on 2 and 4 ranks fit one model")(
        "estimate", po::bool_switch(),
        "before each size, ask the communication library for its own estimate of the call's time "
        "(NCCL's ncclGroupSimulateEnd, NCCL 2.22 and later) and report it beside the measured "
        "time; cuda only, collectives but all-to-all")(
        "graph", po::bool_switch(),
        "capture the timed loop once as a CUDA graph and time one replay of it, as nccl-tests "
        "-G 1 (cuda backend; with --instrument 0)")(
        "routing", po::value<std::string>()->default_value("zipf"),
        "alltoallv: where tokens go: uniform, zipf (the default exponent, fit to real text), "
        "zipf:S (Zipf exponent S >= 0) or file:PATH (per-layer token counts of a real run; "
        "docs/collectives.md)")("experts", po::value<int>()->default_value(64),
                                "alltoallv: experts, spread evenly over the ranks")(
        "top-k", po::value<int>()->default_value(6), "alltoallv: experts each token goes to")(
        "hidden", po::value<std::uint64_t>()->default_value(1),
        "alltoallv: elements per routed token (1: every element routed alone; the model's "
        "hidden size for token-sized blocks)");
    add_runtime_options(visible);
    hidden.add_options()("test-corrupt-rank", po::value<int>()->default_value(-1),
                         "test hook: this rank corrupts one received element before checking");
  }

  void configure(const po::variables_map& vm) override {
    runtime_ = read_runtime_options(vm);
    config_.ops = parse_collective_list(vm["ops"].as<std::string>());
    config_.min_bytes = vm["min-bytes"].as<ByteSize>().bytes;
    config_.max_bytes = vm["max-bytes"].as<ByteSize>().bytes;
    config_.step_factor = vm["step-factor"].as<std::uint64_t>();
    config_.iters = vm["iters"].as<int>();
    config_.warmup = vm["warmup"].as<int>();
    config_.dtype = parse_dtype(vm["dtype"].as<std::string>());
    config_.check = vm["check"].as<bool>();
    config_.root = vm["root"].as<int>();
    config_.instrument = parse_instrument(vm["instrument"].as<std::string>());
    config_.graph = vm["graph"].as<bool>();
    config_.estimate = vm["estimate"].as<bool>();
    if (vm.count("out") != 0) config_.out_dir = vm["out"].as<std::string>();
    if (vm.count("fit-links") != 0) fit_links_ = vm["fit-links"].as<std::string>();
    config_.test_corrupt_rank = vm["test-corrupt-rank"].as<int>();
    configure_alltoallv(vm);
    for (const CollectiveKind op : config_.ops) {
      if (op == CollectiveKind::kAllGatherV || op == CollectiveKind::kReduceScatterV) {
        throw ConfigError(log::cat(
            collective_name(op),
            " is not benchmarked: its per-rank counts come from an MoE layer's routing over "
            "expert TP (commprof run --etp)"));
      }
    }

    if (config_.min_bytes == 0) throw ConfigError("--min-bytes must be at least 1 byte");
    if (config_.min_bytes > config_.max_bytes) {
      throw ConfigError(log::cat("--min-bytes (", config_.min_bytes,
                                 " B) is larger than --max-bytes (", config_.max_bytes, " B)"));
    }
    if (config_.step_factor < 2) throw ConfigError("--step-factor must be at least 2");
    if (config_.iters < 1) throw ConfigError("--iters must be at least 1");
    if (config_.warmup < 0) throw ConfigError("--warmup must not be negative");
    if (config_.root < 0) throw ConfigError("--root must not be negative");
    if (config_.graph && config_.instrument != Instrument::kOff) {
      throw ConfigError(
          log::cat("--graph replays the loop as one launch, so it has no per-call "
                   "times: use it with --instrument 0, not --instrument ",
                   instrument_name(config_.instrument)));
    }
  }

  // The routing options shape alltoallv alone: given without it they would be ignored, so they
  // are refused; with it, a bad value is refused before anything runs (a routing file is read
  // here, on every rank, so every rank refuses it alike).
  void configure_alltoallv(const po::variables_map& vm) {
    const bool alltoallv = std::find(config_.ops.begin(), config_.ops.end(),
                                     CollectiveKind::kAllToAllV) != config_.ops.end();
    for (const char* option : {"routing", "experts", "top-k", "hidden"}) {
      if (!alltoallv && !vm[option].defaulted()) {
        throw ConfigError(log::cat("--", option, " shapes alltoallv only: add alltoallv to --ops"));
      }
    }
    config_.routing = parse_routing(vm["routing"].as<std::string>());
    config_.moe.experts = vm["experts"].as<int>();
    config_.moe.top_k = vm["top-k"].as<int>();
    config_.moe.hidden = vm["hidden"].as<std::uint64_t>();
    if (config_.moe.experts < 1) throw ConfigError("--experts must be at least 1");
    if (config_.moe.top_k < 1 || config_.moe.top_k > config_.moe.experts) {
      throw ConfigError(log::cat("--top-k ", config_.moe.top_k,
                                 " must be between 1 and --experts (", config_.moe.experts, ")"));
    }
    if (config_.moe.hidden < 1) throw ConfigError("--hidden must be at least 1 element");
    if (alltoallv)
      static_cast<void>(Routing(config_.routing, config_.moe.experts));  // reads a file
  }

  std::string backend_name() const override { return runtime_.backend; }
  BackendOptions backend_options() const override {
    BackendOptions options = runtime_.backend_options;
    options.activity_timing = uses_activity(config_.instrument);
    return options;
  }

  int run(RankContext& ctx, Backend* backend, const BackendChoice& choice) override {
    if (!config_.out_dir.empty()) {
      // Before measuring: a bad --out must not cost the whole run.
      prepare_output_directory(ctx, config_.out_dir, runtime_.force);
    }
    // An existing --fit-links file must be a link model (its points are kept): refused before
    // measuring, and never overwritten when it is something else.
    LinkModel earlier;
    if (!fit_links_.empty()) {
      ctx.agree(ctx.size() >= 2,
                "--fit-links needs 2 ranks or more: on one rank a collective "
                "moves nothing between ranks, so there is no link to fit");
      std::string problem;
      if (ctx.rank() == 0 && std::filesystem::exists(fit_links_)) {
        try {
          earlier = read_link_model(fit_links_);
        } catch (const ConfigError& e) {
          problem = std::string("--fit-links: ") + e.what() + " (it is kept; name a new file)";
        }
      }
      ctx.agree(problem.empty(), problem);
    }
    // Rank 0 prints each part of the text as the sweep gets there, as nccl-tests does: a long
    // sweep shows how far it is, and one that fails leaves the sizes measured before.
    BenchTextPrinter printer(std::cout);
    const BenchReport report =
        run_bench(config_, *backend, ctx, choice.reason, ctx.rank() == 0 ? &printer : nullptr);
    if (ctx.rank() == 0) {
      if (!config_.out_dir.empty()) {
        const std::string json_path = config_.out_dir + "/bench.json";
        write_file_atomically(
            json_path, [&](std::ostream& os) { os << bench_to_json(report).dump(1) << '\n'; });
        write_file_atomically(config_.out_dir + "/bench.csv",
                              [&](std::ostream& os) { write_bench_csv(os, report); });
        log::info("wrote " + json_path + " and bench.csv");
      }
      if (!fit_links_.empty() && report.total_wrong() == 0) write_links(report, earlier);
    }
    // Every rank knows the total from the allreduce in run_bench, so all exit alike.
    if (report.total_wrong() > 0) {
      if (ctx.rank() == 0) log::error("verification failed: results differ from expected data");
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  // The sweep's average times as link-model points (the link class from the ranks' hosts), with
  // the file's earlier points, fitted and written; rank 0 prints each fit.
  void write_links(const BenchReport& report, const LinkModel& earlier) const {
    const std::vector<LinkSample> points = link_samples(report);
    const std::string source =
        earlier.source.empty() ? "commprof bench, " + report.backend + " backend" : earlier.source;
    const LinkModel model = fit_link_model(merge_samples(earlier.samples, points), source);
    write_link_model(fit_links_, model);
    std::cout << "# link model (" << fit_links_ << "): time = latency x ring steps + S x busbw "
              << "factor / busbw. " << points.size() << " points from this sweep, "
              << model.samples.size() - points.size() << " kept from the file\n";
    for (const LinkFit& f : model.fits) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "#   %-13s %-10s latency %9.3f us per step, busbw %9.3f GB/s, %3d points, "
                    "rms error %.1f%%\n",
                    link_collective_name(f.collective), link_class_name(f.link), f.latency_us,
                    f.busbw_gbps, f.points, 100 * f.rms_rel_error);
      std::cout << line;
    }
    std::cout << std::flush;
    log::info("wrote " + fit_links_);
  }

  RuntimeOptions runtime_;
  BenchConfig config_;
  std::string fit_links_;
};

}  // namespace

std::unique_ptr<Command> make_bench_command() { return std::make_unique<BenchCommand>(); }

}  // namespace commprof
