// Implementation of the shared test helpers.
#include "common/test_util.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>

namespace collage::testing {
namespace {
struct Worst {
  double err = 0;
  int64_t index = -1;
};
Worst worst(const Tensor& a, const Tensor& e, double floor) {
  Worst w;
  if (a.type() != e.type()) return {std::numeric_limits<double>::infinity(), -1};
  if (a.dtype() == DType::str) {  // strings match exactly or not at all
    for (int64_t i = 0; i < a.numel(); ++i)
      if (a.data<std::string>()[i] != e.data<std::string>()[i])
        return {std::numeric_limits<double>::infinity(), i};
    return w;
  }
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get_as_double(i), y = e.get_as_double(i);
    double err;
    if (std::isnan(x) || std::isnan(y)) {
      err = (std::isnan(x) && std::isnan(y)) ? 0 : std::numeric_limits<double>::infinity();
    } else if (std::isinf(x) || std::isinf(y)) {
      err = x == y ? 0 : std::numeric_limits<double>::infinity();
    } else {
      err = std::fabs(x - y) / std::max(std::fabs(y), floor);
    }
    if (err > w.err || w.index < 0) w = {err, i};
  }
  return w;
}
}  // namespace

double max_relative_error(const Tensor& actual, const Tensor& expected, double floor) {
  return worst(actual, expected, floor).err;
}

double max_scaled_error(const Tensor& actual, const Tensor& expected) {
  if (actual.type() != expected.type()) return std::numeric_limits<double>::infinity();
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double x = actual.get_as_double(i), y = expected.get_as_double(i);
    if (std::isnan(x) != std::isnan(y)) return std::numeric_limits<double>::infinity();
    if (std::isnan(x)) continue;
    diff = std::max(diff, std::fabs(x - y));
    scale = std::max(scale, std::fabs(y));
  }
  return scale == 0 ? diff : diff / scale;
}

std::string describe_mismatch(const Tensor& actual, const Tensor& expected, double floor) {
  std::ostringstream s;
  if (actual.type() != expected.type()) {
    s << "type " << type_to_string(actual.type()) << " vs expected "
      << type_to_string(expected.type());
    return s.str();
  }
  Worst w = worst(actual, expected, floor);
  s << "max rel err " << w.err;
  if (w.index >= 0 && actual.dtype() == DType::str)
    s << " at element " << w.index << ": '" << actual.data<std::string>()[w.index]
      << "' vs expected '" << expected.data<std::string>()[w.index] << "'";
  else if (w.index >= 0)
    s << " at element " << w.index << ": " << actual.get_as_double(w.index) << " vs expected "
      << expected.get_as_double(w.index);
  return s.str();
}

Tensor random_f32(const Shape& shape, uint64_t seed, float lo, float hi) {
  Tensor t(DType::f32, shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

bool enclosing_loop_vectorized(const std::string& code, const std::string& marker) {
  const size_t at = code.find(marker);
  if (at == std::string::npos) return false;
  const size_t loop = code.rfind("for (", at);
  if (loop == std::string::npos) return false;
  const size_t line = code.rfind('\n', loop) + 1;  // npos + 1 == 0: the first line
  return code.substr(line, loop - line).find("vectorized") != std::string::npos;
}

std::filesystem::path test_data_dir() {
  if (const char* e = std::getenv("COLLAGE_TEST_DATA")) return e;
  return std::filesystem::path(COLLAGE_BINARY_DIR) / "test-data";
}

std::filesystem::path model_cache_dir() {
  if (const char* e = std::getenv("COLLAGE_MODEL_CACHE")) return e;
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : "/tmp") / ".cache" / "collage" / "models";
}

}  // namespace collage::testing
