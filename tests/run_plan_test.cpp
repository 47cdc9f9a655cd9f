#include "run/run_plan.hpp"
#include "base/errors.hpp"
#include "base/names.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace attnbench {
namespace {

const std::vector<std::string> kAvailable = {"cudnn", "flash", "naive"};

Sweep config(const std::string& yaml) { return parse_sweep(yaml, "plan.yaml"); }

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
  EXPECT_EQ(plan.config.backend_names(), std::vector<std::string>{"cudnn"});
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
            "--passes: unknown pass 'ncu'; use correctness, timing, cpu, memory, ops, kernels or "
            "energy");
  RunOverrides power;
  power.power = "bursty";
  EXPECT_EQ(message(power), "--power: 'bursty' is not one of sustained or burst");
  power.power = "burst";
  EXPECT_EQ(plan_run(config("sweep:\n  seq_len: 8\n"), power, kAvailable, false)
                .config.measurement.power,
            PowerMode::burst);
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

// The lengths a histogram draws are in the fingerprint, not only its file's name: the file edited
// under the same name is another sweep (--resume and merge refuse to mix their rows); the same
// file again is the same sweep.
TEST(RunPlan, AHistogramEditedUnderItsNameChangesTheFingerprint) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnbench-fp-hist";
  std::filesystem::create_directories(dir);
  const std::string yaml = "sweep:\n  batch: 8\n  causal: false\n  seq_lens: [\"histogram(h.csv)\"]\n";
  auto fingerprint = [&](const std::string& buckets) {
    std::ofstream(dir / "h.csv") << buckets;
    return plan_run(parse_sweep(yaml, (dir / "plan.yaml").string()), {}, kAvailable, false)
        .fingerprint;
  };
  const std::string first = fingerprint("1,10,1\n100,120,1\n");
  EXPECT_EQ(fingerprint("1,10,1\n100,120,1\n"), first);
  EXPECT_NE(fingerprint("50,60,1\n100,120,1\n"), first);
  // Its buckets, even where they draw the same lengths at this seed: a bucket of weight 1e-300
  // is never drawn (it does not move the total), yet it is another file's content.
  EXPECT_NE(fingerprint("1,10,1\n100,120,1\n5000,6000,1e-300\n"), first);
  // Not its comments or spacing: the same buckets are the same sweep.
  EXPECT_EQ(fingerprint("# edited\n1, 10, 1\n100,120,1\n"), first);
  // In a mixed batch's part too.
  const std::string mixed =
      "sweep:\n  batch: 8\n  causal: false\n  seq_lens: [\"4*histogram(h.csv) + 4*16\"]\n";
  auto mixed_fingerprint = [&](const std::string& buckets) {
    std::ofstream(dir / "h.csv") << buckets;
    return plan_run(parse_sweep(mixed, (dir / "plan.yaml").string()), {}, kAvailable, false)
        .fingerprint;
  };
  EXPECT_NE(mixed_fingerprint("1,10,1\n100,120,1\n5000,6000,1e-300\n"),
            mixed_fingerprint("1,10,1\n100,120,1\n"));
}

// Each measurement key changed alone changes the fingerprint exactly when the settings table says
// it decides the numbers (so a key added to the table is in the fingerprint unless it says not).
TEST(RunPlan, EveryKeyThatDecidesTheNumbersIsInTheFingerprint) {
  const Sweep sweep = config("sweep:\n  seq_len: [8, 16]\n");
  const std::vector<Point> points = expand_sweep(sweep.config, false);
  const std::string reference = config_fingerprint(sweep.config, points);
  int fingerprinted = 0;
  for (const SettingField& s : measure_settings_fields()) {
    SweepConfig changed = sweep.config;
    const FieldValue was = s.field.get(changed.measurement);
    FieldValue other;
    if (const auto* i = std::get_if<int64_t>(&was)) other = *i + 1;
    if (const auto* d = std::get_if<double>(&was)) other = *d * 2 + 1;
    if (const auto* b = std::get_if<bool>(&was)) other = !*b;
    if (const auto* c = std::get_if<std::string>(&was))  // a choice: another of its names
      for (const std::string& name : s.field.choices)
        if (name != *c) other = name;
    if (const auto* l = std::get_if<std::vector<std::string>>(&was)) {  // one name more or less
      std::vector<std::string> names = *l;
      if (names.size() > 1) names.pop_back();
      for (const std::string& c : s.field.choices)
        if (names.size() == l->size() && std::find(names.begin(), names.end(), c) == names.end())
          names.push_back(c);
      other = names;
    }
    ASSERT_NE(other.index(), 0u) << s.field.name << ": a type this test does not change";
    s.field.set(changed.measurement, other);
    ASSERT_NE(field_text(s.field.get(changed.measurement)), field_text(was)) << s.field.name;
    const std::string fp = config_fingerprint(changed, points);
    if (s.fingerprinted)
      EXPECT_NE(fp, reference) << s.field.name << " decides the numbers";
    else
      EXPECT_EQ(fp, reference) << s.field.name << " does not";
    fingerprinted += s.fingerprinted;
  }
  EXPECT_EQ(fingerprinted, 14);  // warmup, samples (2), time (2), noise, modes, batch, kernels,
                                 // cpu, passes, energy_min_call_ms, power, cooldown
}

