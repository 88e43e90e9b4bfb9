// The strings module's kernels: LabelEncoder over any key and value types, StringNormalizer,
// StringConcat, StringEqual, StringSplit and RegexFullMatch, with the meaning the compiler's
// reference kernels give them (lib/ops/text_strings.cpp, text_regex.cpp, ml_label_encoder.cpp).
#include "str_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

namespace collage::rt_strings {
namespace {

constexpr int32_t kStr = COLLAGE_DTYPE_STRING;

std::string_view view(const collage_string_t& s) { return {s.data, s.size}; }

bool is_float(int32_t t) { return t == COLLAGE_DTYPE_F32 || t == COLLAGE_DTYPE_F64; }

// Element i of a numeric buffer of dtype t (not f16/bf16) as a 64-bit integer / a double.
int64_t int_at(const void* p, int32_t t, int64_t i) {
  switch (t) {
    case COLLAGE_DTYPE_I8: return static_cast<const int8_t*>(p)[i];
    case COLLAGE_DTYPE_I16: return static_cast<const int16_t*>(p)[i];
    case COLLAGE_DTYPE_I32: return static_cast<const int32_t*>(p)[i];
    case COLLAGE_DTYPE_I64: return static_cast<const int64_t*>(p)[i];
    case COLLAGE_DTYPE_BOOL:
    case COLLAGE_DTYPE_U8: return static_cast<const uint8_t*>(p)[i];
    case COLLAGE_DTYPE_U16: return static_cast<const uint16_t*>(p)[i];
    case COLLAGE_DTYPE_U32: return static_cast<const uint32_t*>(p)[i];
    default: return static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]);
  }
}
double float_at(const void* p, int32_t t, int64_t i) {
  return t == COLLAGE_DTYPE_F32 ? static_cast<const float*>(p)[i]
                                : static_cast<const double*>(p)[i];
}

bool supported_label_type(int32_t t) {
  return t == kStr || (collage_dtype_size(t) && t != COLLAGE_DTYPE_F16 && t != COLLAGE_DTYPE_BF16);
}

// Row-major strides of `shape` for broadcasting into an output of rank `rank`: 0 on the
// dimensions it is broadcast along (numpy's rules, aligned on the right).
std::vector<int64_t> broadcast_strides(const int64_t* shape, size_t r, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t step = 1;
  for (size_t k = 0; k < r; ++k) {
    const size_t d = r - 1 - k;
    strides[rank - 1 - k] = shape[d] == 1 ? 0 : step;
    step *= shape[d];
  }
  return strides;
}

}  // namespace

int64_t numel(const int64_t* shape, size_t rank) {
  int64_t n = 1;
  for (size_t d = 0; d < rank; ++d) n *= shape[d];
  return n;
}

void* output(const StrOutputs& out, int32_t index, const std::vector<int64_t>& shape,
             std::string* error) {
  static constexpr int64_t kScalar = 0;  // a valid pointer for a scalar's empty shape
  void* p = out.alloc(out.ctx, index, shape.empty() ? &kScalar : shape.data());
  if (!p) *error = "the runtime gave no buffer for output " + std::to_string(index);
  return p;
}

std::string write_strings(const std::vector<std::string_view>& pieces, collage_string_t* y,
                          const StrOutputs& out) {
  uint64_t total = 0;
  for (std::string_view s : pieces) total += s.size();
  char* bytes = total ? static_cast<char*>(out.bytes(out.ctx, total)) : nullptr;
  if (total && !bytes) return "no memory for " + std::to_string(total) + " bytes of strings";
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (!pieces[i].empty()) std::memcpy(bytes, pieces[i].data(), pieces[i].size());
    y[i] = {pieces[i].empty() ? nullptr : bytes, pieces[i].size()};
    bytes += pieces[i].size();
  }
  return "";
}

