// The cost database: record lines, torn and corrupt lines, concurrent appends from threads and
// processes, prune and merge; the device fingerprint.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "placement/cost_database.h"
#include "placement/device.h"

using namespace collage;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path d =
      fs::temp_directory_path() / ("collage-costdb-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

CostRecord record(uint64_t hash, double ms, int64_t time = 100, std::string device = "cpu") {
  CostRecord r;
  r.key = {std::move(device), "dnnl", "onednn-3/1", hash};
  r.signature = "in f32[4];Relu(i0,){}->f32[4],;out v0";
  r.ms = ms;
  r.samples = 9;
  r.spread = 0.04;
  r.timestamp = time;
  return r;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The median of `key`'s record, or -1 when there is none.
double ms_of(const CostDatabase& db, const CostKey& key) {
  auto r = db.lookup(key);
  return r ? r->ms : -1;
}

size_t count_lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("cost records round-trip through one line", "[cost-db]") {
  CostRecord r = record(0x0123456789abcdefull, 0.25);
  const std::string line = cost_record_to_line(r);
  CHECK(line.find('\n') == std::string::npos);
  CHECK_THAT(line, Catch::Contains("\"hash\":\"0123456789abcdef\""));
  auto back = cost_record_from_line(line);
  REQUIRE(back.ok());
  CHECK(back->key == r.key);
  CHECK(back->signature == r.signature);
  CHECK(back->ms == 0.25);
  CHECK(back->samples == 9);
  CHECK(back->spread == 0.04);
  CHECK(back->timestamp == 100);
  CHECK(back->measurements == 1);
  std::string older = line;  // records written before "measurements" existed
  older.erase(older.find(",\"measurements\":1"), std::string(",\"measurements\":1").size());
  REQUIRE(cost_record_from_line(older).ok());
  CHECK(cost_record_from_line(older)->measurements == 1);
  CHECK(back->build_ms == -1);  // not known: not written
  CHECK(line.find("build_ms") == std::string::npos);
  r.build_ms = 812.5;
  auto built = cost_record_from_line(cost_record_to_line(r));
  REQUIRE(built.ok());
  CHECK(built->build_ms == 812.5);
  std::string negative = cost_record_to_line(r);
  negative.replace(negative.find("812.5"), 5, "-3");
  CHECK_THAT(std::string(cost_record_from_line(negative).status().message()),
             Catch::Contains("\"build_ms\" is not a number >= 0"));

  CHECK_THAT(std::string(cost_record_from_line("{\"device\":1}").status().message()),
             Catch::Contains("\"device\" has the wrong type"));
  CHECK_THAT(std::string(cost_record_from_line("[1,2]").status().message()),
             Catch::Contains("not a JSON object"));
  std::string bad_hash = line;
  bad_hash.replace(bad_hash.find("0123456789abcdef"), 16, "0123456789ABCDEF");
  CHECK_THAT(std::string(cost_record_from_line(bad_hash).status().message()),
             Catch::Contains("16 lowercase hex digits"));
}

TEST_CASE("a missing database is empty; appends create it and are read back", "[cost-db]") {
  fs::path dir = temp_dir("basic");
  const std::string path = (dir / "sub" / "cost-db.jsonl").string();
  auto db = CostDatabase::open(path);
  REQUIRE(db.ok());
  CHECK(db->size() == 0);
  REQUIRE(db->append(record(1, 0.5)).ok());
  REQUIRE(db->append(record(2, 0.7)).ok());
  REQUIRE(db->append(record(1, 0.4, /*time=*/200)).ok());  // newer record for key 1
  CHECK(ms_of(*db, record(1, 0).key) == 0.4);

  auto again = CostDatabase::open(path);
  REQUIRE(again.ok());
  CHECK(again->size() == 2);
  CHECK(again->lines_read() == 3);
  CHECK(ms_of(*again, record(1, 0).key) == 0.4);
  CHECK(ms_of(*again, record(2, 0).key) == 0.7);
  CHECK_FALSE(again->lookup(record(3, 0).key));
  CHECK_FALSE(again->lookup(record(2, 0, 0, "other-device").key));
  fs::remove_all(dir);
}

TEST_CASE("torn and corrupt lines are skipped with a warning, never fatal", "[cost-db]") {
  fs::path dir = temp_dir("torn");
  const std::string path = (dir / "cost-db.jsonl").string();
  const std::string good1 = cost_record_to_line(record(1, 0.5));
  const std::string good2 = cost_record_to_line(record(2, 0.6));
  {
    std::ofstream out(path);
    out << good1 << "\n"
        << good2.substr(0, good2.size() / 2) << "\n"  // a torn line in the middle
        << "not json at all\n"
        << "\n"
        << good2 << "\n"
        << good1.substr(0, 30);  // a crashed writer's last line, no newline
  }
  auto db = CostDatabase::open(path);
  REQUIRE(db.ok());
  CHECK(db->size() == 2);
  REQUIRE(db->warnings().size() == 3);
  CHECK_THAT(db->warnings()[0], Catch::Contains("cost-db.jsonl:2: skipped a corrupt record"));
  CHECK_THAT(db->warnings()[1], Catch::Contains(":3:"));
  CHECK_THAT(db->warnings()[2], Catch::Contains(":6:"));

  // An append after the torn tail starts a new line, so the new record stays whole.
  REQUIRE(db->append(record(3, 0.9)).ok());
  auto again = CostDatabase::open(path);
  REQUIRE(again.ok());
  CHECK(ms_of(*again, record(3, 0).key) == 0.9);
  CHECK(again->warnings().size() == 3);
  fs::remove_all(dir);
}

TEST_CASE("concurrent appends from threads and processes keep every line whole", "[cost-db]") {
  fs::path dir = temp_dir("concurrent");
  const std::string path = (dir / "cost-db.jsonl").string();
  constexpr int kWriters = 4, kRecords = 150;
  // Two processes, forked before the threads start (a child forked while a thread holds the lock
  // would inherit the locked open file description), writing while the threads write.
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      auto db = CostDatabase::open(path);
      bool ok = db.ok();
      for (int i = 0; i < kRecords && ok; ++i)
        ok = db->append(record(uint64_t(100 + p) << 32 | uint64_t(i), i)).ok();
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      auto db = CostDatabase::open(path);  // each thread its own open file description
      for (int i = 0; i < kRecords; ++i)
        (void)db->append(record(uint64_t(w) << 32 | uint64_t(i), i));
    });
  for (auto& t : threads) t.join();
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto db = CostDatabase::open(path);
  REQUIRE(db.ok());
  CHECK(db->warnings().empty());
  CHECK(db->size() == (kWriters + 2) * kRecords);
  CHECK(count_lines(read_text(path)) == (kWriters + 2) * kRecords);
  fs::remove_all(dir);
}

