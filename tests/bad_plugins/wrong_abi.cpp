// Test plugin: a complete plugin built for another ABI version; its factory must never be called.
#include <attnbench/plugin.hpp>

#include <cstdlib>

extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;
const int attnbench_abi_version = attnbench::kPluginAbiVersion + 41;

namespace {
std::unique_ptr<attnbench::Backend> make() { std::abort(); }
}  // namespace
BOOST_DLL_ALIAS(make, attnbench_create_backend)
