#include "cli/run_plan.hpp"
#include "base/names.hpp"

#include <gtest/gtest.h>

namespace attnbench {
namespace {

const std::vector<std::string> kAvailable = {"cudnn", "flash", "naive"};

SweepConfig config(const std::string& yaml) { return parse_config(yaml, "plan.yaml"); }

std::vector<std::string> ids(const RunPlan& plan) {
  std::vector<std::string> out;
  for (const auto& p : plan.points) out.push_back(p.id);
  return out;
}

TEST(RunPlan, OutputComesFromTheFlagThenTheConfigThenTheConfigsName) {
  RunOverrides o;
  EXPECT_EQ(plan_run(config("sweep:\n  seq_len: 8\n"), o, kAvailable, false).output,
            "results/plan.csv");
  EXPECT_EQ(
      plan_run(config("output: x/y.csv\nsweep:\n  seq_len: 8\n"), o, kAvailable, false).output,
      "x/y.csv");
  o.output = "z.csv";
  EXPECT_EQ(
      plan_run(config("output: x/y.csv\nsweep:\n  seq_len: 8\n"), o, kAvailable, false).output,
      "z.csv");
}

TEST(RunPlan, BackendsFromTheConfigTheFlagOrEveryPlugin) {
  RunOverrides o;
  EXPECT_EQ(plan_run(config("sweep:\n  seq_len: 8\n"), o, kAvailable, false).backends, kAvailable);
  EXPECT_EQ(
      plan_run(config("backends: [naive, flash]\nsweep:\n  seq_len: 8\n"), o, kAvailable, false)
          .backends,
      (std::vector<std::string>{"naive", "flash"}));
  o.backends = {"cudnn"};
  const RunPlan plan =
      plan_run(config("backends: [naive, flash]\nsweep:\n  seq_len: 8\n"), o, kAvailable, false);
  EXPECT_EQ(plan.backends, std::vector<std::string>{"cudnn"});
  EXPECT_EQ(plan.config.backends, std::vector<std::string>{"cudnn"});
}

TEST(RunPlan, AMissingBackendIsLocatedInTheFileOrNamedAsTheFlag) {
  try {
    plan_run(config("backends: [naive, flsh]\nsweep:\n  seq_len: 8\n"), {}, kAvailable, false);
    FAIL() << "a missing backend was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.column(), 19);
    EXPECT_EQ(e.key(), "backends");
    EXPECT_NE(std::string(e.what()).find(
                  "no plugin provides backend 'flsh' (found: cudnn, flash, naive)"),
              std::string::npos)
        << e.what();
  }
  RunOverrides o;
  o.backends = {"naive", "math"};
  try {
    plan_run(config("sweep:\n  seq_len: 8\n"), o, kAvailable, false);
    FAIL() << "a missing backend was accepted";
  } catch (const ConfigError& e) {
    FAIL() << "a flag's error is not located in the file: " << e.what();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--backends: no plugin provides backend 'math' (found: cudnn, flash, naive)");
  }
  EXPECT_THROW(plan_run(config("sweep:\n  seq_len: 8\n"), {}, {}, false), InputError);
}

TEST(RunPlan, PointsAreFilteredInTheOrderGiven) {
  RunOverrides o;
  o.points = {"b1-h1-s32-d64-bf16-causal-cpu", "b1-h1-s8-d64-bf16-causal-cpu"};
  const RunPlan plan =
      plan_run(config("sweep:\n  seq_len: [8, 16, 32]\n  device: cpu\n"), o, kAvailable, false);
  EXPECT_EQ(ids(plan), o.points);
  o.points = {"b1-h1-s64-d64-bf16-causal-cpu"};
  try {
    plan_run(config("sweep:\n  seq_len: [8, 16, 32]\n  device: cpu\n"), o, kAvailable, false);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--points: the sweep has no point 'b1-h1-s64-d64-bf16-causal-cpu' (see --dry-run)");
  }
}

TEST(RunPlan, AutoDeviceFollowsTheMachine) {
  EXPECT_EQ(ids(plan_run(config("sweep:\n  seq_len: 8\n"), {}, kAvailable, true)),
            std::vector<std::string>{"b1-h1-s8-d64-bf16-causal-cuda"});
  EXPECT_EQ(ids(plan_run(config("sweep:\n  seq_len: 8\n"), {}, kAvailable, false)),
            std::vector<std::string>{"b1-h1-s8-d64-bf16-causal-cpu"});
}

TEST(RunPlan, PassAndModeOverridesGoThroughTheConfigsChecks) {
  RunOverrides o;
  o.passes = {"kernels", "timing"};
  o.timing_modes = {"graph"};
  const RunPlan plan = plan_run(config("sweep:\n  seq_len: 8\n"), o, kAvailable, false);
  EXPECT_EQ(plan.config.measurement.passes, (std::vector<Pass>{Pass::kernels, Pass::timing}));
  EXPECT_EQ(plan.config.measurement.timing_modes, std::vector<TimingMode>{TimingMode::graph});
  auto message = [](RunOverrides bad) -> std::string {
    try {
      plan_run(config("sweep:\n  seq_len: 8\n"), bad, kAvailable, false);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  RunOverrides twice;
  twice.timing_modes = {"cold", "cold"};
  EXPECT_EQ(message(twice), "--timing-modes: timing mode 'cold' appears twice");
  RunOverrides wall;
  wall.timing_modes = {"wall"};
  EXPECT_EQ(message(wall),
            "--timing-modes: unknown timing mode 'wall'; use cold, batch or graph (CPU points are "
            "always timed as wall)");
  RunOverrides pass;
  pass.passes = {"timing", "ncu"};
  EXPECT_EQ(message(pass),
            "--passes: unknown pass 'ncu'; use correctness, timing, cpu, memory, ops or kernels");
}

TEST(RunPlan, TheFingerprintFollowsWhatDecidesTheNumbers) {
  const std::string base = "measurement:\n  min_samples: 3\nsweep:\n  seq_len: [8, 16]\n";
  auto fp = [](const std::string& yaml, RunOverrides o = {}) {
    return plan_run(config(yaml), o, kAvailable, false).fingerprint;
  };
  const std::string reference = fp(base);
  EXPECT_EQ(reference.size(), 16u);
  EXPECT_EQ(fp(base), reference);  // deterministic
  RunOverrides pick;
  pick.points = {"b1-h1-s8-d64-bf16-causal-cpu"};
  pick.backends = {"naive"};
  EXPECT_EQ(fp(base, pick), reference);  // which keys to measure is not what they mean
  EXPECT_EQ(fp("output: elsewhere.csv\nbackends: [flash]\n" + base), reference);
  EXPECT_EQ(fp("measurement:\n  min_samples: 3\n  keep_samples: true\n  timeout_s: 5\nsweep:\n  "
               "seq_len: [8, 16]\n"),
            reference);
  EXPECT_NE(fp("measurement:\n  min_samples: 4\nsweep:\n  seq_len: [8, 16]\n"), reference);
  EXPECT_NE(fp("measurement:\n  min_samples: 3\nsweep:\n  seq_len: [8, 32]\n"), reference);
  EXPECT_NE(fp("seed: 5\n" + base), reference);
  EXPECT_NE(fp("tolerance: {bf16: 0.5}\n" + base), reference);
  EXPECT_NE(fp("peak_tflops: 100\n" + base), reference);
  RunOverrides modes;
  modes.timing_modes = {"graph"};
  EXPECT_NE(fp(base, modes), reference);
  RunOverrides timeout;
  timeout.timeout_s = 3;
  EXPECT_EQ(plan_run(config(base), timeout, kAvailable, false).config.measurement.timeout_s, 3);
}

}  // namespace
}  // namespace attnbench
