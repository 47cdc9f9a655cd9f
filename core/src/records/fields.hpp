// The field tables of the records a run produces and the settings it is run with: the one place
// each column and each `measurement:` key is declared (recipe: docs/contributing.md).
#pragma once

#include "base/field.hpp"
#include "base/problem.hpp"  // problem_fields()
#include "records/row.hpp"

#include <string>
#include <vector>

namespace attnbench {

const std::vector<Field<RunInfo>>& run_info_fields();
// The main CSV, in column order (schema_version is written before them).
const std::vector<Field<Row>>& row_fields();
// What the kernels pass says of one kernel (the kernel CSV's middle columns).
const std::vector<Field<KernelStat>>& kernel_stat_fields();
// The kernel CSV, in column order.
const std::vector<Field<KernelRow>>& kernel_row_fields();

}  // namespace attnbench
