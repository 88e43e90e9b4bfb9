// The tuning log (JSON-lines round trip, corrupt and torn lines skipped, best record per
// signature and device), the search (deterministic for a seed with a fake timer, finds the best
// configuration) and reuse of tuned knobs by the schedule.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "collage/ops/nn.h"
#include "common/test_util.h"
#include "group_util.h"
#include "te_ops/conv_dense_common.h"
#include "te_ops/conv_dense_templates.h"
#include "tune/tuner.h"
#include "collage/tuning_log.h"

namespace collage::testing {
namespace {

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "collage_tune_test";
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

tune::TuningRecord record(std::string device, std::string sig, int64_t mr, double ms) {
  return {std::move(device), std::move(sig), {{"mb", 64}, {"mr", mr}}, ms, 1.0 / ms};
}

// A template over three knobs whose fake time is a deterministic function of the knobs, minimal
// at a=3, b=16, c=1.
tune::ScheduleTemplate fake_template() {
  tune::ScheduleTemplate t;
  t.signature = "Fake|x=f32[4]";
  t.space.add("a", {1, 2, 3, 4, 5, 6});
  t.space.add("b", {4, 8, 16, 32});
  t.space.add("c", {0, 1, 2});
  t.defaults = {{"a", 1}, {"b", 4}, {"c", 0}};
  return t;
}

double fake_ms(const tune::Knobs& k) {
  const double a = static_cast<double>(k.at("a")) - 3, b = static_cast<double>(k.at("b")) - 16,
               c = static_cast<double>(k.at("c")) - 1;
  return 1.0 + a * a + b * b / 16 + c * c * 2;
}

}  // namespace

TEST_CASE("tuning records round-trip through JSON lines", "[tune][log]") {
  tune::TuningRecord r = record("cpu|2 cores|avx512f", "MatMul|a=f32[4,8]|b=f32[8,16]", 8, 0.25);
  absl::StatusOr<tune::TuningRecord> back = tune::record_from_json(tune::record_to_json(r));
  REQUIRE(back.ok());
  CHECK(back->device == r.device);
  CHECK(back->signature == r.signature);
  CHECK(back->knobs == r.knobs);
  CHECK(back->ms == r.ms);
  CHECK(back->gflops == r.gflops);
}

TEST_CASE("tuning log keeps the fastest record per signature of its device and skips corrupt "
          "lines",
          "[tune][log]") {
  const std::string path = temp_path("log.jsonl");
  REQUIRE(tune::append_record(path, record("dev", "sig1", 4, 2.0)).ok());
  REQUIRE(tune::append_record(path, record("dev", "sig1", 8, 1.0)).ok());
  REQUIRE(tune::append_record(path, record("dev", "sig1", 6, 1.5)).ok());
  REQUIRE(tune::append_record(path, record("other", "sig1", 12, 0.1)).ok());
  REQUIRE(tune::append_record(path, record("dev", "sig2", 2, 3.0)).ok());
  {
    std::ofstream out(path, std::ios::app);
    out << "not json at all\n";
    out << "{\"device\":\"dev\",\"signature\":\"sig3\",\"knobs\":{\"mr\":\"x\"},\"ms\":1}\n";
    out << "{\"device\":\"dev\",\"signature\":\"sig3\",\"knobs\":{},\"ms\":-1}\n";
    out << "{\"device\":\"dev\",\"signature\":\"sig4\",\"kno";  // torn last line
  }
  std::vector<std::string> warnings;
  absl::StatusOr<tune::TuningLog> log = tune::TuningLog::load(path, "dev", &warnings);
  REQUIRE(log.ok());
  CHECK(warnings.size() == 4);
  CHECK_THAT(warnings[0], Catch::Contains("line 6") && Catch::Contains("not valid JSON"));
  CHECK_THAT(warnings[1], Catch::Contains("knob 'mr'"));
  CHECK(log->size() == 2);
  REQUIRE(log->find("sig1"));
  CHECK(log->find("sig1")->at("mr") == 8);
  CHECK(log->find("sig2")->at("mr") == 2);
  CHECK(log->find("sig3") == nullptr);
  CHECK(log->find("sig4") == nullptr);
  // A log that does not exist yet is empty.
  absl::StatusOr<tune::TuningLog> none = tune::TuningLog::load(temp_path("none.jsonl"), "dev", nullptr);
  REQUIRE(none.ok());
  CHECK(none->size() == 0);
}

TEST_CASE("search is deterministic for a seed and finds the fastest configuration",
          "[tune][search]") {
  tune::ScheduleTemplate t = fake_template();
  std::vector<std::string> order1, order2, order3;
  auto measure_into = [](std::vector<std::string>& order) {
    return [&order](const tune::Knobs& k) -> absl::StatusOr<double> {
      order.push_back(tune::to_string(k));
      return fake_ms(k);
    };
  };
  tune::SearchOptions o;
  o.budget_s = 1e9;
  o.max_trials = 40;
  o.seed = 5;
  tune::SearchResult r1 = tune::search(t, measure_into(order1), o);
  tune::SearchResult r2 = tune::search(t, measure_into(order2), o);
  o.seed = 6;
  tune::search(t, measure_into(order3), o);
  CHECK(order1 == order2);
  CHECK(order1 != order3);
  CHECK(order1.front() == tune::to_string(t.defaults));
  CHECK(r1.trials == 40);
  CHECK(r1.best == r2.best);
  CHECK(r1.default_ms == fake_ms(t.defaults));
  // No configuration is measured twice, and the best is the minimum of those measured.
  std::set<std::string> unique(order1.begin(), order1.end());
  CHECK(unique.size() == order1.size());
  double min_ms = 1e30;
  for (const auto& a : t.space.knobs[0].second)
    for (const auto& b : t.space.knobs[1].second)
      for (const auto& c : t.space.knobs[2].second) {
        tune::Knobs k{{"a", a}, {"b", b}, {"c", c}};
        if (unique.count(tune::to_string(k))) min_ms = std::min(min_ms, fake_ms(k));
      }
  CHECK(r1.best_ms == min_ms);
  // With a budget of the whole space the optimum is found.
  o.max_trials = 1000;
  tune::SearchResult all = tune::search(t, [](const tune::Knobs& k) { return fake_ms(k); }, o);
  CHECK(all.trials == 72);
  CHECK(all.best_ms == 1.0);
}

TEST_CASE("failed configurations are counted and skipped", "[tune][search]") {
  tune::ScheduleTemplate t = fake_template();
  tune::SearchOptions o;
  o.max_trials = 20;
  tune::SearchResult r = tune::search(
      t,
      [](const tune::Knobs& k) -> absl::StatusOr<double> {
        if (k.at("c") == 2) return absl::InvalidArgumentError("refused");
        return fake_ms(k);
      },
      o);
  CHECK(r.failed > 0);
  CHECK(r.best.at("c") != 2);
}

TEST_CASE("the schedule uses the tuned knobs of its signature", "[tune][reuse]") {
  GroupCase c;
  c.op = "MatMul";
  c.inputs = {random_f32({20, 24}, 1), random_f32({24, 40}, 2)};
  c.constant = {false, true};
  c.chain = Chain::relu;
  BuiltGroup b = build_group(c);
  absl::StatusOr<tune::ScheduleTemplate> t = te_ops::anchor_schedule_template(b.group);
  REQUIRE(t.ok());
  CHECK_THAT(t->signature, Catch::Contains("MatMul|a=f32[20,24]|b=f32[24,40]|bconst=1"));
  tune::TuningLog log("dev");
  log.add({"dev", t->signature, {{"mr", 2}, {"mb", 8}, {"ku", 4}}, 0.5, 1});
  b.group.tuning = &log;
  tune::Knobs k = te_ops::detail::knobs_for(b.group, *t);
  CHECK(k.at("mr") == 2);
  CHECK(k.at("ku") == 4);
  absl::StatusOr<te_ops::ScheduledGroup> tuned = b.def->schedule(b.group);
  REQUIRE(tuned.ok());
  b.group.tuning = nullptr;
  absl::StatusOr<te_ops::ScheduledGroup> plain = b.def->schedule(b.group);
  REQUIRE(plain.ok());
  CHECK(tuned->schedule.to_string() != plain->schedule.to_string());
  CHECK(run_and_compare(b, *tuned) < 1e-5);
}

TEST_CASE("the JIT measurer times a real configuration", "[tune][measure]") {
  GroupCase c;
  c.op = "MatMul";
  c.inputs = {random_f32({16, 32}, 1), random_f32({32, 32}, 2)};
  c.constant = {false, true};
  BuiltGroup b = build_group(c, 1);
  absl::StatusOr<tune::ScheduleTemplate> t = te_ops::anchor_schedule_template(b.group);
  REQUIRE(t.ok());
  tune::MeasureOptions mo;
  mo.min_time_ms = 1;
  tune::MeasureFn m = tune::jit_measurer(b.group, *t, nullptr, mo);
  absl::StatusOr<double> ms = m(t->defaults);
  REQUIRE(ms.ok());
  CHECK(*ms > 0);
  tune::Knobs bad = t->defaults;
  bad["mr"] = 0;  // clamped to 1: still a valid schedule
  CHECK(m(bad).ok());
}

}  // namespace collage::testing
