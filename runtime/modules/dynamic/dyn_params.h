// The parameters of the dynamic module's kernels (operators whose shapes are known only at run
// time) and their binary form, shared by the compiler (lib/backends/dynamic writes them) and the
// module (reads them). Depends only on the C++ library.
//
// Layout: u32 magic "DYNP", u32 version, u8 operator, the sources (a list), the list sources (a
// list), u32 list count, then each list. A list is a u32 count and that many little-endian i64.
// What each list means depends on the operator (DynOp). Version 3 appends u32 body count, then
// each body as u32 byte count and its bytes (If, Loop, Scan: dyn_body.h); versions 1 and 2 end
// after the lists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collage::rt_dynamic {

inline constexpr uint32_t kParamsMagic = 0x504E5944;  // "DYNP" read as a little-endian u32
inline constexpr uint32_t kParamsVersion = 3;

// The operators the module runs, with the lists their parameters hold.
enum class DynOp : uint8_t {
  nonzero,      // -
  nms,          // [center_point_box]
  unique,       // [axis, or kAllAxes], [sorted]
  gather,       // [axis]
  slice,        // starts, ends, axes, steps
  squeeze,      // axes (empty: every size-1 axis)
  unsqueeze,    // axes (of the output)
  reshape,      // shape, [allowzero]
  transpose,    // perm (empty: reversed)
  concat,       // [axis]
  cast,         // [collage_dtype_t of the output]
  identity,     // -
  add, sub, mul, div,  // numpy broadcasting
  greater, less, equal,  // numpy broadcasting, bool output
  relu, sigmoid, exp, neg, abs, sqrt,
  // axes, [keepdims], [noop_with_empty_axes]
  reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod, reduce_l1, reduce_l2,
  reduce_sum_square, reduce_log_sum, reduce_log_sum_exp,
  expand,             // shape
  tile,               // repeats
  constant_of_shape,  // shape, [the value's bytes as one little-endian i64] (empty: zeros)
  range,              // - (start, limit, delta are operands)
  pad,                // pads, [the value's bytes as one little-endian i64], axes, [mode]
  split,              // split (empty: equal pieces, one per output), [axis]
  resize,             // roi, scales, sizes, modes, float parameters, axes (dyn_ops_resize.cpp)
  top_k,              // k, [axis], [largest], [sorted]
  log, cos, sin,      // - (appended: the codes above are stored in artifacts)
  svm_pairwise_coupling,  // [classes] (an SVMClassifier's probabilities; any shapes)
  hann_window, hamming_window, blackman_window,  // [periodic]
  mel_weight_matrix,  // -
  center_crop_pad,    // axes (empty: every axis)
  col2im,             // dilations, pads, strides
  affine_grid,        // [align_corners]
  shape,              // [start], [end]
  dropout,            // [ratio's f32 bits], [training_mode] (either may be an operand)
  cum_sum, cum_prod,  // [exclusive], [reverse] (the axis is an operand, read at run time)
  scatter_nd,         // [reduction: ScatterReduction]
  scatter_elements,   // [reduction: ScatterReduction], [axis]
  pow,                // - (integer base and exponent)
  max_unpool,         // kernel_shape, strides, pads (output_shape an optional operand)
  tfidf_vectorizer,   // [mode], [min, max gram length, max skip], ngram_counts, ngram_indexes,
                      // pool_int64s, weights (f32 bits)
  rnn, gru, lstm,     // [reverse, dirs], [layout], [linear_before_reset], [hidden_size],
                      // [clip's f64 bits], activation kinds, alphas' and betas' f64 bits,
                      // output slots (0 Y, 1 Y_h, 2 Y_c per kernel output)
  matmul,             // - (numpy's matmul, f32 and f64)
  // Control flow (parameters version 3), each with its bodies (dyn_body.h) and, last, the node
  // output each kernel output is (a model may leave some unused):
  if_,    // bodies then, else; [output slots]. Inputs: cond, then the values the bodies read.
  loop,   // body; [num_captured], [output slots]. Inputs: M, cond (either may be absent),
          // the carried values, the values the body reads.
  scan,   // body; [num_scan_inputs], [num_captured], input axes, input directions, output
          // axes, output directions, [output slots]. Inputs: states, scan inputs, captured.
  tanh,                // - (f32, f64)
  logical_not,         // - (bool)
  logical_and, logical_or,  // numpy broadcasting, bool
  arg_max,             // [axis], [keepdims], [select_last_index]
  gemm,                // [transA], [transB], [alpha's f32 bits], [beta's f32 bits] (f32, f64)
  gather_elements,     // [axis] (indices i32 or i64, negative counting from the end)
  count_,
};

inline constexpr int64_t kAllAxes = INT64_MIN;

// ScatterND's and ScatterElements' reduction attribute as the module's code, and the code of an
// attribute value (nullopt for one ONNX does not define).
enum class ScatterReduction : int64_t { none, add, mul, max, min };
inline std::optional<ScatterReduction> scatter_reduction(std::string_view name) {
  if (name == "none") return ScatterReduction::none;
  if (name == "add") return ScatterReduction::add;
  if (name == "mul") return ScatterReduction::mul;
  if (name == "max") return ScatterReduction::max;
  if (name == "min") return ScatterReduction::min;
  return std::nullopt;
}

// The scans and scatters (dyn_ops_scan.cpp), which also run in static plans.
inline bool is_control_flow(DynOp op) {
  return op == DynOp::if_ || op == DynOp::loop || op == DynOp::scan;
}

inline bool is_scan_op(DynOp op) {
  return op == DynOp::cum_sum || op == DynOp::cum_prod || op == DynOp::scatter_nd ||
         op == DynOp::scatter_elements;
}

// The ONNX name of an operator ("NonZero", ...), and the operator of a name (count_ if none).
std::string_view dyn_op_name(DynOp op);
DynOp dyn_op_of(std::string_view name);

struct DynParams {
  DynOp op = DynOp::identity;
  // Where each input of the operator comes from: kernel argument k (k >= 0), kernel constant c
  // (-2 - c), or nowhere (-1: an absent optional input).
  std::vector<int64_t> sources;
  // Lists whose values are computed at run time (an ONNX shape-like input: Reduce axes, Reshape
  // shape): list i is read from operand list_sources[i] (an index into sources) when that is
  // >= 0. Such operands come after the operator's own.
  std::vector<int64_t> list_sources;
  std::vector<std::vector<int64_t>> lists;
  // The encoded bodies of If, Loop and Scan (dyn_body.h); empty for the other operators.
  std::vector<std::vector<uint8_t>> bodies;
  // List `i`, empty when absent.
  const std::vector<int64_t>& list(size_t i) const;
  // The single value of list `i`, or `fallback` when it is absent or empty.
  int64_t value(size_t i, int64_t fallback) const;
};

// Resize's modes as the codes its list 3 starts with (mode, coordinate mode, nearest mode,
// aspect policy); false for a name Resize does not know (dyn_ops_resize.cpp).
bool encode_resize_modes(const std::string& mode, const std::string& coord,
                         const std::string& nearest, const std::string& keep,
                         std::vector<int64_t>* codes);

std::vector<uint8_t> encode_params(const DynParams& p);
// Empty string on success, else what is wrong with the bytes.
std::string decode_params(const uint8_t* data, size_t size, DynParams* out);

}  // namespace collage::rt_dynamic
