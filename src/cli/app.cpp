// SPDX-License-Identifier: MIT
#include "src/cli/app.hpp"

#include <csignal>
#include <iostream>
#include <memory>

#include "src/cli/parse.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/standard_output.hpp"
#include "src/runtime/launcher_env.hpp"
#include "src/runtime/mpi_check.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/runtime/stop_signals.hpp"

extern char** environ;

namespace commprof {
namespace {

int run_parsed(int argc, char** argv, ParseOutcome& parsed) {
  // Resolve the backend before MPI starts: it decides the MPI thread level.
  BackendChoice choice;
  bool ok = parsed.kind == ParseOutcome::Kind::kRun;
  std::string error = parsed.text;
  if (ok && !parsed.command->backend_name().empty()) {
    try {
      choice = choose_backend(parsed.command->backend_name());
    } catch (const ConfigError& e) {
      ok = false;
      error = error_prefix(parsed.command) + e.what();
    }
  }
  const int thread_level = choice.info != nullptr ? choice.info->mpi_thread_level
                                                  : static_cast<int>(MPI_THREAD_FUNNELED);

  // A command that drives no backend, started by hand (no launcher's rank in the environment),
  // runs without MPI: see RankContext::Solo.
  const bool solo = choice.info == nullptr && !launcher_world_rank().has_value();
  std::unique_ptr<RankContext> owned =
      solo ? std::make_unique<RankContext>(RankContext::Solo{})
           : std::make_unique<RankContext>(&argc, &argv, thread_level);
  RankContext& ctx = *owned;
  install_stop_signals();  // after MPI_Init, whose library may install handlers of its own
  // Outside the try: after a failure its stream threads may be stuck in a collective with a
  // dead peer, and destroying it would wait for them forever. The job is aborted first.
  std::unique_ptr<Backend> backend;
  bool parse_error = true;  // `error` is a whole line already, prefix included
  try {
    // A usage error on any rank ends every rank with exit 2, before any other collective.
    ctx.agree(ok, error);
    parse_error = false;
    // Same command line everywhere, but environments may differ per node: compare what each
    // rank will actually run with, before the first collective of the run.
    agree_on_options(ctx, parsed.effective_options);
    if (choice.info != nullptr) {
      // `auto` may resolve differently on nodes with and without GPUs: refuse a mixed job.
      const int index = static_cast<int>(choice.info - registered_backends().data());
      int lo = 0;
      int hi = 0;
      COMMPROF_MPI_CHECK(MPI_Allreduce(&index, &lo, 1, MPI_INT, MPI_MIN, ctx.comm()));
      COMMPROF_MPI_CHECK(MPI_Allreduce(&index, &hi, 1, MPI_INT, MPI_MAX, ctx.comm()));
      ctx.agree(lo == hi,
                "ranks chose different backends (" + choice.info->name +
                    " here); pass --backend explicitly",
                ErrorScope::kProgram);
    }
    if (choice.info != nullptr) {
      backend = choice.info->create(ctx, parsed.command->backend_options());
      log::info(log::cat("backend: ", backend->name(), " (", choice.reason, "), ", ctx.size(),
                         " ranks on ", ctx.node_count(), " host(s)"));
    }
    return parsed.command->run(ctx, backend.get(), choice);
  } catch (const ConfigError& e) {
    // Raised consistently on every rank (agree() or a deterministic check): rank 0 speaks.
    const std::string prefix = parse_error ? "" : error_prefix(parsed.command, e.scope());
    if (ctx.rank() == 0) std::cerr << prefix << e.what() << std::endl;
    return kExitUsage;
  } catch (const std::exception& e) {
    // A failure on one rank: the others may be waiting for it in a collective and would never
    // return, so the job ends here, with the reason printed by the rank that saw it.
    log::error(e.what());
    if (ctx.size() > 1) ctx.abort(kExitFailure);
    return kExitFailure;
  }
}

// What the command printed must have arrived: stdout on a full disk or /dev/full fails the run
// (its result files, if any, are written by then).
int with_stdout_checked(int code) {
  try {
    check_stdout();
  } catch (const Error& e) {
    std::cerr << error_prefix(nullptr) << e.what() << std::endl;
    return code == kExitOk ? kExitFailure : code;
  }
  return code;
}

}  // namespace

int run_app(int argc, char** argv, const std::vector<std::unique_ptr<Command>>& commands) {
  // A file-size limit (ulimit -f) ends a process that writes past it with SIGXFSZ: mid-write,
  // without a word. Ignored, the write fails with EFBIG and the error names the file.
  std::signal(SIGXFSZ, SIG_IGN);
  ParseOutcome parsed = parse_command_line(argc, argv, commands, environ);
  if (parsed.kind == ParseOutcome::Kind::kHelp || parsed.kind == ParseOutcome::Kind::kVersion) {
    // No MPI needed; under mpirun only the first rank prints.
    if (launcher_world_rank().value_or(0) == 0) std::cout << parsed.text;
    return with_stdout_checked(kExitOk);
  }
  try {
    return with_stdout_checked(run_parsed(argc, argv, parsed));
  } catch (const std::exception& e) {
    // MPI itself failed to start, or the rank context could not be built.
    log::error(e.what());
    return kExitFailure;
  }
}

}  // namespace commprof
