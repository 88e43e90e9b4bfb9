// Option parsing and help formatting for the `collage` subcommands.
#include "cli_args.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdio>

#include "core/str_cat.h"

namespace collage::cli {
namespace {

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Two-column help lines; continuation lines of a help text (after '\n') stay in the right column.
void append_rows(std::string& out, const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t width = 0;
  for (const auto& [left, right] : rows) width = std::max(width, left.size());
  width = std::min<size_t>(width, 26) + 2;
  for (const auto& [left, right] : rows) {
    std::string first = "  " + left;
    if (left.size() + 2 > width) {
      out += first + '\n';
      first.clear();
    }
    size_t start = 0;
    for (;;) {
      const size_t nl = right.find('\n', start);
      first.resize(width + 2, ' ');
      out += first + right.substr(start, nl - start) + '\n';
      if (nl == std::string::npos) break;
      start = nl + 1;
      first.clear();
    }
  }
}

}  // namespace

void ArgParser::add(Option o) {
  // Two options of one name would leave the second unreachable: a bug of the command, not input.
  assert(!find(o.name) && "option declared twice");
  options_.push_back(std::move(o));
}

void ArgParser::positional(std::string_view name, std::string_view help, std::string* out) {
  positionals_.push_back({std::string(name), std::string(help), out});
}

void ArgParser::flag(std::string_view name, std::string_view help, bool* out) {
  add({std::string(name), "", std::string(help), Kind::flag, out});
}

void ArgParser::option(std::string_view name, std::string_view metavar, std::string_view help,
                       std::string* out) {
  add({std::string(name), std::string(metavar), std::string(help), Kind::text, out});
}

void ArgParser::option(std::string_view name, std::string_view metavar, std::string_view help,
                       int64_t* out, int64_t min) {
  add(
      {std::string(name), std::string(metavar), std::string(help), Kind::integer, out, min});
}

void ArgParser::repeated(std::string_view name, std::string_view metavar, std::string_view help,
                         std::vector<std::string>* out) {
  add(
      {std::string(name), std::string(metavar), std::string(help), Kind::repeated, out});
}

const ArgParser::Option* ArgParser::find(std::string_view name) const {
  for (const Option& o : options_)
    if (o.name == name) return &o;
  return nullptr;
}

std::optional<std::string> ArgParser::store(const Option& o, std::string_view value) {
  switch (o.kind) {
    case Kind::flag:
      *static_cast<bool*>(o.out) = true;
      break;
    case Kind::text:
      *static_cast<std::string*>(o.out) = std::string(value);
      break;
    case Kind::repeated:
      static_cast<std::vector<std::string>*>(o.out)->emplace_back(value);
      break;
    case Kind::integer: {
      std::optional<int64_t> v = parse_int(value);
      if (!v) return str_cat(o.name, " expects an integer, got '", value, "'");
      if (*v < o.min) return str_cat(o.name, " must be at least ", o.min, ", got ", *v);
      *static_cast<int64_t*>(o.out) = *v;
      break;
    }
  }
  return std::nullopt;
}

int ArgParser::usage_error(std::string_view message) const {
  std::fprintf(stderr, "collage %s: %s\n%s\nRun 'collage %s --help' for the options.\n",
               command_.c_str(), std::string(message).c_str(), usage().c_str(), command_.c_str());
  return kExitUsage;
}

std::optional<int> ArgParser::parse(std::span<const std::string> args) {
  size_t next_positional = 0;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (!options_done && (a == "-h" || a == "--help")) {
      std::fputs(help().c_str(), stdout);
      return kExitOk;
    }
    if (!options_done && a == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && a.size() > 1 && a[0] == '-') {
      const size_t eq = a.find('=');
      const std::string_view name = a.substr(0, eq);
      const Option* o = find(name);
      if (!o) return usage_error(str_cat("unknown option '", name, "'"));
      std::string_view value;
      if (o->kind == Kind::flag) {
        if (eq != std::string_view::npos) return usage_error(str_cat(name, " takes no value"));
      } else if (eq != std::string_view::npos) {
        value = a.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return usage_error(str_cat(name, " needs a value (", o->metavar, ")"));
      }
      if (std::optional<std::string> err = store(*o, value)) return usage_error(*err);
      continue;
    }
    if (next_positional == positionals_.size())
      return usage_error(str_cat("unexpected argument '", a, "'"));
    *positionals_[next_positional++].out = std::string(a);
  }
  if (next_positional < positionals_.size())
    return usage_error(str_cat("missing ", positionals_[next_positional].name));
  for (const auto& check : checks_)
    if (std::optional<std::string> err = check()) return usage_error(*err);
  return std::nullopt;
}

