#include "config/sweep.hpp"

#include "base/names.hpp"
#include "base/problem.hpp"

#include <unordered_set>

namespace attnbench {

namespace {

// A sweep's own word for a field, resolved when points are made.
constexpr const char* kAutoDevice = "auto";
bool takes_auto(const Field<Problem>& f) { return f.name == "device"; }

void apply(Problem& p, const Axis& axis, const AxisValue& value, bool cuda_available) {
  const Field<Problem>& f = *find_problem_field(axis.name);
  if (takes_auto(f) && value == AxisValue(std::string(kAutoDevice)))
    p.device = cuda_available ? Device::cuda : Device::cpu;
  else
    f.set(p, value);
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
        apply(p, *axis, axis->values[index[f]], cuda_available);
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

std::vector<std::string> sweep_words(const Field<Problem>& f) {
  return takes_auto(f) ? std::vector<std::string>{kAutoDevice} : std::vector<std::string>{};
}

FieldValue read_problem_value(const YamlReader& r, const Field<Problem>& f, const YAML::Node& node,
                              const std::string& key, bool in_sweep) {
  switch (f.type) {
    case FieldType::integer: return r.integer(node, key, 1);
    case FieldType::boolean: return r.boolean(node, key);
    case FieldType::choice: {
      const std::string text = r.scalar(node, key);
      if (in_sweep && takes_auto(f) && text == kAutoDevice) return text;
      Problem scratch;
      try {
        f.set(scratch, text);
      } catch (const std::invalid_argument&) {
        std::vector<std::string> names = f.choices;
        if (in_sweep)
          for (const auto& w : sweep_words(f)) names.push_back(w);
        r.fail(node, key, "unknown " + f.name + " '" + text + "'; use " + one_of(names));
      }
      return f.get(scratch);  // the name the report writes
    }
    default: r.fail(node, key, "the problem's field '" + f.name + "' cannot be read from a sweep");
  }
}

}  // namespace attnbench
