// The served workloads' arithmetic, on the CPU and without LibTorch: sequence lengths as a sweep
// writes them and as they are drawn, the new axes and their errors, the useful work and the bytes
// a variant implies, and the bandwidth columns and `bound` of a row.
#include "base/lengths.hpp"
#include "base/errors.hpp"
#include "kinds/problem.hpp"
#include "config/config.hpp"
#include "config/sweep.hpp"
#include "records/assemble.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

namespace attnbench {
namespace {

TEST(Lengths, EveryFormParsesAndTheBadOnesSayWhat) {
  EXPECT_EQ(parse_length_spec("512").form, LengthForm::number);
  EXPECT_EQ(parse_length_spec("100, 2000,37").args, (std::vector<double>{100, 2000, 37}));
  EXPECT_EQ(parse_length_spec("uniform(128,4096)").args, (std::vector<double>{128, 4096}));
  EXPECT_EQ(parse_length_spec("normal(2048, 512, 8192)").max, 8192);
  EXPECT_EQ(parse_length_spec("lognormal(1024,0.8)").form, LengthForm::lognormal);
  EXPECT_EQ(parse_length_spec("histogram(x.csv)").file, "x.csv");
  for (const char* bad : {"0", "1.5", "uniform(10)", "uniform(9,3)", "gamma(1,2)", "normal(0,1)",
                          "normal(10,-1)", "histogram()", "uniform(1,2", "12,x"})
    EXPECT_THROW(parse_length_spec(bad), std::invalid_argument) << bad;
  try {
    parse_length_spec("gamma(1,2)");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("uniform(LO,HI)"), std::string::npos) << e.what();
  }
}

// A mixed batch: parts COUNT*LENGTHS joined by '+', each part drawn for its own sequences.
TEST(Lengths, AMixedBatchIsItsPartsInOrder) {
  const LengthSpec mix = parse_length_spec("2*2048 + 32*uniform(1024,4096)");
  EXPECT_EQ(mix.form, LengthForm::mix);
  EXPECT_TRUE(mix.drawn());
  EXPECT_EQ(mix.counts, (std::vector<int64_t>{2, 32}));
  ASSERT_EQ(mix.parts.size(), 2u);
  EXPECT_EQ(mix.parts[0].form, LengthForm::number);
  EXPECT_EQ(mix.parts[1].form, LengthForm::uniform);
  const std::vector<int64_t> lens = draw_lengths(mix, 34, 5, "");
  ASSERT_EQ(lens.size(), 34u);
  EXPECT_EQ(lens[0], 2048);
  EXPECT_EQ(lens[1], 2048);
  for (size_t i = 2; i < lens.size(); ++i) {
    EXPECT_GE(lens[i], 1024);
    EXPECT_LE(lens[i], 4096);
  }
  EXPECT_EQ(draw_lengths(mix, 34, 5, ""), lens);  // the same seed, the same batch
  // Each part its own draw: two parts of one spec give other lengths.
  const std::vector<int64_t> twins =
      draw_lengths(parse_length_spec("8*uniform(1,1000000) + 8*uniform(1,1000000)"), 16, 5, "");
  EXPECT_NE(std::vector<int64_t>(twins.begin(), twins.begin() + 8),
            std::vector<int64_t>(twins.begin() + 8, twins.end()));
  EXPECT_NE(draw_lengths(mix, 34, 6, ""), lens);
  // One part is a mix too (a count times a spec), and a list part gives its count of lengths.
  EXPECT_EQ(draw_lengths(parse_length_spec("3*7"), 3, 1, ""), (std::vector<int64_t>{7, 7, 7}));
  EXPECT_EQ(draw_lengths(parse_length_spec("1*9 + 2*4,5"), 3, 1, ""),
            (std::vector<int64_t>{9, 4, 5}));
  // The counts are the batch: one fewer or one more is refused, saying the batch to write.
  for (int64_t batch : {33, 35}) {
    try {
      draw_lengths(mix, batch, 5, "");
      ADD_FAILURE() << batch;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("the mix gives 34 sequences for a batch of " +
                                           std::to_string(batch) + "; write batch: 34"),
                std::string::npos)
          << e.what();
    }
  }
  for (const char* bad : {"2*", "*5", "0*5", "x*5", "2*3*4", "2*5 + 7", "2*5 +", "1.5*4"})
    EXPECT_THROW(parse_length_spec(bad), std::invalid_argument) << bad;
  // A '+' inside parentheses (a number's exponent) joins no parts: alone and inside a mix.
  const LengthSpec exponent = parse_length_spec("normal(1e+3,100)");
  EXPECT_EQ(exponent.form, LengthForm::normal);
  EXPECT_EQ(exponent.args, (std::vector<double>{1000, 100}));
  const LengthSpec mixed = parse_length_spec("2*normal(1e+2,10) + 2*1");
  EXPECT_EQ(mixed.form, LengthForm::mix);
  EXPECT_EQ(mixed.counts, (std::vector<int64_t>{2, 2}));
  ASSERT_EQ(mixed.parts.size(), 2u);
  EXPECT_EQ(mixed.parts[0].args, (std::vector<double>{100, 10}));
}

