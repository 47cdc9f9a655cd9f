#include "config/config.hpp"
#include "base/errors.hpp"
#include "config/sweep.hpp"
#include "config/yaml_reader.hpp"
#include "kinds/problem_kind.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace attnbench {
namespace {

constexpr const char* kGood = R"(name: good
output: out.csv
backends: [naive, flash]
measurement:
  warmup_ms: 10
  min_samples: 3
  max_samples: 100
  min_time_s: 0.01
  max_time_s: 0.5
  target_rel_noise: 0.02
  timing_modes: [cold, graph]
  keep_samples: true
  passes: [timing, kernels]
tolerance:
  bf16: 0.03
peak_tflops: 800
seed: 7
sweep:
  batch: [1, 2]
  heads: 8
  seq_len: {from: 512, to: 4096, mul: 2}
  head_dim: [64, 128]
  dtype: [bf16, fp16]
  causal: [true, false]
  device: cuda
)";

TEST(Config, ParsesEveryKey) {
  const SweepConfig c = parse_config(kGood, "good.yaml");
  EXPECT_EQ(c.name, "good");
  EXPECT_EQ(c.output, "out.csv");
  EXPECT_EQ(c.backend_names(), (std::vector<std::string>{"naive", "flash"}));
  EXPECT_EQ(c.backends.at(1).kind, "plugin");
  EXPECT_EQ(c.backends.at(1).line, 3);
  EXPECT_EQ(c.backends.at(1).column, 19);
  EXPECT_DOUBLE_EQ(c.measurement.warmup_ms, 10);
  EXPECT_EQ(c.measurement.min_samples, 3);
  EXPECT_EQ(c.measurement.max_samples, 100);
  EXPECT_DOUBLE_EQ(c.measurement.target_rel_noise, 0.02);
  EXPECT_EQ(c.measurement.timing_modes,
            (std::vector<TimingMode>{TimingMode::cold, TimingMode::graph}));
  EXPECT_TRUE(c.measurement.keep_samples);
  EXPECT_EQ(c.measurement.passes, (std::vector<Pass>{Pass::timing, Pass::kernels}));
  EXPECT_DOUBLE_EQ(c.tolerance.at(DType::bf16), 0.03);
  EXPECT_DOUBLE_EQ(c.tolerance.at(DType::f16), default_tolerances().at(DType::f16));
  EXPECT_DOUBLE_EQ(*c.peak_tflops, 800);
  EXPECT_EQ(c.seed, 7u);
  ASSERT_EQ(c.sweeps[0].axes.size(), 7u);
  EXPECT_EQ(c.sweeps[0].axes[2].name, "seq_len");
  EXPECT_EQ(c.sweeps[0].axes[2].values.size(), 4u);  // 512 1024 2048 4096
  EXPECT_EQ(std::get<int64_t>(c.sweeps[0].axes[2].values.back()), 4096);
}

TEST(Config, RangeWithStepAndZipGroups) {
  const SweepConfig c = parse_config(R"(sweep:
  heads: {from: 4, to: 12, step: 4}
  zip:
    - batch: [4, 2, 1]
      seq_len: [1024, 2048, 4096]
)",
                                     "zip.yaml");
  ASSERT_EQ(c.sweeps[0].axes.size(), 1u);
  EXPECT_EQ(c.sweeps[0].axes[0].values.size(), 3u);
  ASSERT_EQ(c.sweeps[0].zips.size(), 1u);
  EXPECT_EQ(c.sweeps[0].zips[0].axes.size(), 2u);
  EXPECT_EQ(c.sweeps[0].zips[0].line, 4);
}

