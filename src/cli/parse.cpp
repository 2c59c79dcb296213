// SPDX-License-Identifier: MIT
#include "src/cli/parse.hpp"

#include <iostream>
#include <sstream>

#include "src/cli/common_options.hpp"
#include "src/cli/option_values.hpp"
#include "src/cli/output_option.hpp"
#include "src/core/build_config.hpp"
#include "src/core/errors.hpp"
#include "src/runtime/rank_context.hpp"

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
    os << "  " << c->name() << std::string(14 - std::string(c->name()).size(), ' ') << c->summary()
       << '\n';
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

// The value of one parsed option as text, for comparing ranks.
std::string option_text(const boost::any& v) {
  if (const auto* x = boost::any_cast<std::string>(&v)) return *x;
  if (const auto* x = boost::any_cast<int>(&v)) return std::to_string(*x);
  if (const auto* x = boost::any_cast<double>(&v)) return std::to_string(*x);
  if (const auto* x = boost::any_cast<bool>(&v)) return *x ? "true" : "false";
  if (const auto* x = boost::any_cast<std::uint64_t>(&v)) return std::to_string(*x);
  if (const auto* x = boost::any_cast<ByteSize>(&v)) return std::to_string(x->bytes);
  if (const auto* x = boost::any_cast<std::vector<std::string>>(&v)) {
    std::string out;
    for (const auto& item : *x) out += (out.empty() ? "" : ",") + item;
    return out;
  }
  return "<value>";
}

std::string effective_options(const po::variables_map& vm) {
  std::string out;
  for (const auto& [name, value] : vm) {  // std::map: sorted by name
    out += name + "=" + option_text(value.value()) + "\n";
  }
  return out;
}

}  // namespace

void agree_on_options(const RankContext& ctx, const std::string& mine) {
  const std::string reference = ctx.broadcast(mine, 0);
  std::string message;
  if (reference != mine) {
    std::istringstream a(reference);
    std::istringstream b(mine);
    std::string la;
    std::string lb;
    while (true) {
      const bool more_a = static_cast<bool>(std::getline(a, la));
      const bool more_b = static_cast<bool>(std::getline(b, lb));
      if (!more_a && !more_b) break;
      if (la == lb) continue;
      const std::string name = (more_a ? la : lb).substr(0, (more_a ? la : lb).find('='));
      const std::string value_a = more_a ? la.substr(la.find('=') + 1) : "(unset)";
      const std::string value_b = more_b && lb.compare(0, name.size() + 1, name + "=") == 0
                                      ? lb.substr(lb.find('=') + 1)
                                      : "(unset)";
      message = "ranks disagree on --" + name + ": rank 0 has '" + value_a + "', rank " +
                std::to_string(ctx.rank()) + " has '" + value_b +
                "' (a COMMPROF_* variable set on some nodes only?)";
      break;
    }
  }
  ctx.agree(message.empty(), message, ErrorScope::kProgram);
}

std::string error_prefix(const Command* command, ErrorScope scope) {
  if (command == nullptr || scope == ErrorScope::kProgram) return "commprof: error: ";
  return std::string("commprof ") + command->name() + ": error: ";
}

int run_on_rank_zero(RankContext& ctx, const Command* command, const std::function<int()>& work) {
  int code = kExitOk;
  if (ctx.rank() == 0) {
    try {
      code = work();
    } catch (const std::exception& e) {
      std::cerr << error_prefix(command) << e.what() << std::endl;
      code = kExitFailure;
    }
  }
  return ctx.broadcast(code, 0);
}

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

