// The SM clock over a stretch of the GPU's own time: each SM's cycle counter and the global timer,
// read by a one-thread-per-SM kernel at either end (power_state.hpp turns the two reads into a
// mean clock). NVML's clock is one reading at one instant; read after a sample it misses a clock
// the power limiter held down inside a long call and let go once the GPU idled (on the H200,
// cudnn-fe's 16k causal forward took 7.24 ms in 8 of 10 burst samples and 6.55 ms in the other 2,
// every one read at 1950-1980 MHz after it).
#pragma once

#include "measure/power_state.hpp"

#include <memory>

namespace attnbench {

class SmClockSpan {
 public:
  explicit SmClockSpan(int device);  // throws std::runtime_error when CUDA refuses
  ~SmClockSpan();
  SmClockSpan(const SmClockSpan&) = delete;
  SmClockSpan& operator=(const SmClockSpan&) = delete;

  // Returns once the GPU has read the start: call it right before the work, and close() once the
  // work is done (both wait for the GPU; the work's own stream needs no ordering with them).
  void open();
  SmStamps close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnbench
