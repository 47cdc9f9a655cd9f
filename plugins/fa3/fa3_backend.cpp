// FlashAttention-3's forward (Hopper), from the op library of the `fa3-fwd` wheel (ops
// fa3_fwd::*) or of `tokenspeed-fa3` (flash_attn_3::*, with fp16). Nothing of FA3 is needed to
// build: the library is dlopen'ed when the first CUDA point asks, its static initialisers register
// the ops with PyTorch's dispatcher, and forward() calls the op boxed, as torch.ops does from
// Python.
#include "fa3_library.hpp"

#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <string>
#include <tuple>

namespace {

using attnbench::DType;
using attnbench::Problem;
using attnbench::Support;

class Fa3Backend final : public attnbench::Backend {
 public:
  std::string name() const override { return "fa3"; }
  std::string description() const override {
    return "FlashAttention-3 forward (Hopper, sm_90) from the fa3-fwd or tokenspeed-fa3 wheel, "
           "loaded at run time; bf16 and fp8_e4m3 (fp16 with tokenspeed-fa3), head_dim <= 256, "
           "causal bottom-right, GQA, decode";
  }

  Support supports(const Problem& p) const override {
    if (auto cuda = attnbench::sdpa::needs_cuda(p, "FlashAttention-3"); !cuda.supported)
      return cuda;
    if (p.direction == attnbench::Direction::bwd)
      return Support::no("the FA3 wheels are built forward-only (FLASHATTENTION_DISABLE_BACKWARD)");
    if (p.dtype == DType::f32) return Support::no("FlashAttention-3 has no fp32 kernels");
    if (p.head_dim > 256 || p.head_dim % 8 != 0)
      return Support::no("FlashAttention-3 needs head_dim <= 256 and a multiple of 8, not " +
                         std::to_string(p.head_dim));
    const attnbench::fa3::Library& lib = attnbench::fa3::library();
    if (!lib.found()) return Support::no(lib.error);
    if (p.dtype == DType::f16 && !lib.has_fp16)
      return Support::no("the fa3-fwd wheel is built without fp16 (" + lib.path +
                         "); tokenspeed-fa3 has it");
    return Support::yes();
  }

  at::Tensor forward(const attnbench::Inputs& in) override {
    const attnbench::fa3::Library& lib = attnbench::fa3::library();
    // FA3 takes [batch, seq, heads, dim] with the last dimension contiguous: a transposed view of
    // the harness's [batch, heads, seq, dim], no copy.
    std::map<std::string, c10::IValue> args = {
        {"q", in.q.transpose(1, 2)},
        {"k", in.k.transpose(1, 2)},
        {"v", in.v.transpose(1, 2)},
        {"softmax_scale", in.scale},
        {"is_causal", in.causal_mask != nullptr},  // FA3's causal mask is bottom-right
    };
    if (in.q.scalar_type() == at::kFloat8_e4m3fn) {  // bf16 out
      args["q_descale"] = descale(in.q_scale, in.k);
      args["k_descale"] = descale(in.k_scale, in.k);
      args["v_descale"] = descale(in.v_scale, in.k);
    }
    return attnbench::fa3::call_forward(lib, args).transpose(1, 2);
  }

 private:
  // FA3 takes each scale as a float32 [batch, kv_heads] tensor on the device: made at the first
  // call of a point (outside the timed calls) and kept, so a call launches no fill.
  const at::Tensor& descale(double scale, const at::Tensor& k) {
    const auto key = std::make_tuple(scale, k.size(0), k.size(1));
    auto it = descales_.find(key);
    if (it == descales_.end()) {
      if (descales_.size() > 64) descales_.clear();
      it = descales_
               .emplace(key, at::full({k.size(0), k.size(1)}, scale, k.options().dtype(at::kFloat)))
               .first;
    }
    return it->second;
  }
  std::map<std::tuple<double, int64_t, int64_t>, at::Tensor> descales_;
};

}  // namespace

ATTNBENCH_PLUGIN(Fa3Backend)
