// A source backend with a compile error on the line below the marker: its rows are load failures
// that quote the compiler, the other backends' rows are measured.
#include <attnbench/plugin.hpp>

// the error:
int broken() { return undeclared_name_in_source_backend; }
