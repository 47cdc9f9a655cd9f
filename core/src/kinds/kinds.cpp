// The list of problem kinds, and what every stage asks of a point's kind.
#include "kinds/problem_kind.hpp"

#include "base/names.hpp"
#include "kinds/list.hpp"
#include "kinds/problem.hpp"

#include <algorithm>
#include <stdexcept>

namespace attnbench {

#define ATTNBENCH_DECLARE_KIND(name) const ProblemKind& name##_kind();
ATTNBENCH_PROBLEM_KINDS(ATTNBENCH_DECLARE_KIND)
#undef ATTNBENCH_DECLARE_KIND

namespace {

std::vector<std::pair<const ProblemKind*, const KindTensors*>>& added() {
  static std::vector<std::pair<const ProblemKind*, const KindTensors*>> kinds;
  return kinds;
}

std::vector<const ProblemKind*>& kind_list() {
#define ATTNBENCH_LIST_KIND(name) &name##_kind(),
  static std::vector<const ProblemKind*> kinds = {ATTNBENCH_PROBLEM_KINDS(ATTNBENCH_LIST_KIND)};
#undef ATTNBENCH_LIST_KIND
  return kinds;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
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

void add_problem_kind(const ProblemKind& kind, const KindTensors* tensors) {
  if (problem_fields_made())
    throw std::logic_error("add_problem_kind(" + kind.name() +
                           ") after the problem's field table was made");
  if (find_problem_kind(kind.name()))
    throw std::logic_error("a problem kind named '" + kind.name() + "' exists already");
  kind_list().push_back(&kind);
  added().emplace_back(&kind, tensors);
}

const std::vector<std::pair<const ProblemKind*, const KindTensors*>>& added_problem_kinds() {
  return added();
}

double ProblemKind::flop(const Problem& problem) const { return attention_flop(problem); }
double ProblemKind::bytes(const Problem& problem) const { return attention_bytes(problem); }
double ProblemKind::tolerance(double base, const Problem& problem) const {
  return scaled_tolerance(base, problem);
}

std::string ProblemKind::plot_family(const Problem& problem) const {
  static const std::vector<std::string> along = {"batch", "seq_len", "seq_len_kv", "seq_lens",
                                                 "seq_lens_kv"};
  std::string parts;
  for (const auto& f : problem_fields())
    if (f.id_part && !has(along, f.name) && kind_has_axis(*this, f) &&
        (!f.applies || f.applies(problem)))
      parts += f.id_part(problem);
  if (!parts.empty() && parts.front() == '-') parts.erase(0, 1);  // the batch's part led
  return id_prefix() + parts;
}

double point_flop(const Problem& problem) { return kind_of(problem).flop(problem); }
double point_bytes(const Problem& problem) { return kind_of(problem).bytes(problem); }
double point_tolerance(double base, const Problem& problem) {
  return kind_of(problem).tolerance(base, problem);
}

bool owned_by_kind(const Field<Problem>& f, const std::string& kind) { return has(f.kinds, kind); }

bool kind_has_axis(const ProblemKind& kind, const Field<Problem>& f) {
  if (f.derived) return false;
  if (!f.kinds.empty()) return owned_by_kind(f, kind.name());
  return !has(kind.derived_axes(), f.name);
}

Field<Problem> owned_by(std::vector<std::string> kinds, Field<Problem> f) {
  f.kinds = std::move(kinds);
  return f;
}

Field<Problem> extra_field(std::string name, FieldType type, std::string unit, std::string doc,
                           FieldValue fallback) {
  Field<Problem> f;
  f.name = name;
  f.type = type;
  f.unit = std::move(unit);
  f.doc = std::move(doc);
  f.predictable = f.numeric();
  f.get = [name, type, fallback](const Problem& p) -> FieldValue {
    const std::string* text = p.extra_text(name);
    return text ? parse_field_text(type, *text) : fallback;
  };
  f.set = [name](Problem& p, const FieldValue& v) {
    for (auto it = p.extra.begin(); it != p.extra.end(); ++it)
      if (it->first == name) {
        p.extra.erase(it);
        break;
      }
    if (!std::holds_alternative<std::monostate>(v)) p.extra.emplace_back(name, field_text(v));
  };
  return f;
}

double extra_value(const Problem& problem, const std::string& name) {
  const Field<Problem>* f = find_problem_field(name);
  if (!f) throw std::logic_error("no problem field named '" + name + "'");
  const FieldValue v = f->get(problem);
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const double* d = std::get_if<double>(&v)) return *d;
  throw std::logic_error("problem field '" + name + "' is not a number");
}

}  // namespace attnbench
