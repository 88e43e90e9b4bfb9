// CostDbChoices: measured choices as cost-database records.
#include "placement/choice_store.h"

#include <cstdlib>
#include <ctime>

#include "absl/strings/str_format.h"
#include "core/str_cat.h"

namespace collage {
namespace {

constexpr std::string_view kSeparator = " => ";
constexpr std::string_view kChoiceVersion = "1";

}  // namespace

std::string encode_choice(std::string_view key, const std::vector<double>& values) {
  std::string s = str_cat(key, kSeparator);
  // %.17g reads back as the very same double, so a remembered profile schedules the same waves.
  for (size_t i = 0; i < values.size(); ++i)
    s += absl::StrFormat(i ? " %.17g" : "%.17g", values[i]);
  return s;
}

std::optional<std::vector<double>> decode_choice(std::string_view signature, std::string_view key) {
  if (signature.size() < key.size() + kSeparator.size() || !signature.starts_with(key) ||
      signature.substr(key.size(), kSeparator.size()) != kSeparator)
    return std::nullopt;
  std::string rest(signature.substr(key.size() + kSeparator.size()));
  std::vector<double> values;
  const char* p = rest.c_str();
  while (*p) {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) return std::nullopt;
    values.push_back(v);
    p = end;
    while (*p == ' ') ++p;
  }
  return values;
}

CostKey CostDbChoices::key_of(std::string_view kind, std::string_view key) const {
  return CostKey{device_, str_cat("choice:", kind), std::string(kChoiceVersion), stable_hash(key)};
}

std::optional<std::vector<double>> CostDbChoices::lookup(std::string_view kind,
                                                         std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<std::vector<double>> found;
  if (db_) {
    if (std::optional<CostRecord> r = db_->lookup(key_of(kind, key)))
      found = decode_choice(r->signature, key);
  } else if (auto it = memory_.find(str_cat(kind, "\x1f", key)); it != memory_.end()) {
    found = it->second;
  }
  if (found) ++reused_;
  return found;
}

void CostDbChoices::remember(std::string_view kind, std::string_view key,
                             const std::vector<double>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  ++measured_;
  if (!db_) {
    memory_[str_cat(kind, "\x1f", key)] = values;
    return;
  }
  CostRecord r;
  r.key = key_of(kind, key);
  r.signature = encode_choice(key, values);
  r.ms = values.empty() ? 0 : values[0];
  r.samples = 1;
  r.timestamp = static_cast<int64_t>(std::time(nullptr));
  if (absl::Status s = db_->append(r); !s.ok())
    warnings_.push_back(str_cat("a measured ", kind, " choice was not kept: ", s.message()));
}

size_t CostDbChoices::measured() const {
  std::lock_guard<std::mutex> lock(mu_);
  return measured_;
}

size_t CostDbChoices::reused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reused_;
}

std::vector<std::string> CostDbChoices::warnings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return warnings_;
}

absl::StatusOr<std::unique_ptr<MeasuredChoices>> open_measured_choices(
    const PlacementOptions& options) {
  auto device = placement_device(options);
  if (!device.ok()) return device.status();
  if (options.cost_db_path.empty())
    return std::unique_ptr<MeasuredChoices>(new CostDbChoices(nullptr, *std::move(device)));
  auto db = CostDatabase::open(options.cost_db_path);
  if (!db.ok()) return db.status();
  return std::unique_ptr<MeasuredChoices>(
      new CostDbChoices(std::make_unique<CostDatabase>(*std::move(db)), *std::move(device)));
}

}  // namespace collage
