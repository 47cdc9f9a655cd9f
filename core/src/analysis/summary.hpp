// The table printed at the end of a run, read back from the CSV it wrote (so `attnbench summary`
// shows any report the same way).
#pragma once

#include "records/row.hpp"

#include <ostream>
#include <vector>

namespace attnbench {

// The rows as read back from a report (typed_rows in write/schema.hpp).
void print_summary(const std::vector<Row>& rows, std::ostream& out);

}  // namespace attnbench