TEST(Lengths, DrawsAreDeterministicPerSeedAndStayInTheirBounds) {
  const LengthSpec uniform = parse_length_spec("uniform(100,200)");
  const auto a = draw_lengths(uniform, 64, 7, ""), b = draw_lengths(uniform, 64, 7, "");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, draw_lengths(uniform, 64, 8, ""));
  EXPECT_EQ(*std::min_element(a.begin(), a.end()) >= 100, true);
  EXPECT_EQ(*std::max_element(a.begin(), a.end()) <= 200, true);
  // Both ends are reachable: over 4096 draws of 101 values each appears.
  const auto many = draw_lengths(uniform, 4096, 1, "");
  EXPECT_EQ(*std::min_element(many.begin(), many.end()), 100);
  EXPECT_EQ(*std::max_element(many.begin(), many.end()), 200);
  // normal and lognormal: at least 1, at most the cap, centred where written.
  const auto capped = draw_lengths(parse_length_spec("normal(1000,800,1500)"), 4096, 2, "");
  EXPECT_GE(*std::min_element(capped.begin(), capped.end()), 1);
  EXPECT_EQ(*std::max_element(capped.begin(), capped.end()), 1500);
  auto centred = draw_lengths(parse_length_spec("normal(1000,50)"), 4001, 4, "");
  std::sort(centred.begin(), centred.end());
  EXPECT_NEAR(static_cast<double>(centred[2000]), 1000, 10);                // the mean (and median)
  EXPECT_NEAR(static_cast<double>(centred[3365] - centred[635]), 100, 15);  // p84 - p16: 2 std
  auto sorted = draw_lengths(parse_length_spec("lognormal(2048,0.5)"), 4001, 3, "");
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NEAR(static_cast<double>(sorted[2000]), 2048, 2048 * 0.08);  // the median
  EXPECT_THROW(draw_lengths(parse_length_spec("1,2,3"), 4, 1, ""), std::invalid_argument);
  EXPECT_EQ(draw_lengths(parse_length_spec("1,2,3"), 3, 1, ""), (std::vector<int64_t>{1, 2, 3}));
}

TEST(Lengths, AHistogramDrawsItsBucketsByWeight) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnbench-lengths";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "h.csv");
    f << "# a comment\nlo,hi,weight\n1,10,3\n10,100,0\n100,110,1\n";
  }
  const auto lens = draw_lengths(parse_length_spec("histogram(h.csv)"), 4000, 5, dir.string());
  int low = 0, high = 0;
  for (int64_t x : lens) {
    EXPECT_TRUE((x >= 1 && x < 10) || (x >= 100 && x < 110)) << x;  // never the empty bucket
    (x < 10 ? low : high)++;
  }
  EXPECT_NEAR(static_cast<double>(low) / 4000, 0.75, 0.03);
  {
    std::ofstream f(dir / "bad.csv");
    f << "1,10,3\n10,5,1\n";
  }
  try {
    read_length_histogram((dir / "bad.csv").string());
    ADD_FAILURE() << "a bucket with HI below LO was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2"), std::string::npos) << e.what();
  }
  // The shipped trace histogram reads, and its median bucket is the trace's (1020 tokens).
  const auto azure = read_length_histogram(std::string(ATTNBENCH_SOURCE_DIR) +
                                           "/configs/models/azure-conv-2023-prompts.csv");
  double total = 0;
  for (const auto& b : azure) total += b.weight;
  EXPECT_EQ(total, 19366);
}

