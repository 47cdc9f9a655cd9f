// The table printed at the end of a run, read back from the CSV it wrote (so `attnbench summary`
// shows any report the same way).
#pragma once

#include "write/csv.hpp"

#include <ostream>

namespace attnbench {

void print_summary(const CsvTable& report, std::ostream& out);

}  // namespace attnbench