// Keys added after reports were written leave an older report's fingerprint as it was while they
// keep their defaults (its --resume and its shards' merge still hold).
TEST(RunPlan, AKeyAddedLaterLeavesTheFingerprintAtItsDefault) {
  const Sweep sweep = config("sweep:\n  seq_len: [8, 16]\n");
  const std::vector<Point> points = expand_sweep(sweep.config, false);
  const Sweep burst = config("measurement:\n  power: burst\nsweep:\n  seq_len: [8, 16]\n");
  const Sweep sustained =
      config("measurement:\n  power: sustained\n  cooldown_max_s: 30\nsweep:\n  seq_len: [8, 16]\n");
  EXPECT_EQ(config_fingerprint(sustained.config, points), config_fingerprint(sweep.config, points));
  EXPECT_NE(config_fingerprint(burst.config, points), config_fingerprint(sweep.config, points));
  // energy_min_call_ms, at its default and not
  const Sweep energy_default =
      config("measurement:\n  energy_min_call_ms: 10\nsweep:\n  seq_len: [8, 16]\n");
  const Sweep energy_everywhere =
      config("measurement:\n  energy_min_call_ms: 0\nsweep:\n  seq_len: [8, 16]\n");
  EXPECT_EQ(config_fingerprint(energy_default.config, points),
            config_fingerprint(sweep.config, points));
  EXPECT_NE(config_fingerprint(energy_everywhere.config, points),
            config_fingerprint(sweep.config, points));
}

// A backend named twice would write each of its rows twice (and compare would take the copy for
// a repetition): refused.
TEST(RunPlan, ABackendNamedTwiceIsRefused) {
  RunOverrides o;
  o.backends = {"naive", "flash", "naive"};
  try {
    plan_run(config("sweep:\n  seq_len: 8\n"), o, kAvailable, false);
    ADD_FAILURE() << "--backends naive,flash,naive was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--backends: 'naive' is named twice");
  }
  o.backends = {"naive", "flash"};
  EXPECT_EQ(plan_run(config("sweep:\n  seq_len: 8\n"), o, kAvailable, false).backends.size(), 2u);
}

// Without a backends list, `expect:` may name any plugin found, and no other.
TEST(RunPlan, PredictionsNameOnlyBackendsThatExist) {
  const std::string sweep = "sweep:\n  seq_len: 8\n  device: cpu\n";
  for (const std::string& found : kAvailable)  // the first of them too
    EXPECT_NO_THROW(plan_run(config("expect:\n  " + found + ":\n    kernels_per_call: 1\n" + sweep),
                             {}, kAvailable, false))
        << found;
  try {
    plan_run(config("expect:\n  flsh:\n    kernels_per_call: 1\n" + sweep), {}, kAvailable, false);
    ADD_FAILURE() << "a prediction for a backend no plugin provides";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no plugin provides backend 'flsh'"), std::string::npos)
        << e.what();
  }
}

TEST(RunPlan, EveryPointAndBackendIsATaskCostedByItsWork) {
  const RunPlan plan =
      plan_run(config("sweep:\n  seq_len: [512, 1024, 2048]\n  causal: false\n  device: cpu\n"), {},
               kAvailable, false);
  ASSERT_EQ(plan.tasks.size(), 9u);
  EXPECT_EQ(plan.tasks[0].point, 0u);
  EXPECT_EQ(plan.tasks[0].backend, "cudnn");
  EXPECT_EQ(plan.tasks[8].point, 2u);
  // FLOPs grow 4x per doubling; every task also pays the sweep's mean (the fixed part).
  const double mean = (plan.tasks[0].cost + plan.tasks[3].cost + plan.tasks[6].cost) / 3 / 2;
  EXPECT_NEAR(plan.tasks[6].cost - mean, 16 * (plan.tasks[0].cost - mean), 1e-6 * mean);
  EXPECT_FALSE(plan.shard);
}