// A histogram file as people save them: a UTF-8 BOM before the first bucket keeps that bucket; a
// header is one first line, never a bad bucket (a negative LO) or a second line; weights whose
// sum is past a double's range are refused, not drawn around.
TEST(Lengths, AHistogramsFirstBucketIsNeverTakenForAHeader) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnbench-lengths";
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const auto bom = read_length_histogram(write("bom.csv", "\xEF\xBB\xBF" "1,10,3\n100,110,1\n"));
  ASSERT_EQ(bom.size(), 2u);
  EXPECT_EQ(bom[0].lo, 1);
  const auto headed = read_length_histogram(write("headed.csv", "\xEF\xBB\xBFlo,hi,weight\n5,9,1\n"));
  ASSERT_EQ(headed.size(), 1u);
  EXPECT_EQ(headed[0].lo, 5);
  auto refused = [&](const char* name, const std::string& text, const std::string& says) {
    try {
      read_length_histogram(write(name, text));
      ADD_FAILURE() << name << " was read";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("negative.csv", "-5,10,1\n10,20,1\n", "negative.csv:1");
  refused("two-headers.csv", "lo,hi,weight\nLO,HI,W\n1,10,1\n", "two-headers.csv:2");
  refused("huge.csv", "1,10,1e308\n10,20,1e308\n", "the weights sum past the largest number");
  // The largest weights that still sum: both buckets drawn.
  const auto big = read_length_histogram(write("big.csv", "1,10,8e307\n10,20,8e307\n"));
  const auto lens = draw_lengths(parse_length_spec("histogram(big.csv)"), 200, 3, dir.string());
  EXPECT_TRUE(std::any_of(lens.begin(), lens.end(), [](int64_t x) { return x < 10; }));
  EXPECT_TRUE(std::any_of(lens.begin(), lens.end(), [](int64_t x) { return x >= 10; }));
}

// A length is at most 1e9 tokens however it is written: a centre past it is refused when read, a
// draw past it (a wide lognormal) when drawn, naming MAX; with MAX it draws.
TEST(Lengths, NoDrawnLengthIsPastALongestSequence) {
  EXPECT_THROW(parse_length_spec("normal(1e300,1)"), std::invalid_argument);
  EXPECT_THROW(parse_length_spec("lognormal(1000000001,0.5)"), std::invalid_argument);
  EXPECT_NO_THROW(parse_length_spec("normal(1000000000,1)"));
  try {
    draw_lengths(parse_length_spec("lognormal(4096,50)"), 64, 1, "");
    ADD_FAILURE() << "a length past 1e9 was drawn";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("give the spec a MAX"), std::string::npos) << e.what();
  }
  for (int64_t x : draw_lengths(parse_length_spec("lognormal(4096,50,100000)"), 64, 1, ""))
    EXPECT_TRUE(x >= 1 && x <= 100000) << x;
}

