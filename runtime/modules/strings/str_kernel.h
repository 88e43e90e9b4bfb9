// A kernel of the strings module: one string operator (str_params.h) with its constants decoded
// at creation (LabelEncoder's table, StringNormalizer's stopwords, RegexFullMatch's compiled
// pattern), run through kernel_run_strings.
#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collage/runtime_module.h"
#include "str_params.h"
#include "text_algorithms.h"

namespace collage::rt_strings {

// Where the outputs of one run go: their buffers (alloc) and the bytes of their strings.
struct StrOutputs {
  collage_rt_alloc_fn alloc;
  collage_rt_bytes_fn bytes;
  void* ctx;
};

// Shared by the kernels' files (str_kernel.cpp, str_cast.cpp).
int64_t numel(const int64_t* shape, size_t rank);
// Output `index` of `shape`, or null with the reason in *error.
void* output(const StrOutputs& out, int32_t index, const std::vector<int64_t>& shape,
             std::string* error);
// Fills `y` with `pieces`, their bytes copied into one block of the run's string memory.
std::string write_strings(const std::vector<std::string_view>& pieces, collage_string_t* y,
                          const StrOutputs& out);

class StrKernel {
 public:
  // Empty on success, else why the descriptor is refused. Every constant is copied: the kernel
  // keeps nothing of the descriptor.
  static std::string create(const collage_kernel_desc_t& desc, StrKernel*& out);

  // Empty on success, else what went wrong.
  std::string run(const collage_rt_tensor_t* inputs, int32_t num_inputs,
                  const StrOutputs& out) const;
  // run() for a kernel without string values (a LabelEncoder between numbers), as a static
  // kernel: `args` hold the inputs, then the outputs, of the descriptor's shapes.
  std::string run_static(void* const* args) const;

 private:
  struct Arg {
    int32_t dtype = 0;
    std::vector<int64_t> shape;  // -1 where known only at run time
  };
  // An operand: kernel input `input`, or (input -1) a constant copied at creation.
  struct Operand {
    int64_t input = -1;
    std::vector<std::string> strings;
    std::vector<collage_string_t> views;  // into `strings`
    std::vector<uint8_t> raw;
  };
  // A LabelEncoder value list (or its default): strings, or raw elements of `dtype`.
  struct Values {
    int32_t dtype = 0;
    std::vector<std::string> strings;
    std::vector<uint8_t> raw;
  };

  std::string setup_operands(const collage_kernel_desc_t& desc);
  std::string setup_label_encoder(const collage_kernel_desc_t& desc);
  std::string setup_normalizer(const collage_kernel_desc_t& desc);

  std::string run_label_encoder(const collage_rt_tensor_t& x, const StrOutputs& out) const;
  std::string run_normalizer(const collage_rt_tensor_t& x, const StrOutputs& out) const;
  std::string run_binary(const collage_rt_tensor_t& a, const collage_rt_tensor_t& b,
                         const StrOutputs& out) const;
  std::string run_split(const collage_rt_tensor_t& x, const StrOutputs& out) const;
  std::string run_regex(const collage_rt_tensor_t& x, const StrOutputs& out) const;
  // str_cast.cpp
  std::string run_cast(const collage_rt_tensor_t& x, const StrOutputs& out) const;
  // The place of element i of x among LabelEncoder's keys, or -1.
  int64_t find_key(const collage_rt_tensor_t& x, int64_t i) const;

  StrParams params_;
  std::vector<Arg> args_;  // the operator's operands, then its outputs
  std::vector<Operand> operands_;
  int32_t num_inputs_ = 0;
  int32_t attr_constants_ = 0;  // the first kernel constant after the operands' ones
  // LabelEncoder
  int32_t key_dtype_ = 0;
  std::unordered_map<std::string, int64_t> string_keys_;
  std::map<int64_t, int64_t> int_keys_;
  std::map<double, int64_t> float_keys_;
  int64_t nan_key_ = -1;
  Values values_, default_;
  // StringNormalizer
  std::optional<text::CaseMapper> mapper_;
  std::unordered_set<std::string> stopwords_;
  // RegexFullMatch
  std::unique_ptr<RE2> regex_;
};

}  // namespace collage::rt_strings
