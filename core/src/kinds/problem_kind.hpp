// Problem kinds: which attention a point is (docs/kinds.md). A kind owns its fields (sweep keys of
// its points alone, report columns, id parts; a field may be several kinds'), what it derives from
// them (the widths of q, k and v, the default softmax scale), the combinations it refuses, its
// work model and, in its file's LibTorch half (KindTensors, kinds/tensors.hpp), its measurement:
// its named inputs (how they are drawn and moved before each timed sample), its float64 reference
// and its checks. Each kind is one file (kinds/<kind>.cpp) and one line of kinds/list.hpp: the
// sweep, the point id, the report's columns, the worker and the checks reach a kind only through
// the list, the twin of plugins/backend_kind.hpp on the backend side. A kind that is attention
// over other widths (mla) writes no tensor code: the defaults read the geometry it derives
// (backend.hpp: head_dim, head_dim_v, v_in_k, scale). Recipe: docs/contributing.md.
#pragma once

#include "base/field.hpp"

#include <attnbench/backend.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

// A combination of fields a kind cannot make: the field to change and why.
struct FieldRefusal {
  std::string field;
  std::string why;
};

class ProblemKind {
 public:
  virtual ~ProblemKind() = default;
  // "mla": what a sweep writes as `kind:`, the `kind` column, what Backend::kinds() declares.
  virtual std::string name() const = 0;
  // One line for docs and messages.
  virtual std::string summary() const = 0;
  // Where its point ids start ("mla-"); attention's is empty (its ids predate kinds).
  virtual std::string id_prefix() const = 0;
  // Its own fields: sweep keys of its points only, report columns (empty on other kinds' rows)
  // and id parts. Each entry's `kinds` names this kind (owned_by()); a field another kind has too
  // (the same name and type: DSA's latent widths are MLA's) is one column of both.
  virtual std::vector<Field<Problem>> own_fields() const { return {}; }
  // The common fields it derives from its own (MLA's head_dim): its sweeps may not write them,
  // and they add no id part (its own fields say the same).
  virtual std::vector<std::string> derived_axes() const { return {}; }
  // Fills what it derives (head_dim, head_dim_v, v_in_k) and, where the sweep wrote no scale
  // (0), its default. Runs on every point after its axes are set; running it twice changes nothing.
  virtual void complete(Problem& problem) const = 0;
  // The softmax scale a point of this kind has unless the sweep writes one.
  virtual double default_scale(const Problem& problem) const = 0;
  // What its fields name outside the sweep, resolved against the sweep file's folder (a replayed
  // index file); runs after complete().
  virtual void settle(Problem& /*problem*/, const std::string& /*config_dir*/) const {}
  // Its named inputs beyond q, k, v and the layout's (Inputs::input(): DSA's "indices"), drawn by
  // its LibTorch half and passed to a Python function by name.
  virtual std::vector<std::string> input_names() const { return {}; }
  // The names of its own checks (KindTensors::checks(): DSA's "indices", "indices+1"), for docs.
  virtual std::vector<std::string> check_names() const { return {}; }
  // The first combination of fields it cannot make (the rules every kind shares are config's).
  virtual std::optional<FieldRefusal> refuse(const Problem& /*problem*/) const {
    return std::nullopt;
  }
  // The work model; the defaults are problem.hpp's, read off the derived geometry and the
  // variants' narrowing of the keys each query sees.
  virtual double flop(const Problem& problem) const;
  virtual double bytes(const Problem& problem) const;
  // Which plots a point shares (plots.py draws one family a figure): by default its id without the
  // batch and the lengths, the axes plots run along.
  virtual std::string plot_family(const Problem& problem) const;
  // The limit for a row's rel_err, from the dtype's base (config `tolerance:`).
  virtual double tolerance(double base, const Problem& problem) const;
};

// Every kind, attention first (a sweep that names none is attention).
const std::vector<const ProblemKind*>& problem_kinds();
// nullptr for a name no kind has.
const ProblemKind* find_problem_kind(const std::string& name);
// The kind of `problem`; throws std::invalid_argument naming the kinds when it has none.
const ProblemKind& kind_of(const Problem& problem);
// Adds a kind to the list: a test's toy kind, with its LibTorch half (null: the defaults, attention
// over the kind's widths). Call before anything reads problem_fields().
class KindTensors;
void add_problem_kind(const ProblemKind& kind, const KindTensors* tensors = nullptr);
// The kinds added with add_problem_kind() and their LibTorch halves, for kinds/tensors.cpp.
const std::vector<std::pair<const ProblemKind*, const KindTensors*>>& added_problem_kinds();

// The work model of `problem`'s kind: what the report's gflop, gbytes and tolerance are.
double point_flop(const Problem& problem);
double point_bytes(const Problem& problem);
double point_tolerance(double base, const Problem& problem);

// Whether field `f` is one of `kind`'s axes: a common field its kind does not derive, or its own.
bool kind_has_axis(const ProblemKind& kind, const Field<Problem>& f);
// Whether `f` is kind `kind`'s own field (one of its `kinds`).
bool owned_by_kind(const Field<Problem>& f, const std::string& kind);

// `f` as the own field of `kinds`: empty (not measured) on other kinds' rows, and an empty cell
// read back leaves the problem as it was (the field table wraps its get and set).
Field<Problem> owned_by(std::vector<std::string> kinds, Field<Problem> f);
inline Field<Problem> owned_by(const std::string& kind, Field<Problem> f) {
  return owned_by(std::vector<std::string>{kind}, std::move(f));
}

// A field of a kind or variant stored in Problem::extra (no member of its own), by name and type;
// unset: `fallback`.
Field<Problem> extra_field(std::string name, FieldType type, std::string unit, std::string doc,
                           FieldValue fallback);
// Its value on `problem` as a number (an integer or number field).
double extra_value(const Problem& problem, const std::string& name);

}  // namespace attnbench
