// Variants: what a point adds to its kind's attention (a sliding window, a softcap, sinks, chunks,
// an fp8 cache, MLA's rope part, ragged lengths, a paged cache), the third seam beside backend
// kinds (plugins/backend_kind.hpp) and problem kinds (kinds/problem_kind.hpp). A variant is one
// file in kinds/variants/ with one class holding all of it: its fields (sweep keys, report
// columns, id parts), the kinds it applies to, its name and words (what a backend declares, what
// a refusal says), the combinations it refuses, the Python keywords that carry it to a function,
// its share of the work model (the keys a query sees) and, in the file's LibTorch half
// (VariantTensors, kinds/tensors.hpp), its inputs, its hooks in the reference and the inputs
// "without" it that a backend ignoring it computes against. One line in kinds/list.hpp adds it;
// every list of variants (Problem::present, Backend::variants()'s default, the Python bridge's
// keywords, docs/variants.md) is read off that list. Like FlashInfer's AttentionVariant, the
// reference's hooks split a variant into what it does to the scores, the mask and the softmax.
#pragma once

#include "base/field.hpp"
#include "kinds/problem_kind.hpp"

#include <attnbench/backend.hpp>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

// A keyword a Python backend's function takes for a variant: its value is a number, a tuple of
// numbers (`numbers`), or the named input of the same name (numbers null: a tensor).
struct PythonKeyword {
  std::string name;
  std::function<std::vector<double>(const Problem&)> numbers;
  bool integers = false;  // the numbers as Python ints
};

class ProblemVariant {
 public:
  virtual ~ProblemVariant() = default;
  // "sinks": what Backend::variants() declares and a row's variant_moves names.
  virtual std::string name() const = 0;
  // "attention sinks": how a refusal's reason names it.
  virtual std::string words() const = 0;
  // One line for docs/variants.md.
  virtual std::string summary() const = 0;
  // The kinds whose points may have it; empty: every kind.
  virtual std::vector<std::string> kinds() const { return {}; }
  // Whether the point has it (the point's kind is one of kinds(): the list checks that first).
  virtual bool present(const Problem& problem) const = 0;
  // Its own fields: sweep keys of its kinds' points, report columns and id parts (each owned by
  // kinds(), which the field table sets).
  virtual std::vector<Field<Problem>> fields() const { return {}; }
  // Whether a backend runs it only when it declares it (Backend::variants()); false for a part of
  // its kind that every backend of the kind runs (MLA's rope), checked all the same.
  virtual bool declared() const { return true; }
  // Whether Backend::variants()'s default (kAbi4Variants, every variant of plugin ABI 4) has it.
  virtual bool in_abi4() const { return false; }
  // The first combination of the point's fields it cannot make: the field to change and why.
  virtual std::optional<FieldRefusal> refuse(const Problem& /*problem*/) const {
    return std::nullopt;
  }
  // What carries it to a Python backend: the keywords it adds, the keywords a function must take
  // to run it (all of them; by default those it adds), and whether in the uniform layout a
  // function taking `mask` runs it without them (a window).
  virtual std::vector<PythonKeyword> python_keywords() const { return {}; }
  virtual std::vector<std::string> python_needs() const;
  virtual bool mask_serves() const { return false; }
  // Attributes it adds to a Python function's `problem` besides its fields (a window's edges as
  // numbers).
  virtual std::vector<PythonKeyword> python_attributes() const { return {}; }
  // Its named inputs (Inputs::input()): drawn by its LibTorch half, passed to Python by name.
  virtual std::vector<std::string> input_names() const { return {}; }
  // The names of its checks: the inputs without it that a backend ignoring it would match
  // (VariantTensors::without()); one, its own name, unless it says otherwise.
  virtual std::vector<std::string> check_names() const { return {name()}; }
  // Its share of the work model: whether it narrows the keys a query sees and, for the query at
  // position `pos` of a sequence of `keys` keys, how ([lo, hi] narrowed in place).
  virtual bool narrows(const Problem& /*problem*/) const { return false; }
  virtual void narrow(const Problem& /*problem*/, int64_t /*pos*/, int64_t /*keys*/,
                      int64_t& /*lo*/, int64_t& /*hi*/) const {}
};

// Every variant, in kinds/list.hpp's order.
const std::vector<const ProblemVariant*>& problem_variants();
// nullptr for a name no variant has.
const ProblemVariant* find_problem_variant(const std::string& name);
// Adds a variant to the list: a test's toy variant (with its LibTorch half, which may be null).
// Call before anything reads problem_fields().
class VariantTensors;
void add_problem_variant(const ProblemVariant& variant, const VariantTensors* tensors = nullptr);
// The variants added with add_problem_variant() and their LibTorch halves, for kinds/tensors.cpp.
const std::vector<std::pair<const ProblemVariant*, const VariantTensors*>>& added_problem_variants();
// The variants `problem` has (its kind's, present), in the list's order; declared ones only when
// `declared_only`.
std::vector<const ProblemVariant*> variants_of(const Problem& problem, bool declared_only = false);

// Fills Problem::present with the point's declared variants (their names and words): what every
// stage that makes a Problem (the sweep, the worker's protocol) calls once its fields are set.
void mark_variants(Problem& problem);

// What the harness asks first: no, with the reason, when `backend` does not declare the point's
// kind or one of its variants (kAbi4Variants standing for in_abi4()'s); yes otherwise (then
// supports() decides).
Support declared_support(const Backend& backend, const Problem& problem);

// Whether `variant` applies to points of kind `kind` (its kinds(), or every kind).
bool applies_to(const ProblemVariant& variant, const std::string& kind);

// Every variant's names and checks in words, for docs and messages: "window, softcap, sinks, chunk,
// fp8_v_scale, rope".
std::string variant_check_list();

}  // namespace attnbench
