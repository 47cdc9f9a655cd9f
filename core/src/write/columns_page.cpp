#include "write/columns_page.hpp"

#include "config/settings.hpp"
#include "config/sweep.hpp"
#include "kinds/problem_kind.hpp"
#include "kinds/variant.hpp"
#include "records/fields.hpp"

#include <sstream>

namespace attnbench {

namespace {

// "`a`, `b`", or "" for none.
std::string code_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "`" : ", `") + n + "`";
  return out;
}

// The fields a kind or variant owns, by name, from the table.
std::vector<std::string> fields_of(const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& f : problem_fields())
    if (owned_by_kind(f, kind)) out.push_back(f.name);
  return out;
}

// The lists of kinds and variants (core/src/kinds/list.hpp), what each owns and adds.
void kinds_and_variants(std::ostringstream& out) {
  out << "\n## Problem kinds (`kind:`; docs/kinds.md)\n\n"
         "| kind | its fields | its inputs | its checks | what it is |\n"
         "| --- | --- | --- | --- | --- |\n";
  for (const ProblemKind* k : problem_kinds())
    out << "| `" << k->name() << "` | " << code_list(fields_of(k->name())) << " | "
        << code_list(k->input_names()) << " | " << code_list(k->check_names()) << " | "
        << k->summary() << " |\n";
  out << "\n## Variants (`Backend::variants()`; docs/variants.md)\n\n"
         "| variant | in words | kinds | fields | inputs | Python keywords | checks | declared | "
         "what it is |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const ProblemVariant* v : problem_variants()) {
    std::vector<std::string> fields;
    for (const auto& f : v->fields()) fields.push_back(f.name);
    const std::vector<std::string> kinds = v->kinds();
    out << "| `" << v->name() << "` | " << v->words() << " | "
        << (kinds.empty() ? std::string("every kind") : code_list(kinds)) << " | "
        << code_list(fields) << " | " << code_list(v->input_names()) << " | "
        << code_list(v->python_needs()) << (v->mask_serves() ? " (or `mask`)" : "") << " | "
        << code_list(v->check_names()) << " | "
        << (!v->declared() ? "never (part of its kind)" : v->in_abi4() ? "yes (ABI 4's default)" : "yes")
        << " | " << v->summary() << " |\n";
  }
}

template <class R>
void table(std::ostringstream& out, const std::vector<Field<R>>& fields) {
  out << "| column | type | unit | meaning |\n| --- | --- | --- | --- |\n";
  for (const auto& f : fields)
    out << "| `" << f.name << "` | " << type_name(f.type) << " | " << f.unit << " | " << f.doc
        << " |\n";
}

}  // namespace

std::string columns_markdown() {
  std::ostringstream out;
  out << "# Columns\n\n"
         "Generated from core/src/records/fields.cpp by `attnbench columns`; a test fails when\n"
         "this page and the tables differ. An empty cell: not measured, or does not apply.\n\n"
         "## Main CSV (`<output>.csv`), one row per point, backend and timing mode\n\n"
         "The first column is `schema_version`.\n\n";
  table(out, row_fields());
  out << "\n## The problem: `sweep:` axes\n\n"
         "Each is a key of a sweep block (docs/config.md), a column of the main CSV, a field of\n"
         "`attnbench::Problem` (core/include/attnbench/backend.hpp) and of a Python backend's\n"
         "`problem` (docs/backends.md), read off one table (core/src/kinds/problem.cpp).\n\n"
         "| axis | values | meaning |\n| --- | --- | --- |\n";
  for (const auto& f : problem_fields()) {
    std::string values = f.type == FieldType::integer   ? "integers >= 1, or a range"
                         : f.type == FieldType::boolean ? "`true`, `false`"
                                                        : "";
    std::vector<std::string> names = f.choices;
    for (const auto& w : sweep_words(f)) names.push_back(w);
    for (const auto& c : names) values += (values.empty() ? "`" : ", `") + c + "`";
    out << "| `" << f.name << "` | " << values << " | " << f.doc << " |\n";
  }
  kinds_and_variants(out);
  out << "\n## Kernel CSV (`<output>.kernels.csv`), one row per point, backend and kernel\n\n";
  table(out, kernel_row_fields());
  out << "\n## `measurement:` keys of a sweep\n\n";
  out << "| key | type | unit | meaning |\n| --- | --- | --- | --- |\n";
  for (const auto& s : measure_settings_fields()) {
    if (!s.config_key) continue;
    out << "| `" << s.field.name << "` | " << type_name(s.field.type) << " | " << s.field.unit
        << " | " << s.field.doc << " |\n";
  }
  out << "\n## Flags (the `flags` column, `;`-separated; compare adds the host ones)\n\n"
         "| flag | meaning |\n| --- | --- |\n";
  for (const auto& n : name_table<Flag>())
    out << "| `" << n.name << "` | " << flag_doc(n.value) << " |\n";
  out << "\n## What compare judges\n\n| metric | better | threshold |\n| --- | --- | --- |\n";
  for (const auto& f : row_fields()) {
    if (!f.metric) continue;
    out << "| `" << f.name << "` | " << (f.metric->higher_is_better ? "higher" : "lower") << " | "
        << (f.metric->threshold > 0 ? std::to_string(int(f.metric->threshold * 100 + 0.5)) + "%"
                                    : "any change")
        << " |\n";
  }
  return out.str();
}

}  // namespace attnbench
