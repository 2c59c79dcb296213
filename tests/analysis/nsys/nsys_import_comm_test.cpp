// SPDX-License-Identifier: MIT
// import-nsys on exports of a tp2 x dp2 run, built here with the tables and columns nsys 2025.3
// writes: commprof's COMM ranges carry their communicator (tp0/tp1, dp0/dp1), its size and, as
// int64 payload, the sequence number (src/timeline/op_range_text.hpp). The importer must take
// them from the range, and the reducer must then match each collective within its own group of
// 2 ranks. The same exports without the tag (commprof before it) still import, with the old
// derivation from the op name, whose failure on this layout is shown too.
//
// Layout (Megatron: TP fastest): tp0 = {0, 1}, tp1 = {2, 3}, dp0 = {0, 2}, dp1 = {1, 3}. Each of
// the 3 steps (numbered 2..4: the capture began after 2 warm-up steps) runs, per layer l = 0, 1,
// a GEMM and a TP all-reduce "l<l>.attn.mb0.ar", then one DP all-reduce "dp.bucket0.allreduce".
// Sequence numbers continue from the warm-up: TP from 12, DP from 2. Rank r runs r us late.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "analysis/nsys/nsys_import.hpp"
#include "analysis/reducer.hpp"
#include "analysis/tools/nsys_export_schema.hpp"
#include "src/backend/annotation.hpp"
#include "src/timeline/op_range_text.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {
namespace {

constexpr int kRanks = 4;
constexpr int kSteps = 3;
constexpr int kFirstStep = 2;
constexpr int kLayers = 2;
constexpr std::int64_t kTpSeq0 = 12;
constexpr std::int64_t kDpSeq0 = 2;
constexpr std::uint64_t kTpBytes = 65536;
constexpr std::uint64_t kDpBytes = 1048576;

int tp_group(int rank) { return rank / 2; }
int dp_group(int rank) { return rank % 2; }

struct ExportStyle {
  bool tags = true;         ///< COMM ranges tagged (this commprof), or plain names (older)
  bool domain_rows = true;  ///< the domain-create and category-name rows are present
  /// The launcher's variables nsys recorded; {rank} and {local} are replaced.
  std::string environment = "SLURM_PROCID={rank};SLURM_NTASKS=4;SLURM_LOCALID={local}";
};

class Sql {
 public:
  explicit Sql(const std::string& path) {
    std::filesystem::remove(path);
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
  }
  ~Sql() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << (err ? err : "") << ": " << sql;
  }

 private:
  sqlite3* db_ = nullptr;
};

std::string q(const std::string& s) { return "'" + s + "'"; }

std::string environment_of(const ExportStyle& style, int rank) {
  std::string env = style.environment;
  for (const auto& [key, value] :
       {std::pair<std::string, int>{"{rank}", rank}, {"{local}", rank % 2}}) {
    for (std::size_t at = env.find(key); at != std::string::npos; at = env.find(key))
      env.replace(at, key.size(), std::to_string(value));
  }
  return env;
}