std::string StrKernel::create(const collage_kernel_desc_t& desc, StrKernel*& out) {
  auto k = std::make_unique<StrKernel>();
  if (std::string e = decode_params(desc.params, desc.params_size, &k->params_); !e.empty())
    return e;
  if (std::string e = k->setup_operands(desc); !e.empty()) return e;
  const int32_t operands = static_cast<int32_t>(k->operands_.size());
  const int32_t outputs = desc.num_args - desc.num_inputs;
  auto arity = [&](int32_t in, int32_t outs) {
    return operands == in && outputs == outs
               ? std::string()
               : std::string(str_op_name(k->params_.op)) + " takes " + std::to_string(in) +
                     " operands and " + std::to_string(outs) + " outputs, not " +
                     std::to_string(operands) + " and " + std::to_string(outputs);
  };
  auto types = [&](std::initializer_list<int32_t> want) {
    int32_t i = 0;
    for (int32_t t : want) {
      if (k->args_[i].dtype != t)
        return std::string(str_op_name(k->params_.op)) + ": argument " + std::to_string(i) +
               " has dtype " + std::to_string(k->args_[i].dtype) + ", expected " +
               std::to_string(t);
      ++i;
    }
    return std::string();
  };
  std::string e;
  switch (k->params_.op) {
    case StrOp::label_encoder:
      e = arity(1, 1);
      if (e.empty()) e = k->setup_label_encoder(desc);
      break;
    case StrOp::string_normalizer:
      e = arity(1, 1);
      if (e.empty()) e = types({kStr, kStr});
      if (e.empty()) e = k->setup_normalizer(desc);
      break;
    case StrOp::string_concat:
      e = arity(2, 1);
      if (e.empty()) e = types({kStr, kStr, kStr});
      break;
    case StrOp::string_equal:
      e = arity(2, 1);
      if (e.empty()) e = types({kStr, kStr, COLLAGE_DTYPE_BOOL});
      break;
    case StrOp::string_split:
      e = arity(1, 2);
      if (e.empty()) e = types({kStr, kStr, COLLAGE_DTYPE_I64});
      if (e.empty() && (k->params_.ints.size() != 1 || k->params_.strings.size() != 1))
        e = "StringSplit wants maxsplit and the delimiter";
      break;
    case StrOp::regex_full_match: {
      e = arity(1, 1);
      if (e.empty()) e = types({kStr, COLLAGE_DTYPE_BOOL});
      if (e.empty() && k->params_.strings.size() != 1) e = "RegexFullMatch wants its pattern";
      if (!e.empty()) break;
      RE2::Options options;
      options.set_log_errors(false);
      k->regex_ = std::make_unique<RE2>(k->params_.strings[0], options);
      if (!k->regex_->ok())
        e = "pattern '" + k->params_.strings[0] +
            "' is not a valid RE2 regular expression: " + k->regex_->error();
      break;
    }
    case StrOp::cast_string: {
      e = arity(1, 1);
      const int32_t from = e.empty() ? k->args_[0].dtype : 0, to = e.empty() ? k->args_[1].dtype : 0;
      if (e.empty() && (from == kStr) == (to == kStr))
        e = "CastString casts to or from a string, not dtype " + std::to_string(from) + " to " +
            std::to_string(to);
      break;
    }
    case StrOp::count_:
      e = "no operator";
      break;
  }
  if (!e.empty()) return e;
  out = k.release();
  return "";
}

std::string StrKernel::setup_operands(const collage_kernel_desc_t& desc) {
  auto valid = [](const collage_tensor_desc_t& a) {
    return a.rank >= 0 && a.rank <= 16 && (!a.rank || a.shape) && collage_dtype_size(a.dtype);
  };
  auto type_of = [](const collage_tensor_desc_t& a) {
    return Arg{a.dtype, std::vector<int64_t>(a.shape, a.shape + a.rank)};
  };
  num_inputs_ = desc.num_inputs;
  for (int32_t i = 0; i < desc.num_args; ++i)
    if (!valid(desc.args[i])) return "argument " + std::to_string(i) + " has no valid type";
  int32_t operand_constants = 0;
  for (int64_t s : params_.sources) {
    Operand& o = operands_.emplace_back();
    if (s >= 0 && s < desc.num_inputs) {
      o.input = s;
      args_.push_back(type_of(desc.args[s]));
      continue;
    }
    const int64_t c = -2 - s;
    if (s > -2 || c >= desc.num_constants || !valid(desc.constant_descs[c]))
      return "operand source " + std::to_string(s) + " names no input or constant";
    const collage_tensor_desc_t& d = desc.constant_descs[c];
    args_.push_back(type_of(d));
    const int64_t n = numel(d.shape, static_cast<size_t>(d.rank));
    if (d.dtype == kStr) {
      const auto* v = static_cast<const collage_string_t*>(desc.constants[c]);
      for (int64_t i = 0; i < n; ++i) o.strings.emplace_back(view(v[i]));
      for (const std::string& str : o.strings) o.views.push_back({str.data(), str.size()});
    } else {
      const auto* b = static_cast<const uint8_t*>(desc.constants[c]);
      o.raw.assign(b, b + n * static_cast<int64_t>(collage_dtype_size(d.dtype)));
    }
    operand_constants = std::max<int32_t>(operand_constants, static_cast<int32_t>(c) + 1);
  }
  attr_constants_ = operand_constants;
  for (int32_t i = desc.num_inputs; i < desc.num_args; ++i) args_.push_back(type_of(desc.args[i]));
  return "";
}