TEST(Lengths, ASweepDrawsEachPointsLengthsAndWritesTheSpecInItsId) {
  const SweepConfig c = parse_config(R"Y(seed: 11
sweep:
  device: cpu
  batch: 6
  seq_lens: ["uniform(10,50)", [3, 4, 5, 6, 7, 8]]
)Y",
                                     "s.yaml");
  const auto points = expand_sweep(c, false);
  ASSERT_EQ(points.size(), 2u);
  const Problem& p = points[0].problem;
  ASSERT_EQ(p.q_lens.size(), 6u);
  EXPECT_EQ(p.kv_lens, p.q_lens);  // a prefill: each sequence over itself
  EXPECT_EQ(p.seq_len, *std::max_element(p.q_lens.begin(), p.q_lens.end()));
  EXPECT_EQ(p.seq_lens, "uniform(10,50)");
  EXPECT_NE(points[0].id.find("-qlens-uniform-10-50"), std::string::npos) << points[0].id;
  EXPECT_EQ(points[1].problem.q_lens, (std::vector<int64_t>{3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(total_q_tokens(points[1].problem), 33);
  // The same seed draws the same batch; another seed another.
  EXPECT_EQ(expand_sweep(c, false)[0].problem.q_lens, p.q_lens);
  SweepConfig other = c;
  other.seed = 12;
  EXPECT_NE(expand_sweep(other, false)[0].problem.q_lens, p.q_lens);
}

// vLLM's "2q2k_32q1s1k" in one line: two prefills of 2048 and 32 one-query decodes over 1k keys;
// each decode row is aligned bottom-right against its own keys (a ragged causal batch).
TEST(Lengths, AMixedBatchOfPrefillsAndDecodesIsOneLine) {
  const Problem p = expand_sweep(parse_config(R"Y(sweep:
  device: cpu
  batch: 34
  seq_lens: "2*2048 + 32*1"
  seq_lens_kv: "2*2048 + 32*1024"
)Y",
                                              "m.yaml"),
                                 false)
                        .at(0)
                        .problem;
  ASSERT_EQ(p.q_lens.size(), 34u);
  EXPECT_EQ(p.q_lens[1], 2048);
  EXPECT_EQ(p.q_lens[2], 1);
  EXPECT_EQ(p.kv_lens[2], 1024);
  EXPECT_EQ(total_q_tokens(p), 2 * 2048 + 32);
  EXPECT_EQ(total_kv_tokens(p), 2 * 2048 + 32 * 1024);
  EXPECT_DOUBLE_EQ(attended_pairs(p), 2 * (2048.0 * 2049 / 2) + 32 * 1024.0);
  EXPECT_THROW(parse_config("sweep:\n  batch: 30\n  seq_lens: \"2*8 + 32*1\"\n", "m.yaml"),
               ConfigError);
}

TEST(Lengths, DecodeAgainstRaggedPagedContexts) {
  const SweepConfig c = parse_config(R"Y(sweep:
  device: cpu
  causal: false
  batch: 4
  seq_len: 1
  seq_lens_kv: ["lognormal(4096,0.5)"]
  kv_layout: paged
  page_order: shuffled
  window: [127, 0]
  softcap: 30
)Y",
                                     "d.yaml");
  const Problem p = expand_sweep(c, false).at(0).problem;
  EXPECT_TRUE(p.q_lens.empty());
  ASSERT_EQ(p.kv_lens.size(), 4u);
  EXPECT_TRUE(p.paged() && p.packed());
  EXPECT_EQ(p.page_size, 16);  // the default page
  EXPECT_EQ(p.window_left, 127);
  EXPECT_EQ(p.window_right, 0);
  EXPECT_DOUBLE_EQ(p.softcap, 30);
  const std::string id = point_id(p);
  for (const char* part :
       {"-kvlens-lognormal-4096-0.5", "-paged16-shuffled", "-win127_0", "-cap30"})
    EXPECT_NE(id.find(part), std::string::npos) << id;
}

