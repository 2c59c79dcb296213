// SPDX-License-Identifier: MIT
#include "src/timeline/unfinished_entry.hpp"

#include <gtest/gtest.h>

namespace commprof {
namespace {

TEST(UnfinishedEntry, ACollectiveAsTheExecutorRecordsIt) {
  OpRecord op;
  op.name = "dp.allreduce.bucket3";
  op.comm = "dp0";
  op.collective = "allreduce";
  op.seq = 41;
  op.bytes = 4096;
  op.count = 2048;
  op.dtype = "bf16";
  EXPECT_EQ(unfinished_entry(op, 7).dump(),
            R"({"comm":"dp0","collective":"allreduce","seq":41,"name":"dp.allreduce.bucket3",)"
            R"("step":7,"bytes":4096,"count":2048,"dtype":"bf16","state":"submitted"})");
}

TEST(UnfinishedEntry, ATransferNamesItsPeersAndOmitsWhatItDoesNotRecord) {
  // The synthetic faults' ops record bytes but no count or type: the entry leaves both out, which
  // diagnose's reader takes as 0 and "", as it would read the op itself.
  OpRecord op;
  op.name = "pp.send_act.mb0";
  op.comm = "pp3";
  op.collective = "sendrecv";
  op.bytes = 1024;
  op.send_to = {5};
  op.recv_from = {};
  EXPECT_EQ(unfinished_entry(op, 2).dump(),
            R"({"comm":"pp3","collective":"sendrecv","seq":-1,"name":"pp.send_act.mb0",)"
            R"("step":2,"bytes":1024,"send_to":[5],"state":"submitted"})");
}

}  // namespace
}  // namespace commprof
