#include "config/sweep.hpp"

#include "base/names.hpp"
#include "base/problem.hpp"

#include <unordered_set>

namespace attnbench {

namespace {

void apply(Problem& p, AxisName axis, const AxisValue& value, bool cuda_available) {
  switch (axis) {
    case AxisName::batch: p.batch = std::get<int64_t>(value); break;
    case AxisName::heads: p.heads = std::get<int64_t>(value); break;
    case AxisName::kv_heads: p.kv_heads = std::get<int64_t>(value); break;
    case AxisName::seq_len: p.seq_len = std::get<int64_t>(value); break;
    case AxisName::seq_len_kv: p.seq_len_kv = std::get<int64_t>(value); break;
    case AxisName::head_dim: p.head_dim = std::get<int64_t>(value); break;
    case AxisName::dtype: p.dtype = *parse_enum<DType>(std::get<std::string>(value)); break;
    case AxisName::causal: p.causal = std::get<bool>(value); break;
    case AxisName::direction:
      p.direction = *parse_enum<Direction>(std::get<std::string>(value));
      break;
    case AxisName::device: {
      const auto& text = std::get<std::string>(value);
      p.device = text == "auto" ? (cuda_available ? Device::cuda : Device::cpu)
                                : *parse_enum<Device>(text);
      break;
    }
  }
}

// One factor of the product: either a free axis or a zip group, each with `size()` choices.
struct Factor {
  std::vector<const Axis*> axes;
  size_t size() const { return axes.front()->values.size(); }
};

void expand_block(const SweepBlock& config, bool cuda_available, std::vector<Point>& points,
                  std::unordered_set<std::string>& ids) {
  // Factors in file order: the free axes written before `zip:`, the zip groups, the axes after.
  std::vector<Factor> factors;
  for (size_t i = 0; i <= config.axes.size(); ++i) {
    if (i == config.zips_at)
      for (const auto& zip : config.zips) {
        Factor f;
        for (const auto& axis : zip.axes) f.axes.push_back(&axis);
        factors.push_back(f);
      }
    if (i < config.axes.size()) factors.push_back({{&config.axes[i]}});
  }

  Problem defaults;
  defaults.head_dim = 64;
  defaults.causal = true;
  defaults.device = cuda_available ? Device::cuda : Device::cpu;
  defaults.kv_heads = 0;  // 0: follow heads, seq_len
  defaults.seq_len_kv = 0;

  std::vector<size_t> index(factors.size(), 0);
  while (true) {
    Problem p = defaults;
    for (size_t f = 0; f < factors.size(); ++f)
      for (const Axis* axis : factors[f].axes)
        apply(p, axis->name, axis->values[index[f]], cuda_available);
    if (p.kv_heads == 0) p.kv_heads = p.heads;
    if (p.seq_len_kv == 0) p.seq_len_kv = p.seq_len;
    Point point{p, point_id(p)};
    // "auto" and an explicit device can name the same point: measure it once.
    if (ids.insert(point.id).second) points.push_back(point);

    // Odometer: the last factor turns fastest.
    size_t f = factors.size();
    while (f > 0) {
      --f;
      if (++index[f] < factors[f].size()) break;
      index[f] = 0;
      if (f == 0) return;
    }
    if (factors.empty()) return;
  }
}

}  // namespace

std::vector<Point> expand_sweep(const SweepConfig& config, bool cuda_available) {
  std::vector<Point> points;
  std::unordered_set<std::string> ids;
  for (const SweepBlock& block : config.sweeps) expand_block(block, cuda_available, points, ids);
  return points;
}

}  // namespace attnbench
