// Command-line parsing for the `collage` tool: the subcommand record, a declarative option parser
// shared by every subcommand, and parsers for option values such as --input-shape.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/tensor.h"

namespace collage::cli {

// Exit codes: success, a failure while doing the work (bad model, bad inputs), a usage error.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// One subcommand, `collage <name> ...`. `run` receives the arguments after the name and returns
// the exit code. Each subcommand lives in its own cmd_<name>.cpp and is listed in main.cpp.
struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `collage help`
  int (*run)(std::span<const std::string> args);
};

// The options and positional arguments of one subcommand. Options are written `--name value` or
// `--name=value`; `--` ends the options; `-h`/`--help` prints the help. The parser does not own
// the variables it fills; they must outlive parse().
class ArgParser {
 public:
  ArgParser(std::string_view command, std::string_view description)
      : command_(command), description_(description) {}

  // A required positional argument.
  void positional(std::string_view name, std::string_view help, std::string* out);
  // `--name` sets *out to true.
  void flag(std::string_view name, std::string_view help, bool* out);
  // `--name VALUE`.
  void option(std::string_view name, std::string_view metavar, std::string_view help,
              std::string* out);
  // `--name N` with an integer N >= min.
  void option(std::string_view name, std::string_view metavar, std::string_view help, int64_t* out,
              int64_t min);
  // `--name VALUE`, any number of times, appended in order.
  void repeated(std::string_view name, std::string_view metavar, std::string_view help,
                std::vector<std::string>* out);
  // A paragraph printed at the end of the help.
  void epilog(std::string_view text) { epilog_ = text; }
  // A check run after a successful parse, in the order added; a message it returns is reported
  // as a usage error (e.g. an option value that does not parse).
  void check(std::function<std::optional<std::string>()> fn) { checks_.push_back(std::move(fn)); }

  // Parses `args`. Returns nullopt when the command should go on; otherwise the exit code to
  // return at once: kExitOk after printing the help to stdout, kExitUsage after printing the
  // error and the usage line to stderr.
  std::optional<int> parse(std::span<const std::string> args);

  // "usage: collage run MODEL [options]" and the full help text.
  std::string usage() const;
  std::string help() const;
  // Prints "collage <command>: <message>", the usage line and a pointer to --help to stderr;
  // returns kExitUsage.
  int usage_error(std::string_view message) const;

 private:
  enum class Kind { flag, text, integer, repeated };
  struct Option {
    std::string name, metavar, help;
    Kind kind;
    void* out;
    int64_t min = 0;
  };
  struct Positional {
    std::string name, help;
    std::string* out;
  };
  void add(Option o);
  const Option* find(std::string_view name) const;
  std::optional<std::string> store(const Option& o, std::string_view value);

  std::string command_, description_, epilog_;
  std::vector<Option> options_;
  std::vector<Positional> positionals_;
  std::vector<std::function<std::optional<std::string>()>> checks_;
};

// A dimension of an --input-shape given as a range of sizes, "1..32": the batch of a
// dynamic-batch artifact (`collage compile`).
struct ShapeRange {
  int axis = -1;
  int64_t min = 0, max = 0;
};

// Parses "NAME=DIMS" where DIMS is "1x3x224x224" (dimensions >= 0 separated by 'x'); "NAME=" or
// "NAME=scalar" is a rank-0 shape. The last '=' splits, so names may contain '='. With `range`,
// one dimension may be "MIN..MAX" (1 <= MIN < MAX): the shape gets MAX there and `range` the
// axis and bounds (axis -1 when there is none). Errors are InvalidArgument naming the spec.
absl::StatusOr<std::pair<std::string, Shape>> parse_input_shape(std::string_view spec,
                                                                ShapeRange* range = nullptr);
// Parses every spec; a name given twice is an error. With `ranges`, dimension ranges are
// allowed and stored by input name.
absl::StatusOr<std::map<std::string, Shape>> parse_input_shapes(
    const std::vector<std::string>& specs, std::map<std::string, ShapeRange>* ranges = nullptr);

}  // namespace collage::cli
