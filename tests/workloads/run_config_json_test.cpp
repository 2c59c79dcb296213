// SPDX-License-Identifier: MIT
// The rank header's run configuration and its inverse: what `run` writes, `project` reads back
// to the same configuration; another command's header, or a field missing, is refused by name.
#include "workloads/run_config_json.hpp"

#include <gtest/gtest.h>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

TEST(RunConfigJson, ReadsBackWhatRunWrites) {
  WorkloadConfig w;
  w.kind = WorkloadKind::kHybrid;
  w.shape = model_preset("llama-1b");
  w.layout.tp = 2;
  w.layout.pp = 2;
  w.layout.dp = 2;
  w.layout.cp = 2;
  w.bucket_mb = 12.5;
  w.dp_mode = DpMode::kZero;
  w.sequence_parallel = true;
  w.schedule = PpSchedule::kInterleaved;
  w.virtual_stages = 2;
  w.no_overlap = true;
  w.cp_mode = CpMode::kA2a;
  w.slow_rank = 3;
  w.slow_factor = 1.5;
  RunSettings s{7, 3, OpTimingMode::kSampled, 5, std::nullopt};
  LinkModel probe;
  probe.source = "the link probe";
  LinkFit fit;
  fit.collective = CollectiveKind::kSendRecv;
  fit.latency_us = 3.5;
  fit.busbw_gbps = 12.25;
  fit.points = 2;
  probe.fits.push_back(fit);
  probe.samples.push_back(
      LinkSample{CollectiveKind::kSendRecv, LinkClass::kIntraNode, "", 4, 4096, 3.75});
  probe.samples.push_back(
      LinkSample{CollectiveKind::kSendRecv, LinkClass::kIntraNode, "", 4, 1 << 20, 89.0});
  s.link_probe = probe;
  const nlohmann::ordered_json j = run_config_json(w, s);
  const RunConfigRead back = run_config_from_json(j, "rank-0.json");
  EXPECT_EQ(run_config_json(back.workload, back.settings), j);
  EXPECT_EQ(back.workload.layout.world(), 16);
  EXPECT_EQ(back.settings.steps, 7);
  EXPECT_EQ(back.settings.sample_every, 5);
  EXPECT_FALSE(back.compute_from);
  EXPECT_EQ(back.workload.slow_rank, 3);
  // The link probe comes back whole: project fits its points beside the run's own.
  ASSERT_TRUE(back.settings.link_probe.has_value());
  ASSERT_EQ(back.settings.link_probe->samples.size(), 2u);
  EXPECT_EQ(back.settings.link_probe->samples[1].bytes, 1u << 20);
  EXPECT_EQ(back.settings.link_probe->samples[1].time_us, 89.0);
  EXPECT_EQ(back.settings.link_probe->fits.at(0).busbw_gbps, 12.25);
  // A run without one (--no-link-probe, one rank, or before the probe existed) reads as none.
  nlohmann::ordered_json older = j;
  older.erase("link_probe");
  EXPECT_FALSE(run_config_from_json(older, "rank-0.json").settings.link_probe.has_value());
  EXPECT_FALSE(run_config_from_json(run_config_json(w, RunSettings{}), "rank-0.json")
                   .settings.link_probe.has_value());
}

// --make-vocab-size-divisible-by is read back; files of earlier versions, without it, padded to
// Megatron's default of 128.
TEST(RunConfigJson, VocabularyPaddingReadsBackAndDefaultsTo128) {
  WorkloadConfig w;
  w.shape = model_preset("gpt-1.3b");
  w.shape.vocab_divisible_by = 1;
  nlohmann::ordered_json j = run_config_json(w, RunSettings{});
  EXPECT_EQ(run_config_from_json(j, "rank-0.json").workload.shape.vocab_divisible_by, 1);
  j["model"].erase("vocab_divisible_by");
  EXPECT_EQ(run_config_from_json(j, "rank-0.json").workload.shape.vocab_divisible_by, 128);
}

TEST(RunConfigJson, RefusesWhatRunDidNotWrite) {
  auto error_of = [](const nlohmann::ordered_json& j) {
    try {
      run_config_from_json(j, "rank-0.json");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of(nlohmann::ordered_json::object()).find("holds no run configuration"),
            std::string::npos);
  EXPECT_NE(error_of({{"command", "bench"}}).find("of `commprof bench`, not of `commprof run`"),
            std::string::npos);
  WorkloadConfig w;
  w.shape = model_preset("tiny");
  nlohmann::ordered_json j = run_config_json(w, RunSettings{});
  j["model"].erase("hidden");
  EXPECT_EQ(error_of(j), "rank-0.json: its run configuration has no \"hidden\"");
  j = run_config_json(w, RunSettings{});
  j["tp"] = "two";
  EXPECT_NE(error_of(j).find("\"tp\" has the wrong type"), std::string::npos) << error_of(j);
}

}  // namespace
}  // namespace commprof
