// LightGBM text model import (`booster.save_model("model.txt")`).
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "collage/trees.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_util.h"

namespace collage {
namespace {

// decision_type bits (LightGBM tree.h).
constexpr int kCategoricalMask = 1;
constexpr int kDefaultLeftMask = 2;

// One "key=value" block: the header or one tree, with the line each key came from.
struct Block {
  std::map<std::string, std::string, std::less<>> values;
  std::map<std::string, int, std::less<>> lines;
};

class Parser {
 public:
  Parser(TreeEnsemble& m, std::string_view text) : m_(m), text_(text) {}

  absl::Status run();

 private:
  absl::Status error(std::string_view message) const {
    return absl::InvalidArgumentError(str_cat(model_label(m_), ": ", message));
  }
  absl::Status tree_field_error(size_t t, std::string_view field, std::string_view message) const {
    return tree_error(m_, t, str_cat("field '", field, "' ", message));
  }
  // The next line (without '\n'), or nullopt at the end.
  std::optional<std::string_view> next_line() {
    if (pos_ >= text_.size()) return std::nullopt;
    const size_t end = std::min(text_.find('\n', pos_), text_.size());
    std::string_view line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  }
  // Reads key=value lines up to a blank line or a line starting a new section.
  Block read_block();
  absl::StatusOr<int64_t> header_int(const Block& h, std::string_view key) const;
  absl::Status read_objective(const Block& h);
  absl::Status read_tree(const Block& b, size_t t);
  // A tree field as numbers; `expected` entries.
  absl::StatusOr<std::vector<double>> tree_numbers(const Block& b, size_t t, const char* key,
                                                   size_t expected) const;

