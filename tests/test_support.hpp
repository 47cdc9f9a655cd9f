// Helpers shared by the measurement tests.
#pragma once

#include "base/names.hpp"
#include "config/config.hpp"
#include "isolate/measure_records.hpp"
#include "kinds/tensors.hpp"
#include "kinds/variant.hpp"
#include "plugins/plugin_loader.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>
#include <vector>

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

// A run's options for the correctness pass alone, short, at the config's default tolerances: what
// a test that asks each backend "right, or why not" measures with.
inline RunOptions correctness_options() {
  RunOptions options;
  options.measurement = quick_settings();
  options.measurement.passes = {Pass::correctness};
  options.tolerance = default_tolerances();
  return options;
}

// Each backend of `names` that is built refuses `p` before supports() is asked, saying
// "NAME does not run WORDS (it declares ...)": the variant's words as its file has them.
inline void expect_undeclared(const Problem& p, const std::vector<std::string>& names,
                              const std::string& words) {
  for (const std::string& name : names) {
    const LoadedBackend* loaded = plugins().find(name);
    if (!loaded) continue;
    const Support s = declared_support(*loaded->backend, p);
    EXPECT_FALSE(s.supported) << name;
    EXPECT_NE(s.reason.find(name + " does not run " + words + " (it declares "), std::string::npos)
        << s.reason;
  }
}

// Each backend at each named point through `runner`'s correctness pass, what each said printed
// ("[ measured ] NAME WHAT: STATUS rel_err REASON": the GPU tests' record of what every backend
// does): `ok`, or `unsupported` with a reason; a backend in `wrong` must read `wrong` instead.
// Backends not built are passed over. Returns how many rows were `ok`.
inline int expect_right_or_refused(
    MeasuringRunner& runner, const std::vector<std::pair<const char*, Problem>>& points,
    const std::vector<const LoadedBackend*>& backends, const std::set<std::string>& wrong = {}) {
  int ok = 0;
  for (const auto& [what, p] : points) {
    for (const LoadedBackend* loaded : backends) {
      if (!loaded) continue;
      const std::string name = loaded->backend->name();
      const BackendRecords r = runner.measure({p, point_id(p)}, *loaded);
      if (r.rows.empty()) {
        ADD_FAILURE() << name << " " << what << ": no row";
        continue;
      }
      const Row& row = r.rows[0];
      std::cout << "[ measured ] " << name << " " << what << ": " << to_string(row.status) << " "
                << (row.rel_err ? "rel_err " + std::to_string(*row.rel_err) + " " : "")
                << row.reason << "\n";
      if (wrong.count(name)) {
        EXPECT_EQ(row.status, Status::wrong) << name << " " << what;
      } else if (row.status == Status::unsupported) {
        EXPECT_FALSE(row.reason.empty()) << name << " " << what;
      } else {
        EXPECT_EQ(row.status, Status::ok) << name << " " << what << ": " << row.reason;
        ok += row.status == Status::ok;
      }
    }
  }
  return ok;
}

// The plugins of these names, in order (null where one is not built).
inline std::vector<const LoadedBackend*> plugins_named(const std::vector<std::string>& names,
                                                        const PluginSet& set = plugins()) {
  std::vector<const LoadedBackend*> out;
  for (const std::string& name : names) out.push_back(set.find(name));
  return out;
}


}  // namespace attnbench::test
