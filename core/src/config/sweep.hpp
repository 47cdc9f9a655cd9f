// Expands a SweepConfig into the ordered list of points to measure.
#pragma once

#include "kinds/problem.hpp"
#include "config/config.hpp"
#include "config/yaml_reader.hpp"

#include <attnbench/backend.hpp>

#include <string>
#include <vector>

namespace attnbench {

struct Point {
  Problem problem;
  std::string id;  // point_id(problem)
};

// Cartesian product of the free axes and the zip groups, in file order: the first written varies
// slowest, the last fastest; the zip groups stand where `zip:` is written. `cuda_available`
// resolves device "auto". Axes left out take their defaults: batch 1, heads 1, kv_heads = heads,
// seq_len_kv = seq_len, head_dim 64, dtype bf16, causal true, device auto, direction fwd.
std::vector<Point> expand_sweep(const SweepConfig& config, bool cuda_available);

// A value of problem field `f` as written at `node` (an axis's value, an `expect:` filter), in the
// report's form: an integer of at least 1, true or false, or one of the field's names; in a sweep
// (`in_sweep`) a field may take a word of the sweep's own as well (device: auto).
// The words a sweep may write for `f` beyond its own names: device's `auto`.
std::vector<std::string> sweep_words(const Field<Problem>& f);
// A field whose one value is a list (window: [LEFT, RIGHT]): a flat list is one value, a sweep of
// several writes a list of lists.
bool pair_valued(const Field<Problem>& f);
FieldValue read_problem_value(const YamlReader& r, const Field<Problem>& f, const YAML::Node& node,
                              const std::string& key, bool in_sweep);
// `v` as `f` takes it, or a ConfigError at `node` saying why not (a number past its bound).
FieldValue settable_value(const YamlReader& r, const Field<Problem>& f, const YAML::Node& node,
                          const std::string& key, FieldValue v);

}  // namespace attnbench
