// SPDX-License-Identifier: MIT
// A subcommand of the commprof program. Each lives in the folder of what it drives (run and gemm
// in workloads/, bench in collectives/, report and import-nsys in analysis/);
// src/program/command_list.cpp composes the list, so this layer knows none of them.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <string>
#include <vector>

#include "src/backend/backend.hpp"
#include "src/backend/registry/backend_registry.hpp"

namespace commprof {

class RankContext;

/// Lifecycle: define_options() → (parse) → configure() before MPI starts, on every rank →
/// run() on every rank once MPI is up and all ranks agreed the configuration is valid.
class Command {
 public:
  virtual ~Command() = default;
  virtual const char* name() const = 0;
  virtual const char* summary() const = 0;
  /// Options shown by `commprof <name> --help`, and hidden ones (test hooks).
  virtual void define_options(boost::program_options::options_description& visible,
                              boost::program_options::options_description& hidden) = 0;
  /// Positional arguments (report's DIR|FILES...), mapped onto options; none by default, so
  /// stray words on other commands stay an error.
  virtual void define_positional(boost::program_options::positional_options_description&) {}
  /// Validates parsed options into the command's configuration; throws ConfigError.
  virtual void configure(const boost::program_options::variables_map& vm) = 0;
  /// The backend to create ("auto", "host", "cuda"); "" when the command runs none.
  virtual std::string backend_name() const = 0;
  virtual BackendOptions backend_options() const { return {}; }
  /// Runs on every rank and returns the exit code, the same on every rank.
  virtual int run(RankContext& ctx, Backend* backend, const BackendChoice& choice) = 0;
};

}  // namespace commprof
