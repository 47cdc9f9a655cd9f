#include "measure/device/sm_clock_span.hpp"

#include "measure/device/cuda_check.hpp"

#include <cuda_runtime.h>

namespace attnbench {

namespace {

constexpr int kMaxSms = 1024;  // %smid is below %nsmid, which no GPU yet puts above a few hundred

// One block per SM (the scheduler spreads an idle GPU's blocks over every SM); each writes the
// stamp of the SM it ran on. An SM two blocks landed on is written twice, a few cycles apart.
__global__ void stamp_sms(SmStamp* stamps) {
  unsigned int sm;
  unsigned long long timer_ns;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(timer_ns));
  const unsigned long long cycles = clock64();
  if (sm < kMaxSms) {
    stamps[sm].timer_ns = timer_ns;
    stamps[sm].cycles = cycles;
  }
}

}  // namespace

struct SmClockSpan::Impl {
  int device = 0;
  int sms = 0;
  cudaStream_t stream = nullptr;
  SmStamp* stamps = nullptr;  // device: kMaxSms at open, kMaxSms at close

  // Runs `body` with `device` current, the caller's device put back after.
  template <typename F>
  void on_device(F&& body) {
    int previous = 0;
    cuda_check(cudaGetDevice(&previous), "cudaGetDevice");
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
    body();
    cuda_check(cudaSetDevice(previous), "cudaSetDevice");
  }
  void stamp(int end) {
    on_device([&] {
      stamp_sms<<<sms, 1, 0, stream>>>(stamps + end * kMaxSms);
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
    cuda_check(cudaMalloc(&impl_->stamps, 2 * kMaxSms * sizeof(SmStamp)), "cudaMalloc");
  });
}

SmClockSpan::~SmClockSpan() {
  cudaFree(impl_->stamps);
  cudaStreamDestroy(impl_->stream);
}

void SmClockSpan::open() {
  impl_->on_device([&] {
    cuda_check(cudaMemsetAsync(impl_->stamps, 0, 2 * kMaxSms * sizeof(SmStamp), impl_->stream),
               "cudaMemsetAsync");
  });
  impl_->stamp(0);
}

SmStamps SmClockSpan::close() {
  impl_->stamp(1);
  SmStamps read{std::vector<SmStamp>(kMaxSms), std::vector<SmStamp>(kMaxSms)};
  impl_->on_device([&] {
    cuda_check(cudaMemcpy(read.open.data(), impl_->stamps, kMaxSms * sizeof(SmStamp),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy");
    cuda_check(cudaMemcpy(read.close.data(), impl_->stamps + kMaxSms, kMaxSms * sizeof(SmStamp),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy");
  });
  return read;
}

}  // namespace attnbench
