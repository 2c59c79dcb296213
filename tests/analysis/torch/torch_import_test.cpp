// SPDX-License-Identifier: MIT
// import-torch against real PyTorch profiler traces (tests/data/torch-ddp-2xh200): what it makes
// of them, checked against the JSON read here on its own (nlohmann, zlib), and its refusals.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/step_metrics.hpp"
#include "analysis/torch/torch_import.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/temp_dir.hpp"
#include "tests/support/temp_dir.hpp"

namespace commprof {
namespace {

const std::string kDir = std::string(COMMPROF_TEST_DATA_DIR) + "/torch-ddp-2xh200";
const std::string kHta = std::string(COMMPROF_TEST_DATA_DIR) + "/hta-traces";

std::string gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  EXPECT_NE(gz, nullptr) << path;
  std::string out;
  char buf[4096];
  for (int n; (n = gzread(gz, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  gzclose(gz);
  return out;
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  const std::string path = test::own_temp_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(TorchImport, ShortKernelNamesAreTheFunctionsOwn) {
  EXPECT_EQ(short_kernel_name("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"
                              "<c10::BFloat16, float, false>(int, float, c10::BFloat16 const*)"),
            "vectorized_layer_norm_kernel");
  EXPECT_EQ(short_kernel_name("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage"
                              "<4096ul>)"),
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  EXPECT_EQ(short_kernel_name("nvjet_sm90_tst_64x32_64x16_2x4_h_bz_bias_TNT"),
            "nvjet_sm90_tst_64x32_64x16_2x4_h_bz_bias_TNT");
  EXPECT_EQ(short_kernel_name("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_"
                              "impl_nocast<at::native::(anonymous namespace)::f>(at::Tensor&)::"
                              "{lambda(int)#1}>(int, at::native::x)"),
            "elementwise_kernel");
}

TEST(TorchImport, CollectiveNamesBecomeCommprofs) {
  EXPECT_EQ(torch_collective_name("allreduce"), "allreduce");
  EXPECT_EQ(torch_collective_name("_allgather_base"), "allgather");
  EXPECT_EQ(torch_collective_name("allgather_into_tensor_coalesced"), "allgather");
  EXPECT_EQ(torch_collective_name("reduce_scatter_tensor"), "reducescatter");
  EXPECT_EQ(torch_collective_name("_reduce_scatter_base"), "reducescatter");
  EXPECT_EQ(torch_collective_name("broadcast"), "broadcast");
  EXPECT_EQ(torch_collective_name("all_to_all"), "alltoall");
  EXPECT_EQ(torch_collective_name("send"), "send");
  EXPECT_EQ(torch_collective_name("Barrier"), "barrier");
}

// Every GPU activity of each real trace lands in the step whose ProfilerStep#N holds its launch,
// with its duration to the nanosecond; NCCL kernels become COMM ops with their communicator,
// size, bytes and per-communicator order; memcpys and memsets MEM; the rest COMP.
TEST(TorchImport, RealDdpTracesMatchTheJsonReadIndependently) {
  for (int r = 0; r < 2; ++r) {
    const std::string path = kDir + "/rank-" + std::to_string(r) + ".pt.trace.json.gz";
    const nlohmann::json j = nlohmann::json::parse(gunzip(path));
    ASSERT_EQ(j["distributedInfo"]["rank"].get<int>(), r);
    // Independently: durations per class and the NCCL kernels' element counts, in launch order.
    double comp_us = 0, mem_us = 0;
    std::vector<std::int64_t> nccl_elems;
    int comp = 0, mem = 0;
    for (const auto& e : j["traceEvents"]) {
      if (e.value("ph", "") != "X") continue;
      const std::string cat = e.value("cat", "");
      if (cat == "kernel" && e["name"].get<std::string>().rfind("nccl", 0) == 0) {
        nccl_elems.push_back(e["args"]["In msg nelems"].get<std::int64_t>());
      } else if (cat == "kernel") {
        comp_us += e["dur"].get<double>();
        ++comp;
      } else if (cat == "gpu_memcpy" || cat == "gpu_memset") {
        mem_us += e["dur"].get<double>();
        ++mem;
      }
    }
    TorchImportSummary s;
    const RankTimeline t = import_torch_trace(path, {}, 9, 9, &s);
    EXPECT_EQ(t.rank, r);
    EXPECT_EQ(t.world_size, 2);
    EXPECT_EQ(s.rank_source, "distributedInfo");
    EXPECT_EQ(t.device, "NVIDIA H200");
    ASSERT_EQ(t.steps.size(), 2u);
    EXPECT_EQ(t.steps[0].index, 2);
    EXPECT_EQ(t.steps[1].index, 3);
    EXPECT_EQ(s.outside_steps, 0);
    EXPECT_EQ(s.ignored, 0);
    double got_comp = 0, got_mem = 0;
    int got_comp_n = 0, got_mem_n = 0;
    std::vector<const OpRecord*> comm;
    for (const StepRecord& step : t.steps) {
      for (const OpRecord& op : step.ops) {
        EXPECT_GE(op.start_ns, step.start_ns - 0) << op.name;
        EXPECT_LE(op.end_ns, step.end_ns) << op.name;
        const double us = static_cast<double>(op.duration_ns()) / 1e3;
        if (op.category == Category::kComp) got_comp += us, ++got_comp_n;
        if (op.category == Category::kMem) got_mem += us, ++got_mem_n;
        if (op.category == Category::kComm) comm.push_back(&op);
      }
    }
    EXPECT_EQ(got_comp_n, comp);
    EXPECT_EQ(got_mem_n, mem);
    // Each op's times are rounded to whole nanoseconds: 1 ns of slack per op.
    EXPECT_NEAR(got_comp, comp_us, comp * 1e-3);
    EXPECT_NEAR(got_mem, mem_us, mem * 1e-3);
    ASSERT_EQ(comm.size(), nccl_elems.size());
    for (std::size_t i = 0; i < comm.size(); ++i) {
      EXPECT_EQ(comm[i]->collective, "allreduce");
      EXPECT_EQ(comm[i]->comm, "pg0:default_pg");
      EXPECT_EQ(comm[i]->comm_size, 2);
      EXPECT_EQ(comm[i]->seq, static_cast<std::int64_t>(i));
      EXPECT_EQ(comm[i]->bytes, static_cast<std::uint64_t>(nccl_elems[i]) * 2) << "bf16";
      EXPECT_EQ(comm[i]->count, static_cast<std::uint64_t>(nccl_elems[i]));
      EXPECT_EQ(comm[i]->dtype, "BFloat16") << "as PyTorch names it";
    }
  }
}

// Which step each activity lands in, worked out from the JSON by the rule the importer documents:
// the ProfilerStep#N range (a CPU user_annotation) that holds its launch, the cuda_runtime or
// cuda_driver call of the same correlation id. Each rank's trace holds 137 activities in each of
// its two steps: 106 kernels, 2 NCCL all-reduces, 29 copies and sets. Each imported step must hold
// exactly its own, class by class. (That an op lies inside its step cannot tell: the importer
// stretches a step to its ops' ends, and on rank 0, 58 of them end after their step's CPU range.)
TEST(TorchImport, EachActivityLandsInTheStepThatLaunchedIt) {
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const std::string path = kDir + "/rank-" + std::to_string(r) + ".pt.trace.json.gz";
    const nlohmann::json j = nlohmann::json::parse(gunzip(path));
    struct Window {
      double begin, end;
      int step;
    };
    std::vector<Window> windows;
    std::map<std::int64_t, double> launch_of;  // correlation id -> launch time (us)
    for (const auto& e : j["traceEvents"]) {
      if (e.value("ph", "") != "X") continue;
      const std::string cat = e.value("cat", "");
      const std::string name = e.value("name", "");
      if (cat == "user_annotation" && name.rfind("ProfilerStep#", 0) == 0) {
        const double ts = e["ts"].get<double>();
        windows.push_back({ts, ts + e["dur"].get<double>(), std::stoi(name.substr(13))});
      } else if ((cat == "cuda_runtime" || cat == "cuda_driver") && e.contains("args") &&
                 e["args"].contains("correlation")) {
        launch_of[e["args"]["correlation"].get<std::int64_t>()] = e["ts"].get<double>();
      }
    }
    // Per step: COMP, COMM, MEM.
    std::map<int, std::array<int, 3>> want;
    int outside = 0;
    for (const auto& e : j["traceEvents"]) {
      if (e.value("ph", "") != "X") continue;
      const std::string cat = e.value("cat", "");
      if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
      const auto launch = e.contains("args") && e["args"].contains("correlation")
                              ? launch_of.find(e["args"]["correlation"].get<std::int64_t>())
                              : launch_of.end();
      const double at = launch != launch_of.end() ? launch->second : e["ts"].get<double>();
      const auto window = std::find_if(windows.begin(), windows.end(), [&](const Window& w) {
        return w.begin <= at && at <= w.end;
      });
      if (window == windows.end()) {
        ++outside;
        continue;
      }
      const bool nccl = e["name"].get<std::string>().rfind("nccl", 0) == 0;
      const int cls = cat != "kernel" ? 2 : nccl ? 1 : 0;
      ++want[window->step][static_cast<std::size_t>(cls)];
    }
    EXPECT_EQ(outside, 0);
    const std::array<int, 3> per_step = {106, 2, 29};
    ASSERT_EQ(want.size(), 2u);
    EXPECT_EQ(want[2], per_step);
    EXPECT_EQ(want[3], per_step);

    const RankTimeline t = import_torch_trace(path, {}, 9, 9, nullptr);
    ASSERT_EQ(t.steps.size(), 2u);
    for (const StepRecord& step : t.steps) {
      std::array<int, 3> got = {0, 0, 0};
      for (const OpRecord& op : step.ops) {
        const int cls = op.category == Category::kComp ? 0 : op.category == Category::kComm ? 1 : 2;
        ++got[static_cast<std::size_t>(cls)];
      }
      EXPECT_EQ(got, want[step.index]) << "step " << step.index;
      EXPECT_EQ(step.ops.size(), 137u) << "step " << step.index;
    }
  }
}

TEST(TorchImport, PlainJsonImportsAsGzipDoes) {
  const std::string gz = kDir + "/rank-1.pt.trace.json.gz";
  const std::string plain = temp_file("rank-1.pt.trace.json", gunzip(gz));
  const RankTimeline a = import_torch_trace(gz, {}, 0, 1, nullptr);
  const RankTimeline b = import_torch_trace(plain, {}, 0, 1, nullptr);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    ASSERT_EQ(a.steps[i].ops.size(), b.steps[i].ops.size());
    EXPECT_EQ(a.steps[i].start_ns, b.steps[i].start_ns);
    EXPECT_EQ(a.steps[i].ops.back().end_ns, b.steps[i].ops.back().end_ns);
  }
}

TEST(TorchImport, WithoutStepsOrRankTheTraceIsOneStepOfTheGivenRank) {
  const std::string text = R"json({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 100.0, "dur": 2.0,
     "args": {"correlation": 7}},
    {"ph": "X", "cat": "kernel", "name": "void gemm<1>(int)", "ts": 103.5, "dur": 10.25,
     "args": {"device": 0, "stream": 7, "correlation": 7}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 120.0, "dur": 1.0,
     "args": {"device": 0, "stream": 7, "correlation": 8, "bytes": 64}}]})json";
  TorchImportSummary s;
  const RankTimeline t = import_torch_trace(temp_file("nosteps.json", text), {}, 3, 4, &s);
  EXPECT_TRUE(s.whole_trace);
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 4);
  EXPECT_EQ(s.rank_source, "file order");
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].start_ns, 100'000);  // the kernel's launch
  EXPECT_EQ(t.steps[0].end_ns, 121'000);    // the memset's end
  ASSERT_EQ(t.steps[0].ops.size(), 2u);
  EXPECT_EQ(t.steps[0].ops[0].name, "gemm");
  EXPECT_EQ(t.steps[0].ops[0].duration_ns(), 10'250);
  EXPECT_EQ(t.steps[0].ops[0].stream, "cuda:0:7");
  EXPECT_EQ(t.steps[0].ops[1].category, Category::kMem);
  EXPECT_EQ(t.steps[0].ops[1].bytes, 64u);
  TorchImportOptions o;
  o.rank = 1;
  EXPECT_EQ(import_torch_trace(temp_file("nosteps.json", text), o, 3, 4, nullptr).rank, 1);
}

TEST(TorchImport, BadInputIsNamed) {
  auto message = [](const std::string& path) {
    try {
      import_torch_trace(path, {}, 0, 1, nullptr);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("/nonexistent/x.json").find("/nonexistent/x.json: cannot open"),
            std::string::npos);
  EXPECT_NE(message(temp_file("bad.json", "{not json")).find("not JSON"), std::string::npos);
  EXPECT_NE(message(temp_file("other.json", R"({"a": 1})")).find("no \"traceEvents\" array"),
            std::string::npos);
  std::string gz;
  {
    std::ifstream in(kDir + "/rank-0.pt.trace.json.gz", std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string cut = temp_file("cut.json.gz", gz.substr(0, gz.size() / 2));
  const std::string m = message(cut);
  EXPECT_TRUE(m.find("damaged gzip") != std::string::npos ||
              m.find("not JSON") != std::string::npos)
      << m;
}

// HTA's trace_filter traces (PyTorch 2.0-era) give Unix-epoch microseconds: 1.68·10^18 ns, beyond
// a rank file's 2^60. They are moved onto their first event, keep every nanosecond, and write a
// rank file that reads back.
TEST(TorchImport, UnixEpochTimesAreMovedOntoTheTracesFirstEvent) {
  const std::string path = kHta + "/sampled_rank-0.json.gz";
  const nlohmann::json j = nlohmann::json::parse(gunzip(path));
  double first = 1e300;
  std::vector<std::pair<double, double>> windows;  // ProfilerStep ts, dur
  for (const auto& e : j["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    first = std::min(first, e["ts"].get<double>());
    if (e.value("name", "").rfind("ProfilerStep#", 0) == 0) {
      windows.emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
    }
  }
  ASSERT_GT(first, 1.6e15);  // 2020 or later, in microseconds
  ASSERT_EQ(windows.size(), 2u);
  TorchImportSummary s;
  const RankTimeline t = import_torch_trace(path, {}, 0, 1, &s);
  EXPECT_EQ(s.origin_us, static_cast<std::int64_t>(first));
  EXPECT_EQ(t.config.json()["time_origin_us"], static_cast<std::int64_t>(first));
  ASSERT_EQ(t.steps.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto start_us = static_cast<std::int64_t>(windows[i].first) - s.origin_us;
    EXPECT_EQ(t.steps[i].start_ns, start_us * 1000);
  }
  EXPECT_EQ(t.steps[0].index, 551);
  const std::string dir = test::fresh_temp_dir("epoch-import");
  const RankTimeline back = read_rank_file(write_rank_file(dir, t, RankFileFormat::kJson));
  EXPECT_EQ(back.steps[1].start_ns, t.steps[1].start_ns);
  EXPECT_EQ(back.steps[1].ops.size(), t.steps[1].ops.size());
}

// Traces of one job imported together stay on one clock: each was moved by its own first event,
// and align_torch_origins moves it on by that event's distance from the earliest trace's.
TEST(TorchImport, EpochTracesOfOneJobKeepTheirDistance) {
  std::vector<RankTimeline> t;
  std::vector<TorchImportSummary> s(2);
  std::array<double, 2> step551{};
  for (int r = 0; r < 2; ++r) {
    const std::string path = kHta + "/sampled_rank-" + std::to_string(r) + ".json.gz";
    t.push_back(import_torch_trace(path, {}, r, 2, &s[static_cast<std::size_t>(r)]));
    const nlohmann::json j = nlohmann::json::parse(gunzip(path));
    for (const auto& e : j["traceEvents"]) {
      if (e.value("name", "") == "ProfilerStep#551") step551[r] = e["ts"].get<double>();
    }
  }
  const std::int64_t origin = align_torch_origins(t, s);
  EXPECT_EQ(origin, std::min(s[0].origin_us, s[1].origin_us));
  const auto apart_us = static_cast<std::int64_t>(step551[1] - step551[0]);
  EXPECT_EQ(t[1].steps[0].start_ns - t[0].steps[0].start_ns, apart_us * 1000);
  for (const RankTimeline& r : t) EXPECT_EQ(r.config.json()["time_origin_us"], origin);
}

// HTA's own figures for its public test traces (HolisticTraceAnalysis @ f4d0062,
// get_comm_comp_overlap: 11.81 %, 20.05 %, 14.31 %), from the import's HTA-scoped overlap.
TEST(TorchImport, HtaScopedOverlapOfHtasTracesIsHtas) {
  const std::pair<const char*, double> cases[] = {{"sampled_rank-0.json.gz", 11.81},
                                                  {"sampled_rank-1.json.gz", 20.05},
                                                  {"nccl_data.json.gz", 14.31}};
  for (const auto& [file, hta] : cases) {
    const RankTimeline t = import_torch_trace(kHta + "/" + file, {}, 0, 1, nullptr);
    const RankSummary r = summarise_rank(t, file);
    ASSERT_TRUE(r.hta.overlap()) << file;
    EXPECT_NEAR(100.0 * *r.hta.overlap(), hta, 0.01) << file;
    EXPECT_EQ(r.hta.steps, r.hta.steps_of - 1) << file;  // the last step left out
  }
}

}  // namespace
}  // namespace commprof
