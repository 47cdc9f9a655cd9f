#include "config/sweep.hpp"

#include "base/errors.hpp"
#include "base/hash.hpp"
#include "kinds/problem_kind.hpp"
#include "base/lengths.hpp"
#include "base/names.hpp"
#include "kinds/problem.hpp"
#include "kinds/variant.hpp"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace attnbench {

namespace {

// A sweep's own word for a field, resolved when points are made.
constexpr const char* kAutoDevice = "auto";
bool takes_auto(const Field<Problem>& f) { return f.name == "device"; }

}  // namespace

bool pair_valued(const Field<Problem>& f) { return f.pair; }

namespace {

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

// Draws the point's lengths (seq_lens, seq_lens_kv) from the run's seed; the same spec and batch
// give the same lengths at every other axis value, so backends and shapes compare on one batch.
struct LengthsError : std::invalid_argument {
  LengthsError(const std::string& axis, const std::string& what)
      : std::invalid_argument(what), axis(axis) {}
  std::string axis;
};

void draw_point_lengths(Problem& p, const SweepConfig& config) {
  const std::string dir = std::filesystem::path(config.file).parent_path().string();
  auto draw = [&](const char* axis, const std::string& written) {
    try {
      const LengthSpec spec = parse_length_spec(written);
      if (!spec.drawn())  // one length for every sequence: nothing to draw
        return std::pair{spec, std::vector<int64_t>{static_cast<int64_t>(spec.args.at(0))}};
      const uint64_t seed =
          config.seed ^ fnv1a(std::string(axis) + "/" + written + "/" + std::to_string(p.batch));
      return std::pair{spec, draw_lengths(spec, p.batch, seed, dir)};
    } catch (const std::invalid_argument& e) {
      throw LengthsError(axis, e.what());
    }
  };
  if (!p.seq_lens.empty()) {
    auto [spec, lens] = draw("seq_lens", p.seq_lens);
    if (spec.drawn()) p.q_lens = lens;
    p.seq_len = *std::max_element(lens.begin(), lens.end());
  }
  if (!p.seq_lens_kv.empty()) {
    auto [spec, lens] = draw("seq_lens_kv", p.seq_lens_kv);
    if (spec.drawn()) p.kv_lens = lens;
    p.seq_len_kv = *std::max_element(lens.begin(), lens.end());
  } else if (!p.q_lens.empty()) {
    p.kv_lens = p.q_lens;  // a prefill: each sequence attends over itself
    p.seq_len_kv = p.seq_len;
  }
}

// The first field of `a`'s kind that tells it from `b` where it matters; nullptr when none does
// (the same point, written twice: "auto" and an explicit device).
const Field<Problem>* first_difference(const Problem& a, const Problem& b) {
  const ProblemKind& kind = kind_of(a);
  if (a.kind != b.kind) return find_problem_field("kind");
  for (const auto& f : problem_fields()) {
    const bool matters = (kind_has_axis(kind, f) || f.derived) && (!f.applies || f.applies(a));
    if (matters && f.get(a) != f.get(b)) return &f;
  }
  return nullptr;
}

const Axis* axis_named(const std::vector<Factor>& factors, const std::string& name) {
  for (const Factor& f : factors)
    for (const Axis* axis : f.axes)
      if (axis->name == name) return axis;
  return nullptr;
}

// Divides the heads of `p` as tensor parallelism of degree `tp` serves them: each GPU holds
// heads / tp query heads, and kv_heads / tp kv heads, or one when there are fewer kv heads than
// GPUs (each replicated on tp / kv_heads of them). Throws ConfigError at the block's tp.
void divide_heads(Problem& p, int64_t tp, const SweepBlock& block, const SweepConfig& sweep) {
  if (tp == 1) return;
  auto fail = [&](const std::string& why) {
    throw ConfigError(sweep.file, block.tp_line, block.tp_column, block.tp_key,
                      "tp " + std::to_string(tp) + ": " + why + " (point " + point_id(p) + ")");
  };
  if (p.heads % tp != 0)
    fail("heads " + std::to_string(p.heads) + " are not divisible among " + std::to_string(tp) +
         " GPUs");
  if (p.kv_heads >= tp ? p.kv_heads % tp != 0 : tp % p.kv_heads != 0)
    fail("kv_heads " + std::to_string(p.kv_heads) + " neither divide among " + std::to_string(tp) +
         " GPUs nor replicate evenly on them");
  p.heads /= tp;
  p.kv_heads = std::max<int64_t>(1, p.kv_heads / tp);
}

// The block's points at one tensor-parallel degree.
void expand_block_at(const SweepBlock& config, int64_t tp, const SweepConfig& sweep,
                     bool cuda_available, std::vector<Point>& points,
                     std::unordered_map<std::string, size_t>& ids) {
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
    kind_of(p).complete(p);  // the widths and the scale its own fields make
    kind_of(p).settle(p, std::filesystem::path(sweep.file).parent_path().string());
    if (p.kv_heads == 0) p.kv_heads = p.heads;
    divide_heads(p, tp, config, sweep);
    try {
      draw_point_lengths(p, sweep);
    } catch (const LengthsError& e) {
      const Axis* at = axis_named(factors, e.axis);
      throw ConfigError(sweep.file, at ? at->line : 1, at ? at->column : 1,
                        at ? at->key : "sweep." + e.axis, e.what() + std::string(" (point ") +
                                                              point_id(p) + ")");
    }
    if (p.seq_len_kv == 0) p.seq_len_kv = p.seq_len;
    if (p.paged() && p.page_size == 0) p.page_size = 16;
    mark_variants(p);
    Point point{p, point_id(p)};
    // "auto" and an explicit device can name the same point: measure it once. Two points that
    // differ where it matters under one id would be one row: the id leaves a field out.
    const auto [at, added] = ids.emplace(point.id, points.size());
    if (added) {
      points.push_back(point);
    } else if (const Field<Problem>* f = first_difference(points[at->second].problem, p)) {
      const Axis* axis = axis_named(factors, f->name);
      throw ConfigError(sweep.file, axis ? axis->line : 1, axis ? axis->column : 1,
                        axis ? axis->key : "sweep." + f->name,
                        "two points differ in " + f->name + " (" +
                            field_text(f->get(points[at->second].problem)) + " and " +
                            field_text(f->get(p)) + ") but share the id " + point.id +
                            ": the point id does not tell their " + f->name + " apart");
    }

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

void expand_block(const SweepBlock& config, const SweepConfig& sweep, bool cuda_available,
                  std::vector<Point>& points, std::unordered_map<std::string, size_t>& ids) {
  for (int64_t tp : config.tp) expand_block_at(config, tp, sweep, cuda_available, points, ids);
}

}  // namespace

std::vector<Point> expand_sweep(const SweepConfig& config, bool cuda_available) {
  std::vector<Point> points;
  std::unordered_map<std::string, size_t> ids;  // id -> its point
  for (const SweepBlock& block : config.sweeps)
    expand_block(block, config, cuda_available, points, ids);
  return points;
}

std::vector<std::string> sweep_words(const Field<Problem>& f) {
  return takes_auto(f) ? std::vector<std::string>{kAutoDevice} : std::vector<std::string>{};
}

namespace {
// A problem of a kind `f` is a field of (its value reads back there, not empty).
Problem of_owner(const Field<Problem>& f) {
  Problem p;
  if (!f.kinds.empty()) p.kind = f.kinds.front();
  return p;
}
}  // namespace

FieldValue settable_value(const YamlReader& r, const Field<Problem>& f, const YAML::Node& node,
                          const std::string& key, FieldValue v) {
  Problem scratch = of_owner(f);
  try {
    f.set(scratch, v);
  } catch (const std::invalid_argument& e) {
    r.fail(node, key, e.what());
  }
  return v;
}

FieldValue read_problem_value(const YamlReader& r, const Field<Problem>& f, const YAML::Node& node,
                              const std::string& key, bool in_sweep) {
  // A number its field refuses (past a kind's bound) is refused where it stands.
  auto settable = [&](FieldValue v) { return settable_value(r, f, node, key, std::move(v)); };
  switch (f.type) {
    case FieldType::integer: return settable(r.integer(node, key, 1));
    case FieldType::boolean: return r.boolean(node, key);
    case FieldType::number: return settable(r.number(node, key, 0, /*exclusive=*/f.above_zero));
    case FieldType::text: {
      // A list is one value of a text axis: a list of lengths, a window's two edges.
      std::string text;
      if (node.IsSequence()) {
        for (const auto& item : node) text += (text.empty() ? "" : ",") + r.scalar(item, key);
        if (text.empty()) r.fail(node, key, "an empty list");
      } else {
        text = r.scalar(node, key);
      }
      Problem scratch = of_owner(f);
      try {
        f.set(scratch, text);
      } catch (const std::invalid_argument& e) {
        r.fail(node, key, e.what());
      }
      return f.get(scratch);
    }
    case FieldType::choice: {
      const std::string text = r.scalar(node, key);
      if (in_sweep && takes_auto(f) && text == kAutoDevice) return text;
      Problem scratch = of_owner(f);
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
