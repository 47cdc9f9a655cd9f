#include "cli/commands.hpp"
#include "run/calibration.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace attnbench {

namespace {

#ifdef ATTNBENCH_WITH_MEASURE
int cmd_calibrate(const std::string& output) {
  const HostInfo host = query_host();
  const Calibration c = calibrate_device(host);
  const std::string path = output.empty() ? default_calibration_path(host.device_name) : output;
  save_calibration(c, path);
  std::cout << c.device_name << ": bf16 matmul " << c.bf16_matmul_tflops << " TFLOP/s, fp8 matmul "
            << (c.fp8_matmul_tflops ? std::to_string(*c.fp8_matmul_tflops) + " TFLOP/s" : "none")
            << ", device copy " << c.copy_gbps << " GB/s\nwrote " << path << '\n';
  return 0;
}
#endif

}  // namespace

Subcommand add_calibrate(CLI::App& app) {
  auto output = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("calibrate",
                                 "Measure the GPU's bf16 matmul and copy ceilings and store them");
  cmd->add_option("-o,--output", *output, "JSON path (default: results/calibration/<device>.json)");
#ifdef ATTNBENCH_WITH_MEASURE
  return {cmd, [output] { return cmd_calibrate(*output); }, [] { return true; }};
#else
  return {cmd, nullptr, [] { return true; }};  // attnbench hands it to attnbench-measure
#endif
}

}  // namespace attnbench