// Ranges up to int64's largest value end without overflowing: both ends of each kind, exactly.
TEST(Config, RangesStopBeforeOverflowing) {
  // chunk: a range reads the same on every integer axis, and a chunk has no bound of its own (one
  // past the sequence is one chunk).
  const SweepConfig mul = parse_config(
      "sweep:\n  chunk: {from: 1, to: 9223372036854775807, mul: 2}\n  seq_len: 8\n"
      "  device: cpu\n",
      "m.yaml");
  ASSERT_EQ(mul.sweeps[0].axes.size(), 3u);
  EXPECT_EQ(mul.sweeps[0].axes[0].values.size(), 63u);  // 2^0 .. 2^62
  const SweepConfig step = parse_config(
      "sweep:\n  chunk: {from: 9223372036854775800, to: 9223372036854775807, step: 3}\n"
      "  seq_len: 8\n",
      "s.yaml");
  EXPECT_EQ(step.sweeps[0].axes[0].values.size(), 3u);  // ...800, ...803, ...806
  // A field with a bound of its own refuses a range that passes it, at the range.
  try {
    parse_config("sweep:\n  seq_len: 8\n  head_dim: {from: 64, to: 1048576, mul: 2}\n", "h.yaml");
    ADD_FAILURE() << "a head_dim of 131072 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.key(), "sweep.head_dim");
    EXPECT_NE(std::string(e.what()).find("head_dim is from 1 to 65536 (features of a head), not "
                                         "131072"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(
      parse_config("sweep:\n  seq_len: 8\n  head_dim: {from: 64, to: 65536, mul: 2}\n", "h.yaml")
          .sweeps[0]
          .axes[1]
          .values.size(),
      11u);  // 64 .. 65536, the bound itself included
  const SweepConfig exact =
      parse_config("sweep:\n  seq_len: {from: 2, to: 8, step: 3}\n", "e.yaml");
  EXPECT_EQ(exact.sweeps[0].axes[0].values.size(),
            3u);  // 2, 5, 8: `to` itself when a step lands on it
  const SweepConfig exact_mul =
      parse_config("sweep:\n  seq_len: {from: 3, to: 24, mul: 2}\n", "f.yaml");
  EXPECT_EQ(exact_mul.sweeps[0].axes[0].values.size(), 4u);  // 3, 6, 12, 24
}

// A node built without a source (yaml-cpp marks it -1) is located at line 1, column 1, never 0.
TEST(Config, AnErrorWithoutASourcePositionIsLineOne) {
  const YamlReader r("x.yaml");
  try {
    r.fail(YAML::Node(), "sweep", "a message");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(std::string(e.what()).rfind("x.yaml:1:1: key 'sweep'", 0), 0u) << e.what();
  }
}

struct BadConfig {
  const char* what;
  const char* yaml;
  int line;
  int column;  // 0: not checked
  const char* key;
  const char* message;  // a part of the message
};

// Each bad config names its file, line, column and key, and says what is wrong.
const BadConfig kBadConfigs[] = {
    {"not YAML", "sweep: [1, 2\n", 2, 0, "", "not valid YAML"},
    {"empty file", "", 1, 1, "", "the file is empty"},
    {"top level is a list", "- 1\n- 2\n", 1, 1, "", "expected a mapping"},
    {"unknown top key", "sweeep:\n  seq_len: 1\n", 1, 1, "sweeep", "did you mean 'sweep'"},
    {"no sweep", "name: x\n", 1, 1, "sweep", "needs a 'sweep' section"},
    {"no seq_len", "sweep:\n  batch: 1\n", 2, 3, "sweep.seq_len", "needs seq_len"},
    {"unknown axis", "sweep:\n  seq_len: 1\n  hedas: 2\n", 3, 3, "sweep.hedas",
     "did you mean 'heads'"},
    {"batch zero", "sweep:\n  seq_len: 128\n  batch: 0\n", 3, 10, "sweep.batch", "at least 1"},
    {"infinite tolerance", "tolerance:\n  bf16: inf\nsweep:\n  seq_len: 1\n", 2, 9,
     "tolerance.bf16", "expected a finite number, got 'inf'"},
    {"infinite time", "measurement:\n  max_time_s: inf\nsweep:\n  seq_len: 1\n", 2, 15,
     "measurement.max_time_s", "expected a finite number"},
    {"samples beyond int", "measurement:\n  max_samples: 99999999999\nsweep:\n  seq_len: 1\n", 2,
     16, "measurement.max_samples", "99999999999 is out of range"},
    {"negative seq_len", "sweep:\n  seq_len: [128, -4]\n", 2, 18, "sweep.seq_len", "at least 1"},
    {"float head_dim", "sweep:\n  seq_len: 128\n  head_dim: 64.5\n", 3, 13, "sweep.head_dim",
     "expected an integer"},
    {"word for heads", "sweep:\n  seq_len: 128\n  heads: many\n", 3, 10, "sweep.heads",
     "expected an integer, got 'many'"},
    {"unknown dtype", "sweep:\n  seq_len: 128\n  dtype: [bf16, fp4]\n", 3, 17, "sweep.dtype",
     "unknown dtype 'fp4'"},
    {"causal not bool", "sweep:\n  seq_len: 128\n  causal: maybe\n", 3, 11, "sweep.causal",
     "expected true or false"},
    {"unknown device", "sweep:\n  seq_len: 128\n  device: tpu\n", 3, 11, "sweep.device",
     "unknown device 'tpu'; use cpu, cuda or auto"},
    {"zero min samples", "measurement:\n  min_samples: 0\nsweep:\n  seq_len: 1\n", 2, 16,
     "measurement.min_samples", "must be at least 1, got 0"},
    {"empty list", "sweep:\n  seq_len: []\n", 2, 12, "sweep.seq_len", "the list is empty"},
    {"duplicate value", "sweep:\n  seq_len: [128, 128]\n", 2, 12, "sweep.seq_len", "appears twice"},
    {"range to below from", "sweep:\n  seq_len: {from: 4096, to: 512, mul: 2}\n", 2, 0,
     "sweep.seq_len.to", "below 'from'"},
    {"range with step and mul", "sweep:\n  seq_len: {from: 1, to: 8, step: 1, mul: 2}\n", 2, 12,
     "sweep.seq_len", "exactly one of 'step' or 'mul'"},
    {"range mul 1", "sweep:\n  seq_len: {from: 1, to: 8, mul: 1}\n", 2, 0, "sweep.seq_len.mul",
     "at least 2"},
    {"range unknown key", "sweep:\n  seq_len: {from: 1, to: 8, by: 2}\n", 2, 0, "sweep.seq_len.by",
     "unknown key"},
    {"zip lengths differ", "sweep:\n  zip:\n    - batch: [1, 2]\n      seq_len: [128, 256, 512]\n",
     4, 16, "sweep.zip[0].seq_len", "need equal lengths"},
    {"axis in zip and free",
     "sweep:\n  seq_len: 128\n  zip:\n    - seq_len: [1, 2]\n      batch: [1, 2]\n", 4, 7,
     "sweep.zip[0].seq_len", "already swept elsewhere"},
    {"zip group of one axis", "sweep:\n  zip:\n    - seq_len: [1, 2]\n", 3, 7, "sweep.zip[0]",
     "at least two axes"},
    {"zip not a list", "sweep:\n  seq_len: 1\n  zip: {batch: [1]}\n", 3, 8, "sweep.zip",
     "non-empty list"},
    {"unknown power mode", "measurement:\n  power: bursty\nsweep:\n  seq_len: 1\n", 2, 10,
     "measurement.power", "'bursty' is not one of sustained or burst"},
    {"power as a list", "measurement:\n  power: [burst]\nsweep:\n  seq_len: 1\n", 2, 10,
     "measurement.power", "expected"},
    {"negative cooldown", "measurement:\n  cooldown_max_s: -1\nsweep:\n  seq_len: 1\n", 2, 19,
     "measurement.cooldown_max_s", "at least 0"},
    {"unknown measurement key", "measurement:\n  warmup: 5\nsweep:\n  seq_len: 1\n", 2, 3,
     "measurement.warmup", "did you mean 'warmup_ms'"},
    {"max below min samples",
     "measurement:\n  min_samples: 10\n  max_samples: 5\nsweep:\n  seq_len: 1\n", 2, 3,
     "measurement.max_samples", "below min_samples"},
    {"zero noise target", "measurement:\n  target_rel_noise: 0\nsweep:\n  seq_len: 1\n", 2, 21,
     "measurement.target_rel_noise", "greater than 0"},
    {"unknown timing mode", "measurement:\n  timing_modes: [cold, warm]\nsweep:\n  seq_len: 1\n", 2,
     24, "measurement.timing_modes", "unknown timing mode 'warm'"},
    {"wall is not a CUDA mode", "measurement:\n  timing_modes: wall\nsweep:\n  seq_len: 1\n", 2, 17,
     "measurement.timing_modes", "unknown timing mode 'wall'"},
    {"unknown pass", "measurement:\n  passes: [timing, ncu]\nsweep:\n  seq_len: 1\n", 2, 20,
     "measurement.passes", "unknown pass 'ncu'"},
    {"pass twice", "measurement:\n  passes: [timing, cpu, timing]\nsweep:\n  seq_len: 1\n", 2, 25,
     "measurement.passes", "pass 'timing' appears twice"},
    {"timing mode twice", "measurement:\n  timing_modes: [cold, cold]\nsweep:\n  seq_len: 1\n", 2,
     24, "measurement.timing_modes", "timing mode 'cold' appears twice"},
    {"max time below min time",
     "measurement:\n  min_time_s: 2\n  max_time_s: 1\nsweep:\n  seq_len: 1\n", 2, 3,
     "measurement.max_time_s", "max_time_s is below min_time_s"},
    {"zero max time", "measurement:\n  max_time_s: 0\nsweep:\n  seq_len: 1\n", 2, 15,
     "measurement.max_time_s", "greater than 0"},
    {"negative warm-up", "measurement:\n  warmup_ms: -1\nsweep:\n  seq_len: 1\n", 2, 14,
     "measurement.warmup_ms", "at least 0"},
    {"zero kernel iterations", "measurement:\n  kernel_pass_iterations: 0\nsweep:\n  seq_len: 1\n",
     2, 27, "measurement.kernel_pass_iterations", "at least 1"},
    {"top-level key twice", "seed: 1\nsweep:\n  seq_len: 1\nseed: 2\n", 4, 1, "seed",
     "appears twice in this mapping (first on line 1)"},
    {"axis twice", "sweep:\n  seq_len: 1\n  batch: 2\n  seq_len: 4\n", 4, 3, "sweep.seq_len",
     "appears twice"},
    {"measurement key twice",
     "measurement:\n  min_samples: 3\n  min_samples: 4\nsweep:\n  seq_len: 1\n", 3, 3,
     "measurement.min_samples", "appears twice"},
    {"a list for a single value", "name: [a, b]\nsweep:\n  seq_len: 1\n", 1, 7, "name",
     "expected a single value, got a list"},
    {"a mapping for a single value", "name: {a: 1}\nsweep:\n  seq_len: 1\n", 1, 7, "name",
     "expected a single value, got a mapping"},
    {"range of 10001 values", "sweep:\n  seq_len: {from: 1, to: 10001, step: 1}\n", 2, 12,
     "sweep.seq_len", "the range has more than 10000 values"},
    {"negative seed", "seed: -1\nsweep:\n  seq_len: 1\n", 1, 7, "seed", "at least 0"},
    {"zero tolerance", "tolerance:\n  bf16: 0\nsweep:\n  seq_len: 1\n", 2, 9, "tolerance.bf16",
     "greater than 0"},
    {"range step 0", "sweep:\n  seq_len: {from: 1, to: 8, step: 0}\n", 2, 0, "sweep.seq_len.step",
     "at least 1"},
    {"range without to", "sweep:\n  seq_len: {from: 1, mul: 2}\n", 2, 12, "sweep.seq_len.to",
     "needs 'to'"},
    {"range of a dtype", "sweep:\n  seq_len: 1\n  dtype: {from: 1, to: 2, step: 1}\n", 3, 10,
     "sweep.dtype", "expected a value or a list"},
    {"keep_samples not bool", "measurement:\n  keep_samples: 3\nsweep:\n  seq_len: 1\n", 2, 17,
     "measurement.keep_samples", "expected true or false"},
    {"backend twice", "backends: [flash, flash]\nsweep:\n  seq_len: 1\n", 1, 19, "backends",
     "appears twice"},
    {"backends a mapping", "backends: {flash: 1}\nsweep:\n  seq_len: 1\n", 1, 11, "backends",
     "expected a value or a list"},
    {"tolerance for unknown dtype", "tolerance:\n  fp8: 0.1\nsweep:\n  seq_len: 1\n", 2, 3,
     "tolerance.fp8", "unknown key"},
    {"negative peak", "peak_tflops: -5\nsweep:\n  seq_len: 1\n", 1, 14, "peak_tflops",
     "greater than 0"},
    {"empty output", "output: ''\nsweep:\n  seq_len: 1\n", 1, 9, "output", "output path is empty"},
    {"axis without value", "sweep:\n  seq_len:\n", 2, 3, "sweep.seq_len", "has no value"},
    {"kv_heads zero", "sweep:\n  seq_len: 128\n  kv_heads: 0\n", 3, 13, "sweep.kv_heads",
     "at least 1"},
    {"seq_len_kv zero", "sweep:\n  seq_len: 1\n  seq_len_kv: [0, 128]\n", 3, 16, "sweep.seq_len_kv",
     "must be at least 1, got 0"},
    {"unknown direction", "sweep:\n  seq_len: 1\n  direction: [fwd, backward]\n", 3, 20,
     "sweep.direction", "unknown direction 'backward'; use fwd or bwd"},
    {"kv_heads does not divide heads", "sweep:\n  seq_len: 128\n  heads: [32, 12]\n  kv_heads: 8\n",
     4, 3, "sweep.kv_heads",
     "kv_heads 8 does not divide heads 12; grouped-query attention shares each kv head among an "
     "equal number of query heads (point b1-h12-kv8-s128-d64-bf16-causal-cpu)"},
    {"kv_heads above heads", "sweep:\n  seq_len: 128\n  kv_heads: 2\n", 3, 3, "sweep.kv_heads",
     "kv_heads 2 does not divide heads 1"},
    {"kv_heads in a zip group",
     "sweep:\n  seq_len: 128\n  zip:\n    - heads: [32, 64]\n      kv_heads: [8, 48]\n", 5, 7,
     "sweep.zip[0].kv_heads", "kv_heads 48 does not divide heads 64"},
    {"causal with fewer keys than queries", "sweep:\n  seq_len: [512, 2048]\n  seq_len_kv: 1024\n",
     3, 3, "sweep.seq_len_kv",
     "causal attention with seq_len_kv 1024 below seq_len 2048 leaves the first 1024 query rows "
     "no key to attend to"},
    {"zero repetitions", "measurement:\n  repetitions: 0\nsweep:\n  seq_len: 1\n", 2, 16,
     "measurement.repetitions", "at least 1"},
    // layers: the model's layers of each kind; the kinds are read off the list, the counts whole.
    {"layers of no kind", "layers: {attention: 32, gdm: 4}\nsweep:\n  seq_len: 1\n", 1, 25,
     "layers.gdm",
     "'gdm' is no problem kind (the kinds: attention, mla, dsa, dsa_indexer, gdn or kda)"},
    {"layers count zero", "layers: {attention: 0}\nsweep:\n  seq_len: 1\n", 1, 21,
     "layers.attention", "must be at least 1, got 0"},
    {"layers count negative", "layers:\n  attention: -3\nsweep:\n  seq_len: 1\n", 2, 14,
     "layers.attention", "a count of layers is a whole number of at least 1, not '-3'"},
    {"layers count a fraction", "layers: {attention: 2.5}\nsweep:\n  seq_len: 1\n", 1, 21,
     "layers.attention", "not '2.5'"},
    {"layers count a word", "layers: {attention: many}\nsweep:\n  seq_len: 1\n", 1, 21,
     "layers.attention", "not 'many'"},
    {"layers count a list", "layers: {attention: [1, 2]}\nsweep:\n  seq_len: 1\n", 1, 21,
     "layers.attention", "expected a single value, got a list"},
    {"layers a list", "layers: [attention]\nsweep:\n  seq_len: 1\n", 1, 9, "layers",
     "expected a mapping of kinds to counts"},
    {"layers empty", "layers: {}\nsweep:\n  seq_len: 1\n", 1, 9, "layers",
     "expected a mapping of kinds to counts"},
    {"layers kind twice", "layers:\n  attention: 2\n  attention: 3\nsweep:\n  seq_len: 1\n", 3, 3,
     "layers.attention", "appears twice"},
    {"layers of a kind not swept", "layers: {attention: 2, mla: 61}\nsweep:\n  seq_len: 1\n", 1, 24,
     "layers.mla", "the sweep measures no mla point (its kinds: attention)"},
    {"layers of the default kind, none swept",
     "layers: {attention: 3}\nsweep:\n  kind: mla\n  seq_len: 1\n  seq_len_kv: 8\n", 1, 10,
     "layers.attention", "the sweep measures no attention point (its kinds: mla)"},
    {"layers of a kind not swept, two swept",
     "layers: {dsa: 3}\nsweep:\n  - seq_len: 1\n  - kind: mla\n    seq_len: 1\n    seq_len_kv: 8\n",
     1, 10, "layers.dsa", "the sweep measures no dsa point (its kinds: attention, mla)"},
    {"too many points",
     "sweep:\n  seq_len: {from: 1, to: 1000, step: 1}\n  batch: {from: 1, to: 1000, step: 1}\n", 2,
     3, "sweep", "more than 100000"},
};

void PrintTo(const BadConfig& bad, std::ostream* os) { *os << bad.what; }

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, NamesFileLineColumnAndKey) {
  const BadConfig& bad = GetParam();
  try {
    parse_config(bad.yaml, "bad.yaml");
    FAIL() << bad.what << ": parsed without error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "bad.yaml") << bad.what;
    EXPECT_EQ(e.line(), bad.line) << bad.what << ": " << e.what();
    if (bad.column) EXPECT_EQ(e.column(), bad.column) << bad.what << ": " << e.what();
    EXPECT_EQ(e.key(), bad.key) << bad.what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(bad.message), std::string::npos)
        << bad.what << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("bad.yaml:" + std::to_string(e.line()) + ":", 0), 0u)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(AllBadConfigs, BadConfigTest, ::testing::ValuesIn(kBadConfigs),
                         [](const ::testing::TestParamInfo<BadConfig>& info) {
                           std::string name = info.param.what;
                           for (auto& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(Config, WorkloadAxesTakeListsRangesAndZipGroups) {
  const SweepConfig c = parse_config(R"(sweep:
  seq_len: 1
  seq_len_kv: {from: 1024, to: 131072, mul: 2}
  direction: [fwd, bwd]
  zip:
    - heads: [32, 64]
      kv_heads: [8, 8]
)",
                                     "w.yaml");
  ASSERT_EQ(c.sweeps[0].axes.size(), 3u);
  EXPECT_EQ(c.sweeps[0].axes[1].name, "seq_len_kv");
  EXPECT_EQ(c.sweeps[0].axes[1].values.size(), 8u);  // 1k .. 128k
  EXPECT_EQ(c.sweeps[0].axes[2].name, "direction");
  EXPECT_EQ(c.sweeps[0].zips.at(0).axes.at(1).name,
            "kv_heads");  // a zipped value may repeat
  // Without a cause to fail: fewer keys than queries is fine when not causal.
  EXPECT_NO_THROW(
      parse_config("sweep:\n  seq_len: 64\n  seq_len_kv: 16\n  causal: false\n", "n.yaml"));
}

TEST(Config, DefaultsWhenKeysAreLeftOut) {
  const SweepConfig c = parse_config("sweep:\n  seq_len: 64\n", "d.yaml");
  const MeasureSettings defaults;
  EXPECT_EQ(c.measurement.min_samples, defaults.min_samples);
  EXPECT_EQ(c.measurement.max_samples, defaults.max_samples);
  EXPECT_DOUBLE_EQ(c.measurement.max_time_s, defaults.max_time_s);
  EXPECT_EQ(c.measurement.timing_modes, std::vector<TimingMode>{TimingMode::cold});
  EXPECT_EQ(c.measurement.passes, all_passes());
  EXPECT_TRUE(c.measurement.keep_samples);  // compare judges time on the raw samples
  EXPECT_TRUE(c.backends.empty());
  EXPECT_EQ(c.tolerance, default_tolerances());
  EXPECT_FALSE(c.peak_tflops);
  EXPECT_EQ(c.seed, 1234u);
}

TEST(Config, EveryMeasurementKeyIsRead) {
  const SweepConfig c = parse_config(R"(measurement:
  warmup_ms: 0
  min_samples: 4
  max_samples: 4
  min_time_s: 0.25
  max_time_s: 0.25
  target_rel_noise: 0.5
  batch_sample_ms: 3.5
  kernel_pass_iterations: 7
  cpu_pass_calls: 11
  keep_samples: false
  timing_modes: batch
  repetitions: 3
  power: burst
  cooldown_max_s: 12.5
sweep:
  seq_len: 1
)",
                                     "m.yaml");
  const MeasureSettings& m = c.measurement;
  EXPECT_DOUBLE_EQ(m.warmup_ms, 0);
  EXPECT_EQ(m.min_samples, 4);
  EXPECT_EQ(m.max_samples, 4);
  EXPECT_DOUBLE_EQ(m.min_time_s, 0.25);
  EXPECT_DOUBLE_EQ(m.max_time_s, 0.25);
  EXPECT_DOUBLE_EQ(m.target_rel_noise, 0.5);
  EXPECT_DOUBLE_EQ(m.batch_sample_ms, 3.5);
  EXPECT_EQ(m.kernel_pass_iterations, 7);
  EXPECT_EQ(m.cpu_pass_calls, 11);
  EXPECT_EQ(m.timing_modes, std::vector<TimingMode>{TimingMode::batch});
  EXPECT_FALSE(m.keep_samples);
  EXPECT_EQ(m.repetitions, 3);
  EXPECT_EQ(m.power, PowerMode::burst);
  EXPECT_DOUBLE_EQ(m.cooldown_max_s, 12.5);
}

TEST(Config, BooleansInEveryAllowedSpelling) {
  for (const char* yes : {"true", "True", "yes"})
    EXPECT_TRUE(std::get<bool>(
        parse_config(std::string("sweep:\n  seq_len: 1\n  causal: ") + yes + "\n", "b.yaml")
            .sweeps[0]
            .axes.at(1)
            .values.at(0)))
        << yes;
  for (const char* no : {"false", "False", "no"})
    EXPECT_FALSE(std::get<bool>(
        parse_config(std::string("sweep:\n  seq_len: 1\n  causal: ") + no + "\n", "b.yaml")
            .sweeps[0]
            .axes.at(1)
            .values.at(0)))
        << no;
}

TEST(Config, LimitsAreInclusive) {
  EXPECT_EQ(parse_config("sweep:\n  seq_len: {from: 1, to: 10000, step: 1}\n", "r.yaml")
                .sweeps[0]
                .axes[0]
                .values.size(),
            10000u);
  EXPECT_DOUBLE_EQ(
      parse_config("measurement:\n  batch_sample_ms: 0.5\nsweep:\n  seq_len: 1\n", "m.yaml")
          .measurement.batch_sample_ms,
      0.5);
  EXPECT_DOUBLE_EQ(*parse_config("peak_tflops: 700\nsweep:\n  seq_len: 1\n", "p.yaml").peak_tflops,
                   700);
}

TEST(Config, SuggestionsCountInsertionsAndDeletionsAsOneEach) {
  for (const char* typo : {"sd", "seeeed"}) {
    try {
      parse_config(std::string(typo) + ": 1\nsweep:\n  seq_len: 1\n", "s.yaml");
      FAIL() << typo;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("(did you mean 'seed'?)"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Config, SmallestSettingsAllowed) {
  const SweepConfig c = parse_config(
      "measurement:\n  min_samples: 1\n  max_samples: 1\nsweep:\n  seq_len: 1\n", "m.yaml");
  EXPECT_EQ(c.measurement.min_samples, 1);
  EXPECT_EQ(c.measurement.max_samples, 1);
}

TEST(Config, DefaultTolerances) {
  EXPECT_EQ(
      default_tolerances(),
      (std::map<DType, double>{
          {DType::bf16, 2e-2}, {DType::f16, 5e-3}, {DType::f32, 1e-4}, {DType::fp8_e4m3, 8e-2}}));
}

TEST(Config, NoSuggestionWithoutANearMiss) {
  try {
    parse_config("ep: 1\nsweep:\n  seq_len: 1\n", "s.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:1:1: key 'ep': unknown key; allowed here: name, description, output, "
              "backends, measurement, "
              "sweep, tolerance, peak_tflops, peak_tflops_fp8, seed, expect, layers");
  }
}

TEST(Config, AListOfSweepBlocksIsTheirPointsInTurnEachOnce) {
  const SweepConfig c = parse_config(
      "sweep:\n  - seq_len: [8, 16]\n    device: cpu\n  - seq_len: [16, 32]\n    device: cpu\n"
      "    heads: 2\n  - seq_len: 16\n    device: cpu\n",
      "blocks.yaml");
  ASSERT_EQ(c.sweeps.size(), 3u);
  std::vector<std::string> ids;
  for (const Point& p : expand_sweep(c, false)) ids.push_back(p.id);
  // The third block's point is the first block's second: measured once.
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(
      ids[0],
      expand_sweep(parse_config("sweep:\n  seq_len: 8\n  device: cpu\n", "a.yaml"), false)[0].id);
  EXPECT_NE(ids[2].find("h2"), std::string::npos) << ids[2];
  // Errors name the block.
  try {
    parse_config("sweep:\n  - seq_len: 8\n  - heads: 2\n", "b.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep[1].seq_len"), std::string::npos) << e.what();
  }
  try {
    parse_config("sweep:\n  - seq_len: 8\n  - seq_len: 8\n    heads: 4\n    kv_heads: 3\n",
                 "c.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("c.yaml:5:5: key 'sweep[1].kv_heads'"), std::string::npos)
        << e.what();
  }
}

TEST(Config, ZipGroupsStandWhereTheyAreWritten) {
  EXPECT_EQ(
      parse_config("sweep:\n  zip:\n    - batch: [1, 2]\n      seq_len: [8, 16]\n  heads: [1, 2]\n",
                   "z.yaml")
          .sweeps[0]
          .zips_at,
      0u);
  EXPECT_EQ(
      parse_config("sweep:\n  heads: [1, 2]\n  zip:\n    - batch: [1, 2]\n      seq_len: [8, 16]\n",
                   "z.yaml")
          .sweeps[0]
          .zips_at,
      1u);
}

TEST(Config, CommandLineListsAreCheckedLikeTheFile) {
  EXPECT_EQ(parse_timing_modes({"graph", "cold"}),
            (std::vector<TimingMode>{TimingMode::graph, TimingMode::cold}));
  EXPECT_EQ(parse_passes({"kernels", "timing"}), (std::vector<Pass>{Pass::kernels, Pass::timing}));
  auto failure = [](auto parse, std::vector<std::string> names) -> std::pair<size_t, std::string> {
    try {
      parse(names);
    } catch (const ListItemError& e) {
      return {e.index(), e.what()};
    }
    return {99, "accepted"};
  };
  EXPECT_EQ(failure(parse_timing_modes, {"cold", "cold"}),
            (std::pair<size_t, std::string>{1, "timing mode 'cold' appears twice"}));
  EXPECT_EQ(failure(parse_timing_modes, {"batch", "wall"}).first, 1u);
  EXPECT_EQ(failure(parse_passes, {"cpu", "ncu"}).first, 1u);
  EXPECT_EQ(failure(parse_passes, {"ops", "ops"}),
            (std::pair<size_t, std::string>{1, "pass 'ops' appears twice"}));
}

TEST(Config, MissingFileIsAnInputError) {
  EXPECT_THROW(load_config("/nonexistent/sweep.yaml"), InputError);
}

// A Python backend: `{python: FILE:FUNCTION, name: NAME}` beside plugin names; every malformed
// form refused where it stands.
TEST(Config, PythonBackendsAndTheirLocatedRefusals) {
  const std::string file = std::string(ATTNBENCH_SOURCE_DIR) + "/examples/python-backends/sdpa.py";
  const SweepConfig c = parse_config("backends: [flash, {python: " + file +
                                         ":attention, name: sdpa-py}, {python: " + file +
                                         ":attention}]\nsweep:\n  seq_len: 8\n",
                                     "p.yaml");
  EXPECT_EQ(c.backend_names(), (std::vector<std::string>{"flash", "sdpa-py", "sdpa"}));
  ASSERT_EQ(c.backends.size(), 3u);
  EXPECT_EQ(c.backends[0].kind, "plugin");
  EXPECT_EQ(c.backends[1].kind, "python");
  EXPECT_EQ(c.backends[1].target, file + ":attention");
  EXPECT_EQ(c.backends[1].written, file + ":attention");
  EXPECT_EQ(c.backends[1].line, 1);
  EXPECT_EQ(c.backends[1].column, 19);
  EXPECT_EQ(c.backends[2].name, "sdpa");  // the file's stem
  struct Bad {
    std::string entry, key, says;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"{python: " + file + "}", "backends.python", "expected FILE:FUNCTION"},
           {"{python: " + file + ":2fast}", "backends.python", "not a Python function name"},
           {"{python: /no/such.py:f}", "backends.python", "/no/such.py: no such file"},
           {"{python: " + file + ":attention, name: 'a b'}", "backends.name",
            "cannot name a backend"},
           {"{python: " + file + ":attention, nmae: x}", "backends.nmae", "did you mean 'name'"},
           {"{name: x}", "backends", "needs 'python: FILE:FUNCTION' or 'source: FILE'"},
           {"{python: " + file + ":attention, source: x.cpp}", "backends",
            "names both 'python' and 'source'"},
           {"{source: " + file + "}", "backends.source", "is a .cpp, .cc, .cxx or .cu file"},
           {"{source: /no/such.cu}", "backends.source", "/no/such.cu: no such file"},
           {"{python: " + file + ":attention, name: flash}", "backends", "appears twice"}}) {
    try {
      parse_config("backends: [flash, " + bad.entry + "]\nsweep:\n  seq_len: 8\n", "p.yaml");
      ADD_FAILURE() << bad.entry << " was accepted";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("p.yaml:1:"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + bad.key + "'"), std::string::npos) << what;
      EXPECT_NE(what.find(bad.says), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// Every field of the problem's table (kinds/problem.cpp) is a sweep axis that sets that field of
// the points: an axis added to the table reaches the sweep with no second list to keep.
TEST(Config, EveryProblemFieldIsAnAxisThatSetsItsField) {
  for (const auto& f : problem_fields()) {
    if (f.derived) continue;  // read off the others: Config.DerivedFieldsAreNoSweepKeys
    Problem defaults;
    std::string written;
    FieldValue expected;
    switch (f.type) {
      case FieldType::integer: written = "6", expected = int64_t{6}; break;  // divides heads 6
      case FieldType::boolean: written = "true", expected = true; break;
      case FieldType::choice: written = f.choices.back(), expected = f.choices.back(); break;
      case FieldType::number: written = "2.5", expected = 2.5; break;
      case FieldType::text:
        if (f.example.empty()) FAIL() << f.name << ": a text axis needs an example value";
        written = f.example, expected = f.example;
        break;
      default: FAIL() << f.name << ": a problem field of a type no sweep can write";
    }
    // seq_lens replaces seq_len (a block writes one of them); a page's axes need a paged cache.
    // A kind that derives heads (gdn, kda: from their value heads) is not written them.
    const ProblemKind* kind = f.kinds.empty() ? nullptr : find_problem_kind(f.kinds.back());
    const ProblemKind* written_kind = f.name == "kind" ? find_problem_kind(written) : kind;
    const std::vector<std::string> derived =
        written_kind ? written_kind->derived_axes() : std::vector<std::string>{};
    const bool heads = std::find(derived.begin(), derived.end(), "heads") == derived.end();
    std::string sweep = std::string("sweep:\n") + (heads ? "  heads: 6\n" : "") +
                        (f.name == "seq_lens" ? "" : "  seq_len: 6\n");
    if (f.name == "page_size" || f.name == "page_order") sweep += "  kv_layout: paged\n";
    // Value heads a multiple of (kda: as many as) the key heads.
    if (f.name == "linear_num_value_heads") sweep += "  linear_num_key_heads: 6\n";
    if (kind) sweep += "  kind: " + kind->name() + "\n";  // a kind's own field
    const std::string key = "  " + f.name + ": ";
    const size_t at = sweep.find(key);
    if (at == std::string::npos)
      sweep += key + written + "\n";
    else
      sweep.replace(at, sweep.find('\n', at) - at, key + written);
    const SweepConfig c = parse_config(sweep, "axis.yaml");
    const std::vector<Point> points = expand_sweep(c, /*cuda_available=*/false);
    ASSERT_EQ(points.size(), 1u) << f.name;
    EXPECT_EQ(f.get(points[0].problem), expected) << f.name << " did not reach the point";
    EXPECT_NE(f.get(points[0].problem), f.get(defaults)) << f.name << ": pick a non-default value";
  }
}

// The columns a kind derives (head_dim_v, v_in_k) are no sweep keys: a sweep that writes one is
// refused as any unknown key is, naming the keys it may write.
// A whole number past int64 (a valid uint64 seed) names the range it must be in, not "an integer".
TEST(Config, AnIntegerPastInt64NamesItsRange) {
  try {
    parse_config("seed: 9223372036854775808\nsweep:\n  seq_len: 8\n", "s.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "seed");
    EXPECT_NE(std::string(e.what()).find("expected an integer from 0 to 9223372036854775807, got "
                                         "9223372036854775808"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(parse_config("seed: 9223372036854775807\nsweep:\n  seq_len: 8\n", "s.yaml").seed,
            9223372036854775807ull);
}

// Lines ended by CR alone (or CRLF) read as lines: the points, and an error's line.
TEST(Config, CarriageReturnLinesAreLines) {
  EXPECT_EQ(expand_sweep(parse_config("sweep:\r  seq_len: [8, 16]\r  device: cpu\r", "cr.yaml"), false)
                .size(),
            2u);
  EXPECT_EQ(expand_sweep(parse_config("sweep:\r\n  seq_len: 8\r\n", "crlf.yaml"), false).size(), 1u);
  try {
    parse_config("name: x\rsweep:\r  seq_len: 8\r  headz: 2\r", "cr.yaml");
    ADD_FAILURE() << "an unknown key was read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 4) << e.what();
  }
}

TEST(Config, DerivedFieldsAreNoSweepKeys) {
  int derived = 0;
  for (const auto& f : problem_fields()) {
    if (!f.derived) continue;
    ++derived;
    try {
      parse_config("sweep:\n  seq_len: 6\n  " + f.name + ": 1\n", "derived.yaml");
      ADD_FAILURE() << f.name << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "sweep." + f.name) << e.what();
    }
  }
  EXPECT_EQ(derived, 3);  // head_dim_v, v_in_k, family
}

// `layers:` is kept in file order, a kind read off every block (a free axis, a zip group, the
// default kind where none is written); a count may be as large as a model has.
TEST(Config, LayersAreKeptPerKindInFileOrder) {
  const SweepConfig c = parse_config(R"(layers: {mla: 7, attention: 20}
sweep:
  - seq_len: 8
    device: cpu
  - kind: mla
    seq_len: 1
    seq_len_kv: 64
    device: cpu
)",
                                     "layers.yaml");
  EXPECT_EQ(c.layers,
            (std::vector<std::pair<std::string, int64_t>>{{"mla", 7}, {"attention", 20}}));
  const SweepConfig zipped = parse_config(R"(layers:
  dsa: 61
sweep:
  zip:
    - kind: [attention, dsa]
      seq_len: [8, 1]
  seq_len_kv: 2048
  heads: 16
  device: cpu
)",
                                          "zipped.yaml");
  EXPECT_EQ(zipped.layers, (std::vector<std::pair<std::string, int64_t>>{{"dsa", 61}}));
  EXPECT_EQ(parse_config("layers: {attention: 100000}\nsweep:\n  seq_len: 1\n", "big.yaml")
                .layers.front()
                .second,
            100000);
  EXPECT_TRUE(parse_config("sweep:\n  seq_len: 1\n", "none.yaml").layers.empty());
}

// Every kind of the list is a kind `layers:` knows: the sweep's own is taken, another is refused
// only for having no point here (tests/toy_kind_test.cpp adds a kind and counts its layers).
TEST(Config, LayersKnowEveryKindOfTheList) {
  ASSERT_GE(problem_kinds().size(), 2u);
  for (const ProblemKind* kind : problem_kinds()) {
    SCOPED_TRACE(kind->name());
    const std::string yaml = "layers: {" + kind->name() + ": 3}\nsweep:\n  seq_len: 1\n";
    if (kind == problem_kinds().front()) {  // the default kind: the sweep's
      EXPECT_EQ(parse_config(yaml, "kinds.yaml").layers.size(), 1u);
      continue;
    }
    try {
      parse_config(yaml, "kinds.yaml");
      ADD_FAILURE() << "a kind the sweep does not measure was taken";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("the sweep measures no " + kind->name() + " point"),
                std::string::npos)
          << e.what();
    }
  }
}

// Every config the project ships parses and expands (the model presets once shipped with a ': '
// in an unquoted description, which YAML refuses, and nothing read them before the GPU did).
TEST(Config, EveryShippedConfigLoadsAndExpands) {
  namespace fs = std::filesystem;
  const fs::path root = ATTNBENCH_SOURCE_DIR;
  const fs::path was = fs::current_path();
  fs::current_path(root);  // configs name their Python files and histograms from the root
  int loaded = 0;
  for (const char* dir : {"configs", "examples"})
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      if (entry.path().extension() != ".yaml") continue;
      SCOPED_TRACE(entry.path().string());
      try {
        const SweepConfig config = load_config(entry.path().string());
        EXPECT_FALSE(expand_sweep(config, true).empty());
        ++loaded;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    }
  fs::current_path(was);
  EXPECT_GE(loaded, 25);
}

}  // namespace
}  // namespace attnbench
