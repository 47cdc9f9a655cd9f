// Included by scaled_textbook.cpp from its own folder: a file of the user's that the source kind
// watches (editing it recompiles the backend).
#pragma once

namespace scaled_textbook {
constexpr const char* kDescription = "textbook attention compiled from a source file";
}
