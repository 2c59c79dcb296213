// SPDX-License-Identifier: MIT
#include "src/core/log.hpp"

#include <iostream>
#include <mutex>
#include <string>

#include "src/core/errors.hpp"
#include "src/core/name_table.hpp"

namespace commprof::log {
namespace {

struct State {
  std::mutex mutex;  // worker threads of the host backend may log too
  int rank = -1;
  std::string host;
  Level level = Level::kInfo;
};

State& state() {
  static State s;
  return s;
}

void emit(const char* tag, const std::string& message) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  // Whatever the report put on stdout goes out first: under mpirun, stdout and stderr travel
  // separately, and a buffered half line of a table would otherwise be split by this message.
  std::cout.flush();
  // One write for the whole line: std::cerr is unbuffered, so each << would be a write of its
  // own, and under mpirun another stream's output could land between "[rank " and the rest.
  const std::string line =
      (s.rank >= 0 ? "[rank " + std::to_string(s.rank) + ' ' + s.host + "] " : "[commprof] ") +
      tag + message + '\n';
  std::cerr.write(line.data(), static_cast<std::streamsize>(line.size()));
  std::cerr.flush();
}

}  // namespace

void set_identity(int rank, const std::string& host) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().rank = rank;
  state().host = host;
}

std::string identity() {
  State& s = state();
  if (s.rank < 0) return "this process";
  return cat("rank ", s.rank, " (", s.host, ")");
}

int rank() { return state().rank; }

void set_level(Level level) { state().level = level; }
Level level() { return state().level; }

Level parse_level(const std::string& text) {
  static constexpr NamedValue<Level> kLevelNames[] = {{Level::kError, "error"},
                                                      {Level::kWarn, "warn"},
                                                      {Level::kInfo, "info"},
                                                      {Level::kDebug, "debug"}};
  return parse_name(kLevelNames, text, "invalid log level");
}

void error(const std::string& message) { emit("error: ", message); }

void warn(const std::string& message) {
  if (level() >= Level::kWarn) emit("warning: ", message);
}

void info(const std::string& message) {
  if (level() >= Level::kInfo && state().rank <= 0) emit("", message);
}

void debug(const std::string& message) {
  if (level() >= Level::kDebug) emit("debug: ", message);
}

}  // namespace commprof::log
