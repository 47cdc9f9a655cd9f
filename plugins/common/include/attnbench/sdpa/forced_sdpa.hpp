// Shared by the math, efficient, flash and cudnn plugins: scaled_dot_product_attention with exactly
// one of PyTorch's SDPA kernels enabled.
#pragma once

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <memory>
#include <string>

namespace attnbench::sdpa {

enum class Kernel { math, efficient, flash, cudnn };

// Runs SDPA with only `kernel` allowed (never a silent fallback to another kernel) and restores
// every global SDPA switch afterwards, so forcing one backend does not leak into other plugins.
// Grouped-query inputs pass enable_gqa. A causal mask with seq_len < seq_len_kv is aligned
// bottom-right, which PyTorch's is_causal is not: math gets the mask itself, flash and efficient
// are called at their own entry points (as causal_lower_right does), cudnn refuses.
// When the kernel refuses the inputs, throws Unsupported with PyTorch's own reasons.
at::Tensor forced_attention(Kernel kernel, const Inputs& inputs);

// The backward of forced_attention(kernel, ...), through autograd: the same forced kernel's own
// backward (one fused kernel for flash, efficient and cudnn).
std::unique_ptr<BackwardPass> forced_backward(Kernel kernel, const Inputs& inputs);

// The fused kernels are CUDA implementations; PyTorch's CPU "flash" path is a different kernel.
Support needs_cuda(const Problem& problem, const std::string& what);

// PyTorch's attention (its ops and its SDPA kernels) takes fp16, bf16 and fp32, not fp8 inputs.
Support no_fp8(const Problem& problem, const std::string& what);
// needs_cuda and no_fp8: PyTorch's fused SDPA kernels.
Support pytorch_fused(const Problem& problem, const std::string& what);

// What the forced kernel makes of the problem's variants (backend.hpp), and how:
//   ragged lengths: flash and efficient natively (their varlen entry points, efficient without
//     GQA or a window), math padded (padded.hpp), cudnn not (PyTorch's takes no offsets);
//   a window: flash natively (FA2's window_size), math, efficient and cudnn as a dense mask;
//   softcap and a paged cache: none (SDPA has neither; a mask cannot cap logits).
// The backward of a packed batch is not offered (attnbench checks it in the uniform layout only).
Support sdpa_variants(Kernel kernel, const Problem& problem);
// The textbook ops (naive, inplace): softcap, sinks, the window and the chunk as ops (the chunk in
// the mask), ragged lengths padded,
// an fp8 cache dequantized to q's dtype inside the call (kDequantizedFeed).
Support textbook_variants(const Problem& problem);
// The variants the textbook ops declare (Backend::variants()).
std::vector<std::string> textbook_variant_names();
inline const char* kDequantizedFeed = "the fp8 cache dequantized to q's dtype in the call";

// Keeps, from the warnings PyTorch emits when a forced kernel refuses, those about `kernel`.
std::string refusal_reason(Kernel kernel, const std::vector<std::string>& warnings);

}  // namespace attnbench::sdpa
