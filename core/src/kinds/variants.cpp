// The list of variants, and what every stage asks of a point's variants.
#include "kinds/variant.hpp"

#include "kinds/list.hpp"
#include "kinds/problem.hpp"

#include <algorithm>
#include <stdexcept>

namespace attnbench {

#define ATTNBENCH_DECLARE_VARIANT(name) const ProblemVariant& name##_variant();
ATTNBENCH_PROBLEM_VARIANTS(ATTNBENCH_DECLARE_VARIANT)
#undef ATTNBENCH_DECLARE_VARIANT

namespace {

std::vector<std::pair<const ProblemVariant*, const VariantTensors*>>& added() {
  static std::vector<std::pair<const ProblemVariant*, const VariantTensors*>> variants;
  return variants;
}

std::vector<const ProblemVariant*>& variant_list() {
#define ATTNBENCH_LIST_VARIANT(name) &name##_variant(),
  static std::vector<const ProblemVariant*> variants = {
      ATTNBENCH_PROBLEM_VARIANTS(ATTNBENCH_LIST_VARIANT)};
#undef ATTNBENCH_LIST_VARIANT
  return variants;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? std::string("none") : out;
}

}  // namespace

const std::vector<const ProblemVariant*>& problem_variants() { return variant_list(); }

std::vector<std::string> ProblemVariant::python_needs() const {
  std::vector<std::string> out;
  for (const PythonKeyword& k : python_keywords()) out.push_back(k.name);
  return out;
}

bool applies_to(const ProblemVariant& variant, const std::string& kind) {
  const std::vector<std::string> kinds = variant.kinds();
  return kinds.empty() || has(kinds, kind);
}

const ProblemVariant* find_problem_variant(const std::string& name) {
  for (const ProblemVariant* v : problem_variants())
    if (v->name() == name) return v;
  return nullptr;
}

void add_problem_variant(const ProblemVariant& variant, const VariantTensors* tensors) {
  if (problem_fields_made())
    throw std::logic_error("add_problem_variant(" + variant.name() +
                           ") after the problem's field table was made");
  if (find_problem_variant(variant.name()))
    throw std::logic_error("a variant named '" + variant.name() + "' exists already");
  variant_list().push_back(&variant);
  added().emplace_back(&variant, tensors);
}

const std::vector<std::pair<const ProblemVariant*, const VariantTensors*>>& added_problem_variants() {
  return added();
}

std::vector<const ProblemVariant*> variants_of(const Problem& problem, bool declared_only) {
  std::vector<const ProblemVariant*> out;
  for (const ProblemVariant* v : problem_variants())
    if (applies_to(*v, problem.kind) && (!declared_only || v->declared()) && v->present(problem))
      out.push_back(v);
  return out;
}

void mark_variants(Problem& problem) {
  problem.present.clear();
  for (const ProblemVariant* v : variants_of(problem, true))
    problem.present.push_back({v->name(), v->words()});
}

Support declared_support(const Backend& backend, const Problem& problem) {
  const std::vector<std::string> kinds = backend.kinds();
  if (!has(kinds, problem.kind))
    return Support::no(backend.name() + " does not run kind " + problem.kind + " (it declares " +
                       listed(kinds) + ")");
  std::vector<std::string> declared = backend.variants();
  if (has(declared, Backend::kAbi4Variants)) {
    declared.erase(std::find(declared.begin(), declared.end(), Backend::kAbi4Variants));
    for (const ProblemVariant* v : problem_variants())
      if (v->in_abi4()) declared.push_back(v->name());
  }
  for (const ProblemVariant* v : variants_of(problem, true))
    if (!has(declared, v->name()))
      return Support::no(backend.name() + " does not run " + v->words() + " (it declares " +
                         listed(declared) + ")");
  return Support::yes();
}

std::string variant_check_list() {
  std::vector<std::string> names;
  for (const ProblemVariant* v : problem_variants())
    for (const std::string& check : v->check_names()) names.push_back(check);
  return listed(names);
}

}  // namespace attnbench
