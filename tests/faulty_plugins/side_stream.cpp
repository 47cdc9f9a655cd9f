// Test plugin: right answers, but computed on a CUDA stream of its own rather than the caller's
// current stream, so events on the current stream time nothing of it. The harness must not report
// that as a fast `ok` row (the flag untimed_gpu_work, times from the kernels pass). CPU points run
// as usual.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>

namespace {

class SideStreamBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "side_stream"; }
  std::string description() const override {
    return "attention on a stream of its own (test plugin)";
  }
  attnbench::Support supports(const attnbench::Problem&) const override {
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    if (!in.q.is_cuda()) return attnbench::textbook_attention(in, /*mask_in_place=*/true);
    if (!stream_) stream_ = at::cuda::getStreamFromPool();
    // Ordered after the caller's work (its inputs are ready), so the answer is right; only the
    // caller's stream does not wait for it.
    at::cuda::CUDAEvent ready;
    ready.record(at::cuda::getCurrentCUDAStream());
    ready.block(*stream_);
    const c10::cuda::CUDAStreamGuard guard(*stream_);
    return attnbench::textbook_attention(in, /*mask_in_place=*/true);
  }

 private:
  std::optional<c10::cuda::CUDAStream> stream_;
};

}  // namespace

ATTNBENCH_PLUGIN(SideStreamBackend)