void expect_config_error(const std::string& yaml, const std::string& key, const std::string& says) {
  try {
    parse_config(yaml, "bad.yaml");
    ADD_FAILURE() << "accepted:\n" << yaml;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("key '" + key), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(Lengths, BadVariantAxesAreLocatedErrors) {
  expect_config_error("sweep:\n  seq_len: 8\n  seq_lens: [\"uniform(1,9)\"]\n", "sweep.seq_lens",
                      "write one of them");
  expect_config_error("sweep:\n  batch: 2\n  seq_lens: [[1, 2, 3]]\n", "sweep.seq_lens",
                      "3 lengths for a batch of 2");
  expect_config_error("sweep:\n  seq_lens: [\"poisson(3)\"]\n", "sweep.seq_lens",
                      "unknown length form");
  expect_config_error("sweep:\n  batch: 2\n  seq_lens: [[4, 8]]\n  seq_lens_kv: [[4, 6]]\n",
                      "sweep.seq_lens_kv", "sequence 1 has 8 queries and 6 keys");
  expect_config_error("sweep:\n  seq_len: 8\n  window: [10, 5]\n", "sweep.window", "RIGHT is 0");
  expect_config_error("sweep:\n  seq_len: 8\n  window: [10]\n", "sweep.window", "two numbers");
  expect_config_error("sweep:\n  seq_len: 8\n  window: [-5, 0]\n", "sweep.window",
                      "-1 (unbounded)");
  expect_config_error("sweep:\n  seq_len: 8\n  page_size: 16\n", "sweep.page_size",
                      "kv_layout: paged");
  expect_config_error("sweep:\n  seq_len: 8\n  kv_layout: [pages]\n", "sweep.kv_layout",
                      "contiguous or paged");
  expect_config_error("sweep:\n  seq_len: 8\n  softcap: -1\n", "sweep.softcap", "");
  expect_config_error("sweep:\n  seq_lens: [\"histogram(missing.csv)\"]\n", "sweep.seq_lens",
                      "missing.csv");
  // What the fuzzer found: a batch of 2^63 - 1 with a length each was a bad_alloc, not an error.
  expect_config_error("sweep:\n  batch: 9223372036854775807\n  seq_lens: [\"uniform(1,9)\"]\n",
                      "sweep.seq_lens", "1 to 1048576 (their offsets are int32)");
  expect_config_error("sweep:\n  batch: 1048577\n  seq_lens_kv: [\"uniform(1,9)\"]\n  seq_len: 1\n",
                      "sweep.seq_lens_kv", "a batch of 1048577 sequences");
  expect_config_error("sweep:\n  batch: 3\n  seq_lens: [[1000000000, 1000000000, 1000000000]]\n",
                      "sweep.seq_lens",
                      "sum past 2147483647 tokens");
}

// One sequence's attended pairs under a window [left, right] (right 0: causal) and a chunk, as
// the work model counts them (the variants' narrowing, kinds/variants/).
double pairs(int64_t queries, int64_t keys, int64_t left, int64_t right, int64_t chunk = 0) {
  Problem p;
  p.causal = right == 0;
  p.window_left = left, p.window_right = right == 0 ? -1 : right, p.chunk = chunk;
  return sequence_pairs(p, queries, keys);
}

TEST(Lengths, UsefulWorkCountsEverySequenceInsideItsWindow) {
  // One sequence of 4 queries over 6 keys: query i stands at key i + 2.
  EXPECT_DOUBLE_EQ(pairs(4, 6, -1, -1), 24);
  EXPECT_DOUBLE_EQ(pairs(4, 6, -1, 0), 3 + 4 + 5 + 6);
  // Window of one key behind (and itself): 2 keys each.
  EXPECT_DOUBLE_EQ(pairs(4, 6, 1, 0), 8);
  // Left 1, right 1 without causal: keys pos-1 .. pos+1, the last row clipped at key 5.
  EXPECT_DOUBLE_EQ(pairs(4, 6, 1, 1), 3 + 3 + 3 + 2);
  // Chunks of 4 (positions 2..5 against keys 0..5): causal, position 2 sees 0..2, 3 sees 0..3, 4
  // sees 4, 5 sees 4..5; without causal each sees its whole chunk (cut at the cache's end).
  EXPECT_DOUBLE_EQ(pairs(4, 6, -1, 0, 4), 3 + 4 + 1 + 2);
  EXPECT_DOUBLE_EQ(pairs(4, 6, -1, -1, 4), 4 + 4 + 2 + 2);
  EXPECT_DOUBLE_EQ(pairs(4, 6, 1, 0, 4), 2 + 2 + 1 + 2);  // and a window of 1 behind
  EXPECT_DOUBLE_EQ(pairs(4, 6, -1, 0, 1), 4);             // chunks of 1: itself
  EXPECT_DOUBLE_EQ(pairs(4, 6, -1, 0, 6), 3 + 4 + 5 + 6);  // one chunk: causal's
  Problem p;
  p.batch = 3, p.heads = 2, p.kv_heads = 1, p.head_dim = 8, p.causal = true;
  p.q_lens = {1, 4, 2}, p.kv_lens = {1, 6, 2};
  p.seq_len = 4, p.seq_len_kv = 6;
  EXPECT_DOUBLE_EQ(attended_pairs(p), 1 + 18 + 3);
  EXPECT_DOUBLE_EQ(attention_flop(p), 4.0 * 2 * 8 * 22);
  p.window_left = 1;
  EXPECT_DOUBLE_EQ(attended_pairs(p), 1 + 8 + 3);
}

TEST(Lengths, BytesAreWhatTheCallMustMove) {
  Problem p;
  p.batch = 2, p.heads = 4, p.kv_heads = 2, p.head_dim = 8, p.dtype = DType::bf16;
  p.seq_len = 1, p.seq_len_kv = 100;
  // q and out: 2 tokens x 4 heads x 8 x 2 bytes each; k and v: 200 tokens x 2 heads x 8 x 2.
  EXPECT_DOUBLE_EQ(attention_bytes(p), 2 * 32 * 2 * 2 + 2 * 200 * 16 * 2);
  p.kv_lens = {100, 40};
  EXPECT_DOUBLE_EQ(attention_bytes(p), 2 * 32 * 2 * 2 + 2 * 140 * 16 * 2);
  // A window reads only the keys some query sees: the last 10 (and itself) of each sequence.
  p.window_left = 9, p.causal = true;
  EXPECT_DOUBLE_EQ(attention_bytes(p), 2 * 32 * 2 * 2 + 2 * 20 * 16 * 2);
  // A paged cache adds its page-table entries: 7 + 3 pages of 16 tokens.
  p.window_left = -1, p.kv_layout = KvLayout::paged, p.page_size = 16;
  EXPECT_DOUBLE_EQ(attention_bytes(p), 2 * 32 * 2 * 2 + 2 * 140 * 16 * 2 + 10 * 4);
  // fp8 reads one byte per element and writes bf16.
  Problem f = p;
  f.kv_layout = KvLayout::contiguous, f.dtype = DType::fp8_e4m3;
  EXPECT_DOUBLE_EQ(attention_bytes(f), 2 * 32 * (1 + 2) + 2 * 140 * 16);
}

RowSetup decode_setup() {
  RowSetup s;
  s.point_id = "decode";
  s.backend = "fa3";
  s.problem.batch = 8, s.problem.heads = 32, s.problem.kv_heads = 8, s.problem.head_dim = 128;
  s.problem.seq_len = 1, s.problem.seq_len_kv = 32768;
  s.problem.device = Device::cuda;
  s.modes = {TimingMode::graph};
  s.peak_tflops = 800;
  s.bandwidth_gbps = 4000;
  return s;
}

PassResults timed_at(double ms) {
  PassResults r;
  TimingResult t;
  t.mode = TimingMode::graph;
  t.calls_per_sample = 10;
  t.summary = summarize({ms, ms, ms});
  t.samples = {ms, ms, ms};
  t.converged = true;
  r.timing.push_back({TimingMode::graph, t, std::nullopt});
  return r;
}

TEST(Lengths, ARowIsJudgedByBandwidthAndSaysWhichRoofItIsUnder) {
  const RowSetup s = decode_setup();
  const double gbytes = attention_bytes(s.problem) / 1e9;  // ~1.07 GB of cache
  const Row row = assemble_records(s, timed_at(gbytes / 4000 * 1e3 / 0.9)).rows.at(0);
  EXPECT_DOUBLE_EQ(*row.gbytes, gbytes);
  EXPECT_NEAR(*row.tb_per_s, 3.6, 1e-9);
  EXPECT_NEAR(*row.pct_of_bandwidth, 90, 1e-9);
  EXPECT_EQ(row.bound, "memory");  // 1 FLOP per byte, far below the ridge of 200
  EXPECT_EQ(row.flags.find("above_bandwidth"), std::string::npos);
  EXPECT_EQ(*row.total_kv_tokens, 8 * 32768);
  // Faster than the bandwidth allows: flagged, and not flagged just under it.
  EXPECT_NE(assemble_records(s, timed_at(gbytes / 4000 * 1e3 * 0.95))
                .rows[0]
                .flags.find("above_bandwidth"),
            std::string::npos);
  EXPECT_EQ(assemble_records(s, timed_at(gbytes / 4000 * 1e3 * 1.01))
                .rows[0]
                .flags.find("above_bandwidth"),
            std::string::npos);
  // A long causal prefill is compute bound: hundreds of FLOP per byte.
  RowSetup prefill = s;
  prefill.problem.seq_len = 32768;
  EXPECT_EQ(assemble_records(prefill, timed_at(10)).rows[0].bound, "compute");
  // Without a measured bandwidth there is no judgement.
  RowSetup blind = s;
  blind.bandwidth_gbps.reset();
  const Row none = assemble_records(blind, timed_at(1)).rows[0];
  EXPECT_FALSE(none.pct_of_bandwidth);
  EXPECT_EQ(none.bound, "");
  EXPECT_TRUE(none.tb_per_s);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// A histogram file's buckets at their bounds: LO .. HI-1 drawn, HI never; a bucket one length wide
// (HI = LO + 1) draws only LO; HI equal to LO, or below it, is refused at its line; a weight of 0 is
// a bucket never drawn, a negative one refused, and no bucket weighing above 0 is no histogram.
TEST(Lengths, AHistogramBucketIsLoUpToHiExcludedAndEmptyOnesAreRefused) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnbench-buckets";
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  auto refused = [&](const char* name, const std::string& text, const std::string& says) {
    try {
      read_length_histogram(write(name, text));
      ADD_FAILURE() << name << " was read";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << name << ": " << e.what();
    }
  };
  // HI == LO: an empty bucket, refused on its own line (the second); HI < LO too.
  refused("equal.csv", "1,10,1\n20,20,1\n", "equal.csv:2: needs LO < HI");
  refused("below.csv", "1,10,1\n30,29,1\n", "below.csv:2: needs LO < HI");
  refused("equal-first.csv", "7,7,1\n", "equal-first.csv:1: needs LO < HI");
  refused("negative-weight.csv", "1,10,1\n10,20,-0.5\n", "negative-weight.csv:2");
  refused("all-zero.csv", "1,10,0\n10,20,0\n", "no bucket with a weight above 0");
  // One length wide: HI = LO + 1 is read, and draws LO alone.
  const auto one = read_length_histogram(write("one.csv", "7,8,1\n"));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].lo, 7);
  EXPECT_EQ(one[0].hi, 8);
  EXPECT_EQ(one[0].weight, 1);
  for (int64_t x : draw_lengths(parse_length_spec("histogram(one.csv)"), 64, 3, dir.string()))
    EXPECT_EQ(x, 7);
  // Three lengths wide: 5, 6 and 7 each drawn, never 4 or 8.
  write("three.csv", "5,8,2\n");
  const auto three = draw_lengths(parse_length_spec("histogram(three.csv)"), 600, 9, dir.string());
  std::map<int64_t, int> seen;
  for (int64_t x : three) ++seen[x];
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_GT(seen[5], 100);
  EXPECT_GT(seen[6], 100);
  EXPECT_GT(seen[7], 100);
  // A zero-weight bucket at either end is read and never drawn.
  const auto ends = read_length_histogram(write("ends.csv", "1,5,0\n100,104,1\n500,504,0\n"));
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[2].weight, 0);
  for (int64_t x : draw_lengths(parse_length_spec("histogram(ends.csv)"), 400, 4, dir.string()))
    EXPECT_TRUE(x >= 100 && x < 104) << x;
}

