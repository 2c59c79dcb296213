// SPDX-License-Identifier: MIT
// The pickle reader of Flight Recorder dumps: plain values decoded as Python writes them (bytes
// made by hand from CPython's opcode table, and a real dump of PyTorch 2.11 checked against
// what Python's pickle module reads from it), and everything else refused with the offset.
#include "analysis/pickle_values.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

TEST(PickleValues, DecodesDictsListsTuplesTextNumbersAndMemo) {
  // pickle.dumps({'a': [1, -2, 300, None, True], 'b': ('x', 2.5), 'c': 'x'}, protocol=2) spelled
  // by hand: PROTO 2, EMPTY_DICT, BINPUT 0, MARK, 'a', EMPTY_LIST, BINPUT 1, MARK, BININT1 1,
  // BININT -2, BININT2 300, NONE, NEWTRUE, APPENDS, 'b', 'x' BINPUT 2, BINFLOAT 2.5, TUPLE2,
  // 'c', BINGET 2, SETITEMS, STOP.
  const std::string p =
      bytes({0x80, 2, '}', 'q',  0,    '(',  'X',  1,   0,    0,    0,   'a',  ']',  'q',  1,  '(',
             'K',  1, 'J', 0xfe, 0xff, 0xff, 0xff, 'M', 0x2c, 0x01, 'N', 0x88, 'e',  'X',  1,  0,
             0,    0, 'b', 'X',  1,    0,    0,    0,   'x',  'q',  2,   'G',  0x40, 0x04, 0,  0,
             0,    0, 0,   0,    0x86, 'X',  1,    0,   0,    0,    'c', 'h',  2,    'u',  '.'});
  const nlohmann::json j = read_pickle(p, "hand");
  EXPECT_EQ(j.dump(), R"({"a":[1,-2,300,null,true],"b":["x",2.5],"c":"x"})");
  // LONG1 of 8 bytes (a nanosecond timestamp) and of one (-1), as Python reads them.
  const std::string l = bytes(
      {0x80, 2, 0x8a, 8, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x18, 0x8a, 1, 0xff, 0x86, '.'});
  EXPECT_EQ(read_pickle(l, "long").dump(), "[1762990295541293585,-1]");
}

TEST(PickleValues, RefusesCodeAndTruncationNamingTheOffset) {
  // GLOBAL 'os\nsystem\n' (what a malicious pickle starts with): refused at byte 2, never run.
  const std::string evil = bytes({0x80, 2, 'c', 'o', 's', '\n', 's', 'y', 's', '\n', '.'});
  try {
    read_pickle(evil, "evil.pkl");
    FAIL() << "a GLOBAL was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("evil.pkl: not a pickle of plain values at byte 2: "
                                         "opcode 0x63"),
              std::string::npos)
        << e.what();
  }
  // A text whose length runs past the end.
  EXPECT_THROW(read_pickle(bytes({0x80, 2, 'X', 9, 0, 0, 0, 'a', '.'}), "short"), Error);
  // No STOP.
  EXPECT_THROW(read_pickle(bytes({0x80, 2, 'N'}), "no stop"), Error);
  // APPENDS without a MARK.
  EXPECT_THROW(read_pickle(bytes({0x80, 2, ']', 'e', '.'}), "no mark"), Error);
}

TEST(PickleValues, ARealFlightRecorderDump) {
  // tests/data/flight-recorder-2xh200: Python's pickle reads rank 0's dump as 12 entries, the
  // 8th of which started and never completed (time_discovered_completed_ns None).
  const std::string path =
      std::string(COMMPROF_TEST_DATA_DIR) + "/flight-recorder-2xh200/skip/fr-timeout-rank0";
  std::ifstream in(path, std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), {});
  const nlohmann::json j = read_pickle(b, path);
  EXPECT_EQ(j.at("version"), "2.10");
  ASSERT_EQ(j.at("entries").size(), 12u);
  const nlohmann::json& e = j.at("entries").at(7);
  EXPECT_EQ(e.at("collective_seq_id"), 8);
  EXPECT_EQ(e.at("state"), "started");
  EXPECT_TRUE(e.at("time_discovered_completed_ns").is_null());
  EXPECT_EQ(e.at("input_sizes").dump(), "[[524288]]");
  EXPECT_EQ(e.at("process_group").dump(), R"(["0","default_pg"])");
  EXPECT_EQ(j.at("pg_status").at("0").at("last_enqueued_collective"), 12);
}

}  // namespace
}  // namespace commprof
