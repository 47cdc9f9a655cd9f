#include <attnbench/sdpa/forced_sdpa.hpp>

#include <attnbench/sdpa/autograd_backward.hpp>

#include <ATen/Context.h>
#include <c10/util/Exception.h>

#include <vector>

namespace attnbench::sdpa {

namespace {

// Saves every global SDPA switch, enables exactly one kernel, restores all on scope exit.
class OnlyKernel {
 public:
  explicit OnlyKernel(Kernel kernel) {
    auto& ctx = at::globalContext();
    math_ = ctx.userEnabledMathSDP();
    efficient_ = ctx.userEnabledMemEfficientSDP();
    flash_ = ctx.userEnabledFlashSDP();
    cudnn_ = ctx.userEnabledCuDNNSDP();
    overrideable_ = ctx.userEnabledOverrideableSDP();
    fa3_ = ctx.userEnabledFA3SDP();
    set(kernel == Kernel::math, kernel == Kernel::efficient, kernel == Kernel::flash,
        kernel == Kernel::cudnn, false, false);
  }
  ~OnlyKernel() { set(math_, efficient_, flash_, cudnn_, overrideable_, fa3_); }
  OnlyKernel(const OnlyKernel&) = delete;
  OnlyKernel& operator=(const OnlyKernel&) = delete;

