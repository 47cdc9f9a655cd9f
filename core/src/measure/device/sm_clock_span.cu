#include "measure/device/sm_clock_span.hpp"

#include "measure/device/cuda_check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace attnbench {

namespace {

constexpr int kMaxSms = 1024;  // %smid is below %nsmid, which no GPU yet puts above a few hundred

struct Stamp {
  unsigned long long timer_ns;
  unsigned long long cycles;
};

// One block per SM (the scheduler spreads an idle GPU's blocks over every SM); each writes the
// stamp of the SM it ran on. An SM two blocks landed on is written twice, a few cycles apart.
__global__ void stamp_sms(Stamp* stamps) {
  unsigned int sm;
  unsigned long long timer_ns;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(timer_ns));
  const unsigned long long cycles = clock64();
  if (sm < kMaxSms) stamps[sm] = Stamp{timer_ns, cycles};
}

}  // namespace

struct SmClockSpan::Impl {
  int device = 0;
  int sms = 0;
  cudaStream_t stream = nullptr;
  Stamp* stamps = nullptr;  // device: kMaxSms at open, kMaxSms at close
  std::vector<Stamp> host = std::vector<Stamp>(2 * kMaxSms);

  // Runs `body` with `device` current, the caller's device put back after.
  template <typename F>
  void on_device(F&& body) {
    int previous = 0;
    cuda_check(cudaGetDevice(&previous), "cudaGetDevice");
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
    body();
    cuda_check(cudaSetDevice(previous), "cudaSetDevice");
  }
  void stamp(int at) {
    on_device([&] {
      stamp_sms<<<sms, 1, 0, stream>>>(stamps + at * kMaxSms);
      cuda_check(cudaGetLastError(), "SM clock stamp");
      cuda_check(cudaStreamSynchronize(stream), "SM clock stamp");
    });
  }
};

SmClockSpan::SmClockSpan(int device) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->on_device([&] {
    cuda_check(cudaDeviceGetAttribute(&impl_->sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute");
    cuda_check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking),
               "cudaStreamCreate");
    cuda_check(cudaMalloc(&impl_->stamps, 2 * kMaxSms * sizeof(Stamp)), "cudaMalloc");
  });
}

SmClockSpan::~SmClockSpan() {
  cudaFree(impl_->stamps);
  cudaStreamDestroy(impl_->stream);
}

void SmClockSpan::open() {
  impl_->on_device([&] {
    cuda_check(cudaMemsetAsync(impl_->stamps, 0, 2 * kMaxSms * sizeof(Stamp), impl_->stream),
               "cudaMemsetAsync");
  });
  impl_->stamp(0);
}

std::optional<double> SmClockSpan::close_mhz() {
  impl_->stamp(1);
  impl_->on_device([&] {
    cuda_check(cudaMemcpy(impl_->host.data(), impl_->stamps, 2 * kMaxSms * sizeof(Stamp),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy");
  });
  std::vector<double> mhz;
  for (int sm = 0; sm < kMaxSms; ++sm) {
    const Stamp& start = impl_->host[sm];
    const Stamp& end = impl_->host[kMaxSms + sm];
    if (start.timer_ns == 0 || end.timer_ns <= start.timer_ns) continue;
    const double ns = static_cast<double>(end.timer_ns - start.timer_ns);
    if (ns < kShortestSpanUs * 1000) continue;
    mhz.push_back(static_cast<double>(end.cycles - start.cycles) / ns * 1000);
  }
  if (mhz.empty()) return std::nullopt;
  std::nth_element(mhz.begin(), mhz.begin() + mhz.size() / 2, mhz.end());
  return mhz[mhz.size() / 2];
}

}  // namespace attnbench
