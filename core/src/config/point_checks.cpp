// The checks of a sweep's points that no axis can make alone (kv_heads dividing heads, lengths
// against the mask, a kind's own refusals, another kind's fields): the first bad point, located
// at the axis of its block that must change.
#include "config/point_checks.hpp"

#include "base/errors.hpp"
#include "base/names.hpp"
#include "config/sweep.hpp"
#include "kinds/problem.hpp"
#include "kinds/problem_kind.hpp"
#include "kinds/variant.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace attnbench {

namespace {

// Every axis of a block: its free ones, then those of its zip groups.
std::vector<const Axis*> block_axes(const SweepBlock& block) {
  std::vector<const Axis*> out;
  for (const auto& a : block.axes) out.push_back(&a);
  for (const auto& z : block.zips)
    for (const auto& a : z.axes) out.push_back(&a);
  return out;
}

const Axis* block_axis(const SweepBlock& block, const std::string& name) {
  for (const Axis* a : block_axes(block))
    if (a->name == name) return a;
  return nullptr;
}

// A kind's own fields (its own and its variants'), for messages: "qk_nope_head_dim, ...,
// absorbed"; "none of its own" when it has none.
std::string own_field_names(const ProblemKind& kind) {
  std::string out;
  for (const auto& f : problem_fields())
    if (owned_by_kind(f, kind.name())) out += (out.empty() ? "" : ", ") + f.name;
  return out.empty() ? "none of its own" : out;
}

void check_point(const SweepConfig& config, const SweepBlock& block, const Point& point) {
  {
    const Problem& p = point.problem;
    auto fail = [&](const std::string& at, const std::string& msg) {
      const Axis* axis = block_axis(block, at);
      throw ConfigError(config.file, axis ? axis->line : 1, axis ? axis->column : 1,
                        axis ? axis->key : "sweep." + at,
                        msg + " (point " + point.id + ")");
    };
    // Every token of a point is an input row on one device: past int32's count of them no device
    // holds a uniform batch's inputs (a ragged one's lengths are bounded where they are drawn),
    // and the loops over its sequences would run for hours.
    const double tokens =
        static_cast<double>(p.batch) * static_cast<double>(std::max(p.seq_len, p.seq_len_kv));
    if (!p.ragged() && tokens > 2147483647.0)
      fail("batch", "batch " + std::to_string(p.batch) + " of " +
                        std::to_string(std::max(p.seq_len, p.seq_len_kv)) + " tokens is " +
                        format_number(tokens) +
                        " tokens, past 2147483647 (int32): no device holds the inputs");
    auto written = [&](const char* name) { return block_axis(block, name) != nullptr; };
    for (auto [one, per_sequence] : {std::pair{"seq_len", "seq_lens"}, {"seq_len_kv", "seq_lens_kv"}})
      if (written(one) && written(per_sequence))
        fail(per_sequence, std::string("sets the lengths that '") + one +
                               "' sets too; write one of them in a block");
    if (!p.q_lens.empty() && p.seq_lens_kv.empty() && written("seq_len_kv"))
      fail("seq_len_kv",
           "seq_lens draws each sequence's length; write the key lengths per sequence as "
           "seq_lens_kv (the same forms), or leave them out for a prefill");
    if (p.causal && p.ragged())
      for (int64_t b = 0; b < p.batch; ++b)
        if (p.q_len(b) > p.kv_len(b))
          fail(p.seq_lens_kv.empty() ? "seq_lens" : "seq_lens_kv",
               "sequence " + std::to_string(b) + " has " + std::to_string(p.q_len(b)) +
                   " queries and " + std::to_string(p.kv_len(b)) +
                   " keys: under causal each sequence needs at least as many keys as queries");
    // The kind's fields: another kind's, or one it derives, cannot be written for its points.
    const ProblemKind& kind = kind_of(p);
    for (const Axis* axis : block_axes(block)) {
      const Field<Problem>& f = *find_problem_field(axis->name);
      if (kind_has_axis(kind, f)) continue;
      if (f.kinds.empty())
        fail(f.name, "kind " + kind.name() + " derives " + f.name +
                         " from its own fields; leave it out (" + kind.name() +
                         "'s fields: " + own_field_names(kind) + ")");
      std::string owners;
      for (const std::string& k : f.kinds) owners += (owners.empty() ? "" : " and ") + k;
      fail(f.name, f.name + " is a field of kind " + owners + ", not of " + kind.name() +
                       " (its fields: " + own_field_names(kind) + "); write one block per kind");
    }
    // The kind first: one that derives the heads says so in its own fields' words.
    if (const std::optional<FieldRefusal> no = kind.refuse(p)) fail(no->field, no->why);
    if (p.heads % p.kv_heads != 0)
      fail("kv_heads", "kv_heads " + std::to_string(p.kv_heads) + " does not divide heads " +
                           std::to_string(p.heads) +
                           "; grouped-query attention shares each kv head among an equal "
                           "number of query heads");
    for (const ProblemVariant* variant : problem_variants())
      if (applies_to(*variant, p.kind))
        if (const std::optional<FieldRefusal> no = variant->refuse(p)) fail(no->field, no->why);
    if (p.kv_dtype && *p.kv_dtype != p.dtype) {  // a cache of its own dtype: fp8 under 16-bit q
      if (*p.kv_dtype != DType::fp8_e4m3)
        fail("kv_dtype", "kv_dtype " + to_string(*p.kv_dtype) + " under dtype " +
                             to_string(p.dtype) +
                             ": a cache of another dtype than q's is fp8_e4m3 (engines' quantized "
                             "cache); leave kv_dtype out for a cache of q's dtype");
      if (p.dtype != DType::bf16 && p.dtype != DType::f16)
        fail("kv_dtype", "an fp8_e4m3 cache is read under bf16 or fp16 queries, not " +
                             to_string(p.dtype));
      if (p.direction == Direction::bwd)
        fail("direction", "an fp8_e4m3 KV cache is read by the forward pass only (inference); "
                          "its backward has no cache to train");
    }
    // A block that sweeps kv_layout may write the page's axes for its paged points alone.
    const bool layouts_swept = written("kv_layout") && !p.paged() &&
                               block_axis(block, "kv_layout")->values.size() > 1;
    if (!p.paged() && !layouts_swept && written("page_size"))
      fail("page_size", "page_size applies to a paged cache; add kv_layout: paged");
    if (!p.paged() && !layouts_swept && written("page_order"))
      fail("page_order", "page_order applies to a paged cache; add kv_layout: paged");
    if (!p.ragged() && p.causal && p.seq_len > p.seq_len_kv)
      fail("seq_len_kv",
           "causal attention with seq_len_kv " + std::to_string(p.seq_len_kv) + " below seq_len " +
               std::to_string(p.seq_len) + " leaves the first " +
               std::to_string(p.seq_len - p.seq_len_kv) +
               " query rows no key to attend to (the mask is aligned bottom-right); use causal: "
               "false or seq_len_kv >= seq_len");
  }
}

}  // namespace

// Combinations the axes cannot make one at a time: the first bad point, located at the axis that
// must change (in the point's block).
void check_points(const SweepConfig& config) {
  for (const SweepBlock& block : config.sweeps) {
    SweepConfig one = config;
    one.sweeps = {block};
    const std::vector<Point> points = expand_sweep(one, /*cuda_available=*/false);
    for (const Point& point : points) check_point(config, block, point);
    // A key written for none of the block's points is a value nothing measures, yet the report
    // would carry it: v_head_dim with absorbed: true, kv_lora_rank of a prefill.
    for (const Axis* axis : block_axes(block)) {
      const Field<Problem>& f = *find_problem_field(axis->name);
      if (!f.applies || points.empty() ||
          std::any_of(points.begin(), points.end(),
                      [&](const Point& p) { return f.applies(p.problem); }))
        continue;
      throw ConfigError(config.file, axis->line, axis->column, axis->key,
                        f.name + " does not apply to any point of this block (" +
                            (f.applies_to.empty() ? "its doc says when: " + f.doc : f.applies_to) +
                            "); leave it out (point " + points.front().id + ")");
    }
  }
}

}  // namespace attnbench
