// compare --normalize-by: a report's rows over a reference backend's, so that drift that slows a
// whole run cancels before two runs are compared.
#pragma once

#include "records/row.hpp"

#include <string>
#include <vector>

namespace attnbench {

// The rows of the report at `path` with every row's noisy metrics over the reference backend's at
// the same point, timing mode and repetition (relative noise adds in quadrature); the reference's
// rows left out, and a row whose reference has no value left without one.
std::vector<Row> normalized_by(const std::vector<Row>& rows, const std::string& path,
                               const std::string& reference,
                               const std::vector<std::string>& metrics);

}  // namespace attnbench
