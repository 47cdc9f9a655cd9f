// Test plugin: the factory throws (say, a backend that cannot initialise its vendor library).
#include <attnbench/plugin.hpp>

extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;
const int attnbench_abi_version = attnbench::kPluginAbiVersion;

namespace {
std::unique_ptr<attnbench::Backend> make() {
  throw std::runtime_error("cannot initialise the vendor library");
}
}  // namespace
BOOST_DLL_ALIAS(make, attnbench_create_backend)
