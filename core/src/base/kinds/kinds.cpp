// The list of problem kinds, and what every stage asks of a point's kind.
#include "base/kinds/problem_kind.hpp"

#include "base/names.hpp"
#include "base/problem.hpp"

#include <algorithm>
#include <stdexcept>

namespace attnbench {

const ProblemKind& attention_kind();  // attention.cpp
const ProblemKind& mla_kind();        // mla.cpp

namespace {

std::vector<const ProblemKind*>& kind_list() {
  static std::vector<const ProblemKind*> kinds = {
      &attention_kind(),
      &mla_kind(),
  };
  return kinds;
}

}  // namespace

const std::vector<const ProblemKind*>& problem_kinds() { return kind_list(); }

const ProblemKind* find_problem_kind(const std::string& name) {
  for (const ProblemKind* k : problem_kinds())
    if (k->name() == name) return k;
  return nullptr;
}

const ProblemKind& kind_of(const Problem& problem) {
  if (const ProblemKind* k = find_problem_kind(problem.kind)) return *k;
  std::vector<std::string> names;
  for (const ProblemKind* k : problem_kinds()) names.push_back(k->name());
  throw std::invalid_argument("unknown kind '" + problem.kind + "'; use " + one_of(names));
}

void add_problem_kind(const ProblemKind& kind) {
  if (problem_fields_made())
    throw std::logic_error("add_problem_kind(" + kind.name() +
                           ") after the problem's field table was made");
  if (find_problem_kind(kind.name()))
    throw std::logic_error("a problem kind named '" + kind.name() + "' exists already");
  kind_list().push_back(&kind);
}

double ProblemKind::flop(const Problem& problem) const { return attention_flop(problem); }
double ProblemKind::bytes(const Problem& problem) const { return attention_bytes(problem); }
double ProblemKind::tolerance(double base, const Problem& problem) const {
  return scaled_tolerance(base, problem);
}

double point_flop(const Problem& problem) { return kind_of(problem).flop(problem); }
double point_bytes(const Problem& problem) { return kind_of(problem).bytes(problem); }
double point_tolerance(double base, const Problem& problem) {
  return kind_of(problem).tolerance(base, problem);
}

bool kind_has_axis(const ProblemKind& kind, const Field<Problem>& f) {
  if (f.derived) return false;
  if (!f.kind.empty()) return f.kind == kind.name();
  const std::vector<std::string> derived = kind.derived_axes();
  return std::find(derived.begin(), derived.end(), f.name) == derived.end();
}

Field<Problem> owned_by(const std::string& kind, Field<Problem> f) {
  f.kind = kind;
  f.get = [kind, get = std::move(f.get)](const Problem& p) {
    return p.kind == kind ? get(p) : FieldValue{};
  };
  f.set = [set = std::move(f.set)](Problem& p, const FieldValue& v) {
    if (!std::holds_alternative<std::monostate>(v)) set(p, v);
  };
  return f;
}

}  // namespace attnbench
