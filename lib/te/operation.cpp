// Operations: placeholders, computes and reduction axes; tensor accessors and element reads.
#include <set>

#include "collage/loop_ir.h"
#include "collage/te.h"
#include "core/str_cat.h"

namespace collage::te {

const std::string& Tensor::name() const {
  return node_->name;
}
const Shape& Tensor::shape() const {
  return node_->shape;
}
DType Tensor::dtype() const {
  return node_->dtype;
}
OpKind Tensor::op_kind() const {
  return node_->kind;
}

IterVar Tensor::axis(int i) const {
  if (i < 0 || i >= static_cast<int>(node_->axis.size())) return IterVar();
  return node_->axis[i];
}

IterVar Tensor::reduce_axis(int i) const {
  if (i < 0 || i >= static_cast<int>(node_->reduce_axis.size())) return IterVar();
  return node_->reduce_axis[i];
}

Expr Tensor::operator()(std::vector<Expr> indices) const {
  DType t = node_ ? node_->dtype : DType::f32;
  return Expr(std::make_shared<ProducerLoadNode>(t, *this, std::move(indices)));
}

IterVar reduce_axis(Range dom, std::string name) {
  return IterVar(Var(std::move(name)), dom, IterKind::reduce);
}

Tensor placeholder(Shape shape, DType dtype, std::string name) {
  auto n = std::make_shared<TensorNode>();
  n->name = std::move(name);
  n->shape = std::move(shape);
  n->dtype = dtype;
  n->kind = OpKind::placeholder;
  return Tensor(std::move(n));
}

namespace detail {

Tensor compute_n(Shape shape, int arity, const std::function<Expr(const std::vector<Var>&)>& f,
                 std::string name, std::string tag) {
  auto n = std::make_shared<TensorNode>();
  n->name = std::move(name);
  n->shape = std::move(shape);
  n->kind = OpKind::compute;
  n->tag = std::move(tag);
  std::vector<Var> vars;
  for (size_t d = 0; d < n->shape.size(); ++d) {
    Var v(str_cat("i", d));
    vars.push_back(v);
    n->axis.emplace_back(v, Range{0, n->shape[d]}, IterKind::data_par);
  }
  if (arity >= 0 && arity != static_cast<int>(n->shape.size())) {
    n->error = str_cat("compute '", n->name, "': the index function takes ", arity,
                       " indices but the shape ", shape_to_string(n->shape), " has rank ",
                       n->shape.size());
    return Tensor(std::move(n));
  }
  n->body = f(vars);
  if (n->body.defined()) {
    n->dtype = n->body.dtype();
    if (const auto* r = n->body.as<ReduceNode>()) n->reduce_axis = r->axis;
  }
  return Tensor(std::move(n));
}

}  // namespace detail

Tensor compute(Shape shape, const std::function<Expr(const std::vector<Var>&)>& f, std::string name,
               std::string tag) {
  return detail::compute_n(std::move(shape), -1, f, std::move(name), std::move(tag));
}

namespace {
class InputCollector : public ExprVisitor {
 public:
  std::vector<Tensor> inputs;

 protected:
  void visit_ProducerLoad(const ProducerLoadNode& n, const Expr& e) override {
    if (n.producer.defined() && seen_.insert(n.producer.get()).second) inputs.push_back(n.producer);
    ExprVisitor::visit_ProducerLoad(n, e);
  }

 private:
  std::set<const TensorNode*> seen_;
};
}  // namespace

std::vector<Tensor> input_tensors(const Tensor& t) {
  if (!t.defined() || t.op_kind() != OpKind::compute) return {};
  InputCollector c;
  c.visit(t->body);
  return c.inputs;
}

}  // namespace collage::te
