// XGBoost JSON model import (gbtree and dart boosters).
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "collage/trees.h"
#include "core/str_cat.h"
#include "frontends/trees/tree_util.h"

namespace collage {
namespace {

using json = nlohmann::json;

// Reading a JSON document with errors that name the model and the path to the bad field.
class Reader {
 public:
  explicit Reader(const TreeEnsemble& m) : m_(m) {}

  absl::Status error(std::string_view where, std::string_view message) const {
    return absl::InvalidArgumentError(str_cat(model_label(m_), ": ", where, " ", message));
  }
  absl::StatusOr<const json*> member(const json& obj, const char* key,
                                     std::string_view where) const {
    if (!obj.is_object()) return error(where, "is not a JSON object");
    auto it = obj.find(key);
    if (it == obj.end()) return error(where, str_cat("has no field '", key, "'"));
    return &*it;
  }
  // XGBoost writes most scalar parameters as strings ("num_feature": "10").
  absl::StatusOr<int64_t> int_param(const json& obj, const char* key,
                                    std::string_view where) const {
    auto v = member(obj, key, where);
    if (!v.ok()) return v.status();
    if ((*v)->is_number_integer()) return (*v)->get<int64_t>();
    if ((*v)->is_string())
      if (auto i = parse_int((*v)->get<std::string>())) return *i;
    return error(where, str_cat("field '", key, "' is not an integer: ", (*v)->dump()));
  }
  absl::StatusOr<std::vector<double>> numbers(const json& obj, const char* key,
                                              std::string_view where, size_t expected) const {
    auto v = member(obj, key, where);
    if (!v.ok()) return v.status();
    if (!(*v)->is_array()) return error(where, str_cat("field '", key, "' is not an array"));
    if ((*v)->size() != expected)
      return error(
          where, str_cat("field '", key, "' has ", (*v)->size(), " entries, expected ", expected));
    std::vector<double> out;
    out.reserve(expected);
    for (const json& e : **v) {
      // Booleans are accepted for default_left, which older versions wrote as true/false.
      if (e.is_boolean()) {
        out.push_back(e.get<bool>() ? 1.0 : 0.0);
      } else if (e.is_number()) {
        out.push_back(e.get<double>());
      } else {
        return error(
            where, str_cat("field '", key, "' entry ", out.size(), " is not a number: ", e.dump()));
      }
    }
    return out;
  }

