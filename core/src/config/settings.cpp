#include "config/settings.hpp"

#include "base/names.hpp"

#include <algorithm>

namespace attnbench {

std::vector<Pass> all_passes() {
  std::vector<Pass> out;
  for (const auto& n : name_table<Pass>()) out.push_back(n.value);
  return out;
}

bool MeasureSettings::wants(Pass pass) const {
  return std::find(passes.begin(), passes.end(), pass) != passes.end();
}

std::map<DType, double> default_tolerances() {
  // Per-row relative error against float64. bf16 keeps 8 mantissa bits, so rounding the output
  // alone costs ~4e-3; fp16 keeps 11; fp32 matmuls run without TF32 in PyTorch's default.
  return {{DType::bf16, 2e-2}, {DType::f16, 5e-3}, {DType::f32, 1e-4}};
}

namespace {

// Names from E's table, each known and none twice; `allowed` says which values a list may hold.
template <class E>
std::vector<E> parse_list(const std::vector<std::string>& names, const char* what,
                          const std::vector<E>& allowed, const std::string& note) {
  std::vector<std::string> allowed_names;
  for (E e : allowed) allowed_names.push_back(to_string(e));
  std::vector<E> out;
  for (size_t i = 0; i < names.size(); ++i) {
    const auto value = parse_enum<E>(names[i]);
    if (!value || std::find(allowed.begin(), allowed.end(), *value) == allowed.end())
      throw ListItemError(i, std::string("unknown ") + what + " '" + names[i] + "'; use " +
                                 one_of(allowed_names) + note);
    if (std::find(out.begin(), out.end(), *value) != out.end())
      throw ListItemError(i, std::string(what) + " '" + names[i] + "' appears twice");
    out.push_back(*value);
  }
  return out;
}

}  // namespace

std::vector<TimingMode> parse_timing_modes(const std::vector<std::string>& names) {
  return parse_list<TimingMode>(names, "timing mode",
                                {TimingMode::cold, TimingMode::batch, TimingMode::graph},
                                " (CPU points are always timed as wall)");
}

std::vector<Pass> parse_passes(const std::vector<std::string>& names) {
  return parse_list<Pass>(names, "pass", all_passes(), "");
}

}  // namespace attnbench
