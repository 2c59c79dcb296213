// SPDX-License-Identifier: MIT
// The command line and COMMPROF_<OPTION> environment, parsed without MPI: what a user typing
// `commprof ...` gets back, and that every error is one line naming what was wrong.
#include "src/cli/parse.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "src/core/log.hpp"
#include "src/program/command_list.hpp"

namespace commprof {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Kind = ParseOutcome::Kind;

/// Parses `args` (without the program name) with `env` as the environment. Owns the commands,
/// since the outcome points into them.
class Parse {
 public:
  Parse(const std::vector<std::string>& args, const std::vector<std::string>& env = {})
      : commands_(make_commands()), args_(args), env_(env) {
    argv_.push_back("commprof");
    for (const auto& a : args_) argv_.push_back(a.c_str());
    for (const auto& e : env_) envp_.push_back(e.c_str());
    envp_.push_back(nullptr);
    const log::Level saved = log::level();  // --log-level changes a process-wide setting
    outcome_ =
        parse_command_line(static_cast<int>(argv_.size()), argv_.data(), commands_, envp_.data());
    log::set_level(saved);
  }
  const ParseOutcome& operator*() const { return outcome_; }
  const ParseOutcome* operator->() const { return &outcome_; }

 private:
  std::vector<std::unique_ptr<Command>> commands_;
  std::vector<std::string> args_;
  std::vector<std::string> env_;
  std::vector<const char*> argv_;
  std::vector<const char*> envp_;
  ParseOutcome outcome_;
};

/// A usage error: one line, prefixed, mentioning every fragment.
void expect_usage_error(const Parse& p, const std::vector<std::string>& fragments,
                        const std::string& prefix = "commprof bench: error: ") {
  EXPECT_EQ(p->kind, Kind::kUsageError) << p->text;
  EXPECT_THAT(p->text, StartsWith(prefix));
  EXPECT_THAT(p->text, Not(HasSubstr("\n"))) << "errors are one line";
  for (const auto& f : fragments) EXPECT_THAT(p->text, HasSubstr(f));
}

TEST(Parse, HelpAndVersion) {
  for (const char* flag : {"--help", "-h", "help"}) {
    Parse p({flag});
    EXPECT_EQ(p->kind, Kind::kHelp) << flag;
    EXPECT_THAT(p->text,
                AllOf(HasSubstr("Usage: mpirun -np N commprof <command>"), HasSubstr("bench"),
                      HasSubstr("COMMPROF_<OPTION>"), HasSubstr("2 usage error")));
  }
  for (const char* flag : {"--version", "-V"}) {
    Parse p({flag});
    EXPECT_EQ(p->kind, Kind::kVersion) << flag;
    EXPECT_THAT(p->text,
                AllOf(StartsWith("commprof "), HasSubstr("host: available"), HasSubstr("cuda: ")));
  }
}

TEST(Parse, CommandHelpListsItsOptions) {
  Parse p({"bench", "--help"});
  EXPECT_EQ(p->kind, Kind::kHelp);
  ASSERT_NE(p->command, nullptr);
  EXPECT_STREQ(p->command->name(), "bench");
  for (const char* option :
       {"--ops", "--min-bytes", "--max-bytes", "--step-factor", "--iters", "--warmup", "--dtype",
        "--check", "--root", "--out", "--backend", "--timeout", "--log-level"}) {
    EXPECT_THAT(p->text, HasSubstr(option));
  }
  EXPECT_THAT(p->text, Not(HasSubstr("test-corrupt-rank"))) << "test hooks stay hidden";
}

// A test hook acts only where a test asks for it on the command line: without
// --enable-test-hooks it is refused, and from the environment never read (a COMMPROF_TEST_* left
// in a user's shell would otherwise hang or corrupt a production run).
TEST(Parse, TestHooksOnlyWhenEnabledOnTheCommandLine) {
  const std::pair<std::string, std::string> hooks[] = {{"run", "--test-hang-rank"},
                                                       {"run", "--test-no-activity-rank"},
                                                       {"bench", "--test-corrupt-rank"}};
  for (const auto& [command, hook] : hooks) {
    Parse plain({command, hook, "1"});
    EXPECT_EQ(plain->kind, Kind::kUsageError) << hook;
    EXPECT_THAT(plain->text, HasSubstr(hook + " is a test hook (it breaks the run on purpose): add "
                                              "--enable-test-hooks to use it"));
    Parse enabled({command, "--enable-test-hooks", hook, "1"});
    EXPECT_EQ(enabled->kind, Kind::kRun) << enabled->text;
  }
  for (const char* variable : {"COMMPROF_TEST_HANG_RANK=1", "COMMPROF_TEST_NO_ACTIVITY_RANK=1",
                               "COMMPROF_TEST_CORRUPT_RANK=0"}) {
    const std::string command =
        std::string(variable).find("CORRUPT") != std::string::npos ? "bench" : "run";
    Parse env({command, "--enable-test-hooks"}, {variable});
    EXPECT_EQ(env->kind, Kind::kUsageError) << variable;
    EXPECT_THAT(env->text, HasSubstr("is a test hook and is never read from the environment: "
                                     "unset it"))
        << variable;
  }
  Parse off({"run"}, {"COMMPROF_ENABLE_TEST_HOOKS=1"});
  EXPECT_EQ(off->kind, Kind::kRun) << "the switch itself is no option of the environment";
}

TEST(Parse, DefaultsRun) {
  Parse p({"bench"});
  ASSERT_EQ(p->kind, Kind::kRun) << p->text;
  EXPECT_STREQ(p->command->name(), "bench");
  EXPECT_EQ(p->command->backend_name(), "auto");
  EXPECT_DOUBLE_EQ(p->command->backend_options().timeout_s, 300.0);
  EXPECT_TRUE(p->command->backend_options().annotate);
}

TEST(Parse, FullCommandLineRuns) {
  Parse p({"bench", "--backend", "host",  "--ops",     "all",         "-b",
           "1K",    "-e",        "4M",    "-f",        "2",           "-n",
           "3",     "-w",        "0",     "-d",        "double",      "--check",
           "0",     "--root",    "1",     "--timeout", "12.5",        "--instrument",
           "both",  "--no-nvtx", "--out", "/tmp/x",    "--log-level", "warn"});
  ASSERT_EQ(p->kind, Kind::kRun) << p->text;
  EXPECT_EQ(p->command->backend_name(), "host");
  EXPECT_DOUBLE_EQ(p->command->backend_options().timeout_s, 12.5);
  EXPECT_FALSE(p->command->backend_options().annotate);
}

TEST(Parse, NoCommandOrUnknownCommand) {
  Parse none({});
  expect_usage_error(none, {"no command given"}, "commprof: error: ");
  Parse unknown({"frobnicate", "--iters", "3"});
  expect_usage_error(unknown, {"unknown command 'frobnicate'", "bench"}, "commprof: error: ");
  EXPECT_EQ(unknown->command, nullptr);
}

TEST(Parse, UnknownOptionIsNamed) {
  expect_usage_error(Parse({"bench", "--no-such-option"}), {"--no-such-option"});
  expect_usage_error(Parse({"bench", "--iters", "3", "--minbytes", "1K"}), {"--minbytes"});
}

TEST(Parse, StrayArgumentIsAnErrorNamingIt) {
  // `commprof bench 1M` (a forgotten --min-bytes) must not silently run the defaults.
  expect_usage_error(Parse({"bench", "stray"}), {"stray"});
  expect_usage_error(Parse({"bench", "--iters", "3", "1M"}), {"1M"});
}

TEST(Parse, MalformedValuesNameTheOptionAndTheText) {
  expect_usage_error(Parse({"bench", "--min-bytes", "1X"}), {"min-bytes", "'1X'"});
  expect_usage_error(Parse({"bench", "--max-bytes", "-4K"}), {"max-bytes"});
  expect_usage_error(Parse({"bench", "--iters", "three"}), {"iters", "three"});
  expect_usage_error(Parse({"bench", "--timeout", "soon"}), {"timeout"});
  expect_usage_error(Parse({"bench", "--iters"}), {"iters"});  // missing value
}

TEST(Parse, MinAboveMaxMentionsBoth) {
  expect_usage_error(Parse({"bench", "--min-bytes", "1M", "--max-bytes", "1K"}),
                     {"--min-bytes", "--max-bytes", "1048576", "1024"});
}

TEST(Parse, ImpossibleValuesAreRejected) {
  expect_usage_error(Parse({"bench", "--dtype", "bf17"}), {"bf17"});
  expect_usage_error(Parse({"bench", "--ops", "allreduce,foo"}), {"'foo'"});
  expect_usage_error(Parse({"bench", "--ops", "allreduce,,reduce"}), {"allreduce,,reduce"});
  expect_usage_error(Parse({"bench", "--iters", "0"}), {"--iters"});
  expect_usage_error(Parse({"bench", "--warmup=-1"}), {"--warmup"});
  expect_usage_error(Parse({"bench", "--step-factor", "1"}), {"--step-factor"});
  expect_usage_error(Parse({"bench", "--step-factor", "0"}), {"--step-factor"});
  expect_usage_error(Parse({"bench", "--min-bytes", "0"}), {"--min-bytes"});
  expect_usage_error(Parse({"bench", "--root=-1"}), {"--root"});
  expect_usage_error(Parse({"bench", "--timeout", "0"}), {"--timeout"});
  expect_usage_error(Parse({"bench", "--log-level", "loud"}), {"loud"});
  expect_usage_error(Parse({"bench", "--instrument", "sometimes"}), {"--instrument", "sometimes"});
}

TEST(Parse, EnvironmentSetsOptions) {
  Parse p({"bench"}, {"COMMPROF_BACKEND=host", "COMMPROF_TIMEOUT=7", "COMMPROF_NO_NVTX=1"});
  ASSERT_EQ(p->kind, Kind::kRun) << p->text;
  EXPECT_EQ(p->command->backend_name(), "host");
  EXPECT_DOUBLE_EQ(p->command->backend_options().timeout_s, 7.0);
  EXPECT_FALSE(p->command->backend_options().annotate);
}

TEST(Parse, EnvironmentSizesAreValidatedLikeTheCommandLine) {
  // COMMPROF_MIN_BYTES is applied: above the command line's max it is an error naming both.
  expect_usage_error(Parse({"bench", "--max-bytes", "1K"}, {"COMMPROF_MIN_BYTES=1M"}),
                     {"--min-bytes (1048576 B)", "--max-bytes (1024 B)"});
  expect_usage_error(Parse({"bench"}, {"COMMPROF_MIN_BYTES=lots"}), {"min-bytes", "'lots'"});
  // Underscores map to dashes.
  expect_usage_error(Parse({"bench"}, {"COMMPROF_STEP_FACTOR=1"}), {"--step-factor"});
  expect_usage_error(Parse({"bench"}, {"COMMPROF_ITERS=0"}), {"--iters"});
}

TEST(Parse, CommandLineBeatsEnvironment) {
  Parse sizes({"bench", "--min-bytes", "1K", "--max-bytes", "2K"}, {"COMMPROF_MIN_BYTES=1M"});
  EXPECT_EQ(sizes->kind, Kind::kRun) << sizes->text;
  Parse backend({"bench", "--backend", "cuda"}, {"COMMPROF_BACKEND=host"});
  ASSERT_EQ(backend->kind, Kind::kRun) << backend->text;
  EXPECT_EQ(backend->command->backend_name(), "cuda");
  Parse iters({"bench", "--iters", "5"}, {"COMMPROF_ITERS=0"});
  EXPECT_EQ(iters->kind, Kind::kRun) << iters->text;
}

TEST(Parse, UnrelatedEnvironmentIsIgnored) {
  Parse p({"bench"}, {"PATH=/usr/bin", "COMMPROF_NOT_AN_OPTION=1", "COMMPROF_=x", "COMMPROF_HELP=1",
                      "COMMPROF_MIN_BYTES", "HOME=/root", "commprof_iters=0"});
  EXPECT_EQ(p->kind, Kind::kRun) << p->text;
}

// Where a command writes is --out, -o or --output on every command (README, "Options every
// command takes"): each spelling lands in the command's own option.
TEST(Parse, EveryOutputTakesOutDashOAndOutput) {
  const std::vector<std::vector<std::string>> commands = {{"report", "DIR"},
                                                          {"import-torch", "t.json"},
                                                          {"import-nsys", "r.sqlite"},
                                                          {"export-chakra", "DIR"},
                                                          {"run"},
                                                          {"project", "DIR", "--layout", "tp=2"}};
  for (const auto& command : commands) {
    for (const char* spelling : {"--out", "-o", "--output"}) {
      std::vector<std::string> args = command;
      args.push_back(spelling);
      args.push_back("where");
      Parse p(args);
      ASSERT_EQ(p->kind, Kind::kRun) << command[0] << " " << spelling << ": " << p->text;
      EXPECT_THAT(p->effective_options,
                  AnyOf(HasSubstr("\nout=where\n"), HasSubstr("\noutput=where\n")))
          << command[0] << " " << spelling;
    }
  }
  Parse both({"report", "DIR", "--out", "a", "--output", "b"});
  expect_usage_error(both, {"--output 'b' and --out 'a' are two spellings of one option: give one"},
                     "commprof report: error: ");
  Parse same({"run", "--out", "a", "--output", "a"});
  EXPECT_EQ(same->kind, Kind::kRun) << same->text;
}

}  // namespace
}  // namespace commprof
