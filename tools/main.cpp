// The `collage` command line: subcommand dispatch, top-level usage and version.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli_args.h"
#include "openmp_wait.h"

namespace collage::cli {

// The subcommands, one per cmd_<name>.cpp; add a command by adding its file and a line to each
// of the two lists below.
extern const Command kInfoCommand;
extern const Command kRunCommand;
extern const Command kCompileCommand;
extern const Command kExplainCommand;
extern const Command kCostDbCommand;
extern const Command kTuneCommand;
constexpr const Command* kCommands[] = {&kInfoCommand,    &kRunCommand,    &kCompileCommand,
                                        &kExplainCommand, &kCostDbCommand, &kTuneCommand};

namespace {

const Command* find_command(std::string_view name) {
  for (const Command* c : kCommands)
    if (c->name == name) return c;
  return nullptr;
}

std::string usage() {
  std::string s =
      "usage: collage <command> [arguments] [options]\n"
      "       collage help [<command>]\n"
      "       collage --version\n"
      "\n"
      "collage is a deep-learning compiler that places each part of a model on the backend\n"
      "that runs it fastest.\n"
      "\n"
      "commands:\n";
  size_t width = 4;
  for (const Command* c : kCommands) width = std::max(width, c->name.size());
  auto row = [&](std::string_view name, std::string_view summary) {
    s += "  " + std::string(name) + std::string(width + 2 - name.size(), ' ') +
         std::string(summary) + "\n";
  };
  for (const Command* c : kCommands) row(c->name, c->summary);
  row("help", "show this help, or the help of a command");
  s += "\nRun 'collage <command> --help' for the arguments and options of a command.\n";
  return s;
}

int main_impl(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(usage().c_str(), stderr);
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--version" || first == "-V") {
    std::printf("collage %s\n", COLLAGE_VERSION);
    return kExitOk;
  }
  if (first == "help" || first == "--help" || first == "-h") {
    if (args.size() > 1) {
      if (const Command* c = find_command(args[1])) {
        const std::vector<std::string> help_flag = {"--help"};
        return c->run(help_flag);
      }
      std::fprintf(stderr, "collage: unknown command '%s'\n\n%s", args[1].c_str(), usage().c_str());
      return kExitUsage;
    }
    std::fputs(usage().c_str(), stdout);
    return kExitOk;
  }
  if (const Command* c = find_command(first))
    return c->run(std::span<const std::string>(args).subspan(1));
  std::fprintf(stderr, "collage: unknown %s '%s'\n\n%s",
               first.starts_with("-") ? "option" : "command", first.c_str(), usage().c_str());
  return kExitUsage;
}

}  // namespace
}  // namespace collage::cli

int main(int argc, char** argv) {
  // Before anything runs: oneDNN's OpenMP threads must not spin on the cores our thread pool needs.
  collage::cli::use_passive_openmp_wait(argv);
  // Errors are statuses; an exception reaching here is a bug, reported rather than aborting.
  try {
    return collage::cli::main_impl(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collage: internal error: %s\n", e.what());
    return collage::cli::kExitFailure;
  }
}
