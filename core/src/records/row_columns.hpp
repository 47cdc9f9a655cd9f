// The main CSV's numeric columns by name, read straight from a Row: what predictions
// (config `expect:`) may name and what they are checked against.
#pragma once

#include "records/row.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// Every numeric column of the main CSV, in schema order.
const std::vector<std::string>& numeric_row_columns();

// The column's value in `row`; empty when not measured. Throws std::out_of_range for a name not in
// numeric_row_columns().
std::optional<double> numeric_row_value(const Row& row, const std::string& column);

}  // namespace attnbench
