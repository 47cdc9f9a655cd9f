// Helpers shared by the measurement tests.
#pragma once

#include "base/names.hpp"
#include "config/config.hpp"
#include "isolate/measure_records.hpp"
#include "measure/tensors.hpp"
#include "plugins/plugin_loader.hpp"

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

inline Problem problem(int64_t batch, int64_t heads, int64_t seq_len, int64_t head_dim, DType dtype,
                       bool causal, Device device) {
  Problem p;
  p.batch = batch, p.heads = heads, p.seq_len = seq_len, p.head_dim = head_dim;
  p.kv_heads = heads, p.seq_len_kv = seq_len;
  p.dtype = dtype, p.causal = causal, p.device = device;
  return p;
}

// The same problem with grouped-query heads, a longer key sequence or another direction.
inline Problem with_kv(Problem p, int64_t kv_heads, int64_t seq_len_kv) {
  p.kv_heads = kv_heads, p.seq_len_kv = seq_len_kv;
  return p;
}
inline Problem backward(Problem p) {
  p.direction = Direction::bwd;
  return p;
}

// The runner as a run drives it: its passes for a (point, backend), then that measurement's rows.
class MeasuringRunner {
 public:
  MeasuringRunner(HostInfo host, RunOptions options)
      : options_(std::move(options)), runner_(std::move(host), runner_options(options_)) {}
  BackendRecords measure(const Point& point, const LoadedBackend& backend) {
    return measure_records(runner_, options_, point, backend);
  }

 private:
  RunOptions options_;
  Runner runner_;
};

// Measurement settings that keep a test's passes short; tests change what they need.
inline MeasureSettings quick_settings() {
  MeasureSettings m;
  m.warmup_ms = 1;
  m.min_samples = 3;
  m.max_samples = 20;
  m.min_time_s = 0;
  m.max_time_s = 0.05;
  m.cpu_pass_calls = 5;
  m.kernel_pass_iterations = 2;
  return m;
}

}  // namespace attnbench::test
