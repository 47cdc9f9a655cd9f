// Shared by the math, efficient, flash and cudnn plugins: scaled_dot_product_attention with exactly
// one of PyTorch's SDPA kernels enabled.
#pragma once

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <string>

namespace attnbench::sdpa {

enum class Kernel { math, efficient, flash, cudnn };

// Runs SDPA with only `kernel` allowed (never a silent fallback to another kernel) and restores
// every global SDPA switch afterwards, so forcing one backend does not leak into other plugins.
// When the kernel refuses the inputs, throws Unsupported with PyTorch's own reasons.
at::Tensor forced_attention(Kernel kernel, const Inputs& inputs);

// The fused kernels are CUDA implementations; PyTorch's CPU "flash" path is a different kernel.
Support needs_cuda(const Problem& problem, const std::string& what);

// Keeps, from the warnings PyTorch emits when a forced kernel refuses, those about `kernel`.
std::string refusal_reason(Kernel kernel, const std::vector<std::string>& warnings);

}  // namespace attnbench::sdpa
