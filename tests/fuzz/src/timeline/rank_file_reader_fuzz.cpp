// SPDX-License-Identifier: MIT
// libFuzzer target: the complete rank-file reader (src/timeline/rank_file_reader.cpp).
// Properties, beyond "no crash, no sanitizer report":
//  - any input is either read or refused with commprof::Error naming the source (no other
//    exception escapes, so `commprof report` can name the file and go on with the others);
//  - what is read keeps the promises the reducer relies on (rank within world_size, times within
//    +-kMaxTimeNs, no negative duration, flops finite and not negative, comm_size not negative);
//  - the writer writes what was read, and the reader reads that back field for field.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/fuzz_check.hpp"
#include "support/timeline_diff.hpp"

namespace commprof {
namespace {

bool is_time(std::int64_t t) { return t >= -kMaxTimeNs && t <= kMaxTimeNs; }

void check_promises(const RankTimeline& t) {
  FUZZ_CHECK(t.rank >= 0 && t.rank < t.world_size, "rank " + std::to_string(t.rank));
  FUZZ_CHECK(is_time(t.clock_offset_ns), "clock offset " + std::to_string(t.clock_offset_ns));
  for (const StepRecord& s : t.steps) {
    FUZZ_CHECK(s.end_ns >= s.start_ns, "step " + std::to_string(s.index));
    FUZZ_CHECK(is_time(s.start_ns) && is_time(s.end_ns), "step " + std::to_string(s.index));
    for (const OpRecord& op : s.ops) {
      FUZZ_CHECK(op.end_ns >= op.start_ns, op.name);
      FUZZ_CHECK(is_time(op.start_ns) && is_time(op.end_ns), op.name);
      FUZZ_CHECK(std::isfinite(op.flops) && op.flops >= 0.0, op.name);
      FUZZ_CHECK(op.comm_size >= 0, op.name);
    }
  }
}

}  // namespace
}  // namespace commprof

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commprof;
  // A torn last line is read with a warning; thousands of inputs are.
  static const bool quiet = (log::set_level(log::Level::kError), true);
  (void)quiet;
  const std::string text(reinterpret_cast<const char*>(data), size);
  RankTimeline t;
  try {
    t = parse_rank_json(text, "fuzz.json");
  } catch (const Error& e) {
    FUZZ_CHECK(std::string(e.what()).rfind("fuzz.json", 0) == 0, e.what());
    return 0;
  }
  check_promises(t);

  std::ostringstream written;
  write_rank_json(written, t);
  RankTimeline back;
  try {
    back = parse_rank_json(written.str(), "written.json");
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("the reader refuses what the writer wrote: ") + e.what());
  }
  const std::string diff = fuzz::timeline_diff(t, back);
  FUZZ_CHECK(diff.empty(), "written and read back: " + diff);
  return 0;
}
