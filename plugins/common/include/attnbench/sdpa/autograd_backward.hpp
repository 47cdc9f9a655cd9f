// The backward pass of any forward written with ATen ops, from autograd: what the naive, inplace
// and SDPA plugins use, and what a plugin whose forward is differentiable can use too.
#pragma once

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <functional>
#include <memory>

namespace attnbench {

// Runs `forward` once on copies of q, k, v that require gradients (sharing their memory) and
// keeps the recorded graph; each run() replays it with retain_graph, so the forward stays outside
// the timed region and every call does the same work.
std::unique_ptr<BackwardPass> autograd_backward(
    const Inputs& inputs, const std::function<at::Tensor(const Inputs&)>& forward);

}  // namespace attnbench
