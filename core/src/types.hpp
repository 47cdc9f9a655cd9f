// Names of the plugin API's enums as they appear in configs and CSVs.
#pragma once

#include <attnbench/plugin.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace attnbench {

std::string to_string(DType dtype);    // "fp16", "bf16", "fp32"
std::string to_string(Device device);  // "cpu", "cuda"
std::optional<DType> parse_dtype(std::string_view text);
std::optional<Device> parse_device(std::string_view text);
int dtype_bytes(DType dtype);

// Stable identifier of a problem, shared by the main and the kernel CSV: "b4-h16-s2048-d64-bf16-causal-cuda".
std::string point_id(const Problem& problem);

// Floating-point operations of the attention itself (two matrix products); with a causal mask only
// the unmasked half counts, so backends that skip masked blocks and those that do not are compared
// on the same useful work.
double attention_flop(const Problem& problem);

}  // namespace attnbench
