// Measured choices: decisions a backend or the artifact writer makes by timing alternatives on
// this machine (a Winograd or a direct convolution, the executor, the wave schedule's kernel
// profiles), remembered under a key naming what determines them, so that a later compile makes
// the same decision without measuring again.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collage {

// A store of measured choices for one device (the implementation keys by it). A choice is a few
// numbers (the option taken, the times that decided it, ...) whose meaning the kind defines.
// Thread-safe: kernels may be built from several threads at once.
class MeasuredChoices {
 public:
  virtual ~MeasuredChoices() = default;
  // The values remembered under (`kind`, `key`); nullopt when none. A hit counts as reused.
  virtual std::optional<std::vector<double>> lookup(std::string_view kind,
                                                    std::string_view key) = 0;
  // Remembers `values`, just measured, under (`kind`, `key`); counts as a measurement. A store
  // that cannot keep it (an unwritable file) still counts it, and notes why.
  virtual void remember(std::string_view kind, std::string_view key,
                        const std::vector<double>& values) = 0;
  virtual size_t measured() const = 0;  // remember() calls so far
  virtual size_t reused() const = 0;    // lookup() hits so far
  // Why choices were not kept (a cost database that could not be written).
  virtual std::vector<std::string> warnings() const = 0;
};

}  // namespace collage
