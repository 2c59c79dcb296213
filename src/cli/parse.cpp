// SPDX-License-Identifier: MIT
#include "src/cli/parse.hpp"

#include <sstream>

#include "commprof/build_config.hpp"
#include "src/cli/common_options.hpp"
#include "src/core/errors.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

std::string program_help(const std::vector<std::unique_ptr<Command>>& commands) {
  std::ostringstream os;
  os << "commprof " << build::kVersion
     << " - distributed communication profiler for GPU clusters\n\n"
        "Usage: mpirun -np N commprof <command> [options]\n"
        "       commprof <command> --help\n\nCommands:\n";
  for (const auto& c : commands) {
    os << "  " << c->name() << std::string(14 - std::string(c->name()).size(), ' ')
       << c->summary() << '\n';
  }
  os << "\nGlobal options:\n  --help        this text\n  --version     version and backends\n"
        "\nEvery option can also be set as COMMPROF_<OPTION> (e.g. COMMPROF_MIN_BYTES=1M);\n"
        "the command line wins. Exit codes: 0 ok, 1 run failed (including #wrong > 0),\n"
        "2 usage error.\n";
  return os.str();
}

// Reads the environment through Boost, which walks `environ`; tests pass their own list.
po::parsed_options parse_env(const po::options_description& desc, const char* const* vars) {
  po::parsed_options parsed(&desc);
  for (const char* const* v = vars; v != nullptr && *v != nullptr; ++v) {
    const std::string entry(*v);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = environment_option_name(desc, entry.substr(0, eq));
    if (name.empty()) continue;
    po::option opt;
    opt.string_key = name;
    opt.value.push_back(entry.substr(eq + 1));
    opt.original_tokens.push_back(entry.substr(0, eq));
    parsed.options.push_back(opt);
  }
  return parsed;
}

}  // namespace

std::string version_text() {
  std::ostringstream os;
  os << "commprof " << build::kVersion << " (" << build::kBuildType << ", " << build::kCompiler
     << ")\nbackends:";
  for (const BackendInfo& info : registered_backends()) {
    auto reason = info.unavailable_reason();
    os << "\n  " << info.name << ": " << (reason ? "unavailable - " + *reason : "available");
  }
  os << '\n';
  return os.str();
}

ParseOutcome parse_command_line(int argc, const char* const* argv,
                                const std::vector<std::unique_ptr<Command>>& commands,
                                const char* const* environ_vars) {
  ParseOutcome out;
  if (argc < 2) {
    out.text = "commprof: error: no command given (try 'commprof --help')";
    return out;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    out.kind = ParseOutcome::Kind::kHelp;
    out.text = program_help(commands);
    return out;
  }
  if (first == "--version" || first == "-V") {
    out.kind = ParseOutcome::Kind::kVersion;
    out.text = version_text();
    return out;
  }
  Command* command = nullptr;
  std::string names;
  for (const auto& c : commands) {
    if (first == c->name()) command = c.get();
    names += (names.empty() ? "" : ", ") + std::string(c->name());
  }
  if (command == nullptr) {
    out.text = "commprof: error: unknown command '" + first + "' (expected " + names +
               "; try 'commprof --help')";
    return out;
  }
  out.command = command;
  const std::string prefix = std::string("commprof ") + command->name() + ": error: ";
  const std::string hint = std::string(" (try 'commprof ") + command->name() + " --help')";

  po::options_description visible(std::string("commprof ") + command->name() + " options");
  po::options_description hidden("test hooks");
  visible.add_options()("help,h", "this text");
  command->define_options(visible, hidden);
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  command->define_positional(positional);

  try {
    po::variables_map vm;
    po::command_line_parser parser(argc - 1, argv + 1);
    parser.options(all);
    if (positional.max_total_count() > 0) parser.positional(positional);
    const po::parsed_options parsed = parser.run();
    // Boost drops words that belong to no option; `bench 1M` (a forgotten --min-bytes) must
    // not run with the defaults.
    // Positional words the command maps onto an option (report's inputs) have a string_key.
    for (const po::option& o : parsed.options) {
      if (o.unregistered || (o.position_key != -1 && o.string_key.empty())) {
        const std::string word = o.original_tokens.empty() ? o.string_key : o.original_tokens.front();
        throw po::error("unexpected argument '" + word + "'");
      }
    }
    po::store(parsed, vm);
    if (vm.count("help") != 0) {
      out.kind = ParseOutcome::Kind::kHelp;
      std::ostringstream os;
      os << "Usage: mpirun -np N commprof " << command->name() << " [options]\n"
         << command->summary() << "\n\n"
         << visible << "\nEvery option can also be set as COMMPROF_<OPTION>; the command "
         << "line wins.\n";
      out.text = os.str();
      return out;
    }
    po::store(parse_env(all, environ_vars), vm);
    po::notify(vm);
    command->configure(vm);
  } catch (const po::error& e) {
    out.text = prefix + e.what() + hint;
    return out;
  } catch (const ConfigError& e) {
    out.text = prefix + e.what() + hint;
    return out;
  }
  out.kind = ParseOutcome::Kind::kRun;
  return out;
}

}  // namespace commprof