std::string ArgParser::usage() const {
  std::string s = str_cat("usage: collage ", command_);
  for (const Positional& p : positionals_) s += " " + p.name;
  if (!options_.empty()) s += " [options]";
  return s;
}

std::string ArgParser::help() const {
  std::string s = usage() + "\n\n" + description_ + "\n";
  if (!positionals_.empty()) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const Positional& p : positionals_) rows.emplace_back(p.name, p.help);
    s += "\narguments:\n";
    append_rows(s, rows);
  }
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Option& o : options_)
    rows.emplace_back(o.metavar.empty() ? o.name : o.name + " " + o.metavar, o.help);
  rows.emplace_back("-h, --help", "show this help");
  s += "\noptions:\n";
  append_rows(s, rows);
  if (!epilog_.empty()) s += "\n" + epilog_ + "\n";
  return s;
}

absl::StatusOr<std::pair<std::string, Shape>> parse_input_shape(std::string_view spec,
                                                                ShapeRange* range) {
  const size_t eq = spec.rfind('=');
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(str_cat("bad --input-shape '", spec, "': ", why,
                                              " (expected NAME=DIMS, e.g. ", "input=1x3x224x224)"));
  };
  if (eq == std::string_view::npos) return bad("no '='");
  if (eq == 0) return bad("empty input name");
  std::string_view dims = spec.substr(eq + 1);
  Shape shape;
  if (range) *range = ShapeRange{};
  if (!dims.empty() && dims != "scalar") {
    size_t start = 0;
    for (;;) {
      const size_t x = dims.find('x', start);
      const std::string_view dim = dims.substr(start, x - start);
      if (const size_t dots = dim.find(".."); dots != std::string_view::npos) {
        if (!range)
          return bad(str_cat("a range of sizes ('", dim, "') is only for `collage compile`, "
                             "which compiles the batch range into one artifact"));
        std::optional<int64_t> lo = parse_int(dim.substr(0, dots));
        std::optional<int64_t> hi = parse_int(dim.substr(dots + 2));
        if (!lo || !hi || *lo < 1 || *hi <= *lo)
          return bad(str_cat("'", dim, "' is not a range MIN..MAX with 1 <= MIN < MAX"));
        if (range->axis >= 0) return bad("more than one dimension is a range");
        *range = ShapeRange{static_cast<int>(shape.size()), *lo, *hi};
        shape.push_back(*hi);
      } else {
        std::optional<int64_t> d = parse_int(dim);
        if (!d || *d < 0) return bad(str_cat("'", dim, "' is not a dimension >= 0"));
        shape.push_back(*d);
      }
      if (x == std::string_view::npos) break;
      start = x + 1;
    }
  }
  return std::make_pair(std::string(spec.substr(0, eq)), std::move(shape));
}

absl::StatusOr<std::map<std::string, Shape>> parse_input_shapes(
    const std::vector<std::string>& specs, std::map<std::string, ShapeRange>* ranges) {
  std::map<std::string, Shape> shapes;
  for (const std::string& spec : specs) {
    ShapeRange range;
    auto parsed = parse_input_shape(spec, ranges ? &range : nullptr);
    if (!parsed.ok()) return parsed.status();
    if (range.axis >= 0) (*ranges)[parsed->first] = range;
    if (!shapes.insert(*std::move(parsed)).second)
      return absl::InvalidArgumentError(
          str_cat("--input-shape given twice for input '", spec.substr(0, spec.rfind('=')), "'"));
  }
  return shapes;
}

}  // namespace collage::cli
