// Helpers shared by the measurement tests.
#pragma once

#include "plugin_loader.hpp"
#include "tensors.hpp"

#include <gtest/gtest.h>

namespace attnbench::test {

inline const PluginSet& plugins() {
  static const PluginSet set = load_plugins(ATTNBENCH_PLUGIN_DIR);
  return set;
}

inline Backend& backend(const std::string& name) {
  const LoadedBackend* b = plugins().find(name);
  if (!b) throw std::runtime_error("plugin not built: " + name);
  return *b->backend;
}

inline Problem problem(int64_t batch, int64_t heads, int64_t seq_len, int64_t head_dim, DType dtype, bool causal,
                       Device device) {
  Problem p;
  p.batch = batch, p.heads = heads, p.seq_len = seq_len, p.head_dim = head_dim;
  p.dtype = dtype, p.causal = causal, p.device = device;
  return p;
}

}  // namespace attnbench::test
