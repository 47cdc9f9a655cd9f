// Problem kinds: which attention a point is. `attention` (MHA/GQA with its variants) and `mla`
// (DeepSeek's multi-head latent attention) today. A kind owns its fields (sweep keys of its
// points alone, report columns, id parts), what it derives from them (the widths of q, k and v,
// the default softmax scale), the combinations it refuses and its work model. Each kind is one
// class in its own file (attention.cpp, mla.cpp) in one list (problem_kinds(), kinds.cpp): the
// sweep, the point id, the report's columns and the work model reach a kind only through it, the
// twin of plugins/backend_kind.hpp on the backend side. Inputs and the float64 reference are
// read off the geometry a kind derives (backend.hpp: head_dim, head_dim_v, v_in_k, scale), so a
// kind that is attention over other widths needs no tensor code. Recipe: docs/contributing.md.
#pragma once

#include "base/field.hpp"

#include <attnbench/backend.hpp>

#include <optional>
#include <string>
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
  // and id parts. Each entry's `kind` is this kind's name.
  virtual std::vector<Field<Problem>> own_fields() const { return {}; }
  // The common fields it derives from its own (MLA's head_dim): its sweeps may not write them,
  // and they add no id part (its own fields say the same).
  virtual std::vector<std::string> derived_axes() const { return {}; }
  // Fills what it derives (head_dim, head_dim_v, v_in_k) and, where the sweep wrote no scale
  // (0), its default. Runs on every point after its axes are set; running it twice changes nothing.
  virtual void complete(Problem& problem) const = 0;
  // The softmax scale a point of this kind has unless the sweep writes one.
  virtual double default_scale(const Problem& problem) const = 0;
  // The first combination of fields it cannot make (the rules every kind shares are config's).
  virtual std::optional<FieldRefusal> refuse(const Problem& /*problem*/) const {
    return std::nullopt;
  }
  // The work model; the defaults are problem.hpp's, read off the derived geometry.
  virtual double flop(const Problem& problem) const;
  virtual double bytes(const Problem& problem) const;
  // The limit for a row's rel_err, from the dtype's base (config `tolerance:`).
  virtual double tolerance(double base, const Problem& problem) const;
};

// Every kind, attention first (a sweep that names none is attention).
const std::vector<const ProblemKind*>& problem_kinds();
// nullptr for a name no kind has.
const ProblemKind* find_problem_kind(const std::string& name);
// The kind of `problem`; throws std::invalid_argument naming the kinds when it has none.
const ProblemKind& kind_of(const Problem& problem);
// Adds a kind to the list: a test's toy kind. Call before anything reads problem_fields().
void add_problem_kind(const ProblemKind& kind);

// The work model of `problem`'s kind: what the report's gflop, gbytes and tolerance are.
double point_flop(const Problem& problem);
double point_bytes(const Problem& problem);
double point_tolerance(double base, const Problem& problem);

// Whether field `f` is one of `kind`'s axes: a common field its kind does not derive, or its own.
bool kind_has_axis(const ProblemKind& kind, const Field<Problem>& f);

// `f` as kind `kind`'s own field: empty (not measured) on other kinds' rows, and an empty cell
// read back leaves the problem as it was.
Field<Problem> owned_by(const std::string& kind, Field<Problem> f);

}  // namespace attnbench
