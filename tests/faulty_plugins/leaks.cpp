// Test plugin: right answers, but every call takes 4 MiB of device memory with cudaMalloc and
// never gives it back: outside PyTorch's allocator, and less than any one (point, backend) would
// leave behind in a workspace. Its rows must say leaked_device_memory (device_mem_grown_mib).
#include <attnbench/plugin.hpp>

#include "capturing.hpp"

#include <ATen/ATen.h>
#include <cuda_runtime_api.h>

#include <stdexcept>

namespace {

class LeaksBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "leaks"; }
  std::string description() const override {
    return "cudaMallocs 4 MiB a call and keeps it (test plugin)";
  }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    if (p.packed() || p.windowed() || p.softcap > 0 || p.seq_len != p.seq_len_kv)
      return attnbench::Support::no("dense square batches only");
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    // Its calls leak; a CUDA graph's capture cannot (cudaMalloc is not allowed then).
    void* leaked = nullptr;
    if (in.q.is_cuda() && !attnbench::probe::capturing() &&
        cudaMalloc(&leaked, 4 << 20) != cudaSuccess)
      throw std::runtime_error("cudaMalloc failed");
    return at::scaled_dot_product_attention(in.q, in.k, in.v, {}, 0.0, in.problem.causal, in.scale,
                                            in.q.size(1) != in.k.size(1));
  }
};

}  // namespace

ATTNBENCH_PLUGIN(LeaksBackend)