// Writes rank `rank`'s export (see the top of the file for what it holds).
void write_export(const std::string& path, int rank, const ExportStyle& style) {
  Sql db(path);
  db.exec(commprof::nsys_schema::kCoreTables);
  db.exec(
      "INSERT INTO StringIds VALUES (1, 'nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT'), "
      "(2, 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL'), (3, 'cuLaunchKernelEx'), "
      "(4, " +
      q(kMeasuredStepsRange) + ")");
  db.exec("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local', 'Hostname', 619, 'node" +
          std::to_string(rank / 2) + "'), (1, 'Local', 'DeviceEnvironment', 610, " +
          q(environment_of(style, rank)) + ")");
  db.exec("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1795319332700000000, '', '')");
  db.exec("INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'Synthetic GPU', '0000:00:00.0')");
  const std::int64_t pid = (std::int64_t{1000 + rank} << 24) | (std::int64_t{1} << 56);
  const std::string tid = std::to_string(pid + 7);
  if (style.domain_rows) {
    db.exec(
        "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (1, 75, "
        "'commprof', " +
        tid + ", 2)");
    db.exec(
        "INSERT INTO NVTX_EVENTS (start, eventType, category, text, globalTid, domainId) VALUES "
        "(2, 33, 1, 'COMP', " +
        tid + ", 2), (3, 33, 2, 'COMM', " + tid + ", 2), (4, 33, 3, 'MEM', " + tid + ", 2)");
  }
  // A range of commprof's domain: category 0 = none; payload uint64 (bytes) or int64 (seq).
  auto range = [&](std::int64_t s, std::int64_t e, int cat, const std::string& text,
                   const std::string& u64, const std::string& i64) {
    db.exec(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, "
        "domainId, uint64Value, int64Value) VALUES (" +
        std::to_string(s) + ", " + std::to_string(e) + ", 59, " +
        (cat > 0 ? std::to_string(cat) : "NULL") + ", " + q(text) + ", " + tid + ", 2, " + u64 +
        ", " + i64 + ")");
  };
  std::int64_t corr = 1;
  // Launch at t + 500 on the range's thread; the kernel runs 5 us after its launch.
  auto launch = [&](std::int64_t t, int stream, int name, std::int64_t duration) {
    const std::string c = std::to_string(corr++);
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(t + 500) + ", " +
            std::to_string(t + 2500) + ", 1, " + tid + ", " + c + ", 3, 0, NULL)");
    const std::int64_t k = t + 5500;
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(k) + ", " +
            std::to_string(k + duration) + ", 0, 1, 0, " + std::to_string(stream) + ", " + c +
            ", " + std::to_string(pid) + ", " + std::to_string(name) + ", " + std::to_string(name) +
            ", " + std::to_string(name) + ", 1, 1)");
  };
  auto comm_range = [&](std::int64_t t, const std::string& name, const std::string& comm,
                        std::uint64_t bytes, std::int64_t seq) {
    if (style.tags) {
      range(t, t + 3000, 2, format_op_range_text(name, {"allreduce", comm, 2, bytes}), "NULL",
            std::to_string(seq));
    } else {
      range(t, t + 3000, 2, name, std::to_string(bytes), "NULL");
    }
    launch(t, 15, 2, 20000);
  };
  std::int64_t t = 1000000 + 1000 * rank;  // rank r runs r us late
  std::int64_t tp_seq = kTpSeq0, dp_seq = kDpSeq0;
  const std::int64_t first = t;
  for (int s = 0; s < kSteps; ++s) {
    const std::int64_t step_start = t;
    for (int l = 0; l < kLayers; ++l) {
      range(t, t + 3000, 1, "l" + std::to_string(l) + ".qkv.mb0.fwd", "4096", "NULL");
      launch(t, 14, 1, 10000);
      t += 30000;
      comm_range(t, "l" + std::to_string(l) + ".attn.mb0.ar", "tp" + std::to_string(tp_group(rank)),
                 kTpBytes, tp_seq++);
      t += 30000;
    }
    comm_range(t, "dp.bucket0.allreduce", "dp" + std::to_string(dp_group(rank)), kDpBytes,
               dp_seq++);
    t += 30000;
    range(step_start, t, 0, "step " + std::to_string(kFirstStep + s), "0", "NULL");
    t += 10000;
  }
  // The range that started and stopped nsys' capture: a registered string (textId).
  db.exec("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) VALUES (" +
          std::to_string(first - 100) + ", " + std::to_string(t) + ", 59, 4, " + tid + ", 2)");
}