namespace {

// A test hook (a hidden option named test-*) given without --enable-test-hooks, or set through
// COMMPROF_TEST_* (a variable left in a user's environment would hang or corrupt a production
// run): ConfigError naming it.
void refuse_unasked_test_hooks(const po::options_description& hooks, const po::variables_map& vm,
                               const char* const* environ_vars) {
  for (const char* const* v = environ_vars; v != nullptr && *v != nullptr; ++v) {
    const std::string entry(*v);
    const std::string variable = entry.substr(0, entry.find('='));
    if (environment_option_name(hooks, variable).rfind("test-", 0) == 0) {
      throw ConfigError(variable +
                        " is a test hook and is never read from the environment: unset it");
    }
  }
  const bool enabled = vm.count("enable-test-hooks") != 0 && vm["enable-test-hooks"].as<bool>();
  for (const auto& option : hooks.options()) {
    const std::string name = option->long_name();
    if (name.rfind("test-", 0) != 0) continue;  // hidden, but no hook (positional inputs)
    if (vm.count(name) != 0 && !vm[name].defaulted() && !enabled) {
      throw ConfigError("--" + name +
                        " is a test hook (it breaks the run on purpose): add "
                        "--enable-test-hooks to use it");
    }
  }
}

// The options of `command` from argv[1..] (argv[1] is its name) and the environment, into `out`:
// its help text, or a configured command and its effective options, or one error line.
void parse_command_options(int argc, const char* const* argv, Command& command,
                           const char* const* environ_vars, ParseOutcome& out) {
  const std::string prefix = error_prefix(&command);
  const std::string hint = std::string(" (try 'commprof ") + command.name() + " --help')";

  po::options_description visible(std::string("commprof ") + command.name() + " options");
  po::options_description hidden("test hooks");
  visible.add_options()("help,h", "this text");
  command.define_options(visible, hidden);
  const OutputSpelling output = add_output_spelling(visible, hidden);
  // The test hooks break a run on purpose (a rank that hangs, data corrupted): they act only
  // with --enable-test-hooks on the command line, never from the environment.
  po::options_description hook_switch;
  hook_switch.add_options()("enable-test-hooks", po::bool_switch(),
                            "let this run's test hooks act");
  po::options_description all;
  all.add(visible).add(hidden).add(hook_switch);
  po::positional_options_description positional;
  command.define_positional(positional);

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
        const std::string word =
            o.original_tokens.empty() ? o.string_key : o.original_tokens.front();
        throw po::error("unexpected argument '" + word + "'");
      }
    }
    po::store(parsed, vm);
    if (vm.count("help") != 0) {
      out.kind = ParseOutcome::Kind::kHelp;
      std::ostringstream os;
      os << "Usage: mpirun -np N commprof " << command.name() << " [options]\n"
         << command.summary() << "\n\n"
         << visible << "\nEvery option can also be set as COMMPROF_<OPTION>; the command "
         << "line wins.\n";
      out.text = os.str();
      return;
    }
    refuse_unasked_test_hooks(hidden, vm, environ_vars);
    po::options_description mirrored;  // every option but the hooks' switch
    mirrored.add(visible).add(hidden);
    po::store(parse_env(mirrored, environ_vars), vm);
    fold_output_spelling(output, vm);
    po::notify(vm);
    command.configure(vm);
    out.effective_options = effective_options(vm);
  } catch (const po::error& e) {
    out.text = prefix + e.what() + hint;
    return;
  } catch (const ConfigError& e) {
    out.text = prefix + e.what() + hint;
    return;
  } catch (const std::exception& e) {
    // A bug, not bad input; still one clean line and exit 2 on every rank, never a crash.
    out.text = prefix + "internal error while reading the options: " + e.what();
    return;
  }
  out.kind = ParseOutcome::Kind::kRun;
}

}  // namespace

ParseOutcome parse_command_line(int argc, const char* const* argv,
                                const std::vector<std::unique_ptr<Command>>& commands,
                                const char* const* environ_vars) {
  ParseOutcome out;
  if (argc < 2) {
    out.text = error_prefix(nullptr) + "no command given (try 'commprof --help')";
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
    out.text = error_prefix(nullptr) + "unknown command '" + first + "' (expected " + names +
               "; try 'commprof --help')";
    return out;
  }
  out.command = command;
  parse_command_options(argc, argv, *command, environ_vars, out);
  return out;
}

}  // namespace commprof
