#include "write/columns_page.hpp"

#include "config/settings.hpp"
#include "config/sweep.hpp"
#include "records/fields.hpp"

#include <sstream>

namespace attnbench {

namespace {

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
         "`problem` (docs/backends.md), read off one table (core/src/base/problem.cpp).\n\n"
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
