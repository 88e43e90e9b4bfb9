// A MeasuredChoices kept in memory, for tests: what was remembered and looked up, countable.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "collage/measured_choices.h"

namespace collage::testing {

class FakeChoices : public MeasuredChoices {
 public:
  std::optional<std::vector<double>> lookup(std::string_view kind, std::string_view key) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = values.find(std::string(kind) + "|" + std::string(key));
    if (it == values.end()) return std::nullopt;
    ++reused_;
    return it->second;
  }
  void remember(std::string_view kind, std::string_view key,
                const std::vector<double>& v) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++measured_;
    values[std::string(kind) + "|" + std::string(key)] = v;
  }
  size_t measured() const override { return measured_; }
  size_t reused() const override { return reused_; }
  std::vector<std::string> warnings() const override { return {}; }

  std::map<std::string, std::vector<double>> values;  // by "KIND|KEY"

 private:
  std::mutex mu_;
  size_t measured_ = 0, reused_ = 0;
};

}  // namespace collage::testing
