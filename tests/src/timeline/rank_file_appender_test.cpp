// SPDX-License-Identifier: MIT
// RankFileAppender: the file it grows is, after every step, what the writer writes for the steps
// so far; a failed append is undone.
#include "src/timeline/rank_file_appender.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/tools/synthetic_timeline.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/temp_dir.hpp"
#include "support/test_files.hpp"

namespace commprof {
namespace {

using ::testing::HasSubstr;

std::string appender_dir(const std::string& name) {
  return test::fresh_temp_dir("appender-" + name);
}

TEST(RankFileAppender, AfterEveryStepTheFileIsWhatTheWriterWrites) {
  const SyntheticSpec spec = SyntheticSpec::sized(4, 1, 2);
  const RankTimeline t = make_synthetic_rank(spec, 2);
  const std::string dir = appender_dir("steps");
  RankFileAppender file(dir, t);
  EXPECT_EQ(file.path(), dir + "/rank-2.json");
  EXPECT_FALSE(std::filesystem::exists(file.path())) << "no file before the first step";
  RankTimeline so_far = t;
  so_far.steps.clear();
  for (const StepRecord& s : t.steps) {
    file.append(s);
    so_far.steps.push_back(s);
    std::ostringstream expected;
    write_rank_json(expected, so_far);
    ASSERT_EQ(test::file_bytes(file.path()), expected.str()) << "after step " << s.index;
  }
  file.close();
  EXPECT_EQ(read_rank_file(file.path()).steps.size(), t.steps.size());
  EXPECT_THROW(file.append(t.steps[0]), Error);
}

// Under a file-size limit (RLIMIT_FSIZE, what `ulimit -f` sets; SIGXFSZ ignored as commprof does)
// the append that crosses it fails with EFBIG, is named, and leaves the steps before it whole. In
// a child process: the limit would bind the test runner too.
TEST(RankFileAppender, AFailedAppendIsUndone) {
  const SyntheticSpec spec = SyntheticSpec::sized(8, 0, 2);
  const RankTimeline t = make_synthetic_rank(spec, 0);
  auto size_with = [&](std::size_t steps) {
    RankTimeline part = t;
    part.steps.resize(steps);
    std::ostringstream os;
    write_rank_json(os, part);
    return os.str().size();
  };
  // Room for three steps and half of the fourth.
  const auto limit = static_cast<rlim_t>((size_with(3) + size_with(4)) / 2);
  const std::string dir = appender_dir("fsize");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit r{limit, limit};
    setrlimit(RLIMIT_FSIZE, &r);
    RankFileAppender file(dir, t);
    int appended = 0;
    try {
      for (const StepRecord& s : t.steps) {
        file.append(s);
        ++appended;
      }
    } catch (const Error& e) {
      const std::string message = e.what();
      const bool named = message.find("cannot write '" + file.path() +
                                      "': File too large; its earlier steps are kept") == 0;
      _exit(named ? appended : 100);
    }
    _exit(101);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  const int appended = WEXITSTATUS(status);
  ASSERT_EQ(appended, 3) << "100: the error did not name the file and reason; 101: no error";
  RankTimeline expected = t;
  expected.steps.resize(3);
  std::ostringstream os;
  write_rank_json(os, expected);
  EXPECT_EQ(test::file_bytes(dir + "/rank-0.json"), os.str());
}

}  // namespace
}  // namespace commprof