  TreeEnsemble& m_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_no_ = 0;
};

Block Parser::read_block() {
  Block b;
  while (pos_ < text_.size()) {
    const size_t save_pos = pos_;
    const int save_line = line_no_;
    std::string_view line = *next_line();
    if (line.empty()) break;
    if (line.starts_with("Tree=") && !b.values.empty()) {
      pos_ = save_pos;
      line_no_ = save_line;
      break;
    }
    const size_t eq = line.find('=');
    std::string key(line.substr(0, eq));
    b.lines[key] = line_no_;
    b.values[std::move(key)] = eq == std::string_view::npos ? "" : std::string(line.substr(eq + 1));
  }
  return b;
}

absl::StatusOr<int64_t> Parser::header_int(const Block& h, std::string_view key) const {
  auto it = h.values.find(key);
  if (it == h.values.end()) return error(str_cat("the header has no '", key, "' line"));
  auto v = parse_int(it->second);
  if (!v)
    return error(str_cat("header line ", h.lines.find(key)->second, ": '", key,
                         "' is not an integer: '", it->second, "'"));
  return *v;
}

absl::Status Parser::read_objective(const Block& h) {
  auto it = h.values.find("objective");
  if (it == h.values.end()) return error("the header has no 'objective' line");
  // The name, then parameters as "key:value" words ("binary sigmoid:1").
  std::vector<std::string_view> words;
  for (std::string_view rest = it->second; !rest.empty();) {
    const size_t sp = rest.find(' ');
    if (sp != 0) words.push_back(rest.substr(0, sp));
    if (sp == std::string_view::npos) break;
    rest.remove_prefix(sp + 1);
  }
  const std::string name = words.empty() ? "" : std::string(words[0]);
  m_.objective = it->second;
  std::map<std::string, std::string, std::less<>> params;
  for (size_t w = 1; w < words.size(); ++w) {
    const size_t colon = words[w].find(':');
    params[std::string(words[w].substr(0, colon))] =
        colon == std::string_view::npos ? "" : std::string(words[w].substr(colon + 1));
  }
  if (name == "regression" || name == "regression_l1" || name == "huber" || name == "fair" ||
      name == "quantile" || name == "mape" || name == "lambdarank" || name == "rank_xendcg" ||
      name == "custom") {
    if (params.count("sqrt"))
      return absl::UnimplementedError(
          str_cat(model_label(m_), ": objective '", it->second, "' (reg_sqrt) is not supported"));
    m_.post_transform = TreePostTransform::none;
  } else if (name == "binary" || name == "multiclassova" || name == "cross_entropy" ||
             name == "xentropy") {
    m_.post_transform = TreePostTransform::sigmoid;
    if (auto s = params.find("sigmoid"); s != params.end()) {
      auto v = parse_double(s->second);
      if (!v || !(*v > 0.0))
        return error(str_cat("objective '", it->second, "' has a bad sigmoid parameter"));
      m_.sigmoid_scale = *v;
    }
  } else if (name == "multiclass" || name == "softmax") {
    m_.post_transform = TreePostTransform::softmax;
  } else if (name == "poisson" || name == "gamma" || name == "tweedie") {
    m_.post_transform = TreePostTransform::exp;
  } else {
    return absl::UnimplementedError(
        str_cat(model_label(m_), ": objective '", it->second, "' is not supported"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> Parser::tree_numbers(const Block& b, size_t t, const char* key,
                                                         size_t expected) const {
  auto it = b.values.find(key);
  if (it == b.values.end()) return tree_error(m_, t, str_cat("has no field '", key, "'"));
  std::vector<double> out;
  std::string_view s = it->second;
  while (!s.empty()) {
    const size_t sp = s.find(' ');
    std::string_view word = s.substr(0, sp);
    if (!word.empty()) {
      auto v = parse_double(word);
      if (!v)
        return tree_field_error(t, key,
                                str_cat("entry ", out.size(), " is not a number: '", word, "'"));
      out.push_back(*v);
    }
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  if (out.size() != expected)
    return tree_field_error(t, key, str_cat("has ", out.size(), " entries, expected ", expected));
  return out;
}

absl::Status Parser::read_tree(const Block& b, size_t t) {
  Tree& tree = m_.trees[t];
  tree.output = static_cast<int32_t>(static_cast<int64_t>(t) % m_.num_outputs);
  auto count = b.values.find("num_leaves");
  if (count == b.values.end()) return tree_error(m_, t, "has no field 'num_leaves'");
  auto leaves = parse_int(count->second);
  if (!leaves || *leaves < 1 || *leaves > (int64_t{1} << 30))
    return tree_field_error(t, "num_leaves", str_cat("is '", count->second, "'"));
  if (auto lin = b.values.find("is_linear"); lin != b.values.end() && parse_int(lin->second) != 0)
    return absl::UnimplementedError(
        str_cat(model_label(m_), ": tree ", t, " is a linear tree, which is not supported"));
  const auto nl = static_cast<size_t>(*leaves);
  auto values = tree_numbers(b, t, "leaf_value", nl);
  if (!values.ok()) return values.status();
  if (nl == 1) {
    tree.nodes.resize(1);
    tree.nodes[0].value = (*values)[0];
    return absl::OkStatus();
  }
  const size_t ni = nl - 1;
  const char* keys[5] = {"split_feature", "threshold", "decision_type", "left_child",
                         "right_child"};
  std::vector<double> f[5];
  for (int k = 0; k < 5; ++k) {
    auto v = tree_numbers(b, t, keys[k], ni);
    if (!v.ok()) return v.status();
    f[k] = *std::move(v);
  }
  // Internal nodes keep their indices; leaf j becomes node ni + j.
  tree.nodes.resize(ni + nl);
  for (size_t j = 0; j < nl; ++j) tree.nodes[ni + j].value = (*values)[j];
  for (size_t i = 0; i < ni; ++i) {
    TreeNode& node = tree.nodes[i];
    const double feature = f[0][i], dtype = f[2][i];
    if (feature < 0 || feature >= static_cast<double>(m_.num_features) ||
        feature != std::floor(feature))
      return tree_field_error(t, "split_feature",
                              str_cat("entry ", i, " is ", feature,
                                      ", expected a feature index below ", m_.num_features));
    if (dtype < 0 || dtype > 255 || dtype != std::floor(dtype))
      return tree_field_error(t, "decision_type", str_cat("entry ", i, " is ", dtype));
    const int bits = static_cast<int>(dtype);
    if (bits & kCategoricalMask)
      return absl::UnimplementedError(str_cat(model_label(m_), ": tree ", t, " node ", i,
                                              " is a categorical split, which is not supported"));
    switch ((bits >> 2) & 3) {
      case 0:
        node.missing = TreeMissing::nan_is_zero;
        break;
      case 1:
        node.missing = TreeMissing::zero_or_nan;
        break;
      case 2:
        node.missing = TreeMissing::nan;
        break;
      default:
        return tree_field_error(
            t, "decision_type",
            str_cat("entry ", i, " has unknown missing type ", (bits >> 2) & 3));
    }
    node.default_left = (bits & kDefaultLeftMask) != 0;
    node.feature = static_cast<int32_t>(feature);
    node.threshold = f[1][i];
    node.compare = TreeCompare::less_equal_f64;
    int32_t children[2];
    for (int side = 0; side < 2; ++side) {
      const double c = f[3 + side][i];
      // A child >= 0 is an internal node; a negative one is leaf ~c.
      const double target = c >= 0 ? c : static_cast<double>(ni) + (-c - 1);
      if (c != std::floor(c) || target < 1 || target >= static_cast<double>(ni + nl))
        return tree_field_error(t, keys[3 + side],
                                str_cat("entry ", i, " is ", c, ", not a node of the tree"));
      children[side] = static_cast<int32_t>(target);
    }
    node.left = children[0];
    node.right = children[1];
  }
  return absl::OkStatus();
}

absl::Status Parser::run() {
  auto first = next_line();
  if (!first || *first != "tree") return error("does not start with a 'tree' line");
  const Block header = read_block();
  if (!header.values.count("version")) return error("the header has no 'version' line");
  auto max_feature = header_int(header, "max_feature_idx");
  if (!max_feature.ok()) return max_feature.status();
  auto per_iteration = header_int(header, "num_tree_per_iteration");
  if (!per_iteration.ok()) return per_iteration.status();
  if (*max_feature < 0 || *max_feature >= (int64_t{1} << 30))
    return error(str_cat("max_feature_idx is ", *max_feature));
  if (*per_iteration < 1 || *per_iteration > (1 << 20))
    return error(str_cat("num_tree_per_iteration is ", *per_iteration));
  m_.num_features = *max_feature + 1;
  m_.num_outputs = *per_iteration;
  m_.base_score.assign(static_cast<size_t>(m_.num_outputs), 0.0);
  // LightGBM's predictors drop |x| <= kZeroThreshold from a row, so such inputs read as 0.
  m_.zero_threshold = static_cast<double>(1e-35f);
  if (absl::Status s = read_objective(header); !s.ok()) return s;
  const bool average = header.values.count("average_output") > 0;

  while (auto line = next_line()) {
    if (line->empty()) continue;
    if (*line == "end of trees") break;
    if (!line->starts_with("Tree="))
      return error(str_cat("line ", line_no_, ": expected 'Tree=N' or 'end of trees', got '",
                           line->substr(0, 40), "'"));
    auto index = parse_int(line->substr(5));
    if (!index || *index != static_cast<int64_t>(m_.trees.size()))
      return error(str_cat("line ", line_no_, ": '", *line, "', expected Tree=", m_.trees.size()));
    m_.trees.emplace_back();
    const Block b = read_block();
    if (absl::Status s = read_tree(b, m_.trees.size() - 1); !s.ok()) return s;
  }
  if (m_.trees.empty()) return error("has no trees");
  if (m_.trees.size() % static_cast<size_t>(m_.num_outputs) != 0)
    return error(str_cat("has ", m_.trees.size(), " trees, not a multiple of ",
                         "num_tree_per_iteration ", m_.num_outputs));
  if (average)
    m_.tree_scale = static_cast<double>(m_.num_outputs) / static_cast<double>(m_.trees.size());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TreeEnsemble> parse_lightgbm_text(std::string_view text, std::string_view name) {
  TreeEnsemble m;
  m.name = std::string(name);
  m.source = "lightgbm";
  Parser p(m, text);
  if (absl::Status s = p.run(); !s.ok()) return s;
  if (absl::Status s = validate_tree_ensemble(m); !s.ok()) return s;
  return m;
}

absl::StatusOr<TreeEnsemble> import_lightgbm_text(const std::filesystem::path& path) {
  auto text = read_model_text(path);
  if (!text.ok()) return text.status();
  return parse_lightgbm_text(*text, path.string());
}

}  // namespace collage
