// SPDX-License-Identifier: MIT
// The nsys classification rules: the parser (documented format, clear errors) and the default
// table over current and past NCCL kernel names.
#include "analysis/nsys_rules.hpp"

#include <gtest/gtest.h>

#include "analysis/nsys/nsys_import.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

ActivityFacts kernel(const std::string& name, std::uint8_t marks = 0) {
  ActivityFacts f;
  f.kind = ActivityKind::kKernel;
  f.name = name;
  f.stream_marks = marks;
  return f;
}

constexpr std::uint8_t kCommMark = 1u << 1;  // index_of(Category::kComm)

TEST(NsysRules, DefaultsClassifyNcclKernelsOldAndNewAsComm) {
  const RuleSet& r = RuleSet::defaults();
  for (const char* name :
       {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ncclKernel_AllGather_RING_LL_Sum_int8_t",
        "ncclDevKernel_SendRecv", "ncclDevKernel_Generic", "ncclSymkDevKernel_AllGather_LL",
        "ncclSymkDevKernel_AllReduce_AGxLLMC_R_sum_bf16",
        "ncclDevKernel_ReduceScatter_Sum_f32_RING_SIMPLE", "ncclDevKernel_Broadcast_RING_LL"}) {
    EXPECT_EQ(r.classify(kernel(name)), RuleClass::kComm) << name;
  }
}

TEST(NsysRules, WorkInsideACommprofOpRangeIsWhatTheRangeSays) {
  // cuBLAS issues a memset inside some GEMM calls: inside commprof's COMP op range it is COMP,
  // or the importer would count a third of a 1.3B model's GEMM ops as MEM (seen on H200).
  const RuleSet& r = RuleSet::defaults();
  ActivityFacts memset;
  memset.kind = ActivityKind::kMemset;
  memset.name = "Memset";
  memset.range = Category::kComp;
  EXPECT_EQ(r.classify(memset), RuleClass::kComp);
  memset.range = Category::kMem;
  EXPECT_EQ(r.classify(memset), RuleClass::kMem);
  memset.range.reset();  // foreign traces: by kind
  EXPECT_EQ(r.classify(memset), RuleClass::kMem);
}

TEST(NsysRules, DefaultsClassifyComputeMemAndSync) {
  const RuleSet& r = RuleSet::defaults();
  EXPECT_EQ(r.classify(kernel("nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT")), RuleClass::kComp);
  EXPECT_EQ(r.classify(kernel("fill_kernel")), RuleClass::kComp);
  EXPECT_EQ(r.classify(kernel("axpy_kernel_val")), RuleClass::kComp);
  // A name containing "nccl" but not starting with it is not NCCL's (HTA's .*ncclKernel.* aside).
  EXPECT_EQ(r.classify(kernel("my_nccl_like_gemm")), RuleClass::kComp);
  ActivityFacts copy;
  copy.kind = ActivityKind::kMemcpy;
  copy.name = "Memcpy DtoD";
  EXPECT_EQ(r.classify(copy), RuleClass::kMem);
  copy.kind = ActivityKind::kMemset;
  copy.name = "Memset";
  EXPECT_EQ(r.classify(copy), RuleClass::kMem);
  EXPECT_EQ(r.classify(kernel("cudaStreamSynchronize")), RuleClass::kIgnore);
  EXPECT_EQ(r.classify(kernel("Stream Wait Event")), RuleClass::kIgnore);
}

TEST(NsysRules, StreamIdentityBeatsNames) {
  const RuleSet& r = RuleSet::defaults();
  // A memcpy and a custom kernel on a stream commprof marked COMM are communication.
  ActivityFacts copy;
  copy.kind = ActivityKind::kMemcpy;
  copy.name = "Memcpy PtoP";
  copy.stream_marks = kCommMark;
  EXPECT_EQ(r.classify(copy), RuleClass::kComm);
  EXPECT_EQ(r.classify(kernel("custom_device_api_allreduce", kCommMark)), RuleClass::kComm);
}

TEST(NsysRules, ParsesEveryMatcherInOrder) {
  const RuleSet r = RuleSet::parse(
      "# comment\n\nMEM range MEM\nCOMM name ^my_coll  # trailing comment\n"
      "IGNORE kind memset\nCOMP any\n",
      "test.rules");
  ASSERT_EQ(r.rules().size(), 4u);
  EXPECT_EQ(r.rules()[1].line, 4);
  EXPECT_EQ(r.rules()[1].pattern, "^my_coll");
  EXPECT_EQ(r.classify(kernel("my_coll_kernel")), RuleClass::kComm);
  EXPECT_EQ(r.classify(kernel("ncclDevKernel_AllReduce")), RuleClass::kComp);  // replaced
  ActivityFacts in_mem = kernel("ncclDevKernel_AllReduce");
  in_mem.range = Category::kMem;
  EXPECT_EQ(r.classify(in_mem), RuleClass::kMem);
  ActivityFacts set;
  set.kind = ActivityKind::kMemset;
  EXPECT_EQ(r.classify(set), RuleClass::kIgnore);
  // No rule matching: left out.
  EXPECT_EQ(RuleSet::parse("COMM kind memcpy\n", "x").classify(kernel("k")), RuleClass::kIgnore);
}

void expect_error(const std::string& text, const std::string& part) {
  try {
    RuleSet::parse(text, "my.rules");
    FAIL() << "no error for: " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("my.rules", 0), 0u) << e.what();
  }
}

TEST(NsysRules, RejectsBadSyntaxNamingFileAndLine) {
  expect_error("COMP any\nNETWORK any\n", "my.rules:2: unknown class 'NETWORK'");
  expect_error("COMM\n", "my.rules:1: rule 'COMM' has no matcher");
  expect_error("COMM regex ^nccl\n", "unknown matcher 'regex'");
  expect_error("COMM name\n", "matcher 'name' needs a regular expression");
  expect_error("COMM name ^nccl(\n", "invalid regular expression '^nccl('");
  expect_error("COMM stream NET\n", "unknown category 'NET'");
  expect_error("MEM kind memmove\n", "unknown kind 'memmove'");
  expect_error("COMP any thing\n", "matcher 'any' takes no argument");
  expect_error("# only comments\n\n", "no rules");
}

// tests/fuzz (nsys_rules_fuzz) found rules whose search backtracked for minutes on a 23-character
// kernel name (this one, cut down). Name patterns run in polynomial time now: without the fix
// this test hangs until CTest's timeout fails it. Back-references are refused instead.
TEST(NsysRules, StackedQuantifiersDoNotBacktrackForever) {
  const RuleSet set = RuleSet::parse(
      "COMM name ^ni?????????????????{2,}?????????????????????????????{2,}X\n", "fuzz.rules");
  ActivityFacts a;
  a.name = "ncclDevKernel_AllReduce";
  EXPECT_EQ(set.classify(a), RuleClass::kIgnore);
  a.name = "nX";
  EXPECT_EQ(set.classify(a), RuleClass::kComm);
  expect_error("COMM name (nccl)\\1\n",
               "my.rules:1: invalid regular expression '(nccl)\\1': back-references (\\1) are "
               "not supported");
}

// nsys_rules_fuzz found a repetition count and a back-reference number that overflow libstdc++'s
// regex compiler (undefined behaviour inside std::regex); both are refused before it sees them.
TEST(NsysRules, HugeRepetitionCountsAndBackReferencesAreRefused) {
  expect_error("COMM name ]77\\\\\\7777777777777777777777777777\n",
               "back-references (\\7777777777777777777777777777) are not supported");
  expect_error("COMM name ^ncclDevKern{28888888888888888888888888,}el_\n",
               "my.rules:1: invalid regular expression '^ncclDevKern{28888888888888888888888888,}"
               "el_': repetition count 28888888888888888888888888 is above 1000");
  expect_error("COMM name ^a{2,1001}\n", "repetition count 1001 is above 1000");
  const RuleSet ok = RuleSet::parse("COMM name ^a{2,1000}b[{99999]\\{99999,99999\n", "ok.rules");
  ActivityFacts a;
  a.name = "aab{\\{99999";
  EXPECT_EQ(ok.classify(a), RuleClass::kIgnore);
  a.name = "aab9{99999,99999";
  EXPECT_EQ(ok.classify(a), RuleClass::kComm);
}

TEST(NsysRules, MissingRulesFileIsNamed) {
  try {
    RuleSet::from_file("/no/such/rules.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/rules.txt: cannot open"), std::string::npos);
  }
}

TEST(NsysRules, CollectiveFromNcclKernelNames) {
  EXPECT_EQ(collective_from_nccl_kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), "allreduce");
  EXPECT_EQ(collective_from_nccl_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"), "allgather");
  EXPECT_EQ(collective_from_nccl_kernel("ncclSymkDevKernel_ReduceScatter_LL"), "reducescatter");
  EXPECT_EQ(collective_from_nccl_kernel("ncclDevKernel_SendRecv"), "sendrecv");
  EXPECT_EQ(collective_from_nccl_kernel("ncclDevKernel_Broadcast_RING_LL"), "broadcast");
  EXPECT_EQ(collective_from_nccl_kernel("ncclDevKernel_Generic"), "");
  EXPECT_EQ(collective_from_nccl_kernel("gemm"), "");
}

}  // namespace
}  // namespace commprof
