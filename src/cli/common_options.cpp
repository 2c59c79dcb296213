// SPDX-License-Identifier: MIT
#include "src/cli/common_options.hpp"

#include <cctype>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace po = boost::program_options;

namespace commprof {

void add_runtime_options(po::options_description& desc) {
  desc.add_options()(
      "backend", po::value<std::string>()->default_value("auto"),
      "auto | host | cuda. auto takes cuda when a GPU is visible and says what it picked")(
      "timeout", po::value<double>()->default_value(300.0),
      "seconds a stream may take to drain before the run is aborted with a message naming the "
      "rank and stream")("force", po::bool_switch(),
                         "overwrite the results of an earlier run in --out")(
      "no-nvtx", po::bool_switch(), "do not emit NVTX ranges (they cost nothing without a tool)")(
      "log-level", po::value<std::string>()->default_value("info"), "error | warn | info | debug");
}

RuntimeOptions read_runtime_options(const po::variables_map& vm) {
  RuntimeOptions out;
  out.backend = vm["backend"].as<std::string>();
  out.backend_options.timeout_s = vm["timeout"].as<double>();
  out.backend_options.annotate = !vm["no-nvtx"].as<bool>();
  out.force = vm["force"].as<bool>();
  if (!(out.backend_options.timeout_s > 0.0)) {
    throw ConfigError("--timeout must be a positive number of seconds");
  }
  log::set_level(log::parse_level(vm["log-level"].as<std::string>()));
  return out;
}

std::string environment_option_name(const po::options_description& desc,
                                    const std::string& variable) {
  static const std::string kPrefix = "COMMPROF_";
  if (variable.compare(0, kPrefix.size(), kPrefix) != 0) return "";
  std::string name;
  for (char c : variable.substr(kPrefix.size())) {
    name += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (name.empty() || name == "help") return "";
  return desc.find_nothrow(name, false) != nullptr ? name : "";
}

}  // namespace commprof
