// Helpers shared by the tree-ensemble files: messages, file reading, number parsing.
#include "frontends/trees/tree_util.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/str_cat.h"
#include "io/file_io.h"

namespace collage {

std::string model_label(const TreeEnsemble& m) {
  std::string s = m.source.empty() ? "tree model" : str_cat(m.source, " model");
  if (!m.name.empty()) s += str_cat(" '", m.name, "'");
  return s;
}

absl::Status tree_error(const TreeEnsemble& m, size_t tree, std::string_view message) {
  return absl::InvalidArgumentError(str_cat(model_label(m), ": tree ", tree, " ", message));
}

absl::Status node_error(const TreeEnsemble& m, size_t tree, int64_t node,
                        std::string_view message) {
  return absl::InvalidArgumentError(
      str_cat(model_label(m), ": tree ", tree, " node ", node, " ", message));
}

absl::StatusOr<std::string> read_model_text(const std::filesystem::path& path) {
  auto file = io::MappedFile::open(path);
  if (!file.ok()) return file.status();
  const auto bytes = (*file)->bytes();
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

float nearest_float(double t) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (std::isnan(t) || std::fabs(t) <= kMax) return static_cast<float>(t);
  // Above FLT_MAX the nearest float is FLT_MAX up to half an ulp (2^103) beyond it; the tie at
  // exactly half an ulp goes to the even side, which is infinity.
  const double halfway = kMax + std::ldexp(1.0, 103);
  const float big = std::fabs(t) < halfway ? std::numeric_limits<float>::max()
                                           : std::numeric_limits<float>::infinity();
  return t < 0 ? -big : big;
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}
}  // namespace

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.size() > 64) return std::nullopt;
  const std::string buf(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(buf.c_str(), &end);
  // Overflow to +-inf is an error; underflow to a denormal or zero is the nearest value.
  if (end != buf.c_str() + buf.size() || (errno == ERANGE && std::abs(v) > 1.0))
    return std::nullopt;
  return v;
}

std::optional<int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.size() > 24) return std::nullopt;
  const std::string buf(s);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(buf.c_str(), &end, 10);
  if (end != buf.c_str() + buf.size() || errno == ERANGE) return std::nullopt;
  return static_cast<int64_t>(v);
}

}  // namespace collage
