// SPDX-License-Identifier: MIT
// Options every measuring command shares, and the COMMPROF_<OPTION> environment mapping.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "src/backend/backend.hpp"

namespace commprof {

/// --backend, --timeout, --force, --no-nvtx, --log-level.
void add_runtime_options(boost::program_options::options_description& desc);

struct RuntimeOptions {
  std::string backend = "auto";
  bool force = false;  ///< --force: overwrite an earlier run's results in --out
  BackendOptions backend_options;
};
/// Reads the options added by add_runtime_options (and sets the log level); throws ConfigError.
RuntimeOptions read_runtime_options(const boost::program_options::variables_map& vm);

/// Maps COMMPROF_MIN_BYTES to "min-bytes" when `desc` has such an option, else "" (ignored).
std::string environment_option_name(const boost::program_options::options_description& desc,
                                    const std::string& variable);

}  // namespace commprof
