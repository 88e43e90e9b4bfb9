// Arena planning: buffers alive at the same step never overlap, memory is reused once a buffer
// is dead, the best-fitting gap is chosen, and the peak is recorded.
#include <catch2/catch.hpp>
#include <random>

#include "core/memory_plan.h"

using collage::BufferLifetime;
using collage::plan_memory;

namespace {

bool overlap_in_time(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

TEST_CASE("memory plan: a chain reuses the buffer two steps back", "[runtime][memory]") {
  // a (100 B) step 0-1, b (200 B) step 1-2, c (100 B) step 2-3: c takes a's place.
  auto plan = plan_memory({{100, 0, 1}, {200, 1, 2}, {100, 2, 3}});
  CHECK(plan.offsets[1] == 0);
  CHECK(plan.offsets[0] == 256);
  CHECK(plan.offsets[2] == 256);
  CHECK(plan.peak_bytes == 384);
  CHECK(plan.unshared_bytes == 128 + 256 + 128);
}

TEST_CASE("memory plan: the smallest gap that fits is chosen", "[runtime][memory]") {
  // l1, l2, l3 live throughout; d1 (256 B) and d2 (128 B) die after step 1 and leave gaps of 256
  // and 128 bytes between them. e (64 B, step 5) fits both and must take the 128-byte gap.
  auto plan = plan_memory({
      {256, 0, 9},  // l1: 0
      {256, 0, 1},  // d1: 256
      {256, 0, 9},  // l2: 512
      {128, 0, 1},  // d2: 768
      {128, 0, 9},  // l3: 896
      {64, 5, 5},   // e
  });
  CHECK(plan.offsets[0] == 0);
  CHECK(plan.offsets[2] == 512);
  CHECK(plan.offsets[4] == 896);
  CHECK(plan.offsets[5] == 768);
  CHECK(plan.peak_bytes == 1024);
}

TEST_CASE("memory plan: zero-byte buffers take no space", "[runtime][memory]") {
  auto plan = plan_memory({{0, 0, 3}, {64, 0, 3}});
  CHECK(plan.peak_bytes == 64);
  CHECK(plan.offsets[0] == 0);
}

TEST_CASE("memory plan: random lifetimes never overlap while alive", "[runtime][memory]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<BufferLifetime> buffers;
    const int steps = 30;
    for (int i = 0; i < 60; ++i) {
      const int first = static_cast<int>(rng() % steps);
      const int last = first + static_cast<int>(rng() % 6);
      buffers.push_back({rng() % 5000, first, last});
    }
    auto plan = plan_memory(buffers);
    CHECK(plan.peak_bytes <= plan.unshared_bytes);
    for (size_t i = 0; i < buffers.size(); ++i) {
      CHECK(plan.offsets[i] % 64 == 0);
      CHECK(plan.offsets[i] + buffers[i].bytes <= plan.peak_bytes);
      for (size_t j = i + 1; j < buffers.size(); ++j) {
        if (!overlap_in_time(buffers[i], buffers[j]) || !buffers[i].bytes || !buffers[j].bytes)
          continue;
        const bool apart = plan.offsets[i] + buffers[i].bytes <= plan.offsets[j] ||
                           plan.offsets[j] + buffers[j].bytes <= plan.offsets[i];
        INFO("round " << round << " buffers " << i << " and " << j);
        CHECK(apart);
      }
    }
  }
}