std::string StrKernel::setup_label_encoder(const collage_kernel_desc_t& desc) {
  if (desc.num_constants - attr_constants_ != 3)
    return "LabelEncoder takes its keys, values and default as 3 constants, not " +
           std::to_string(desc.num_constants - attr_constants_);
  const collage_tensor_desc_t* c = desc.constant_descs + attr_constants_;
  const void* const* constants = desc.constants + attr_constants_;
  key_dtype_ = c[0].dtype;
  const int64_t n = numel(c[0].shape, static_cast<size_t>(c[0].rank));
  if (c[0].dtype != args_[0].dtype || c[1].dtype != args_[1].dtype ||
      c[2].dtype != args_[1].dtype || !supported_label_type(c[0].dtype) ||
      !supported_label_type(c[1].dtype))
    return "LabelEncoder: keys of dtype " + std::to_string(c[0].dtype) + " and values of dtype " +
           std::to_string(c[1].dtype) + " for X of dtype " + std::to_string(args_[0].dtype) +
           " and Y of dtype " + std::to_string(args_[1].dtype);
  if (numel(c[1].shape, static_cast<size_t>(c[1].rank)) != n ||
      numel(c[2].shape, static_cast<size_t>(c[2].rank)) != 1)
    return "LabelEncoder: keys and values of different lengths, or a default that is not one value";
  for (int64_t i = 0; i < n; ++i) {
    bool fresh = true;
    const void* keys = constants[0];
    if (key_dtype_ == kStr) {
      fresh = string_keys_.emplace(std::string(view(static_cast<const collage_string_t*>(keys)[i])), i)
                  .second;
    } else if (is_float(key_dtype_)) {
      const double v = float_at(keys, key_dtype_, i);
      if (!std::isnan(v)) fresh = float_keys_.emplace(v, i).second;
      else if (nan_key_ < 0) nan_key_ = i;
      else fresh = false;
    } else {
      fresh = int_keys_.emplace(int_at(keys, key_dtype_, i), i).second;
    }
    if (!fresh) return "LabelEncoder: key " + std::to_string(i) + " repeats an earlier key";
  }
  auto copy = [](const void* p, int32_t dtype, int64_t count, Values* v) {
    v->dtype = dtype;
    if (dtype == kStr) {
      for (int64_t i = 0; i < count; ++i)
        v->strings.emplace_back(view(static_cast<const collage_string_t*>(p)[i]));
    } else {
      const auto* b = static_cast<const uint8_t*>(p);
      v->raw.assign(b, b + count * static_cast<int64_t>(collage_dtype_size(dtype)));
    }
  };
  copy(constants[1], c[1].dtype, n, &values_);
  copy(constants[2], c[2].dtype, 1, &default_);
  return "";
}

std::string StrKernel::setup_normalizer(const collage_kernel_desc_t& desc) {
  if (params_.ints.size() != 2 || params_.ints[0] < 0 || params_.ints[0] > 2)
    return "StringNormalizer wants its case change (0-2) and case sensitivity";
  if (desc.num_constants - attr_constants_ != 1 ||
      desc.constant_descs[attr_constants_].dtype != kStr)
    return "StringNormalizer takes its stopwords as one string constant";
  const size_t rank = args_[0].shape.size();
  if (!(rank == 1 || (rank == 2 && args_[0].shape[0] == 1)))
    return "StringNormalizer: X must be [C] or [1, C]";
  std::string error;
  mapper_ = text::CaseMapper::make(&error);
  if (!mapper_) return error;
  const collage_tensor_desc_t& c = desc.constant_descs[attr_constants_];
  const auto* words = static_cast<const collage_string_t*>(desc.constants[attr_constants_]);
  for (int64_t i = 0; i < numel(c.shape, static_cast<size_t>(c.rank)); ++i) {
    std::string w(view(words[i]));
    if (!params_.ints[1]) {
      auto lower = mapper_->map(w, false);
      if (!lower) return "stopword '" + w + "' is not valid UTF-8";
      w = *std::move(lower);
    }
    stopwords_.insert(std::move(w));
  }
  return "";
}

