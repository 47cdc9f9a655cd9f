// Test plugin: a complete plugin built for another ABI version. None of its code may run: not the
// factory, not even its static initialisers (the loader reads the ABI from the file before dlopen).
#include <attnbench/plugin.hpp>

#include <cstdlib>

// Built twice: as it is, and with ATTNBENCH_TEST_ABI_VERSION=1 (a plugin of API version 1).
#ifndef ATTNBENCH_TEST_ABI_VERSION
#define ATTNBENCH_TEST_ABI_VERSION (attnbench::kPluginAbiVersion + 41)
#endif

extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;
const int attnbench_abi_version = ATTNBENCH_TEST_ABI_VERSION;

namespace {
struct AbortOnLoad {
  AbortOnLoad() { std::abort(); }
} abort_on_load;

std::unique_ptr<attnbench::Backend> make() { std::abort(); }
}  // namespace
BOOST_DLL_ALIAS(make, attnbench_create_backend)
