// Test plugin: a plugin as version 1 of the API built it. The loader must refuse it from the file
// alone, naming both versions; its code never runs.
#include <attnbench/plugin.hpp>

#include <cstdlib>

extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;
const int attnbench_abi_version = 1;

namespace {
struct AbortOnLoad {
  AbortOnLoad() { std::abort(); }
} abort_on_load;

std::unique_ptr<attnbench::Backend> make() { std::abort(); }
}  // namespace
BOOST_DLL_ALIAS(make, attnbench_create_backend)
