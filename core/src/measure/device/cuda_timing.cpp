#include "measure/device/cuda_timing.hpp"

#include <stdexcept>
#include <string>

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <ATen/core/Generator.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include "measure/device/cuda_check.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#endif

namespace attnbench {

#ifndef ATTNBENCH_WITH_CUDA

struct CudaTimer::Gate {};
struct CudaTimer::ReadFlush {};
CudaTimer::CudaTimer(int, int64_t) {
  throw std::runtime_error("this attnbench was built without CUDA");
}
CudaTimer::~CudaTimer() = default;
double CudaTimer::cold_ms(const std::function<void()>&) { return 0; }
double CudaTimer::batch_ms(const std::function<void()>&, int) { return 0; }
struct CapturedCall::Impl {};
CapturedCall::CapturedCall(int, const std::function<void()>&) {
  throw std::runtime_error("this attnbench was built without CUDA");
}
CapturedCall::~CapturedCall() = default;
double CapturedCall::replay_ms(int) { return 0; }

#else

namespace {

cudaEvent_t event(void* e) { return static_cast<cudaEvent_t>(e); }

float elapsed_ms(void* start, void* stop) {
  cuda_check(cudaEventSynchronize(event(stop)), "cudaEventSynchronize");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, event(start), event(stop)), "cudaEventElapsedTime");
  return ms;
}

}  // namespace

// Holds the stream in a host function until the host has enqueued the timed call. A call that
// waits on the GPU from the host would deadlock; the gate gives up after a timeout and says so.
struct CudaTimer::Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = true;
  bool timed_out = false;

  static void CUDART_CB wait(void* self) {
    auto* g = static_cast<Gate*>(self);
    std::unique_lock<std::mutex> lock(g->mutex);
    if (!g->cv.wait_for(lock, std::chrono::seconds(5), [g] { return g->open; }))
      g->timed_out = true;
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex);
    open = false;
    timed_out = false;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      open = true;
    }
    cv.notify_all();
  }
};

// Reading a buffer of twice the L2 evicts the dirty lines the flush write left behind (their
// write-back happens here, outside the events) and leaves the L2 holding clean lines of no use to
// the call.
struct CudaTimer::ReadFlush {
  at::Tensor buffer, sum;
};

CudaTimer::CudaTimer(int device, int64_t l2_cache_bytes)
    : device_(device), gate_(std::make_unique<Gate>()), read_flush_(std::make_unique<ReadFlush>()) {
  flush_bytes_ = static_cast<size_t>(std::max<int64_t>(l2_cache_bytes, 1 << 20)) * 2;
  cuda_check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc (L2 flush buffer)");
  const auto options = at::TensorOptions()
                           .dtype(at::kFloat)
                           .device(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device)));
  // Ordinary tensors, not inference tensors: the timer made at a forward point (in inference mode)
  // also flushes at backward points, where an inference tensor may not be written.
  c10::InferenceMode not_inference(false);
  read_flush_->buffer = at::ones({static_cast<int64_t>(flush_bytes_ / sizeof(float))}, options);
  read_flush_->sum = at::empty({}, options);
  cudaEvent_t a, b;
  cuda_check(cudaEventCreate(&a), "cudaEventCreate");
  cuda_check(cudaEventCreate(&b), "cudaEventCreate");
  start_ = a;
  stop_ = b;
}

CudaTimer::~CudaTimer() {
  cudaFree(flush_);
  cudaEventDestroy(event(start_));
  cudaEventDestroy(event(stop_));
}

double CudaTimer::cold_ms(const std::function<void()>& call) {
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device_).stream();
  flush_value_ = (flush_value_ + 1) & 0xff;
  cuda_check(cudaMemsetAsync(flush_, flush_value_, flush_bytes_, stream), "L2 flush");
  at::sum_out(read_flush_->sum, read_flush_->buffer);  // on the current stream, like the call
  gate_->close();
  cuda_check(cudaLaunchHostFunc(stream, &Gate::wait, gate_.get()), "cudaLaunchHostFunc (gate)");
  try {
    cuda_check(cudaEventRecord(event(start_), stream), "cudaEventRecord");
    call();
    cuda_check(cudaEventRecord(event(stop_), stream), "cudaEventRecord");
  } catch (...) {
    gate_->release();
    cudaStreamSynchronize(stream);
    throw;
  }
  gate_->release();
  const float ms = elapsed_ms(start_, stop_);
  if (gate_->timed_out)
    throw std::runtime_error(
        "cold timing: the call waited for the GPU while the stream was held (it synchronizes "
        "inside); time it with batch or graph");
  return ms;
}

