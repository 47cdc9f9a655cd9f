// The field tables of the records a run produces and the settings it is run with: the one place
// each column and each `measurement:` key is declared (recipe: docs/contributing.md).
#pragma once

#include "base/field.hpp"
#include "kinds/problem.hpp"  // problem_fields()
#include "records/row.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnbench {

const std::vector<Field<RunInfo>>& run_info_fields();
// The main CSV, in column order (schema_version is written before them).
const std::vector<Field<Row>>& row_fields();
// A numeric field of a row named at run time (a metric the user chose): its value, empty where the
// row has none; set_row_number writes one (empty: none). Throws std::out_of_range on a name that is
// not a numeric field of Row.
std::optional<double> row_number(const Row& row, const std::string& name);
void set_row_number(Row& row, const std::string& name, std::optional<double> value);
// What the kernels pass says of one kernel (the kernel CSV's middle columns).
const std::vector<Field<KernelStat>>& kernel_stat_fields();
// The kernel CSV, in column order.
const std::vector<Field<KernelRow>>& kernel_row_fields();

}  // namespace attnbench
