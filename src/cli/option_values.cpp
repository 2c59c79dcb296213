// SPDX-License-Identifier: MIT
#include "src/cli/option_values.hpp"

#include <boost/program_options.hpp>

#include "src/core/errors.hpp"

namespace po = boost::program_options;

namespace commprof {

void validate(boost::any& value, const std::vector<std::string>& tokens, ByteSize*, int) {
  po::validators::check_first_occurrence(value);
  const std::string& text = po::validators::get_single_string(tokens);
  try {
    value = ByteSize{parse_bytes(text)};
  } catch (const ConfigError& e) {
    // Boost substitutes the option's name for %canonical_option% when it reports the error.
    throw po::error_with_option_name(std::string(e.what()) + " for option '%canonical_option%'");
  }
}

}  // namespace commprof
