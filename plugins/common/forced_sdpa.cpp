#include <attnbench/sdpa/forced_sdpa.hpp>

#include <attnbench/sdpa/autograd_backward.hpp>
#include <attnbench/sdpa/padded.hpp>

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

// A kernel called at its own entry point: the errors its argument checks raise (dtype, head_dim)
// are its refusal, with its words; a CUDA failure or running out of memory is not.
template <class Call>
at::Tensor at_entry_point(Kernel kernel, Call&& call) {
  try {
    return call();
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const c10::Error& e) {
    const std::string what = strip_location(e.what_without_backtrace());
    if (is_cuda_failure(what)) throw;
    throw Unsupported(kernel_words(kernel) + " refused: " + what);
  }
}

// SDPA itself with only `kernel` allowed; its "no available kernel" becomes Unsupported with the
// reasons PyTorch warned about. `attend`: SDPA's attn_mask (true = attend), or none.
at::Tensor only_sdpa(Kernel kernel, const Inputs& in, const std::optional<at::Tensor>& attend,
                     bool is_causal) {
  OnlyKernel only(kernel);
  CollectWarnings warnings;
  c10::WarningUtils::WarningHandlerGuard guard(&warnings);
  try {
    return at::scaled_dot_product_attention(in.q, in.k, in.v, attend, /*dropout_p=*/0.0,
                                            is_causal, in.scale,
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

// A query block shorter than the keys with a causal mask: PyTorch's is_causal is aligned top-left,
// so each kernel gets the bottom-right mask the way torch.nn.attention.bias.causal_lower_right
// gives it.
at::Tensor bottom_right_attention(Kernel kernel, const Inputs& in) {
  const bool gqa = in.q.size(1) != in.k.size(1);
  const int64_t seq = in.q.size(2), seq_kv = in.k.size(2);
  auto bshd = [](const at::Tensor& t) { return t.transpose(1, 2); };
  // The kernels check their arguments (dtype, head_dim) and say why.
  return at_entry_point(kernel, [&]() -> at::Tensor {
    switch (kernel) {
      case Kernel::math: {
        OnlyKernel only(kernel);
        return at::scaled_dot_product_attention(in.q, in.k, in.v, in.mask->logical_not(),
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
    return {};
  });
}

// The kernel's own varlen entry point, the packed rows as they are.
at::Tensor varlen_attention(Kernel kernel, const Inputs& in) {
  const Problem& p = in.problem;
  if (kernel != Kernel::flash && kernel != Kernel::efficient)
    throw Unsupported(kernel_words(kernel) + " has no varlen entry point");
  return at_entry_point(kernel, [&] {
    if (kernel == Kernel::flash)
      return std::get<0>(at::_flash_attention_forward(
          in.q, in.k, in.v, *in.cu_seqlens_q, *in.cu_seqlens_kv, p.seq_len, p.seq_len_kv, 0.0,
          p.causal, /*return_debug_mask=*/false, in.scale, p.window_left, p.right_edge()));
    return std::get<0>(at::_efficient_attention_forward(  // [1, total, heads, dim]
                           in.q.unsqueeze(0), in.k.unsqueeze(0), in.v.unsqueeze(0), std::nullopt,
                           *in.cu_seqlens_q, *in.cu_seqlens_kv, p.seq_len, p.seq_len_kv, 0.0,
                           /*custom_mask_type=*/p.causal ? 2 : 0, false, in.scale))
        .squeeze(0);
  });
}

// The mask as SDPA's attn_mask (true = attend): a window, or a padded batch's mask.
at::Tensor masked_attention(Kernel kernel, const Inputs& in) {
  return only_sdpa(kernel, in, in.mask->logical_not(), /*is_causal=*/false);
}

// FA2's sliding window at its own entry point ([batch, seq, heads, dim]).
at::Tensor flash_window_attention(const Inputs& in) {
  auto bshd = [](const at::Tensor& t) { return t.transpose(1, 2); };
  const Problem& p = in.problem;
  return at_entry_point(Kernel::flash, [&] {
    return bshd(std::get<0>(at::_flash_attention_forward(
        bshd(in.q), bshd(in.k), bshd(in.v), std::nullopt, std::nullopt, p.seq_len, p.seq_len_kv,
        0.0, p.causal, /*return_debug_mask=*/false, in.scale, p.window_left, p.right_edge())));
  });
}

}  // namespace

at::Tensor forced_attention(Kernel kernel, const Inputs& in) {
  const Problem& p = in.problem;
  if (p.packed()) {
    if (kernel == Kernel::math)
      return padded_attention(in, [](const Inputs& d) { return masked_attention(Kernel::math, d); });
    return varlen_attention(kernel, in);
  }
  if (p.windowed())
    return kernel == Kernel::flash ? flash_window_attention(in) : masked_attention(kernel, in);
  // One query aligned bottom-right sees every key: the causal mask is no mask (a decode).
  if (p.causal && in.q.size(2) == 1) return only_sdpa(kernel, in, std::nullopt, false);
  if (p.causal && in.q.size(2) != in.k.size(2)) return bottom_right_attention(kernel, in);
  return only_sdpa(kernel, in, std::nullopt, p.causal);
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

namespace {

Support common_variants(const Problem& p, const std::string& what) {
  if (p.paged())
    return Support::no(what + " reads a contiguous cache; a paged one would need its pages "
                              "gathered inside the timed call (fa3 and flashinfer read the page "
                              "table)");
  if (p.packed() && p.direction == Direction::bwd)
    return Support::no("the backward pass of a ragged batch: attnbench checks backward in the "
                       "uniform layout only");
  return Support::yes();
}

}  // namespace

Support sdpa_variants(Kernel kernel, const Problem& p) {
  const std::string what = "SDPA's " + kernel_words(kernel) + " kernel";
  if (p.softcap > 0)
    return Support::no(what + " has no softcap (a mask cannot cap logits; fa3, flashinfer and "
                              "flex apply it)");
  if (Support s = common_variants(p, what); !s.supported) return s;
  const bool gqa = p.kv_heads != p.heads;
  switch (kernel) {
    case Kernel::flash: return Support::yes();  // varlen and window_size natively
    case Kernel::efficient:
      if (p.packed() && (gqa || p.windowed()))
        return Support::no(what + "'s varlen entry point takes neither grouped-query heads nor "
                                  "a window");
      if (p.windowed()) return Support::fed("window as a dense mask (every score computed)");
      return Support::yes();
    case Kernel::math:
      if (p.packed()) return Support::fed(kPaddedFeed);
      if (p.windowed()) return Support::fed("window as a dense mask (every score computed)");
      return Support::yes();
    case Kernel::cudnn:
      if (p.packed())
        return Support::no(what + " in PyTorch 2.11 takes no sequence offsets (cudnn-fe has "
                                  "ragged offsets)");
      if (p.windowed()) return Support::fed("window as a dense mask (every score computed)");
      return Support::yes();
  }
  return Support::yes();
}

std::vector<std::string> textbook_variant_names() {
  return {"ragged", "paged", "window", "softcap", "fp8_kv", "sinks", "chunk"};
}

Support textbook_variants(const Problem& p) {
  if (p.kind == "dsa")  // each row's tokens gathered, whatever the layout
    return p.fp8_kv() ? Support::fed(kDequantizedFeed) : Support::yes();
  if (p.kind == "dsa_indexer")  // a sequence at a time, every layout
    return p.dtype == DType::fp8_e4m3 ? Support::fed("fp8 q and keys dequantized to float32")
                                      : Support::yes();
  if (Support s = common_variants(p, "textbook attention"); !s.supported) return s;
  std::string feed = p.packed() ? kPaddedFeed : "";
  if (p.fp8_kv()) feed += std::string(feed.empty() ? "" : "; ") + kDequantizedFeed;
  return feed.empty() ? Support::yes() : Support::fed(feed);
}

}  // namespace attnbench::sdpa
