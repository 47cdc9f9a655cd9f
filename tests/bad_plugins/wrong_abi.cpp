// Test plugin: a complete plugin built for another ABI version. None of its code may run: not the
// factory, not even its static initialisers (the loader reads the ABI from the file before dlopen).
#include <attnbench/plugin.hpp>

#include <cstdlib>

extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;
const int attnbench_abi_version = attnbench::kPluginAbiVersion + 41;

namespace {
struct AbortOnLoad {
  AbortOnLoad() { std::abort(); }
} abort_on_load;

std::unique_ptr<attnbench::Backend> make() { std::abort(); }
}  // namespace
BOOST_DLL_ALIAS(make, attnbench_create_backend)
