// The native backend's measured Winograd choice, remembered in BuildOptions::choices: measured
// once, then found by a backend that never measured it, and obeyed whatever it says; which
// builds time one (Backend::build_times_choices).
#include <catch2/catch.hpp>
#include <set>

#include "collage/backends/native.h"
#include "collage/ops/nn.h"
#include "collage/reference.h"
#include "common/backend_check.h"
#include "common/fake_choices.h"
#include "common/test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Conv 3x3, stride 1, pad 1, 16 -> 16 channels on 12 x 12, with a bias: it has a Winograd form.
Graph winograd_conv(TestGraph& t) {
  auto attrs = std::make_shared<ConvAttrs>();
  attrs->pads = {1, 1, 1, 1};
  attrs->strides = {1, 1};
  attrs->dilations = {1, 1};
  ValueId x = t.input({1, 16, 12, 12});
  return t.finish(
      t.op("Conv", {x, t.constant({16, 16, 3, 3}, -0.3f, 0.3f), t.constant({16})}, attrs));
}

std::unique_ptr<Kernel> build(const Graph& g, MeasuredChoices* choices) {
  BuildOptions b;
  b.num_threads = 2;
  b.choices = choices;
  auto k = make_native_backend()->build(g, b);  // a fresh backend: nothing chosen in memory
  INFO(k.status().ToString());
  REQUIRE(k.ok());
  return *std::move(k);
}

// The kernel's one output on `inputs`, every task run on the calling thread.
Tensor run_all_tasks(Kernel& k, const Graph& g, std::vector<Tensor> inputs) {
  Tensor out(g.value(g.outputs()[0]).type.dtype, g.value(g.outputs()[0]).type.shape);
  std::vector<void*> args;
  for (Tensor& in : inputs) args.push_back(in.raw());
  args.push_back(out.raw());
  for (int32_t task = 0; task < k.task_count(); ++task) REQUIRE(k.run_task(args.data(), task).ok());
  return out;
}

}  // namespace

TEST_CASE("native choices: the Winograd choice is measured once and found again",
          "[native][winograd]") {
  TestGraph t;
  const Graph g = winograd_conv(t);
  FakeChoices store;
  const std::unique_ptr<Kernel> first = build(g, &store);
  REQUIRE(store.measured() == 1);
  REQUIRE(store.values.size() == 1);
  const std::string key = store.values.begin()->first;
  INFO(key);
  CHECK(key.starts_with(
      "native-winograd|Conv|x=1x16x12x12|m=16|bias=true|pads=1,1|out=12,12|in=plain|outs=plain,|"));
  const double tile = store.values.begin()->second.at(0);
  CHECK((tile == 0 || tile == 2 || tile == 4));

  const std::unique_ptr<Kernel> second = build(g, &store);
  CHECK(store.measured() == 1);  // nothing timed
  CHECK(store.reused() == 1);
  CHECK(second->record().entry == first->record().entry);
}

TEST_CASE("native choices: a remembered choice is obeyed", "[native][winograd]") {
  TestGraph t;
  const Graph g = winograd_conv(t);
  FakeChoices measured;
  const std::unique_ptr<Kernel> kept = build(g, &measured);
  const std::string key = measured.values.begin()->first;
  const double measured_tile = measured.values.begin()->second.at(0);
  auto expected = run_reference(g, t.feed(g));  // feed() gives the same inputs every call
  REQUIRE(expected.ok());
  std::set<std::string> entries;
  for (double tile : {0.0, 2.0, 4.0}) {
    INFO("tile " << tile);
    FakeChoices store;
    store.values[key] = {tile};
    const std::unique_ptr<Kernel> k = build(g, &store);
    CHECK(store.measured() == 0);
    CHECK(store.reused() == 1);
    entries.insert(k->record().entry);
    CHECK((k->record().entry == kept->record().entry) == (tile == measured_tile));
    CHECK(max_scaled_error(run_all_tasks(*k, g, t.feed(g)), (*expected)[0]) < 1e-4);
  }
  CHECK(entries.size() == 3);  // three different kernels
}

TEST_CASE("native choices: one measurement per convolution, whatever its epilogue",
          "[native][winograd]") {
  TestGraph t;
  const Graph plain = winograd_conv(t);
  TestGraph t2;
  auto attrs = std::make_shared<ConvAttrs>();
  attrs->pads = {1, 1, 1, 1};
  attrs->strides = {1, 1};
  attrs->dilations = {1, 1};
  ValueId x = t2.input({1, 16, 12, 12});
  const Graph relu = t2.finish(t2.op(
      "Relu",
      {t2.op("Conv", {x, t2.constant({16, 16, 3, 3}, -0.3f, 0.3f), t2.constant({16})}, attrs)}));
  FakeChoices store;
  (void)build(plain, &store);
  (void)build(relu, &store);
  CHECK(store.measured() == 1);
  CHECK(store.reused() == 1);
}

TEST_CASE("native choices: a build times a choice only for a Winograd convolution not yet chosen",
          "[native][winograd]") {
  TestGraph t;
  const Graph conv = winograd_conv(t);
  TestGraph t2;
  const Graph relu = t2.finish(t2.op("Relu", {t2.input({1, 16, 12, 12})}));
  const std::unique_ptr<Backend> native = make_native_backend();
  FakeChoices store;
  BuildOptions b;
  b.num_threads = 2;
  b.choices = &store;
  CHECK(native->build_times_choices(conv, b));
  CHECK_FALSE(native->build_times_choices(relu, b));
  BuildOptions without = b;
  without.measure_choices = false;  // the default is taken: nothing timed
  CHECK_FALSE(native->build_times_choices(conv, without));
  CHECK(store.measured() == 0);
  REQUIRE(native->build(conv, b).ok());
  CHECK(store.measured() == 1);
  CHECK_FALSE(native->build_times_choices(conv, b));  // chosen in this process
  // Another backend finds it in the store, once.
  const std::unique_ptr<Backend> fresh = make_native_backend();
  CHECK_FALSE(fresh->build_times_choices(conv, b));
  CHECK(store.reused() == 1);
  REQUIRE(fresh->build(conv, b).ok());
  CHECK(store.reused() == 1);
  CHECK(store.measured() == 1);
  // A native backend that never measures (Winograd off) times nothing.
  NativeBackendOptions off;
  off.winograd = NativeWinograd::off;
  CHECK_FALSE(make_native_backend(off)->build_times_choices(conv, b));
}
