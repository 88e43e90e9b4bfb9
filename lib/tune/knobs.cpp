// Schedule knobs: space size, lookup with a fallback, printing.
#include "collage/knobs.h"

#include <limits>

#include "core/str_cat.h"

namespace collage::tune {

int64_t KnobSpace::size() const {
  int64_t n = 1;
  for (const auto& [name, values] : knobs) {
    const int64_t v = static_cast<int64_t>(values.size());
    if (v == 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / v) return std::numeric_limits<int64_t>::max();
    n *= v;
  }
  return n;
}

int64_t knob_or(const Knobs& k, const std::string& knob, int64_t fallback) {
  auto it = k.find(knob);
  return it == k.end() ? fallback : it->second;
}

std::string to_string(const Knobs& k) {
  std::string s;
  for (const auto& [name, value] : k) {
    if (!s.empty()) s.push_back(',');
    s += str_cat(name, "=", value);
  }
  return s;
}

}  // namespace collage::tune