std::string temp_dir(const std::string& name) {
  const std::string d =
      ::testing::TempDir() + "/nsys_comm_" + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

struct Imported {
  std::vector<RankTimeline> ranks;
  std::vector<NsysFileSummary> summaries;
};

Imported import_all(const std::string& name, const ExportStyle& style) {
  const std::string dir = temp_dir(name);
  std::vector<std::string> files;
  for (int r = kRanks - 1; r >= 0; --r) {  // any order
    files.push_back(dir + "/commprof_node" + std::to_string(r / 2) + "_" + std::to_string(r) +
                    ".sqlite");
    write_export(files.back(), r, style);
  }
  Imported d;
  d.summaries = import_nsys_files(files, dir + "/out", {});
  for (int r = 0; r < kRanks; ++r)
    d.ranks.push_back(read_rank_file(dir + "/out/rank-" + std::to_string(r) + ".json"));
  return d;
}

Report reduce(const Imported& d) {
  Reducer reducer(ReduceOptions{});
  for (const RankTimeline& t : d.ranks) reducer.add(t, "rank " + std::to_string(t.rank));
  return reducer.finish();
}

std::vector<const OpRecord*> comm_ops(const RankTimeline& t) {
  std::vector<const OpRecord*> out;
  for (const StepRecord& s : t.steps)
    for (const OpRecord& op : s.ops)
      if (op.category == Category::kComm) out.push_back(&op);
  return out;
}

TEST(NsysImportComm, TaggedRangesGiveEachOpItsCommunicatorAndSequenceNumber) {
  const Imported d = import_all("tagged", {});
  for (int r = 0; r < kRanks; ++r) {
    const RankTimeline& t = d.ranks[r];
    EXPECT_EQ(t.rank, r);
    EXPECT_EQ(t.world_size, kRanks);
    EXPECT_EQ(t.host, "node" + std::to_string(r / 2));
    EXPECT_EQ(d.summaries[kRanks - 1 - r].comm_ranges_tagged, kSteps * (kLayers + 1));
    EXPECT_EQ(d.summaries[kRanks - 1 - r].comm_ranges_by_name, 0);
    ASSERT_EQ(t.steps.size(), static_cast<std::size_t>(kSteps));
    EXPECT_EQ(t.steps[0].index, kFirstStep);
    const auto ops = comm_ops(t);
    ASSERT_EQ(ops.size(), static_cast<std::size_t>(kSteps * (kLayers + 1)));
    std::int64_t tp_seq = kTpSeq0, dp_seq = kDpSeq0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpRecord& op = *ops[i];
      const bool dp = i % (kLayers + 1) == kLayers;
      SCOPED_TRACE("rank " + std::to_string(r) + " op " + std::to_string(i) + " " + op.name);
      // The name without its tag, as commprof's own rank files have it.
      EXPECT_EQ(op.name, dp ? "dp.bucket0.allreduce"
                            : "l" + std::to_string(i % (kLayers + 1)) + ".attn.mb0.ar");
      EXPECT_EQ(op.collective, "allreduce");
      EXPECT_EQ(op.comm,
                dp ? "dp" + std::to_string(dp_group(r)) : "tp" + std::to_string(tp_group(r)));
      EXPECT_EQ(op.comm_size, 2);  // the group's size, not the world's
      EXPECT_EQ(op.seq, dp ? dp_seq++ : tp_seq++);
      EXPECT_EQ(op.bytes, dp ? kDpBytes : kTpBytes);
      EXPECT_EQ(op.stream, "COMM");
      EXPECT_EQ(op.duration_ns(), 20000);
    }
    // COMP ranges are untouched: plain name, bytes from the uint64 payload.
    EXPECT_EQ(t.steps[0].ops[0].name, "l0.qkv.mb0.fwd");
    EXPECT_EQ(t.steps[0].ops[0].category, Category::kComp);
    EXPECT_EQ(t.steps[0].ops[0].bytes, 4096u);
  }
}

