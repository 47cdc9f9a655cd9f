// docs/columns.md, made from the field tables (records/fields.hpp, config/settings.hpp): `attnbench
// columns` prints it and a test checks the committed page against it.
#pragma once

#include <string>

namespace attnbench {

std::string columns_markdown();

}  // namespace attnbench
