#include "cli/commands.hpp"
#include "measure/device/calibration.hpp"

#include <iostream>

namespace attnbench {

int cmd_calibrate(const std::string& output) {
  const HostInfo host = query_host();
  const Calibration c = calibrate_device(host);
  const std::string path = output.empty() ? default_calibration_path(host.device_name) : output;
  save_calibration(c, path);
  std::cout << c.device_name << ": bf16 matmul " << c.bf16_matmul_tflops << " TFLOP/s, device copy "
            << c.copy_gbps << " GB/s\nwrote " << path << '\n';
  return 0;
}

}  // namespace attnbench
