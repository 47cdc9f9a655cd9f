// GPU time of one attention call with CUDA events, in the three named modes. The caller owns the
// sampling loop; each function returns one sample in milliseconds per call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace attnbench {

class CudaTimer {
 public:
  // Allocates the L2 flush buffer: twice the device's L2 size.
  CudaTimer(int device, int64_t l2_cache_bytes);
  ~CudaTimer();
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  // `cold`: L2 flushed (a write of twice its size, then a read of as much, so that no dirty line of
  // the flush is left for the timed call to write back), then the stream is held by a host gate
  // while the call is enqueued, so the events measure GPU time and not the host's launch gap.
  double cold_ms(const std::function<void()>& call);

  // `batch`: `calls` calls back to back between two events, divided by `calls`. A call that is
  // slower to enqueue than to run shows its host time here.
  double batch_ms(const std::function<void()>& call, int calls);

 private:
  struct Gate;
  struct ReadFlush;
  int device_;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  int flush_value_ = 0;
  void* start_ = nullptr;  // cudaEvent_t, kept opaque so this header needs no CUDA
  void* stop_ = nullptr;
  std::unique_ptr<Gate> gate_;
  std::unique_ptr<ReadFlush> read_flush_;
};

// `graph`: the call captured once into a CUDA graph on a private stream, then replayed.
class CapturedCall {
 public:
  // Warms up on the private stream, then captures; throws std::runtime_error when capture fails.
  // `prepare` runs first on the private stream: what the call depends on and must be made there
  // (a backward pass's forward, whose stream autograd runs the backward on).
  CapturedCall(int device, const std::function<void()>& call,
               const std::function<void()>& prepare = {});
  ~CapturedCall();
  CapturedCall(const CapturedCall&) = delete;
  CapturedCall& operator=(const CapturedCall&) = delete;

  double replay_ms(int replays);  // per replay

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnbench
