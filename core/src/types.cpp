#include "types.hpp"

namespace attnbench {

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::f32: return "fp32";
  }
  return "?";
}

std::string to_string(Device device) { return device == Device::cuda ? "cuda" : "cpu"; }

std::optional<DType> parse_dtype(std::string_view text) {
  if (text == "fp16" || text == "float16" || text == "half") return DType::f16;
  if (text == "bf16" || text == "bfloat16") return DType::bf16;
  if (text == "fp32" || text == "float32" || text == "float") return DType::f32;
  return std::nullopt;
}

std::optional<Device> parse_device(std::string_view text) {
  if (text == "cpu") return Device::cpu;
  if (text == "cuda") return Device::cuda;
  return std::nullopt;
}

int dtype_bytes(DType dtype) { return dtype == DType::f32 ? 4 : 2; }

std::string point_id(const Problem& p) {
  return "b" + std::to_string(p.batch) + "-h" + std::to_string(p.heads) + "-s" +
         std::to_string(p.seq_len) + "-d" + std::to_string(p.head_dim) + "-" + to_string(p.dtype) +
         (p.causal ? "-causal-" : "-full-") + to_string(p.device);
}

double attention_flop(const Problem& p) {
  const double s = static_cast<double>(p.seq_len);
  const double score_pairs = p.causal ? s * (s + 1) / 2 : s * s;
  // QK^T and PV: 2 FLOP per multiply-add, head_dim multiply-adds per (query, key) pair each.
  return 4.0 * static_cast<double>(p.batch * p.heads * p.head_dim) * score_pairs;
}

}  // namespace attnbench