TEST_CASE("prune keeps the newest record per key; merge adds what is newer", "[cost-db]") {
  fs::path dir = temp_dir("prune");
  const std::string path = (dir / "a.jsonl").string(), other = (dir / "b.jsonl").string();
  {
    auto db = CostDatabase::open(path);
    REQUIRE(db->append(record(1, 0.5, 100)).ok());
    REQUIRE(db->append(record(1, 0.4, 300)).ok());
    REQUIRE(db->append(record(2, 0.6, 100, "old-machine")).ok());
    REQUIRE(db->append(record(3, 0.8, 50)).ok());
  }
  std::ofstream(path, std::ios::app) << "garbage\n";
  PruneOptions options;
  options.keep_device = "cpu";
  options.older_than_s = 200;
  options.now = 400;
  auto stats = prune_cost_database(path, options);
  REQUIRE(stats.ok());
  CHECK(stats->lines_before == 5);
  CHECK(stats->corrupt_dropped == 1);
  CHECK(stats->records_after == 1);  // key 1 (newest); key 2 other device; key 3 too old
  auto db = CostDatabase::open(path);
  CHECK(db->size() == 1);
  CHECK(ms_of(*db, record(1, 0).key) == 0.4);
  CHECK(count_lines(read_text(path)) == 1);

  {
    auto o = CostDatabase::open(other);
    REQUIRE(o->append(record(1, 0.9, 250)).ok());  // older than ours: not merged
    REQUIRE(o->append(record(4, 0.3, 500)).ok());
  }
  auto added = merge_cost_database(path, other);
  REQUIRE(added.ok());
  CHECK(*added == 1);
  CHECK(*merge_cost_database(path, other) == 0);
  auto merged = CostDatabase::open(path);
  CHECK(merged->size() == 2);
  CHECK(ms_of(*merged, record(1, 0).key) == 0.4);
  CHECK(ms_of(*merged, record(4, 0).key) == 0.3);
  CHECK(merge_cost_database(path, (dir / "missing.jsonl").string()).status().code() ==
        absl::StatusCode::kNotFound);
  fs::remove_all(dir);
}

TEST_CASE("device fingerprint: model name, cores, speed-relevant ISA flags", "[cost-db]") {
  const std::string cpuinfo =
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 avx512f avx512bw "
      "avx512_vnni amx_tile amx_bf16 hypervisor\n\nprocessor\t: 1\nmodel name\t: other\n";
  CHECK(device_fingerprint_from_cpuinfo(cpuinfo, 16) ==
        "Intel(R) Xeon(R) Platinum 8480+|16 cores|amx_bf16,amx_tile,avx,avx2,avx512_vnni,avx512bw,"
        "avx512f,f16c,fma,sse4_1,sse4_2");
  CHECK(device_fingerprint_from_cpuinfo("", 2) == "?|2 cores|");
}