TEST(NsysImportComm, ReducerMatchesEachCollectiveWithinItsGroupAcrossFourRanks) {
  const Report rep = reduce(import_all("reduce", {}));
  EXPECT_TRUE(rep.problems.empty());
  EXPECT_EQ(rep.world_size, kRanks);
  EXPECT_EQ(rep.incomplete_instances, 0);
  EXPECT_EQ(rep.inconsistent_instances, 0);
  // tp: 2 groups x 2 layers x 3 steps; dp: 2 groups x 3 steps.
  ASSERT_EQ(rep.instances.size(), static_cast<std::size_t>(2 * kLayers * kSteps + 2 * kSteps));
  std::map<std::string, int> per_comm;
  for (const CollectiveInstance& c : rep.instances) {
    SCOPED_TRACE(c.comm + " seq " + std::to_string(c.seq));
    ++per_comm[c.comm];
    EXPECT_EQ(c.ranks_seen, 2);
    EXPECT_EQ(c.comm_size, 2);
    EXPECT_TRUE(c.consistent);
    // Rank r runs r us late, so the later rank of each pair arrives last and waits 0; the
    // other waits the difference: 1 us within a TP pair {2g, 2g+1}, 2 us within a DP pair.
    const bool tp = c.comm.rfind("tp", 0) == 0;
    const int g = c.comm.back() - '0';
    EXPECT_EQ(c.first_rank, tp ? 2 * g : g);
    EXPECT_EQ(c.last_rank, tp ? 2 * g + 1 : g + 2);
    EXPECT_EQ(c.start_skew_ns(), tp ? 1000 : 2000);
    EXPECT_EQ(c.time_ns(), 20000);
    if (tp) {
      EXPECT_GE(c.seq, kTpSeq0);
      EXPECT_LT(c.seq, kTpSeq0 + kLayers * kSteps);
    } else {
      EXPECT_GE(c.seq, kDpSeq0);
      EXPECT_LT(c.seq, kDpSeq0 + kSteps);
    }
  }
  EXPECT_EQ(
      per_comm,
      (std::map<std::string, int>{
          {"dp0", kSteps}, {"dp1", kSteps}, {"tp0", kLayers * kSteps}, {"tp1", kLayers * kSteps}}));
  std::map<std::string, const GroupRow*> groups;
  for (const GroupRow& g : rep.groups) groups[g.group] = &g;
  ASSERT_TRUE(groups.count("tp") && groups.count("dp"));
  EXPECT_EQ(groups["tp"]->communicators, 2);
  EXPECT_EQ(groups["tp"]->max_size, 2);
  EXPECT_EQ(groups["dp"]->communicators, 2);
  EXPECT_EQ(groups["dp"]->instances, 2 * kSteps);
  EXPECT_EQ(groups["dp"]->incomplete, 0);
}

// commprof before the tag: the same ops with plain names and bytes as payload. They still
// import (as tests/data/nsys-dp-tiny-2xh200 does), by the op name: "dp.bucket0.allreduce" gives
// the communicator's kind "dp", numbered from 0 per kind, and "l0.attn.mb0.ar" names no
// collective, so the NCCL kernel's name and its stream stand in (as for foreign traces). On this
// layout both merge the two groups of a kind into one 4-rank communicator. This is what the tags
// fix, and why the tests above can tell the two apart.
TEST(NsysImportComm, UntaggedExportsFallBackToTheOpNameAndMergeTheGroups) {
  const Imported d = import_all("untagged", {false, true});
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(d.summaries[kRanks - 1 - r].comm_ranges_tagged, 0);
    EXPECT_EQ(d.summaries[kRanks - 1 - r].comm_ranges_by_name, kSteps * (kLayers + 1));
    std::int64_t dp_seq = 0, stream_seq = 0;
    for (const OpRecord* op : comm_ops(d.ranks[r])) {
      EXPECT_EQ(op->collective, "allreduce");
      EXPECT_EQ(op->comm_size, kRanks);  // the world's size
      if (op->name == "dp.bucket0.allreduce") {
        EXPECT_EQ(op->comm, "dp");
        EXPECT_EQ(op->seq, dp_seq++);
        EXPECT_EQ(op->bytes, kDpBytes);
      } else {
        EXPECT_EQ(op->comm, "stream15");
        EXPECT_EQ(op->seq, stream_seq++);
      }
    }
  }
  const Report rep = reduce(d);
  ASSERT_EQ(rep.instances.size(), static_cast<std::size_t>(kLayers * kSteps + kSteps));
  for (const CollectiveInstance& c : rep.instances) {
    EXPECT_TRUE(c.comm == "dp" || c.comm == "stream15") << c.comm;
    EXPECT_EQ(c.ranks_seen, kRanks);  // two groups taken for one
  }
}