double CudaTimer::batch_ms(const std::function<void()>& call, int calls) {
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device_).stream();
  cuda_check(cudaEventRecord(event(start_), stream), "cudaEventRecord");
  for (int i = 0; i < calls; ++i) call();
  cuda_check(cudaEventRecord(event(stop_), stream), "cudaEventRecord");
  return elapsed_ms(start_, stop_) / calls;
}

struct CapturedCall::Impl {
  int device = 0;
  cudaStream_t raw_stream = nullptr;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  cudaEvent_t start = nullptr, stop = nullptr;

  ~Impl() {  // also runs when the constructor throws
    graph.reset();
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (raw_stream) {
      cudaStreamSynchronize(raw_stream);
      cudaStreamDestroy(raw_stream);
    }
  }
};

CapturedCall::CapturedCall(int device, const std::function<void()>& call,
                           const std::function<void()>& prepare)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  // A stream of our own: a failed capture must not leave a pooled stream that others reuse.
  cuda_check(cudaStreamCreateWithFlags(&impl_->raw_stream, cudaStreamNonBlocking),
             "cudaStreamCreate");
  cuda_check(cudaEventCreate(&impl_->start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&impl_->stop), "cudaEventCreate");
  const auto stream =
      c10::cuda::getStreamFromExternal(impl_->raw_stream, static_cast<c10::DeviceIndex>(device));
  c10::cuda::CUDAStreamGuard guard(stream);
  if (prepare) prepare();
  // The side stream must have run the call before capture (allocator, cuDNN plans, cuBLAS handles).
  call();
  cuda_check(cudaStreamSynchronize(impl_->raw_stream), "warm-up before capture");
  // What the warm-up freed stays cached outside the graph's private pool, where the capture
  // cannot use it: returned to the device first, so a capture fails only for lack of memory.
  c10::cuda::CUDACachingAllocator::emptyCache();
  impl_->graph = std::make_unique<at::cuda::CUDAGraph>();
  // capture_begin marks the default generator as capturing and only a successful capture_end
  // unmarks it: a failed capture would leave every later random draw in this process refused
  // ("Offset increment outside graph capture"). A copy of its state taken now is put back then.
  auto* generator = at::check_generator<at::CUDAGeneratorImpl>(
      at::cuda::detail::getDefaultCUDAGenerator(static_cast<c10::DeviceIndex>(device)));
  const c10::intrusive_ptr<c10::GeneratorImpl> generator_before =
      generator->graphsafe_get_state()->clone();
  try {
    impl_->graph->capture_begin();
    call();
    impl_->graph->capture_end();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(impl_->raw_stream, &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      try {
        impl_->graph->capture_end();
      } catch (...) {
        cudaGraph_t g = nullptr;
        if (cudaStreamEndCapture(impl_->raw_stream, &g) == cudaSuccess && g) cudaGraphDestroy(g);
      }
    }
    impl_->graph.reset();
    generator->graphsafe_set_state(generator_before);
    cudaGetLastError();  // clear the capture error so later work is not blamed for it
    throw std::runtime_error("graph capture failed: " + what.substr(0, what.find('\n')));
  }
}

CapturedCall::~CapturedCall() = default;

double CapturedCall::replay_ms(int replays) {
  const auto stream = c10::cuda::getStreamFromExternal(
      impl_->raw_stream, static_cast<c10::DeviceIndex>(impl_->device));
  c10::cuda::CUDAStreamGuard guard(stream);
  cuda_check(cudaEventRecord(impl_->start, impl_->raw_stream), "cudaEventRecord");
  for (int i = 0; i < replays; ++i) impl_->graph->replay();
  cuda_check(cudaEventRecord(impl_->stop, impl_->raw_stream), "cudaEventRecord");
  return elapsed_ms(impl_->start, impl_->stop) / replays;
}

#endif

}  // namespace attnbench