TEST(RunPlan, ShardsAreDisjointCoverTheSweepAndBalanceTheirCost) {
  const Sweep c = config(
      "sweep:\n  seq_len: [128, 256, 512, 1024, 2048, 4096, 8192]\n  heads: [1, 2, 4]\n"
      "  device: cpu\n");
  const RunPlan all = plan_run(c, {}, kAvailable, false);
  for (int n : {1, 2, 3, 5}) {
    std::map<std::pair<size_t, std::string>, int> seen;
    std::vector<double> loads;
    for (int k = 1; k <= n; ++k) {
      RunOverrides o;
      o.shard = std::to_string(k) + "/" + std::to_string(n);
      const RunPlan part = plan_run(c, o, kAvailable, false);
      EXPECT_EQ(part.shard->text(), o.shard);
      EXPECT_EQ(part.fingerprint, all.fingerprint) << "a shard is a part of the same sweep";
      EXPECT_EQ(part.output,
                "results/plan.shard-" + std::to_string(k) + "-of-" + std::to_string(n) + ".csv");
      double load = 0;
      for (size_t i = 0; i < part.tasks.size(); ++i) {
        ++seen[{part.tasks[i].point, part.tasks[i].backend}];
        load += part.tasks[i].cost;
        if (i > 0) EXPECT_LE(part.tasks[i - 1].point, part.tasks[i].point) << "plan order";
      }
      loads.push_back(load);
      // The same split every time.
      const RunPlan again = plan_run(c, o, kAvailable, false);
      ASSERT_EQ(again.tasks.size(), part.tasks.size());
      for (size_t i = 0; i < part.tasks.size(); ++i)
        EXPECT_EQ(again.tasks[i].backend, part.tasks[i].backend);
    }
    EXPECT_EQ(seen.size(), all.tasks.size()) << n;
    for (const auto& [task, count] : seen) EXPECT_EQ(count, 1) << n;
    double largest = 0;
    for (const Task& t : all.tasks) largest = std::max(largest, t.cost);
    const auto [lo, hi] = std::minmax_element(loads.begin(), loads.end());
    EXPECT_LE(*hi - *lo, largest) << n << " parts: no heavier than one task apart";
  }
}

TEST(RunPlan, ShardTextIsChecked) {
  EXPECT_EQ(parse_shard("2/4").index, 2);
  EXPECT_EQ(parse_shard("2/4").count, 4);
  for (const char* bad : {"", "2", "0/4", "5/4", "1/0", "a/b", "1/2x", "-1/2", "1//2"})
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
  RunOverrides o;
  o.shard = "3/2";
  EXPECT_THROW(plan_run(config("sweep:\n  seq_len: 8\n"), o, kAvailable, false), InputError);
  // More parts than (point, backend)s: refused before anything is split (1/1000000000 once
  // allocated gigabytes), and the message says how many there are. As many parts as tasks: fine.
  const Sweep two_points = config("sweep:\n  seq_len: [8, 16]\n  device: cpu\n");
  const size_t tasks = plan_run(two_points, {}, kAvailable, false).tasks.size();
  o.shard = "1/1000000000";
  try {
    plan_run(two_points, o, kAvailable, false);
    FAIL() << "a split into more parts than measurements was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has " + std::to_string(tasks) + " (point, backend)s"),
              std::string::npos)
        << e.what();
  }
  o.shard = std::to_string(tasks) + "/" + std::to_string(tasks);
  EXPECT_EQ(plan_run(two_points, o, kAvailable, false).tasks.size(), 1u);
  o.shard = "1/" + std::to_string(tasks + 1);
  EXPECT_THROW(plan_run(two_points, o, kAvailable, false), InputError);
}

// --tp N serves every block at N, whatever its tp: says.
TEST(RunPlan, TpOnTheCommandLineReplacesEachBlocksDegrees) {
  RunOverrides o;
  o.tp = 8;
  const RunPlan plan = plan_run(
      config("sweep:\n  - {seq_len: 8, heads: 64, kv_heads: 8, tp: [1, 8], device: cpu}\n"
             "  - {seq_len: 1, seq_len_kv: 64, heads: 16, kv_heads: 16, device: cpu}\n"),
      o, kAvailable, false);
  EXPECT_EQ(ids(plan), (std::vector<std::string>{"b1-h8-kv1-s8-d64-bf16-causal-cpu",
                                                 "b1-h2-s1-skv64-d64-bf16-causal-cpu"}));
  o.tp = 3;  // the error names the flag, not a key the file does not have
  try {
    plan_run(config("sweep:\n  seq_len: 8\n  heads: 64\n"), o, kAvailable, false);
    ADD_FAILURE() << "--tp 3 of 64 heads accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "--tp") << e.what();
    EXPECT_NE(std::string(e.what()).find("heads 64 are not divisible among 3 GPUs"),
              std::string::npos)
        << e.what();
  }
  o.tp = 4096;  // the largest degree
  EXPECT_EQ(ids(plan_run(config("sweep:\n  seq_len: 8\n  heads: 4096\n"), o, kAvailable, false)),
            (std::vector<std::string>{"b1-h1-s8-d64-bf16-causal-cpu"}));
  for (int bad : {-1, 4097}) {
    o.tp = bad;
    EXPECT_THROW(plan_run(config("sweep:\n  seq_len: 8\n"), o, kAvailable, false), InputError)
        << bad;
  }
}

}  // namespace
}  // namespace attnbench