// The weights are the buckets' shares, whatever their order and scale: 1, 2 and 5 of 8 draw an
// eighth, a quarter and five eighths of the lengths; the same weights times 1000 draw the same.
TEST(Lengths, AHistogramsWeightsAreEachBucketsShare) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnbench-buckets";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "shares.csv") << "300,400,5\n1,100,1\n100,300,2\n";
  std::ofstream(dir / "scaled.csv") << "300,400,5000\n1,100,1000\n100,300,2000\n";
  const int n = 8000;
  const auto lens = draw_lengths(parse_length_spec("histogram(shares.csv)"), n, 21, dir.string());
  int low = 0, mid = 0, high = 0;
  for (int64_t x : lens) {
    ASSERT_TRUE(x >= 1 && x < 400) << x;
    (x < 100 ? low : x < 300 ? mid : high)++;
  }
  EXPECT_NEAR(low / double(n), 1.0 / 8, 0.02);
  EXPECT_NEAR(mid / double(n), 2.0 / 8, 0.02);
  EXPECT_NEAR(high / double(n), 5.0 / 8, 0.02);
  EXPECT_EQ(draw_lengths(parse_length_spec("histogram(scaled.csv)"), n, 21, dir.string()), lens);
}

}  // namespace
}  // namespace attnbench
