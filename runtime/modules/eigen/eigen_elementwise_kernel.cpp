// The standalone elementwise kernel: an elementwise program over equal blocks of the output.
#include <algorithm>

#include "eigen_elementwise.h"
#include "eigen_kernel.h"

namespace collage::rt_eigen {
namespace {

// Element operations are cheaper than a multiply-add chain of the same count only by a small
// factor; this converts them into the work units of units_for_work.
constexpr double kWorkPerElementStep = 4;
constexpr int64_t kElementGrain = 1024;

// A standalone elementwise program: the output is cut into equal blocks of elements.
class ElementwiseKernel : public EigenKernel {
 public:
  explicit ElementwiseKernel(int32_t out) : out_(out) {}

  std::string init(const KernelSetup& s, const ElementwiseParams& p) {
    if (p.program.steps.empty() || p.program.steps[0].op != EwOp::load)
      return "elementwise: the program must start with a load step";
    numel_ = s.num_args() > s.num_inputs() ? s.arg(s.num_inputs()).numel : 0;
    if (std::string e = s.check_single_output(numel_); !e.empty()) return "elementwise: " + e;
    if (std::string e = engine_.init(p.program, s, numel_); !e.empty()) return "elementwise: " + e;
    const double work = static_cast<double>(numel_) * static_cast<double>(p.program.steps.size()) *
                        kWorkPerElementStep;
    block_ = round_up(ceil_div(std::max<int64_t>(numel_, 1), units_for_work(work)), kElementGrain);
    units_ = ceil_div(numel_, block_);
    return {};
  }

  void run(void* const* args, int64_t unit_begin, int64_t unit_end) const override {
    engine_.apply(static_cast<float*>(args[out_]), args, unit_begin * block_,
                  std::min(numel_, unit_end * block_));
  }

 private:
  int32_t out_;
  EwEngine engine_;
  int64_t numel_ = 0, block_ = 1;
};

}  // namespace

std::string create_elementwise_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                                      KernelPtr& out) {
  ElementwiseParams p;
  if (std::string e = decode_params(params, size, p); !e.empty()) return "elementwise " + e;
  auto kernel = std::make_unique<ElementwiseKernel>(s.num_inputs());
  if (std::string e = kernel->init(s, p); !e.empty()) return e;
  out = std::move(kernel);
  return {};
}

}  // namespace collage::rt_eigen