// With nsys' capture started by the measured-steps range, the export may lack the rows that
// created commprof's domain and named its categories (they happened before the capture). The
// domain is then the one of the measured-steps range, and the categories their fixed ids.
TEST(NsysImportComm, ACaptureWithoutTheDomainRowsFindsTheDomainByTheMeasuredStepsRange) {
  const Imported d = import_all("nodomain", {true, false});
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_TRUE(d.summaries[kRanks - 1 - r].commprof_nvtx);
    EXPECT_EQ(d.summaries[kRanks - 1 - r].steps, kSteps);
    EXPECT_EQ(d.summaries[kRanks - 1 - r].ops[index_of(Category::kComm)], kSteps * (kLayers + 1));
    EXPECT_EQ(d.summaries[kRanks - 1 - r].ops[index_of(Category::kComp)], kSteps * kLayers);
  }
  EXPECT_EQ(reduce(d).instances.size(),
            static_cast<std::size_t>(2 * kLayers * kSteps + 2 * kSteps));
}

// A launcher other than srun inside a batch job: every process inherits the job's
// SLURM_PROCID=0, and the launcher's own variable must win (as in commprof and the wrapper).
TEST(NsysImportComm, TheLaunchersRankWinsOverAnInheritedSlurmProcid) {
  for (const std::string var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    ExportStyle style;
    style.environment = "SLURM_PROCID=0;SLURM_NTASKS=1;" + var + "={rank}";
    const Imported d = import_all("inherited_" + var, style);
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(d.ranks[r].rank, r) << var;
      EXPECT_EQ(d.summaries[kRanks - 1 - r].rank_source, var);
    }
  }
}

// Exports of processes started without a launcher (nothing in the recorded environment names a
// rank) follow the importers' one rank policy (analysis/import_rank.hpp): one file alone is rank
// 0; several take their order among the inputs; a rank the file gives (its name's _<rank>
// suffix) wins over its place in that order.
TEST(NsysImportComm, FilesThatRecordNoRankTakeTheirOrder) {
  ExportStyle unlaunched;
  unlaunched.environment = "HOME=/root";
  const std::string dir = temp_dir("order");
  for (const char* name : {"solo", "a", "b", "job_3"}) {
    write_export(dir + "/" + name + ".sqlite", 0, unlaunched);
  }
  const auto rank_and_source = [](const NsysFileSummary& s) {
    return std::to_string(s.rank) + " " + s.rank_source;
  };

  const auto one = import_nsys_files({dir + "/solo.sqlite"}, dir + "/one", {});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(rank_and_source(one[0]), "0 file order");
  EXPECT_TRUE(std::filesystem::exists(dir + "/one/rank-0.json"));

  const auto two = import_nsys_files({dir + "/b.sqlite", dir + "/a.sqlite"}, dir + "/two", {});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].file, dir + "/b.sqlite");
  EXPECT_EQ(rank_and_source(two[0]), "0 file order");
  EXPECT_EQ(rank_and_source(two[1]), "1 file order");

  const auto named =
      import_nsys_files({dir + "/job_3.sqlite", dir + "/a.sqlite"}, dir + "/named", {});
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(rank_and_source(named[0]), "3 file name");
  EXPECT_EQ(rank_and_source(named[1]), "1 file order");
  EXPECT_EQ(read_rank_file(dir + "/named/rank-3.json").world_size, 4);

  NsysImportOptions forced;
  forced.rank = 2;
  const auto given = import_nsys_files({dir + "/solo.sqlite"}, dir + "/given", forced);
  EXPECT_EQ(rank_and_source(given.at(0)), "2 --rank");
}

}  // namespace
}  // namespace commprof
