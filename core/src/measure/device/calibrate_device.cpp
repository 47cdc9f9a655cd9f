#include "measure/device/calibrate_device.hpp"

#include "base/stats.hpp"
#include "base/time.hpp"
#include "measure/device/cuda_timing.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#ifdef ATTNBENCH_WITH_KERNELS
#include <c10/cuda/CUDAStream.h>
#include "measure/device/read_kernel.hpp"
#endif

#include <algorithm>
#include <stdexcept>

namespace attnbench {

Calibration calibrate_device(const HostInfo& host) {
  if (!host.cuda_available)
    throw std::runtime_error("calibrate needs a CUDA device; none was found");
  c10::InferenceMode inference_mode;
  CudaTimer timer(host.cuda_device, host.l2_cache_bytes);
  auto median_ms = [&](const std::function<void()>& call) {
    for (int i = 0; i < 3; ++i) call();
    std::vector<double> samples;
    for (int i = 0; i < 10; ++i) samples.push_back(timer.batch_ms(call, 1));
    return summarize(samples).median;
  };

  Calibration c;
  c.device_name = host.device_name;
  c.torch_version = host.torch_version;
  c.measured_at = utc_now_iso8601();

  const int64_t n = 8192;
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
  const at::Tensor a = at::randn({n, n}, bf16), b = at::randn({n, n}, bf16);
  at::Tensor product;
  const double mm_ms = median_ms([&] { product = at::mm(a, b); });
  c.bf16_matmul_tflops = 2.0 * n * n * n / (mm_ms * 1e-3) / 1e12;
  try {  // fp8: cuBLASLt through _scaled_mm wants the second operand column-major
    const at::Tensor a8 = a.to(at::kFloat8_e4m3fn),
                     b8 = b.to(at::kFloat8_e4m3fn).t().contiguous().t();
    const at::Tensor one = at::ones({}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
    const double fp8_ms = median_ms([&] {
      product = at::_scaled_mm(a8, b8, one, one, std::nullopt, std::nullopt, at::kBFloat16);
    });
    c.fp8_matmul_tflops = 2.0 * n * n * n / (fp8_ms * 1e-3) / 1e12;
  } catch (const c10::Error&) {  // no fp8 matmul on this GPU
  }

  const int64_t bytes = int64_t{4} << 30;
  const at::Tensor src = at::randn({bytes / 2}, bf16);
  at::Tensor dst = at::empty_like(src);
  const double copy_ms = median_ms([&] { dst.copy_(src); });
  c.copy_gbps = 2.0 * static_cast<double>(bytes) / (copy_ms * 1e-3) / 1e9;
  // Reads: the fastest of two ATen reductions over the 4 GiB and the harness's own read kernel
  // (ATen's reductions do not reach the memory's rate: on an H100 the bf16 sum read 3.04 TB/s
  // where attention's decode kernels read 3.08 and the read kernel 3.19; on the H200 the faster
  // of the two 4.35 where decode read 4.6), so that a kernel over 100% of it is rare and telling.
  at::Tensor total;
  const at::Tensor words = src.view(at::kInt);
  double read_ms = std::min(median_ms([&] { total = src.sum(at::kFloat); }),
                            median_ms([&] { total = words.amax(); }));
#ifdef ATTNBENCH_WITH_KERNELS
  const at::Tensor sink = at::zeros({1}, words.options());
  c.reads += " and attnbench's read kernel (16-byte loads)";
  read_ms = std::min(read_ms, median_ms([&] {
    enqueue_read(src.data_ptr(), static_cast<size_t>(bytes), sink.data_ptr(), host.cuda_device,
                 c10::cuda::getCurrentCUDAStream(host.cuda_device).stream());
  }));
#endif
  c.read_gbps = static_cast<double>(bytes) / (read_ms * 1e-3) / 1e9;
  return c;
}

}  // namespace attnbench
