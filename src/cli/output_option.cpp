// SPDX-License-Identifier: MIT
#include "src/cli/output_option.hpp"

#include <map>

#include "src/core/errors.hpp"

namespace po = boost::program_options;

namespace commprof {

OutputSpelling add_output_spelling(const po::options_description& visible,
                                   po::options_description& hidden) {
  const bool out = visible.find_nothrow("out", false) != nullptr;
  const bool output = visible.find_nothrow("output", false) != nullptr;
  if (out == output) return {};
  OutputSpelling s{out ? "out" : "output", out ? "output" : "out"};
  hidden.add_options()(s.other.c_str(), po::value<std::string>(),
                       "another spelling of the command's output option");
  return s;
}

void fold_output_spelling(const OutputSpelling& s, po::variables_map& vm) {
  if (s.other.empty() || vm.count(s.other) == 0) return;
  const std::string value = vm[s.other].as<std::string>();
  if (vm.count(s.own) != 0 && vm[s.own].as<std::string>() != value) {
    throw ConfigError("--" + s.own + " '" + vm[s.own].as<std::string>() + "' and --" + s.other +
                      " '" + value + "' are two spellings of one option: give one");
  }
  // variables_map hides std::map's non-const operator[]; its base takes the value.
  auto& values = static_cast<std::map<std::string, po::variable_value>&>(vm);
  values[s.own] = values[s.other];
  values.erase(s.other);
}

}  // namespace commprof
