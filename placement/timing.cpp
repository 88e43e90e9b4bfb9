// Sampling until the median settles; percentiles; random tensors.
#include "placement/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace collage {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Linear-interpolated percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double pos = p * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

void Sampler::add(double ms, double wall_ms) {
  samples_.push_back(ms);
  wall_ms_ += wall_ms;
}

bool Sampler::done() const {
  const int n = static_cast<int>(samples_.size());
  if (n >= options_.max_samples || (n >= 1 && wall_ms_ >= options_.max_ms)) return true;
  if (n < std::max(options_.min_samples, 3)) return false;
  const double now = median_of(samples_);
  const double before = median_of(std::vector<double>(samples_.begin(), samples_.end() - 2));
  return std::abs(now - before) <= options_.settle_within * now;
}

SampleStats Sampler::stats() const {
  return summarize_samples(samples_);
}

SampleStats summarize_samples(std::vector<double> samples) {
  SampleStats s;
  s.samples = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = median_of(samples);
  s.spread = s.median > 0 ? (percentile(samples, 0.9) - percentile(samples, 0.1)) / s.median : 0;
  return s;
}

Tensor random_tensor(const TensorType& type, uint64_t seed) {
  Tensor t(type.dtype, type.shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  const int64_t n = t.numel();
  switch (type.dtype) {
    case DType::f32:
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = real(rng);
      break;
    case DType::f16:
      for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = float_to_half(real(rng));
      break;
    case DType::bf16:
      for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = float_to_bfloat16(real(rng));
      break;
    case DType::boolean:
      for (int64_t i = 0; i < n; ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i & 1);
      break;
    case DType::f64:
      for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = real(rng);
      break;
    case DType::i8:
    case DType::i16:
    case DType::i32:
    case DType::i64:
    case DType::u8:
    case DType::u16:
    case DType::u32:
    case DType::u64:
      break;  // zero-initialised
    case DType::str:
      // "0": text every string operator takes, and a number for a cast from text.
      for (int64_t i = 0; i < n; ++i) t.data<std::string>()[i] = "0";
      break;
  }
  return t;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace collage
