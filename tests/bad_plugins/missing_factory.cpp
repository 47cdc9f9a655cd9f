// Test plugin: exports the ABI version but no factory; refused before any of its code runs.
#include <attnbench/plugin.hpp>

#include <cstdlib>

extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;
const int attnbench_abi_version = attnbench::kPluginAbiVersion;

namespace {
struct AbortOnLoad {
  AbortOnLoad() { std::abort(); }
} abort_on_load;
}  // namespace