int64_t StrKernel::find_key(const collage_rt_tensor_t& x, int64_t i) const {
  if (key_dtype_ == kStr) {
    auto it = string_keys_.find(std::string(view(static_cast<const collage_string_t*>(x.data)[i])));
    return it == string_keys_.end() ? -1 : it->second;
  }
  if (is_float(key_dtype_)) {
    const double v = float_at(x.data, key_dtype_, i);
    if (std::isnan(v)) return nan_key_;
    auto it = float_keys_.find(v);
    return it == float_keys_.end() ? -1 : it->second;
  }
  auto it = int_keys_.find(int_at(x.data, key_dtype_, i));
  return it == int_keys_.end() ? -1 : it->second;
}

std::string StrKernel::run_label_encoder(const collage_rt_tensor_t& x,
                                         const StrOutputs& out) const {
  std::vector<int64_t> shape(x.shape, x.shape + args_[0].shape.size());
  std::string error;
  void* y = output(out, 0, shape, &error);
  if (!y) return error;
  const int64_t n = numel(shape.data(), shape.size());
  if (values_.dtype == kStr) {
    std::vector<std::string_view> picked(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = find_key(x, i);
      picked[i] = at < 0 ? default_.strings[0] : values_.strings[at];
    }
    return write_strings(picked, static_cast<collage_string_t*>(y), out);
  }
  const size_t size = collage_dtype_size(values_.dtype);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = find_key(x, i);
    std::memcpy(static_cast<uint8_t*>(y) + i * size,
                at < 0 ? default_.raw.data() : values_.raw.data() + at * size, size);
  }
  return "";
}

std::string StrKernel::run_normalizer(const collage_rt_tensor_t& x, const StrOutputs& out) const {
  const size_t rank = args_[0].shape.size();
  const int64_t n = numel(x.shape, rank);
  const auto* in = static_cast<const collage_string_t*>(x.data);
  std::vector<std::string> kept;
  for (int64_t i = 0; i < n; ++i) {
    const std::string_view s = view(in[i]);
    std::optional<std::string> key = params_.ints[1] ? std::string(s) : mapper_->map(s, false);
    if (!key) return "X '" + std::string(s) + "' is not valid UTF-8";
    if (stopwords_.count(*key)) continue;
    if (params_.ints[0] == 0) {
      kept.emplace_back(s);
      continue;
    }
    auto changed = mapper_->map(s, params_.ints[0] == 2);
    if (!changed) return "X '" + std::string(s) + "' is not valid UTF-8";
    kept.push_back(*std::move(changed));
  }
  if (kept.empty()) kept.emplace_back();
  const int64_t count = static_cast<int64_t>(kept.size());
  std::string error;
  void* y = output(out, 0, rank == 1 ? std::vector<int64_t>{count} : std::vector<int64_t>{1, count},
                   &error);
  if (!y) return error;
  return write_strings(std::vector<std::string_view>(kept.begin(), kept.end()),
                       static_cast<collage_string_t*>(y), out);
}

std::string StrKernel::run_binary(const collage_rt_tensor_t& a, const collage_rt_tensor_t& b,
                                  const StrOutputs& out) const {
  const size_t ra = args_[0].shape.size(), rb = args_[1].shape.size();
  const size_t rank = std::max(ra, rb);
  std::vector<int64_t> shape(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k < ra ? a.shape[ra - 1 - k] : 1, db = k < rb ? b.shape[rb - 1 - k] : 1;
    if (da != db && da != 1 && db != 1)
      return "shapes that do not broadcast (" + std::to_string(da) + " against " +
             std::to_string(db) + ")";
    shape[rank - 1 - k] = da == 1 ? db : da;
  }
  std::string error;
  void* y = output(out, 0, shape, &error);
  if (!y) return error;
  const std::vector<int64_t> sa = broadcast_strides(a.shape, ra, rank),
                             sb = broadcast_strides(b.shape, rb, rank);
  const int64_t n = numel(shape.data(), rank);
  const auto* xa = static_cast<const collage_string_t*>(a.data);
  const auto* xb = static_cast<const collage_string_t*>(b.data);
  std::vector<int64_t> index(rank, 0);
  std::vector<std::string> joined;
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < rank; ++d) ia += index[d] * sa[d], ib += index[d] * sb[d];
    if (params_.op == StrOp::string_equal)
      static_cast<uint8_t*>(y)[i] = view(xa[ia]) == view(xb[ib]) ? 1 : 0;
    else
      joined.push_back(std::string(view(xa[ia])) + std::string(view(xb[ib])));
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  if (params_.op == StrOp::string_equal) return "";
  return write_strings(std::vector<std::string_view>(joined.begin(), joined.end()),
                       static_cast<collage_string_t*>(y), out);
}

