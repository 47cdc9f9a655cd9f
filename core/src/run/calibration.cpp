#include "run/calibration.hpp"

#include "base/errors.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>

namespace attnbench {

void save_calibration(const Calibration& c, const std::string& path) {
  const nlohmann::json j = {
      {"device_name", c.device_name},
      {"bf16_matmul_tflops", c.bf16_matmul_tflops},
      {"copy_gbps", c.copy_gbps},
      {"read_gbps", c.read_gbps ? nlohmann::json(*c.read_gbps) : nlohmann::json()},
      {"fp8_matmul_tflops",
       c.fp8_matmul_tflops ? nlohmann::json(*c.fp8_matmul_tflops) : nlohmann::json()},
      {"torch_version", c.torch_version},
      {"measured_at", c.measured_at},
      {"method",
       "bf16 8192x8192x8192 at::mm, the same in fp8_e4m3 by at::_scaled_mm (bf16 out), a 4 GiB "
       "device copy and the fastest of " + c.reads + " over the same 4 GiB (reads), CUDA "
       "events, median of 10 samples after 3 warm-up runs, random inputs"}};
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream out(path);
  if (!out) throw InputError(path + ": cannot write the calibration file");
  out << j.dump(2) << '\n';
}

std::optional<Calibration> load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    Calibration c;
    c.device_name = j.at("device_name").get<std::string>();
    c.bf16_matmul_tflops = j.at("bf16_matmul_tflops").get<double>();
    c.copy_gbps = j.at("copy_gbps").get<double>();
    if (j.contains("read_gbps") && !j.at("read_gbps").is_null())
      c.read_gbps = j.at("read_gbps").get<double>();
    if (j.contains("fp8_matmul_tflops") && !j.at("fp8_matmul_tflops").is_null())
      c.fp8_matmul_tflops = j.at("fp8_matmul_tflops").get<double>();
    c.torch_version = j.value("torch_version", "");
    c.measured_at = j.value("measured_at", "");
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not a calibration file: " + e.what());
  }
}

std::string default_calibration_path(const std::string& device_name) {
  std::string slug;
  for (char ch : device_name)
    slug +=
        std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(ch)) : '-';
  return "results/calibration/" + slug + ".json";
}

}  // namespace attnbench
