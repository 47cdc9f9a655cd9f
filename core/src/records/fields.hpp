// The field tables of the records a run produces and the settings it is run with: the one place
// each column and each `measurement:` key is declared (recipe: docs/contributing.md).
#pragma once

#include "config/settings.hpp"
#include "base/field.hpp"
#include "records/row.hpp"

#include <string>
#include <vector>

namespace attnbench {

const std::vector<Field<Problem>>& problem_fields();
const std::vector<Field<RunInfo>>& run_info_fields();
// The main CSV, in column order (schema_version is written before them).
const std::vector<Field<Row>>& row_fields();
// The kernel CSV, in column order.
const std::vector<Field<KernelRow>>& kernel_row_fields();

// A value as a CSV cell: empty when not measured, numbers in their shortest exact form.
std::string field_text(const FieldValue& value);
// A CSV cell read back as a field of `type`; throws std::invalid_argument when it is not one.
FieldValue parse_field_text(FieldType type, const std::string& text);

// docs/columns.md, made from the tables above (a test checks the committed page against it).
std::string columns_markdown();

}  // namespace attnbench
