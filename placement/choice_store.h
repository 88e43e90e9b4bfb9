// MeasuredChoices kept in the cost database: each choice one record under the pseudo-backend
// "choice:KIND", keyed by the device and the hash of its key, the key and the values in the
// record's signature field ("KEY => v1 v2 ...").
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/measured_choices.h"
#include "collage/placement.h"
#include "placement/cost_database.h"

namespace collage {

class CostDbChoices : public MeasuredChoices {
 public:
  // Over `db` (borrowed, may be null: choices then live only as long as the store) for `device`.
  CostDbChoices(CostDatabase* db, std::string device) : db_(db), device_(std::move(device)) {}
  // Over a database of its own.
  CostDbChoices(std::unique_ptr<CostDatabase> db, std::string device)
      : owned_(std::move(db)), db_(owned_.get()), device_(std::move(device)) {}

  std::optional<std::vector<double>> lookup(std::string_view kind, std::string_view key) override;
  void remember(std::string_view kind, std::string_view key,
                const std::vector<double>& values) override;
  size_t measured() const override;
  size_t reused() const override;
  std::vector<std::string> warnings() const override;

 private:
  CostKey key_of(std::string_view kind, std::string_view key) const;
  mutable std::mutex mu_;
  std::unique_ptr<CostDatabase> owned_;
  CostDatabase* db_;
  std::string device_;
  std::map<std::string, std::vector<double>> memory_;  // by kind "\x1f" key, when db_ is null
  size_t measured_ = 0, reused_ = 0;
  std::vector<std::string> warnings_;
};

// The record signature of a choice, and the values read back from one (nullopt: not the
// signature of `key`, or malformed).
std::string encode_choice(std::string_view key, const std::vector<double>& values);
std::optional<std::vector<double>> decode_choice(std::string_view signature, std::string_view key);

}  // namespace collage
