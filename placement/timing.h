// Robust timing statistics shared by the kernel measurer and the end-to-end measurer: samples
// taken until their median settles (bounded by count and time), median and spread; random inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/tensor.h"

namespace collage {

struct SamplingOptions {
  int min_samples = 5;
  int max_samples = 40;
  // Settled when adding the last two samples moved the median by at most this fraction.
  double settle_within = 0.02;
  double max_ms = 400;  // wall-time bound on the samples of one measurement
};

struct SampleStats {
  double median = 0;
  double spread = 0;  // (90th - 10th percentile) / median
  int samples = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options) : options_(options) {}
  void add(double ms, double wall_ms);
  // The median has settled, or a bound was reached.
  bool done() const;
  SampleStats stats() const;

 private:
  SamplingOptions options_;
  std::vector<double> samples_;
  double wall_ms_ = 0;
};

SampleStats summarize_samples(std::vector<double> samples);

// A tensor of `type` filled from a generator seeded with `seed`: floats uniform in [-1, 1),
// integers 0 (a valid index and extent everywhere), booleans alternating.
Tensor random_tensor(const TensorType& type, uint64_t seed);

// Milliseconds since an arbitrary fixed point (steady clock).
double now_ms();

}  // namespace collage
