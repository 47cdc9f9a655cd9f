// attnbench plugin for the hand-written kernel in tiled_attention.cu: what a kernel author's
// plugin looks like. The backend checks what the kernel takes, hands it raw pointers on
// PyTorch's current stream, and leaves everything else (inputs, timing, checking) to attnbench.
#include <attnbench/plugin.hpp>

#include "tiled_attention.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

namespace {

class WmmaBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "wmma"; }
  std::string description() const override {
    return "hand-written tiled attention: WMMA tensor cores, online softmax (example plugin)";
  }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    using attnbench::Support;
    if (p.device != attnbench::Device::cuda)
      return Support::no("a CUDA kernel; this point runs on the CPU");
    if (p.dtype == attnbench::DType::f32)
      return Support::no("WMMA kernel for bf16 and fp16 only, not fp32");
    if (p.head_dim != 64 && p.head_dim != 128)
      return Support::no("head_dim " + std::to_string(p.head_dim) + ": the kernel has 64 and 128");
    if (p.direction != attnbench::Direction::fwd)
      return Support::no("forward only: the example has no backward kernel");
    if (!p.variants().empty())
      return Support::no("the example kernel takes a uniform batch, not " + p.variants());
    return Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    at::Tensor out = at::empty_like(in.q);
    wmma_attention::Args args{in.q.data_ptr(),
                              in.k.data_ptr(),
                              in.v.data_ptr(),
                              out.data_ptr(),
                              in.q.size(0),
                              in.q.size(1),
                              in.k.size(1),
                              in.q.size(2),
                              in.k.size(2),
                              in.q.size(3),
                              in.problem.causal,
                              in.q.scalar_type() == at::kBFloat16,
                              static_cast<float>(in.scale)};
    wmma_attention::launch_forward(args, at::cuda::getCurrentCUDAStream());
    return out;
  }
};

}  // namespace

ATTNBENCH_PLUGIN(WmmaBackend)