std::string StrKernel::run_split(const collage_rt_tensor_t& x, const StrOutputs& out) const {
  const size_t rank = args_[0].shape.size();
  const int64_t n = numel(x.shape, rank);
  const auto* in = static_cast<const collage_string_t*>(x.data);
  std::vector<std::vector<std::string_view>> pieces(static_cast<size_t>(n));
  int64_t width = 0;
  for (int64_t i = 0; i < n; ++i) {
    pieces[i] = text::split(view(in[i]), params_.strings[0], params_.ints[0]);
    width = std::max<int64_t>(width, static_cast<int64_t>(pieces[i].size()));
  }
  std::vector<int64_t> shape(x.shape, x.shape + rank);
  std::string error;
  auto* counts = static_cast<int64_t*>(output(out, 1, shape, &error));
  if (!counts) return error;
  shape.push_back(width);
  auto* y = static_cast<collage_string_t*>(output(out, 0, shape, &error));
  if (!y) return error;
  std::vector<std::string_view> flat(static_cast<size_t>(n * width));
  for (int64_t i = 0; i < n; ++i) {
    counts[i] = static_cast<int64_t>(pieces[i].size());
    std::copy(pieces[i].begin(), pieces[i].end(), flat.begin() + i * width);
  }
  return write_strings(flat, y, out);
}

std::string StrKernel::run_regex(const collage_rt_tensor_t& x, const StrOutputs& out) const {
  std::vector<int64_t> shape(x.shape, x.shape + args_[0].shape.size());
  std::string error;
  auto* y = static_cast<uint8_t*>(output(out, 0, shape, &error));
  if (!y) return error;
  const auto* in = static_cast<const collage_string_t*>(x.data);
  for (int64_t i = 0; i < numel(shape.data(), shape.size()); ++i)
    y[i] = RE2::FullMatch(view(in[i]), *regex_) ? 1 : 0;
  return "";
}

std::string StrKernel::run_static(void* const* args) const {
  for (const Arg& a : args_)
    if (a.dtype == kStr) return "a kernel with strings runs with kernel_run_strings";
  struct Planned {
    void* const* outputs;
    const std::vector<Arg>* types;  // the outputs'
  };
  const std::vector<Arg> outputs(args_.begin() + static_cast<ptrdiff_t>(operands_.size()),
                                 args_.end());
  Planned planned{args + num_inputs_, &outputs};
  auto alloc = [](void* ctx, int32_t index, const int64_t* shape) -> void* {
    const auto& p = *static_cast<Planned*>(ctx);
    if (index < 0 || static_cast<size_t>(index) >= p.types->size()) return nullptr;
    const std::vector<int64_t>& want = (*p.types)[index].shape;
    return std::equal(want.begin(), want.end(), shape) ? p.outputs[index] : nullptr;
  };
  auto no_bytes = [](void*, uint64_t) -> void* { return nullptr; };
  std::vector<collage_rt_tensor_t> inputs(static_cast<size_t>(num_inputs_));
  for (size_t i = 0; i < operands_.size(); ++i)
    if (operands_[i].input >= 0) inputs[operands_[i].input] = {args[operands_[i].input],
                                                               args_[i].shape.data()};
  return run(inputs.data(), num_inputs_, StrOutputs{alloc, no_bytes, &planned});
}

std::string StrKernel::run(const collage_rt_tensor_t* inputs, int32_t num_inputs,
                           const StrOutputs& out) const {
  if (num_inputs != num_inputs_ || (num_inputs && !inputs))
    return std::string(str_op_name(params_.op)) + " got " + std::to_string(num_inputs) +
           " inputs, it takes " + std::to_string(num_inputs_);
  std::vector<collage_rt_tensor_t> x;
  for (size_t i = 0; i < operands_.size(); ++i) {
    const Operand& o = operands_[i];
    if (o.input >= 0)
      x.push_back(inputs[o.input]);
    else
      x.push_back({args_[i].dtype == kStr ? static_cast<const void*>(o.views.data())
                                          : static_cast<const void*>(o.raw.data()),
                   args_[i].shape.data()});
  }
  switch (params_.op) {
    case StrOp::label_encoder: return run_label_encoder(x[0], out);
    case StrOp::string_normalizer: return run_normalizer(x[0], out);
    case StrOp::string_concat:
    case StrOp::string_equal: return run_binary(x[0], x[1], out);
    case StrOp::string_split: return run_split(x[0], out);
    case StrOp::regex_full_match: return run_regex(x[0], out);
    case StrOp::cast_string: return run_cast(x[0], out);
    case StrOp::count_: break;
  }
  return "no operator";
}

}  // namespace collage::rt_strings
