// Helpers shared by tests: tolerances, random tensors, test-data locations.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "collage/tensor.h"

namespace collage::testing {

// Largest |a-b| / max(|b|, floor) over all elements; +inf on a type or shape mismatch, or where
// one side is NaN and the other is not. `floor` keeps values near zero from dominating.
double max_relative_error(const Tensor& actual, const Tensor& expected, double floor = 1e-3);
// max|a-b| / max|b| over all elements: error relative to the output's scale. +inf on a type or
// shape mismatch or a NaN in one side only.
double max_scaled_error(const Tensor& actual, const Tensor& expected);
// A human-readable summary of the worst element, for failure messages.
std::string describe_mismatch(const Tensor& actual, const Tensor& expected, double floor = 1e-3);
// Uniform random f32 tensor in [lo, hi) from a fixed seed.
Tensor random_f32(const Shape& shape, uint64_t seed, float lo = -1.f, float hi = 1.f);
// Whether the loop that encloses the first occurrence of `marker` in `code` (a kernel printed by
// te::to_string) is vectorized; false when `marker` or an enclosing loop is missing.
bool enclosing_loop_vectorized(const std::string& code, const std::string& marker);
// Directory of generated test data (operator cases, models); from $COLLAGE_TEST_DATA, else
// build/test-data. Tests that need generated data skip with a message when it is missing.
std::filesystem::path test_data_dir();
// Model cache: $COLLAGE_MODEL_CACHE, else ~/.cache/collage/models.
std::filesystem::path model_cache_dir();

}  // namespace collage::testing
