// SPDX-License-Identifier: MIT
// libFuzzer target: the compressed rank file (src/timeline/zstd_frames.hpp), read by both
// readers from a real file (a memfd). Properties:
//  - the input's text cut into lines, each one zstd frame (as the writers cut it), reads as the
//    text itself does: the same timeline, or an error from both;
//  - those frames cut short at a point the input chooses read as the text of the whole frames
//    before the cut does: a torn last frame is dropped, never a crash;
//  - an input that is itself zstd (begins with the magic number) is read the same by
//    stream_rank_file and read_rank_file, or refused by both with commprof::Error.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_file.hpp"
#include "src/timeline/zstd_frames.hpp"
#include "support/fuzz_check.hpp"
#include "support/timeline_diff.hpp"

namespace commprof {
namespace {

class Collect final : public RankStepSink {
 public:
  void header(const RankTimeline& h) override { timeline = h; }
  void step(const StepView& s) override { timeline.steps.push_back(to_step_record(s)); }
  void end() override {}
  void restart() override { timeline = RankTimeline{}; }
  RankTimeline timeline;
};

std::optional<RankTimeline> from_text(const std::string& text) {
  try {
    return parse_rank_json(text, "fuzz.json");
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Both readers on a file holding `bytes`: the timeline each reads, or nullopt where it throws
// commprof::Error (anything else escapes and is a crash).
struct Read {
  std::optional<RankTimeline> whole, streamed;
};
Read from_file(const std::string& bytes) {
  const int fd = memfd_create("rank-zstd-fuzz", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0, "memfd_create");
  FUZZ_CHECK(
      bytes.empty() || write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()),
      "write");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  Read r;
  try {
    r.whole = read_rank_file(path);
  } catch (const Error&) {
  }
  try {
    Collect sink;
    stream_rank_file(path, sink);
    r.streamed = sink.timeline;
  } catch (const Error&) {
  }
  close(fd);
  return r;
}

void expect_same(const std::optional<RankTimeline>& got, const std::optional<RankTimeline>& want,
                 const std::string& what) {
  FUZZ_CHECK(got.has_value() == want.has_value(),
             what + (want ? ": refused, but the text reads" : ": read, but the text is refused"));
  if (got) {
    const std::string diff = fuzz::timeline_diff(*got, *want);
    FUZZ_CHECK(diff.empty(), what + " differs: " + diff);
  }
}

}  // namespace
}  // namespace commprof

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace commprof;
  static const bool quiet = (log::set_level(log::Level::kError), true);  // torn files warn
  (void)quiet;
  const std::string text(reinterpret_cast<const char*>(data), size);

  if (starts_with_zstd_frame(text)) {
    const Read raw = from_file(text);
    expect_same(raw.streamed, raw.whole, "stream_rank_file against read_rank_file on zstd input");
    return 0;
  }

  // The text in frames, one per line.
  std::vector<std::string> frames;
  std::vector<std::size_t> line_end;  // end of each frame's text in `text`
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
    frames.push_back(zstd_frame(std::string_view(text).substr(at, end - at)));
    line_end.push_back(end);
    at = end;
  }
  std::string packed;
  for (const std::string& f : frames) packed += f;
  const std::optional<RankTimeline> plain = from_text(text);
  const Read all = from_file(packed);
  expect_same(all.whole, plain, "read_rank_file of the frames");
  expect_same(all.streamed, plain, "stream_rank_file of the frames");

  // Cut where the input's bytes say (FNV-1a of them).
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ULL;
  const std::size_t cut = packed.empty() ? 0 : static_cast<std::size_t>(h % packed.size());
  std::size_t whole = 0, kept_text = 0;
  for (std::size_t i = 0; i < frames.size() && whole + frames[i].size() <= cut; ++i) {
    whole += frames[i].size();
    kept_text = line_end[i];
  }
  const std::optional<RankTimeline> prefix =
      whole == 0 ? std::nullopt : from_text(text.substr(0, kept_text));
  const Read torn = from_file(packed.substr(0, cut));
  expect_same(torn.whole, prefix, "read_rank_file of the frames cut short");
  expect_same(torn.streamed, prefix, "stream_rank_file of the frames cut short");
  return 0;
}