 private:
  static void set(bool math, bool efficient, bool flash, bool cudnn, bool overrideable, bool fa3) {
    auto& ctx = at::globalContext();
    ctx.setSDPUseMath(math);
    ctx.setSDPUseMemEfficient(efficient);
    ctx.setSDPUseFlash(flash);
    ctx.setSDPUseCuDNN(cudnn);
    ctx.setSDPUseOverrideable(overrideable);
    ctx.setSDPUseFA3(fa3);
  }
  bool math_, efficient_, flash_, cudnn_, overrideable_, fa3_;
};

class CollectWarnings : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override { messages.push_back(warning.msg()); }
  std::vector<std::string> messages;
};

std::string kernel_words(Kernel kernel) {
  switch (kernel) {
    case Kernel::math: return "math";
    case Kernel::efficient: return "memory efficient";
    case Kernel::flash: return "flash attention";
    case Kernel::cudnn: return "cudnn attention";
  }
  return "";
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string strip_location(std::string msg) {
  for (const char* marker : {" (Triggered internally", "\nException raised from"})
    if (auto pos = msg.find(marker); pos != std::string::npos) msg.resize(pos);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

}  // namespace

std::string refusal_reason(Kernel kernel, const std::vector<std::string>& warnings) {
  // PyTorch prints a header "<Kernel> kernel not used because:" followed by one warning per reason,
  // for every kernel, including the ones we switched off ("... has been runtime disabled").
  const std::string wanted = kernel_words(kernel);
  std::string reason;
  bool in_section = false, any_section = false;
  for (const auto& raw : warnings) {
    const std::string msg = strip_location(raw);
    const std::string low = lower(msg);
    if (low.find("not used because") != std::string::npos) {
      in_section = low.find(wanted) != std::string::npos;
      any_section = true;
      continue;
    }
    if (!in_section || low.find("runtime disabled") != std::string::npos) continue;
    reason += (reason.empty() ? "" : "; ") + msg;
  }
  if (!any_section)  // not the usual layout: keep everything rather than lose the reason
    for (const auto& raw : warnings) reason += (reason.empty() ? "" : "; ") + strip_location(raw);
  return reason;
}

namespace {

bool is_cuda_failure(const std::string& what) { return what.rfind("CUDA error", 0) == 0; }

// A query block shorter than the keys with a causal mask: PyTorch's is_causal is aligned top-left,
// so each kernel gets the bottom-right mask the way torch.nn.attention.bias.causal_lower_right
// gives it.
at::Tensor bottom_right_attention(Kernel kernel, const Inputs& in) {
  const bool gqa = in.q.size(1) != in.k.size(1);
  const int64_t seq = in.q.size(2), seq_kv = in.k.size(2);
  auto bshd = [](const at::Tensor& t) { return t.transpose(1, 2); };
  try {
    switch (kernel) {
      case Kernel::math: {
        OnlyKernel only(kernel);
        return at::scaled_dot_product_attention(in.q, in.k, in.v, in.causal_mask->logical_not(),
                                                0.0, /*is_causal=*/false, in.scale, gqa);
      }
      case Kernel::flash:  // FlashAttention >= 2.1 aligns its causal mask bottom-right itself
        return bshd(std::get<0>(at::_flash_attention_forward(
            bshd(in.q), bshd(in.k), bshd(in.v), std::nullopt, std::nullopt, seq, seq_kv, 0.0,
            /*is_causal=*/true, /*return_debug_mask=*/false, in.scale)));
      case Kernel::efficient:
        if (gqa)
          throw Unsupported(kernel_words(kernel) +
                            " refused: it needs as many kv heads as query heads (PyTorch's "
                            "efficient kernel has no grouped-query support)");
        return bshd(std::get<0>(at::_efficient_attention_forward(
            bshd(in.q), bshd(in.k), bshd(in.v), std::nullopt, std::nullopt, std::nullopt,
            std::nullopt, std::nullopt, 0.0, /*custom_mask_type=CausalFromBottomRight*/ 2,
            /*compute_log_sumexp=*/in.q.requires_grad(), in.scale)));
      case Kernel::cudnn:
        throw Unsupported(kernel_words(kernel) +
                          " refused: PyTorch 2.11 builds its cuDNN graph with a top-left causal "
                          "mask (set_causal_mask), and seq_len < seq_len_kv needs it bottom-right");
    }
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const c10::Error& e) {
    // The kernels check their arguments (dtype, head_dim) and say why; a CUDA failure is not that.
    const std::string what = strip_location(e.what_without_backtrace());
    if (is_cuda_failure(what)) throw;
    throw Unsupported(kernel_words(kernel) + " refused: " + what);
  }
  return {};
}

}  // namespace

at::Tensor forced_attention(Kernel kernel, const Inputs& in) {
  if (in.causal_mask && in.q.size(2) != in.k.size(2)) return bottom_right_attention(kernel, in);
  OnlyKernel only(kernel);
  CollectWarnings warnings;
  c10::WarningUtils::WarningHandlerGuard guard(&warnings);
  try {
    return at::scaled_dot_product_attention(in.q, in.k, in.v, /*attn_mask=*/std::nullopt,
                                            /*dropout_p=*/0.0,
                                            /*is_causal=*/in.causal_mask != nullptr, in.scale,
                                            /*enable_gqa=*/in.q.size(1) != in.k.size(1));
  } catch (const c10::OutOfMemoryError&) {
    throw;  // the harness reports oom
  } catch (const c10::Error& e) {
    const std::string what = strip_location(e.what_without_backtrace());
    // CUDA says "No available kernel", the CPU dispatcher "No viable backend".
    if (what.find("No available kernel") == std::string::npos &&
        what.find("No viable backend") == std::string::npos)
      throw;
    const std::string reason = refusal_reason(kernel, warnings.messages);
    throw Unsupported(kernel_words(kernel) + " refused: " + (reason.empty() ? what : reason));
  }
}

std::unique_ptr<BackwardPass> forced_backward(Kernel kernel, const Inputs& inputs) {
  return autograd_backward(inputs,
                           [kernel](const Inputs& in) { return forced_attention(kernel, in); });
}

Support needs_cuda(const Problem& problem, const std::string& what) {
  if (problem.device != Device::cuda)
    return Support::no(what + " is a CUDA kernel; this point runs on " +
                       std::string(problem.device == Device::cpu ? "the CPU" : "another device"));
  return Support::yes();
}

Support no_fp8(const Problem& problem, const std::string& what) {
  if (problem.dtype == DType::fp8_e4m3)
    return Support::no(what +
                       " takes fp16, bf16 and fp32; fp8_e4m3 inputs with per-tensor scales "
                       "need a kernel written for them (fa3, cudnn-fe)");
  return Support::yes();
}

Support pytorch_fused(const Problem& problem, const std::string& what) {
  if (Support cuda = needs_cuda(problem, what); !cuda.supported) return cuda;
  return no_fp8(problem, what);
}

}  // namespace attnbench::sdpa