 private:
  const TreeEnsemble& m_;
};

// base_score as XGBoost writes it: "5E-1", or "[5E-1]" / "[a,b,c]" from 3.0 on.
absl::StatusOr<std::vector<double>> parse_base_score(const Reader& r, const json& param) {
  auto v = r.member(param, "base_score", "learner_model_param");
  if (!v.ok()) return v.status();
  std::vector<double> out;
  if ((*v)->is_number()) return std::vector<double>{(*v)->get<double>()};
  if (!(*v)->is_string())
    return r.error("learner_model_param", "field 'base_score' is not a string");
  std::string_view s = (*v)->get_ref<const std::string&>();
  if (!s.empty() && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  while (true) {
    const size_t comma = s.find(',');
    auto d = parse_double(s.substr(0, comma));
    if (!d)
      return r.error("learner_model_param",
                     str_cat("field 'base_score' is not a number or list of numbers: ",
                             (*v)->get<std::string>()));
    out.push_back(*d);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

struct Objective {
  TreePostTransform post;
  enum class Link { identity, logit, log } link;
};

absl::StatusOr<Objective> objective_of(const TreeEnsemble& m) {
  using L = Objective::Link;
  const std::string& o = m.objective;
  if (o == "reg:squarederror" || o == "reg:linear" || o == "reg:squaredlogerror" ||
      o == "reg:pseudohubererror" || o == "reg:absoluteerror" || o == "reg:quantileerror")
    return Objective{TreePostTransform::none, L::identity};
  if (o == "binary:logistic" || o == "reg:logistic")
    return Objective{TreePostTransform::sigmoid, L::logit};
  if (o == "binary:logitraw") return Objective{TreePostTransform::none, L::logit};
  if (o == "multi:softprob" || o == "multi:softmax")
    return Objective{TreePostTransform::softmax, L::identity};
  if (o == "count:poisson" || o == "reg:gamma" || o == "reg:tweedie")
    return Objective{TreePostTransform::exp, L::log};
  return absl::UnimplementedError(
      str_cat(model_label(m), ": objective '", o, "' is not supported"));
}

// Reads tree `t` into `tree`, keeping only the nodes reachable from the root (XGBoost leaves
// pruned nodes in the arrays) and renumbering them depth first.
absl::Status read_tree(const Reader& r, const TreeEnsemble& m, const json& jt, size_t t,
                       double weight, Tree& tree) {
  const std::string where = str_cat("tree ", t);
  auto param = r.member(jt, "tree_param", where);
  if (!param.ok()) return param.status();
  auto num_nodes = r.int_param(**param, "num_nodes", where + " tree_param");
  if (!num_nodes.ok()) return num_nodes.status();
  if (*num_nodes <= 0 || *num_nodes > (int64_t{1} << 30))
    return r.error(where, str_cat("has num_nodes ", *num_nodes));
  if (auto it = (*param)->find("size_leaf_vector"); it != (*param)->end()) {
    auto leaf_size = r.int_param(**param, "size_leaf_vector", where + " tree_param");
    if (!leaf_size.ok()) return leaf_size.status();
    if (*leaf_size > 1)
      return absl::UnimplementedError(str_cat(model_label(m), ": ", where,
                                              " has vector leaves (multi-target trees), which "
                                              "are not supported"));
  }
  const auto n = static_cast<size_t>(*num_nodes);
  std::vector<double> fields[6];
  const char* names[6] = {"left_children",    "right_children", "split_indices",
                          "split_conditions", "default_left",   "split_type"};
  for (int f = 0; f < 6; ++f) {
    // split_type is absent from models written before categorical support.
    if (f == 5 && !jt.contains("split_type")) {
      fields[f].assign(n, 0.0);
      continue;
    }
    auto v = r.numbers(jt, names[f], where, n);
    if (!v.ok()) return v.status();
    fields[f] = *std::move(v);
  }
  const auto& left = fields[0];
  const auto& right = fields[1];
  std::vector<int32_t> renumbered(n, -1);
  std::vector<size_t> stack = {0};
  renumbered[0] = 0;
  tree.nodes.assign(1, TreeNode{});
  // Each stack entry is an original node index whose new node exists but is not filled in yet.
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    TreeNode& node = tree.nodes[renumbered[i]];
    if (left[i] == -1) {
      node.value = fields[3][i] * weight;
      continue;
    }
    if (fields[5][i] != 0)
      return absl::UnimplementedError(str_cat(model_label(m), ": ", where, " node ", i,
                                              " is a categorical split, which is not supported"));
    const double feature = fields[2][i];
    if (feature < 0 || feature != std::floor(feature) || feature >= m.num_features)
      return r.error(where, str_cat("node ", i, " field 'split_indices' is ", feature,
                                    ", expected a feature index below ", m.num_features));
    node.feature = static_cast<int32_t>(feature);
    node.threshold = nearest_float(fields[3][i]);
    node.compare = TreeCompare::less_f32;
    node.missing = TreeMissing::nan;
    node.default_left = fields[4][i] != 0;
    int32_t children[2];
    for (int side = 0; side < 2; ++side) {
      const double c = side == 0 ? left[i] : right[i];
      const char* field = side == 0 ? "left_children" : "right_children";
      if (c < 0 || c >= static_cast<double>(n) || c != std::floor(c))
        return r.error(where, str_cat("node ", i, " field '", field, "' is ", c,
                                      ", expected a node index below ", n));
      const auto ci = static_cast<size_t>(c);
      if (renumbered[ci] != -1)
        return r.error(where, str_cat("node ", i, " field '", field, "' is ", ci,
                                      ", a node that already has a parent (the tree has a cycle "
                                      "or a shared node)"));
      renumbered[ci] = static_cast<int32_t>(tree.nodes.size());
      children[side] = renumbered[ci];
      tree.nodes.emplace_back();
      stack.push_back(ci);
    }
    // emplace_back may have moved the nodes: address the parent again.
    tree.nodes[renumbered[i]].left = children[0];
    tree.nodes[renumbered[i]].right = children[1];
  }
  return absl::OkStatus();
}

absl::Status read_model(const Reader& r, TreeEnsemble& m, const json& doc) {
  auto learner = r.member(doc, "learner", "document");
  if (!learner.ok()) return learner.status();
  auto param = r.member(**learner, "learner_model_param", "learner");
  if (!param.ok()) return param.status();
  auto num_feature = r.int_param(**param, "num_feature", "learner_model_param");
  if (!num_feature.ok()) return num_feature.status();
  auto num_class = r.int_param(**param, "num_class", "learner_model_param");
  if (!num_class.ok()) return num_class.status();
  int64_t num_target = 1;
  if ((*param)->contains("num_target")) {
    auto v = r.int_param(**param, "num_target", "learner_model_param");
    if (!v.ok()) return v.status();
    num_target = *v;
  }
  if (*num_feature <= 0 || *num_class < 0 || *num_class > (1 << 20) || num_target <= 0 ||
      num_target > (1 << 20))
    return r.error("learner_model_param", str_cat("has num_feature ", *num_feature, ", num_class ",
                                                  *num_class, ", num_target ", num_target));
  m.num_features = *num_feature;
  m.num_outputs = *num_class > 0 ? *num_class : num_target;

  auto objective = r.member(**learner, "objective", "learner");
  if (!objective.ok()) return objective.status();
  auto obj_name = r.member(**objective, "name", "learner objective");
  if (!obj_name.ok()) return obj_name.status();
  if (!(*obj_name)->is_string())
    return r.error("learner objective", "field 'name' is not a string");
  m.objective = (*obj_name)->get<std::string>();
  auto obj = objective_of(m);
  if (!obj.ok()) return obj.status();
  m.post_transform = obj->post;

  auto base = parse_base_score(r, **param);
  if (!base.ok()) return base.status();
  if (base->size() != 1 && static_cast<int64_t>(base->size()) != m.num_outputs)
    return r.error("learner_model_param", str_cat("field 'base_score' has ", base->size(),
                                                  " entries for ", m.num_outputs, " outputs"));
  for (int64_t o = 0; o < m.num_outputs; ++o) {
    const double p = (*base)[base->size() == 1 ? 0 : o];
    switch (obj->link) {
      case Objective::Link::identity:
        m.base_score.push_back(p);
        break;
      case Objective::Link::logit:
        if (!(p > 0.0 && p < 1.0))
          return r.error("learner_model_param", str_cat("field 'base_score' is ", p,
                                                        ", expected a probability in (0, 1)"));
        m.base_score.push_back(-std::log(1.0 / p - 1.0));
        break;
      case Objective::Link::log:
        if (!(p > 0.0))
          return r.error("learner_model_param",
                         str_cat("field 'base_score' is ", p, ", expected a positive number"));
        m.base_score.push_back(std::log(p));
        break;
    }
  }

  auto booster = r.member(**learner, "gradient_booster", "learner");
  if (!booster.ok()) return booster.status();
  auto booster_name = r.member(**booster, "name", "gradient_booster");
  if (!booster_name.ok()) return booster_name.status();
  const json* gbtree = *booster;
  std::vector<double> tree_weights;
  if (**booster_name == "dart") {
    // DART scales each tree's leaves by its weight_drop entry.
    auto inner = r.member(**booster, "gbtree", "gradient_booster");
    if (!inner.ok()) return inner.status();
    gbtree = *inner;
  } else if (**booster_name != "gbtree") {
    return absl::UnimplementedError(str_cat(model_label(m), ": booster ", (*booster_name)->dump(),
                                            " is not supported (only gbtree and dart)"));
  }
  auto model = r.member(*gbtree, "model", "gradient_booster");
  if (!model.ok()) return model.status();
  auto trees = r.member(**model, "trees", "gradient_booster model");
  if (!trees.ok()) return trees.status();
  if (!(*trees)->is_array())
    return r.error("gradient_booster model", "field 'trees' is not an array");
  const size_t count = (*trees)->size();
  auto info = r.numbers(**model, "tree_info", "gradient_booster model", count);
  if (!info.ok()) return info.status();
  if (**booster_name == "dart") {
    auto w = r.numbers(**booster, "weight_drop", "gradient_booster", count);
    if (!w.ok()) return w.status();
    tree_weights = *std::move(w);
  }
  m.trees.resize(count);
  for (size_t t = 0; t < count; ++t) {
    const double group = (*info)[t];
    if (group < 0 || group >= static_cast<double>(m.num_outputs) || group != std::floor(group))
      return r.error("gradient_booster model",
                     str_cat("field 'tree_info' entry ", t, " is ", group,
                             ", expected an output index below ", m.num_outputs));
    m.trees[t].output = static_cast<int32_t>(group);
    const double weight = tree_weights.empty() ? 1.0 : tree_weights[t];
    if (absl::Status s = read_tree(r, m, (**trees)[t], t, weight, m.trees[t]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TreeEnsemble> parse_xgboost_json(std::string_view text, std::string_view name) {
  TreeEnsemble m;
  m.name = std::string(name);
  m.source = "xgboost";
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(
        str_cat(model_label(m), ": cannot parse the JSON: ", e.what()));
  }
  Reader r(m);
  if (absl::Status s = read_model(r, m, doc); !s.ok()) return s;
  if (absl::Status s = validate_tree_ensemble(m); !s.ok()) return s;
  return m;
}

absl::StatusOr<TreeEnsemble> import_xgboost_json(const std::filesystem::path& path) {
  auto text = read_model_text(path);
  if (!text.ok()) return text.status();
  return parse_xgboost_json(*text, path.string());
}

}  // namespace collage
