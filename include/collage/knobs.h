// Schedule knobs: named integer parameters of a schedule template (tile sizes, vector width,
// loop order, unroll, parallel granularity) and the space of values the tuner searches.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace collage::tune {

// Knob values by name. Ordered, so that printing and hashing are deterministic.
using Knobs = std::map<std::string, int64_t>;

// The candidate values of each knob, in a fixed order.
struct KnobSpace {
  std::vector<std::pair<std::string, std::vector<int64_t>>> knobs;

  void add(std::string name, std::vector<int64_t> values) {
    knobs.emplace_back(std::move(name), std::move(values));
  }
  // Number of configurations (product of the value counts; saturates at INT64_MAX).
  int64_t size() const;
};

// `knob` from `k`, or `fallback` when absent.
int64_t knob_or(const Knobs& k, const std::string& knob, int64_t fallback);

// "mr=8,nr=32" (names in order).
std::string to_string(const Knobs& k);

}  // namespace collage::tune
