// `collage cost-db stats|prune|merge`: inspects and maintains the cost database.
#include <cstdio>
#include <ctime>
#include <map>

#include "absl/strings/str_format.h"
#include "cli_common.h"
#include "collage/placement.h"
#include "core/str_cat.h"
#include "placement/cost_database.h"
#include "placement_cli.h"

namespace collage::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: collage cost-db stats [--cost-db PATH]\n"
    "       collage cost-db prune [--cost-db PATH] [--all-devices] [--older-than DAYS]\n"
    "       collage cost-db merge FILE [--cost-db PATH]\n";

constexpr std::string_view kHelp =
    "\nInspect and maintain the cost database (JSON lines: one measured kernel per line, keyed by\n"
    "device, backend, backend version and the canonical signature of the group).\n"
    "\n"
    "  stats   records, devices, backends, corrupt lines\n"
    "  prune   rewrite the file with one record per key (the newest), keeping only this\n"
    "          machine's records unless --all-devices, and none older than --older-than DAYS\n"
    "  merge   append the records of FILE that are newer than this database's\n"
    "\n"
    "The default database is $XDG_CACHE_HOME/collage/cost-db.jsonl, else\n"
    "~/.cache/collage/cost-db.jsonl. Run 'collage cost-db ACTION --help' for an action's "
    "options.\n";

std::string date_of(int64_t t) {
  char buf[32];
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string resolve(const std::string& path) {
  return path.empty() ? default_cost_db_path() : path;
}

int stats(std::span<const std::string> args) {
  ArgParser parser("cost-db stats", "Summarise the cost database.");
  std::string path;
  parser.option("--cost-db", "PATH", "the database (default: the user cache)", &path);
  if (std::optional<int> exit = parser.parse(args)) return *exit;
  path = resolve(path);
  auto db = CostDatabase::open(path);
  if (!db.ok()) return report_failure("cost-db", db.status());
  auto device = device_fingerprint();
  std::map<std::string, std::map<std::string, size_t>> counts;  // device -> backend -> records
  int64_t oldest = 0, newest = 0;
  for (const auto& [key, r] : db->records()) {
    ++counts[key.device][key.backend];
    oldest = oldest ? std::min(oldest, r.timestamp) : r.timestamp;
    newest = std::max(newest, r.timestamp);
  }
  std::string out = absl::StrFormat("%s: %d records in %d lines, %d corrupt lines skipped\n", path,
                                    db->size(), db->lines_read(), db->warnings().size());
  if (db->size())
    out += absl::StrFormat("  measured between %s and %s UTC\n", date_of(oldest), date_of(newest));
  TextTable t({false, false, true});
  for (const auto& [dev, backends] : counts)
    for (const auto& [backend, n] : backends)
      t.add({device.ok() && dev == *device ? "this machine" : dev, backend, std::to_string(n)});
  out += t.render(2);
  if (device.ok()) out += "this machine: " + *device + "\n";
  for (const std::string& w : db->warnings()) out += "warning: " + w + "\n";
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int prune(std::span<const std::string> args) {
  ArgParser parser("cost-db prune",
                   "Rewrite the cost database with one record per key (the newest).");
  std::string path;
  bool all_devices = false;
  int64_t days = -1;
  parser.option("--cost-db", "PATH", "the database (default: the user cache)", &path);
  parser.flag("--all-devices", "keep the records of other machines too", &all_devices);
  parser.option("--older-than", "DAYS", "drop records measured more than DAYS days ago", &days, 0);
  if (std::optional<int> exit = parser.parse(args)) return *exit;
  path = resolve(path);
  PruneOptions options;
  if (!all_devices) {
    auto device = device_fingerprint();
    if (!device.ok()) return report_failure("cost-db", device.status());
    options.keep_device = *device;
  }
  options.older_than_s = days >= 0 ? days * 86400 : -1;
  options.now = static_cast<int64_t>(std::time(nullptr));
  auto s = prune_cost_database(path, options);
  if (!s.ok()) return report_failure("cost-db", s.status());
  std::printf("%s: %zu lines -> %zu records (%zu corrupt lines dropped)\n", path.c_str(),
              s->lines_before, s->records_after, s->corrupt_dropped);
  return kExitOk;
}

int merge(std::span<const std::string> args) {
  ArgParser parser("cost-db merge", "Append another cost database's newer records to this one.");
  std::string path, other;
  parser.positional("FILE", "the database to merge in", &other);
  parser.option("--cost-db", "PATH", "the database merged into (default: the user cache)", &path);
  if (std::optional<int> exit = parser.parse(args)) return *exit;
  path = resolve(path);
  auto added = merge_cost_database(path, other);
  if (!added.ok()) return report_failure("cost-db", added.status());
  std::printf("%s: %zu records merged from %s\n", path.c_str(), *added, other.c_str());
  return kExitOk;
}

int run_cost_db(std::span<const std::string> args) {
  if (args.empty()) {
    std::fprintf(stderr, "collage cost-db: missing action\n%s", std::string(kUsage).c_str());
    return kExitUsage;
  }
  const std::string& action = args[0];
  if (action == "-h" || action == "--help") {
    std::printf("%s%s", std::string(kUsage).c_str(), std::string(kHelp).c_str());
    return kExitOk;
  }
  if (action == "stats") return stats(args.subspan(1));
  if (action == "prune") return prune(args.subspan(1));
  if (action == "merge") return merge(args.subspan(1));
  std::fprintf(stderr, "collage cost-db: unknown action '%s'\n%s", action.c_str(),
               std::string(kUsage).c_str());
  return kExitUsage;
}

}  // namespace

extern const Command kCostDbCommand;
const Command kCostDbCommand{"cost-db", "inspect, prune or merge the cost database", run_cost_db};

}  // namespace collage::cli
