// SPDX-License-Identifier: MIT
// libFuzzer target: the one-pass rank-file reader (src/timeline/rank_file_stream.cpp), whose
// speed comes from accepting only the compact form commprof writes and handing anything else to
// the complete reader. Properties:
//  - where the one-pass reader accepts a text, the complete reader accepts it too and reads the
//    same timeline, field for field (the contract in rank_file_stream.cpp);
//  - stream_rank_file, the entry `commprof report` uses, on a real file (a memfd) with the
//    input's bytes: delivers exactly what the complete reader reads, or throws commprof::Error
//    naming the file where the complete reader throws.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_file.hpp"
#include "src/timeline/rank_file_detail.hpp"
#include "support/fuzz_check.hpp"
#include "support/timeline_diff.hpp"

namespace commprof {
namespace {

/// Rebuilds the timeline from what a reader delivers, checking the sink protocol on the way.
class RecordingSink final : public RankStepSink {
 public:
  void header(const RankTimeline& header) override {
    FUZZ_CHECK(!has_header_, "header() twice without restart()");
    FUZZ_CHECK(header.steps.empty(), "header() with steps");
    timeline = header;
    has_header_ = true;
  }
  void step(const StepView& step) override {
    FUZZ_CHECK(has_header_, "step() before header()");
    FUZZ_CHECK(step.ops != nullptr, "step() without ops");
    timeline.steps.push_back(to_step_record(step));
  }
  void end() override {
    FUZZ_CHECK(has_header_, "end() before header()");
    ended = true;
  }
  void restart() override {
    timeline = RankTimeline{};
    has_header_ = false;
  }
  RankTimeline timeline;
  bool ended = false;

 private:
  bool has_header_ = false;
};

// The complete reader's verdict: the timeline, or its error message.
struct Verdict {
  bool ok = false;
  RankTimeline timeline;
  std::string error;
};
Verdict complete_reader(const std::string& text, const std::string& source) {
  Verdict v;
  try {
    v.timeline = parse_rank_json(text, source);
    v.ok = true;
  } catch (const Error& e) {
    v.error = e.what();
  }
  return v;
}

}  // namespace
}  // namespace commprof

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commprof;
  // A torn last line is read with a warning; thousands of inputs are.
  static const bool quiet = (log::set_level(log::Level::kError), true);
  (void)quiet;
  const char* begin = reinterpret_cast<const char*>(data);
  const std::string text(begin, size);

  // The one-pass reader alone, on the exact bytes (no padding after them: it must not need any).
  RecordingSink compact;
  const bool compact_ok = detail::read_compact(begin, begin + size, compact);
  const Verdict complete = complete_reader(text, "fuzz.json");
  if (compact_ok) {
    FUZZ_CHECK(complete.ok,
               "one-pass reader accepts what the complete one refuses: " + complete.error);
    const std::string diff = fuzz::timeline_diff(compact.timeline, complete.timeline);
    FUZZ_CHECK(diff.empty(), "one-pass and complete readers differ: " + diff);
  }

  // The public entry on a file with these bytes.
  const int fd = memfd_create("rank-fuzz", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0, "memfd_create");
  FUZZ_CHECK(size == 0 || write(fd, data, size) == static_cast<ssize_t>(size), "write");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  RecordingSink streamed;
  try {
    stream_rank_file(path, streamed);
    FUZZ_CHECK(complete.ok,
               "stream_rank_file accepts what the complete reader refuses: " + complete.error);
    FUZZ_CHECK(streamed.ended, "stream_rank_file returned without end()");
    const std::string diff = fuzz::timeline_diff(streamed.timeline, complete.timeline);
    FUZZ_CHECK(diff.empty(), "stream_rank_file and the complete reader differ: " + diff);
  } catch (const Error& e) {
    FUZZ_CHECK(!complete.ok, std::string("stream_rank_file refuses a valid file: ") + e.what());
    FUZZ_CHECK(std::string(e.what()).find(path) != std::string::npos,
               std::string("error does not name the file: ") + e.what());
  }
  close(fd);
  return 0;
}
