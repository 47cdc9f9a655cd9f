// Test plugin: exports the ABI version but no factory.
#include <attnbench/plugin.hpp>

extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;
const int attnbench_abi_version = attnbench::kPluginAbiVersion;
