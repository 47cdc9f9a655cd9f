// The SM clock averaged over a stretch of the GPU's own time: each SM's cycle counter and the
// global timer, read by a one-thread-per-SM kernel at either end. NVML's clock is one reading at
// one instant; read after a sample it misses a clock the power limiter held down inside a long
// call and let go once the GPU idled (on the H200, cudnn-fe's 16k causal forward took 7.24 ms in
// 8 of 10 burst samples and 6.55 ms in the other 2, every one read at 1950-1980 MHz after it).
#pragma once

#include <memory>
#include <optional>

namespace attnbench {

class SmClockSpan {
 public:
  explicit SmClockSpan(int device);  // throws std::runtime_error when CUDA refuses
  ~SmClockSpan();
  SmClockSpan(const SmClockSpan&) = delete;
  SmClockSpan& operator=(const SmClockSpan&) = delete;

  // Returns once the GPU has read the start: call it right before the work, and close_mhz() once
  // the work is done (both wait for the GPU; the work's own stream needs no ordering with them).
  void open();
  // The mean SM clock since open(), the median over the SMs read at both ends; nullopt when the
  // stretch was too short for the global timer's resolution or no SM was read at both ends.
  std::optional<double> close_mhz();

  // A stretch shorter than this reads nothing (the global timer ticks every microsecond or so).
  static constexpr double kShortestSpanUs = 200;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnbench
