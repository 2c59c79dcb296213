// SPDX-License-Identifier: MIT
// What ScopedAnnotation pushes for each kind of work (the text format is pinned in
// tests/src/timeline/op_range_text_test.cpp), seen through the annotation observer, so no NVTX
// tool is needed.
#include "src/backend/annotation.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "src/backend/communicator.hpp"
#include "src/timeline/op_range_text.hpp"

namespace commprof {
namespace {

class FakeComm final : public Communicator {
 public:
  FakeComm(std::string name, int size) : name_(std::move(name)), size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }
  std::unique_ptr<Communicator> split(int, int, const std::string&) override { return nullptr; }
  /// As if this one were destroyed and another made at its address.
  void become(std::string name, int size) {
    name_ = std::move(name);
    size_ = size;
  }

 private:
  std::string name_;
  int size_;
};

std::vector<AnnotationEvent>& seen() {
  static std::vector<AnnotationEvent> events;
  return events;
}
void record(const AnnotationEvent& e) { seen().push_back(e); }

class Observed : public ::testing::Test {
 protected:
  void SetUp() override {
    seen().clear();
    set_annotation_observer(&record);
  }
  void TearDown() override { set_annotation_observer(nullptr); }
};

TEST_F(Observed, CommRangesNameTheirCommunicatorAndCarryTheSequenceNumber) {
  FakeComm tp1("tp1", 2), pp0("pp0", 4);
  {
    CollectiveCall call;
    call.kind = CollectiveKind::kAllReduce;
    call.comm = &tp1;
    ScopedAnnotation a(OpLabel{"l0.attn.mb0.ar", 4096, 0.0, 7}, call, Category::kComm);
  }
  {
    P2PCall call;
    call.comm = &pp0;
    call.sends[0].peer = 1;
    ScopedAnnotation a(OpLabel{"pp.send_act.mb0", 512, 0.0, -1}, call, Category::kComm);
  }
  { ScopedAnnotation a(OpLabel{"l0.qkv.mb0.fwd", 0, 1e9, -1}, GemmCall{}, Category::kComp); }
  { ScopedAnnotation a(OpLabel{"dp.bucket0.copy_in", 2048, 0.0, -1}, CopyCall{}, Category::kMem); }
  ASSERT_EQ(seen().size(), 8u);
  for (std::size_t i = 0; i < 8; i += 2) {
    EXPECT_TRUE(seen()[i].push);
    EXPECT_FALSE(seen()[i + 1].push);
  }
  EXPECT_EQ(seen()[0].text, "l0.attn.mb0.ar [coll=allreduce comm=tp1 size=2 bytes=4096]");
  EXPECT_EQ(seen()[0].category, Category::kComm);
  EXPECT_EQ(seen()[0].payload, 7);
  EXPECT_TRUE(seen()[0].payload_is_sequence);
  EXPECT_EQ(seen()[2].text, "pp.send_act.mb0 [coll=send comm=pp0 size=4 bytes=512]");
  EXPECT_EQ(seen()[2].payload, -1);  // send/recv are not numbered, as in commprof's records
  EXPECT_TRUE(seen()[2].payload_is_sequence);
  // COMP and MEM: the plain name, bytes as payload, as before the tag existed.
  EXPECT_EQ(seen()[4].text, "l0.qkv.mb0.fwd");
  EXPECT_EQ(seen()[4].category, Category::kComp);
  EXPECT_FALSE(seen()[4].payload_is_sequence);
  EXPECT_EQ(seen()[6].text, "dp.bucket0.copy_in");
  EXPECT_EQ(seen()[6].payload, 2048);
  EXPECT_FALSE(seen()[6].payload_is_sequence);
}

// The text of the last COMM range is reused while nothing in it changes (bench loops): every
// change must still show, including another communicator at the same address.
TEST_F(Observed, RepeatedCommRangesFollowEveryChange) {
  FakeComm comm("dp0", 2);
  CollectiveCall call;
  call.kind = CollectiveKind::kAllReduce;
  call.comm = &comm;
  auto push = [&](const OpLabel& label) {
    ScopedAnnotation a(label, call, Category::kComm);
    return seen()[seen().size() - 1];
  };
  EXPECT_EQ(push({"x", 8, 0.0, 0}).text, "x [coll=allreduce comm=dp0 size=2 bytes=8]");
  EXPECT_EQ(push({"x", 8, 0.0, 1}).text, "x [coll=allreduce comm=dp0 size=2 bytes=8]");
  EXPECT_EQ(seen()[2].payload, 1);
  EXPECT_EQ(push({"x", 16, 0.0, 2}).text, "x [coll=allreduce comm=dp0 size=2 bytes=16]");
  EXPECT_EQ(push({"y", 16, 0.0, 3}).text, "y [coll=allreduce comm=dp0 size=2 bytes=16]");
  call.kind = CollectiveKind::kAllGather;
  EXPECT_EQ(push({"y", 16, 0.0, 4}).text, "y [coll=allgather comm=dp0 size=2 bytes=16]");
  comm.become("dp1", 2);
  EXPECT_EQ(push({"y", 16, 0.0, 5}).text, "y [coll=allgather comm=dp1 size=2 bytes=16]");
  comm.become("dp1", 4);
  EXPECT_EQ(push({"y", 16, 0.0, 6}).text, "y [coll=allgather comm=dp1 size=4 bytes=16]");
}

TEST_F(Observed, RangesNestAndTheMeasuredStepsRangeHasItsName) {
  {
    MeasuredStepsRange measured;
    ScopedAnnotation step("step 2", 0);
  }
  ASSERT_EQ(seen().size(), 4u);
  EXPECT_TRUE(seen()[0].push);
  EXPECT_EQ(seen()[0].text, "measured_steps");
  EXPECT_EQ(seen()[0].text, kMeasuredStepsRange);
  EXPECT_FALSE(seen()[0].category.has_value());
  EXPECT_EQ(seen()[1].text, "step 2");
  EXPECT_FALSE(seen()[2].push);
  EXPECT_FALSE(seen()[3].push);
}

}  // namespace
}  // namespace commprof
