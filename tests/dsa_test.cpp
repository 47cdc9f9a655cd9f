// DeepSeek sparse attention (kind dsa): the sweep's points (MLA's widths shared, its own top-k and
// index pattern), the indices drawn (distinct, visible, the valid first, -1 after; uniform, recent
// and replayed), moved before each timed sample and still valid, the textbook backends against the
// float64 reference in every layout and cache dtype, the errors a kernel makes (the indices
// ignored, read one off) caught and named, and the work model over the selected tokens alone.
#include "base/errors.hpp"
#include "config/sweep.hpp"
#include "kinds/problem.hpp"
#include "kinds/problem_kind.hpp"
#include "gpu_support.hpp"
#include "kinds/variant.hpp"
#include "test_support.hpp"

#include <c10/core/InferenceMode.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace attnbench {
namespace {

using test::backend;

constexpr double kExact = 1e-5;  // float32 against float64

std::vector<Point> points_of(const std::string& yaml, const std::string& file = "dsa.yaml") {
  return expand_sweep(parse_config(yaml, file), false);
}

// A DSA point on the CPU: `queries` a sequence over paged caches of `kv_lens`, top-k `topk`,
// float32 unless told.
Problem dsa(int64_t queries, const std::string& kv_lens, int64_t topk, const std::string& more = "") {
  const std::vector<Point> points = points_of(
      "sweep:\n  kind: dsa\n  heads: 8\n  dtype: fp32\n  qk_nope_head_dim: 32\n"
      "  qk_rope_head_dim: 16\n  kv_lora_rank: 64\n  kv_layout: paged\n  page_size: 4\n"
      "  page_order: shuffled\n  seq_len: " +
      std::to_string(queries) + "\n  seq_lens_kv: \"" + kv_lens + "\"\n  batch: 3\n  index_topk: " +
      std::to_string(topk) + "\n" + more);
  return points.at(0).problem;
}

TEST(Dsa, ItsPointsShareMlasWidthsAndDeriveTheLatentForm) {
  const std::vector<Point> points = points_of(
      "sweep:\n  kind: dsa\n  heads: 16\n  seq_len: [1, 2]\n  seq_len_kv: 8192\n"
      "  kv_layout: paged\n  page_size: 64\n  index_pattern: [uniform, recent, recent(128)]\n");
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0].id, "dsa-b1-h16-s1-skv8192-bf16-cpu-paged64-nope128-rope64-latent512-topk2048");
  EXPECT_EQ(points[1].id, points[0].id + "-recent");
  EXPECT_EQ(points[2].id, points[0].id + "-recent128");
  const Problem& p = points[0].problem;
  EXPECT_EQ(p.head_dim, 576);
  EXPECT_EQ(p.head_dim_v, 512);
  EXPECT_EQ(p.kv_heads, 1);
  EXPECT_TRUE(p.v_in_k);
  EXPECT_DOUBLE_EQ(p.scale, 1.0 / std::sqrt(192.0));
  EXPECT_EQ(p.variant_names(), std::vector<std::string>{"paged"});  // rope: checked, not declared
  const Field<Problem>* rope = find_problem_field("qk_rope_head_dim");
  ASSERT_NE(rope, nullptr);
  EXPECT_EQ(rope->kinds, (std::vector<std::string>{"mla", "dsa"}));
  EXPECT_EQ(find_problem_field("index_topk")->kinds,
            (std::vector<std::string>{"dsa", "dsa_indexer"}));  // the indexer's top-k too
  EXPECT_EQ(field_text(find_problem_field("index_topk")->get(p)), "2048");
  Problem mla = p;
  mla.kind = "mla";
  EXPECT_EQ(field_text(find_problem_field("index_topk")->get(mla)), "");  // another kind's
}

TEST(Dsa, WhatItCannotMakeIsALocatedError) {
  auto refused_at = [](const std::string& more, const std::string& key, const std::string& says) {
    try {
      parse_config("sweep:\n  kind: dsa\n  seq_len: 4\n  seq_len_kv: 64\n" + more, "dsa.yaml");
      ADD_FAILURE() << "accepted: " << more;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), key) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused_at("  causal: false\n", "sweep.causal", "kind dsa derives causal");
  refused_at("  direction: bwd\n", "sweep.direction", "kind dsa derives direction");
  refused_at("  index_topk: 0\n", "sweep.index_topk", "must be at least 1, got 0");
  refused_at("  index_topk: 1048577\n", "sweep.index_topk", "from 1 to 1048576, not 1048577");
  refused_at("  index_topk: 64\n  index_pattern: recent(65)\n", "sweep.index_pattern",
             "more recent tokens than index_topk 64");
  refused_at("  index_pattern: latest\n", "sweep.index_pattern", "uniform, recent, recent(N)");
  refused_at("  index_pattern: recent(0)\n", "sweep.index_pattern", "uniform, recent, recent(N)");
  refused_at("  index_pattern: file(no-such-file.txt)\n", "sweep.index_pattern", "no index file");
  refused_at("  v_head_dim: 128\n", "sweep.v_head_dim", "v_head_dim is a field of kind mla, not of dsa");
  refused_at("  kv_heads: 2\n", "sweep.kv_heads", "kind dsa derives kv_heads");
  refused_at("  window: [4, 0]\n", "sweep.window", "window is a field of kind attention");
  // 64 equals index_topk: recent(64) is all of them
  EXPECT_NO_THROW(parse_config("sweep:\n  kind: dsa\n  seq_len: 4\n  seq_len_kv: 64\n"
                               "  index_topk: 64\n  index_pattern: recent(64)\n",
                               "dsa.yaml"));
}

// Each row's indices: distinct, at or before its position, as many as it sees up to top-k, the
// valid ones first and -1 after.
void expect_valid(const InputTensors& in) {
  const Problem& p = in.problem;
  const at::Tensor indices = in.input("indices").cpu();
  const int64_t topk = indices.size(-1);
  const at::Tensor rows = indices.reshape({-1, topk});
  int64_t r = 0;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t i = 0; i < p.q_len(b); ++i, ++r) {
      const int64_t pos = p.kv_len(b) - p.q_len(b) + i;
      const int64_t count = std::min(topk, pos + 1);
      std::set<int64_t> seen;
      for (int64_t j = 0; j < topk; ++j) {
        const int64_t x = rows[r][j].item<int>();
        if (j < count) {
          EXPECT_GE(x, 0) << "row " << r;
          EXPECT_LE(x, pos) << "row " << r;
          EXPECT_TRUE(seen.insert(x).second) << "row " << r << " repeats " << x;
        } else {
          EXPECT_EQ(x, -1) << "row " << r << " entry " << j;
        }
      }
    }
  EXPECT_EQ(r, rows.size(0));
}

TEST(Dsa, EachRowSelectsDistinctVisibleTokensTheValidFirst) {
  c10::InferenceMode guard;
  // Sequences of 5, 40 and 3 keys, 2 queries each, top 8: the short ones pad with -1.
  const Problem p = dsa(2, "5,40,3", 8);
  InputTensors in = make_inputs(p, 3);
  const at::Tensor& indices = in.input("indices");
  EXPECT_EQ(indices.sizes(), (c10::IntArrayRef{6, 8}));
  EXPECT_EQ(indices.scalar_type(), at::kInt);
  expect_valid(in);
  EXPECT_EQ(in.input("indices")[0][4].item<int>(), -1);  // position 3 sees 4 tokens
  EXPECT_NE(in.input("indices")[1][4].item<int>(), -1);  // position 4 sees 5
  // In no particular order: some row is not sorted.
  bool unsorted = false;
  for (int64_t r = 2; r < 4; ++r)
    unsorted |= !at::equal(indices[r], std::get<0>(indices[r].sort()));
  EXPECT_TRUE(unsorted);
  // Moved before a timed sample: other tokens, still valid.
  const at::Tensor drawn = indices.clone();
  const std::vector<InputPrint> before = input_prints(in);
  move_inputs(in, 5);
  expect_valid(in);
  EXPECT_FALSE(at::equal(in.input("indices").narrow(0, 2, 2), drawn.narrow(0, 2, 2)));
  EXPECT_NE(changed_input(before, input_prints(in)), "");
  // The same seed draws the same indices: every backend of a run sees one batch.
  EXPECT_TRUE(at::equal(make_inputs(p, 3).input("indices"), drawn));
  EXPECT_FALSE(at::equal(make_inputs(p, 4).input("indices"), drawn));
}

TEST(Dsa, RecentAndReplayedPatternsChooseWhatTheySay) {
  c10::InferenceMode guard;
  const InputTensors recent =
      make_inputs(dsa(1, "100,100,100", 16, "  index_pattern: recent(6)\n"), 1);
  expect_valid(recent);
  for (int64_t r = 0; r < 3; ++r) {
    std::set<int64_t> chosen;
    for (int64_t j = 0; j < 16; ++j) chosen.insert(recent.input("indices")[r][j].item<int>());
    for (int64_t d = 0; d < 6; ++d) EXPECT_TRUE(chosen.count(99 - d)) << "row " << r << " d " << d;
  }
  // A replayed file: distances back from the query, the best first; the first row's four.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnbench-dsa-test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "replay.txt");
    f << "# distances back from the query\n0, 2, 50, 99\n1 3 5\n";
  }
  const std::vector<Point> points = points_of(
      "sweep:\n  kind: dsa\n  heads: 8\n  dtype: fp32\n  qk_nope_head_dim: 32\n"
      "  qk_rope_head_dim: 16\n  kv_lora_rank: 64\n  seq_len: 2\n  seq_len_kv: 60\n  batch: 2\n"
      "  index_topk: 8\n  index_pattern: file(replay.txt)\n",
      (dir / "dsa.yaml").string());
  const Problem& p = points.at(0).problem;
  ASSERT_NE(p.extra_text("index_pattern"), nullptr);
  EXPECT_NE(p.extra_text("index_pattern")->find((dir / "replay.txt").string()), std::string::npos);
  const InputTensors in = make_inputs(p, 2);
  expect_valid(in);
  const at::Tensor rows = in.input("indices").reshape({-1, 8});  // uniform: [batch, seq_len, 8]
  std::set<int64_t> first;
  for (int64_t j = 0; j < 8; ++j) first.insert(rows[0][j].item<int>());
  // Row 0 stands at position 58: distances 0, 2, 50 (99 is past the sequence's start).
  for (int64_t x : {58, 56, 8}) EXPECT_TRUE(first.count(x)) << x;
  std::set<int64_t> second;  // row 1 at 59: the file's second line
  for (int64_t j = 0; j < 8; ++j) second.insert(rows[1][j].item<int>());
  for (int64_t x : {58, 56, 54}) EXPECT_TRUE(second.count(x)) << x;
  // (remove_all crashed here, in a test process that links LibTorch: each file, then the folder)
  std::filesystem::remove(dir / "replay.txt");
  std::filesystem::remove(dir);
}

// A sweep of one DSA point on the CPU: the defaults below, each key of `changed` replacing its
// default (an empty value leaves the key out).
Problem dsa_point(const std::map<std::string, std::string>& changed) {
  std::map<std::string, std::string> keys = {
      {"kind", "dsa"},          {"heads", "8"},           {"dtype", "fp32"},
      {"qk_nope_head_dim", "32"}, {"qk_rope_head_dim", "16"}, {"kv_lora_rank", "64"},
      {"kv_layout", "paged"},   {"page_size", "4"},       {"page_order", "shuffled"},
      {"seq_len", "1"},         {"seq_lens_kv", "\"5,40,13\""}, {"batch", "3"},
      {"index_topk", "8"}};
  for (const auto& [key, value] : changed) keys[key] = value;
  std::string yaml = "sweep:\n";
  for (const auto& [key, value] : keys)
    if (!value.empty()) yaml += "  " + key + ": " + value + "\n";
  return points_of(yaml).at(0).problem;
}

TEST(Dsa, TheTextbookBackendsAreRightInEveryLayoutAndCache) {
  c10::InferenceMode guard;
  const std::string contiguous = "contiguous";
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> cases = {
      {"decode, paged", {}},
      {"two queries", {{"seq_len", "2"}}},
      {"packed contiguous", {{"kv_layout", contiguous}, {"page_size", ""}, {"page_order", ""}}},
      {"uniform",
       {{"kv_layout", contiguous}, {"page_size", ""}, {"page_order", ""}, {"seq_lens_kv", ""},
        {"seq_len_kv", "37"}, {"seq_len", "3"}}},
      {"prefill", {{"seq_len", ""}, {"seq_lens", "\"9,30,12\""}, {"seq_lens_kv", "\"9,30,12\""}}},
      {"recent", {{"index_pattern", "recent"}}},
  };
  for (const auto& [what, changed] : cases) {
    const Problem p = dsa_point(changed);
    const InputTensors in = make_inputs(p, 5);
    for (const char* name : {"naive", "inplace"}) {
      ASSERT_TRUE(declared_support(backend(name), p).supported) << name << " " << what;
      ASSERT_TRUE(backend(name).supports(p).supported) << name << " " << what;
      const at::Tensor out = backend(name).forward(in.view());
      EXPECT_EQ(out.sizes(), at::IntArrayRef(output_sizes(in))) << name << " " << what;
      EXPECT_LT(forward_error(in, out).judged(), kExact) << name << " " << what;
    }
  }
}

// What a kernel computes that reads `wrong` indices: naive on the same inputs with them in place.
at::Tensor naive_with(const InputTensors& in, const at::Tensor& indices) {
  InputTensors wrong = in;
  wrong.set_input("indices", indices);
  return backend("naive").forward(wrong.view());
}

double bf16_tolerance(Problem p) {
  p.dtype = DType::bf16;
  return point_tolerance(default_tolerances().at(DType::bf16), p);
}

const VariantCheck* check_named(const std::vector<VariantCheck>& checks, const std::string& name) {
  for (const VariantCheck& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(Dsa, IndicesIgnoredOrReadOneOffAreCaughtAndNamed) {
  c10::InferenceMode guard;
  const Problem p = dsa(2, "300,500,400", 32);
  const InputTensors in = make_inputs(p, 6);
  const at::Tensor indices = in.input("indices");
  const double tolerance = bf16_tolerance(p);
  // Right: every check's reference moves past 4 tolerances and the output is nearest its own.
  const std::vector<VariantCheck> right = check_variants(in, naive_with(in, indices));
  for (const char* name : {"indices", "indices+1", "indices-1", "rope"}) {
    const VariantCheck* c = check_named(right, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_GT(c->moved, kVariantMovesTolerances * tolerance) << name;
    EXPECT_LT(c->off_with, c->off_without) << name;
  }
  // Every token the query sees (indices ignored): the dense reference; it names itself.
  const std::vector<int64_t> positions = {299, 300, 499, 500, 399, 400};  // each row's
  const at::Tensor pos = at::tensor(positions, at::kLong).unsqueeze(1);
  const at::Tensor every = at::arange(500, at::kLong).unsqueeze(0);
  const at::Tensor ignored =
      naive_with(in, at::where(every <= pos, every, at::full_like(every, -1)).to(at::kInt));
  EXPECT_GT(forward_error(in, ignored).rel_err, tolerance);
  const VariantCheck* named = check_named(check_variants(in, ignored), "indices");
  ASSERT_NE(named, nullptr);
  EXPECT_LT(named->off_without, named->off_with);
  EXPECT_EQ(named->verdict, "indices ignored");
  // One token late, one early: each nearer its own misreading.
  const at::Tensor valid = indices >= 0;
  for (int64_t by : {1, -1}) {
    const at::Tensor off =
        at::where(valid, (indices.to(at::kLong) + by).clamp(0).minimum(pos), indices.to(at::kLong))
            .to(at::kInt);
    const at::Tensor out = naive_with(in, off);
    EXPECT_GT(forward_error(in, out).rel_err, tolerance) << by;
    const VariantCheck* c = check_named(check_variants(in, out), by > 0 ? "indices+1" : "indices-1");
    ASSERT_NE(c, nullptr) << by;
    EXPECT_LT(c->off_without, c->off_with) << by;
  }
  // A kernel that drops the rope part of q·k is named too (the rope variant applies to dsa).
  InputTensors no_rope = in;
  no_rope.q = in.q.clone();
  no_rope.q.narrow(-1, p.head_dim - 16, 16).zero_();
  const VariantCheck* rope =
      check_named(check_variants(in, backend("naive").forward(no_rope.view())), "rope");
  ASSERT_NE(rope, nullptr);
  EXPECT_LT(rope->off_without, rope->off_with);
}

TEST(Dsa, AnFp8CacheUnderItsScaleIsRightAndTheScaleChecked) {
  c10::InferenceMode guard;
  const Problem p = dsa_point({{"dtype", "bf16"}, {"kv_dtype", "fp8_e4m3"}, {"index_topk", "32"},
                               {"seq_lens_kv", "\"200,300,64\""}});
  ASSERT_TRUE(p.fp8_kv());
  EXPECT_EQ(p.variant_names(), (std::vector<std::string>{"ragged", "paged", "fp8_kv"}));
  const InputTensors in = make_inputs(p, 8);
  EXPECT_EQ(in.k.scalar_type(), at::kFloat8_e4m3fn);
  EXPECT_NE(in.k_scale, 1.0);
  EXPECT_EQ(in.v_scale, in.k_scale);  // one latent cache, one scale
  EXPECT_EQ(backend("naive").supports(p).feed, "the fp8 cache dequantized to q's dtype in the call");
  const at::Tensor out = backend("naive").forward(in.view());
  EXPECT_LT(forward_error(in, out).judged(), point_tolerance(default_tolerances().at(DType::bf16), p));
  InputTensors unscaled = in;
  unscaled.k_scale = unscaled.v_scale = 1;
  EXPECT_GT(forward_error(in, backend("naive").forward(unscaled.view())).rel_err, 0.1);
}

TEST(Dsa, ItsWorkIsTheSelectedTokensAlone) {
  // Sequences of 3000 and 1000 keys, 2 queries each, top 2048: rows at positions 2998, 2999 select
  // 2048 each, rows at 998 and 999 select 999 and 1000.
  Problem p = dsa(2, "3000,1000,3000", 2048);
  p.heads = 16, p.dtype = DType::bf16, p.mla = MlaShape{};
  p.mla.absorbed = true;
  kind_of(p).complete(p);
  const double selected = 2048 * 2 + 999 + 1000 + 2048 * 2;
  EXPECT_DOUBLE_EQ(point_flop(p), 2.0 * 16 * (576 + 512) * selected);
  const double rows = 6, pages = 750 + 250 + 750;
  EXPECT_DOUBLE_EQ(point_bytes(p), rows * 16 * 576 * 2 + rows * 16 * 512 * 2 + selected * 1152 +
                                       rows * 2048 * 4 + pages * 4);
  p.kv_dtype = DType::fp8_e4m3;  // 576 bytes a selected token
  EXPECT_DOUBLE_EQ(point_bytes(p), rows * 16 * 576 * 2 + rows * 16 * 512 * 2 + selected * 576 +
                                       rows * 2048 * 4 + pages * 4);
  // The tolerance follows the softmax's reduction (at most top-k tokens), not the cache.
  Problem wide = p;
  wide.seq_len_kv = 131072;
  EXPECT_DOUBLE_EQ(point_tolerance(0.02, wide), point_tolerance(0.02, [&] {
                     Problem q = p;
                     q.seq_len_kv = 2048;
                     return q;
                   }()));
}

// A backend that misreads its indices (the dsa_blind probe) reads `wrong` through the runner, the
// reason naming what it misread; unset, the same probe is `ok`.
class Misread {
 public:
  explicit Misread(const char* how) { setenv("ATTNBENCH_DSA_MISREAD", how, 1); }
  ~Misread() { unsetenv("ATTNBENCH_DSA_MISREAD"); }
};

const LoadedBackend& dsa_blind() {
  static const PluginSet faulty = load_plugins(ATTNBENCH_FAULTY_PLUGIN_DIR);
  const LoadedBackend* b = faulty.find("dsa_blind");
  if (!b) throw std::runtime_error("the dsa_blind probe is not built");
  return *b;
}

Row measured(const Problem& p) {
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  const BackendRecords r = runner.measure({p, point_id(p)}, dsa_blind());
  if (r.rows.empty()) throw std::runtime_error("no row");
  return r.rows[0];
}

TEST(Dsa, AProbeThatMisreadsItsIndicesIsWrongAndNamedThroughTheRunner) {
  const Problem p = dsa(2, "300,500,400", 32);
  {
    const Row right = measured(p);
    EXPECT_EQ(right.status, Status::ok) << right.reason;
    EXPECT_NE(right.variant_moves.find("indices:"), std::string::npos) << right.variant_moves;
    EXPECT_NE(right.variant_moves.find("indices+1:"), std::string::npos) << right.variant_moves;
  }
  for (const auto& [how, says] : {std::pair{"ignore", "indices ignored"},
                                  {"late", "indices read one token late"},
                                  {"early", "indices read one token early"}}) {
    const Misread misread(how);
    const Row row = measured(p);
    EXPECT_EQ(row.status, Status::wrong) << how;
    EXPECT_NE(row.reason.find(says), std::string::npos) << how << ": " << row.reason;
  }
}

// On a GPU: every DSA backend at a decode (1 and 2 queries, bf16 and fp8 caches) and a prefill,
// right or saying why not; the probe's misreadings wrong.
TEST(GpuDsa, EveryBackendIsRightOrSaysWhyNotAndTheMisreadingsAreWrong) {
  REQUIRE_CUDA();
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  auto on_gpu = [](Problem p, bool fp8 = false) {
    p.dtype = DType::bf16, p.device = Device::cuda, p.heads = 16, p.mla = MlaShape{}, p.scale = 0;
    if (fp8) p.kv_dtype = DType::fp8_e4m3;
    kind_of(p).complete(p);
    mark_variants(p);
    return p;
  };
  Problem prefill = dsa(1, "3000,1000,3000", 2048);
  prefill.q_lens = prefill.kv_lens;
  prefill.seq_len = prefill.seq_len_kv;
  prefill.kv_layout = KvLayout::contiguous;
  const std::vector<std::pair<const char*, Problem>> points = {
      {"decode", on_gpu(dsa(1, "9000,3000,5000", 2048))},
      {"decode, 2 queries", on_gpu(dsa(2, "9000,3000,5000", 2048))},
      {"decode, fp8 cache", on_gpu(dsa(1, "9000,3000,5000", 2048), true)},
      {"prefill", on_gpu(prefill)},
  };
  const std::vector<const LoadedBackend*> backends =
      test::plugins_named({"naive", "flashinfer"});
  EXPECT_GT(test::expect_right_or_refused(runner, points, backends), 3);
  for (const char* how : {"ignore", "late"}) {
    const Misread misread(how);
    test::expect_right_or_refused(runner, {points[0]}, {&dsa_blind()}, {"dsa_blind"});
  }
}

// DSA's lightning indexer (kind dsa_indexer): a point of 8 index heads of 32 on the CPU over a
// paged index cache, the top `topk` of each row.
Problem indexer(const std::map<std::string, std::string>& changed = {}) {
  std::map<std::string, std::string> keys = {
      {"kind", "dsa_indexer"}, {"heads", "8"},           {"head_dim", "32"},
      {"dtype", "fp32"},       {"kv_layout", "paged"},   {"page_size", "4"},
      {"page_order", "shuffled"}, {"seq_len", "2"},      {"seq_lens_kv", "\"50,9,120\""},
      {"batch", "3"},          {"index_topk", "16"}};
  for (const auto& [key, value] : changed) keys[key] = value;
  std::string yaml = "sweep:\n";
  for (const auto& [key, value] : keys)
    if (!value.empty()) yaml += "  " + key + ": " + value + "\n";
  return points_of(yaml).at(0).problem;
}

TEST(DsaIndexer, ItsPointsSelectTheTopKOfAWeightedReluScore) {
  const Problem p = indexer();
  EXPECT_EQ(point_id(p), "dsa-indexer-b3-h8-s2-skv120-d32-fp32-cpu-kvlens-50-9-120-paged4-shuffled-topk16");
  EXPECT_EQ(p.kv_heads, 1);
  EXPECT_TRUE(p.causal);
  EXPECT_DOUBLE_EQ(p.scale, 1.0 / std::sqrt(32.0));
  EXPECT_EQ(find_problem_field("index_topk")->kinds, (std::vector<std::string>{"dsa", "dsa_indexer"}));
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(p, 3);
  EXPECT_EQ(in.input("weights").sizes(), (c10::IntArrayRef{6, 8}));
  EXPECT_EQ(output_sizes(in), (std::vector<int64_t>{6, 16}));
  for (const char* name : {"naive", "inplace"}) {
    ASSERT_TRUE(declared_support(backend(name), p).supported) << name;
    const at::Tensor out = backend(name).forward(in.view());
    EXPECT_EQ(out.scalar_type(), at::kInt) << name;
    const ReferenceError e = forward_error(in, out);
    EXPECT_LT(e.rel_err, 1e-9) << name;
    EXPECT_EQ(e.whole_rel_err, 0) << name;
  }
  // The second sequence (9 tokens) selects 8 and 9: -1 after them.
  const at::Tensor out = backend("naive").forward(in.view());
  EXPECT_EQ((out[2] >= 0).sum().item<int64_t>(), 8);
  EXPECT_EQ((out[3] >= 0).sum().item<int64_t>(), 9);
  EXPECT_EQ(out[3][9].item<int>(), -1);
  // Work: 2 x 8 heads x 32 per (row, token it sees); bytes: q, each sequence's keys once, the
  // weights, the selection and the page table.
  const double pairs = (49 + 50) + (8 + 9) + (119 + 120);
  EXPECT_DOUBLE_EQ(point_flop(p), 2.0 * 8 * 32 * pairs);
  EXPECT_DOUBLE_EQ(point_bytes(p), 6 * 8 * 32 * 4.0 + (50 + 9 + 120) * 32 * 4.0 + 6 * 8 * 4.0 +
                                       6 * 16 * 4.0 + (13 + 3 + 30) * 4.0);
}

TEST(DsaIndexer, TheTextbookIsRightInEveryLayoutAndInFp8) {
  c10::InferenceMode guard;
  for (const auto& changed : std::vector<std::map<std::string, std::string>>{
           {{"kv_layout", "contiguous"}, {"page_size", ""}, {"page_order", ""}},
           {{"kv_layout", "contiguous"}, {"page_size", ""}, {"page_order", ""},
            {"seq_lens_kv", ""}, {"seq_len_kv", "40"}},
           {{"dtype", "fp8_e4m3"}},
           {{"seq_len", ""}, {"seq_lens", "\"50,9,120\""}}}) {
    const Problem p = indexer(changed);
    const InputTensors in = make_inputs(p, 4);
    const ReferenceError e = forward_error(in, backend("naive").forward(in.view()));
    EXPECT_LT(e.rel_err, 1e-9) << point_id(p);
    EXPECT_EQ(e.whole_rel_err, 0) << point_id(p);
  }
}

TEST(DsaIndexer, ASelectionThatIgnoresTheWeightsOrTheReluOrIsInvalidIsCaught) {
  c10::InferenceMode guard;
  const Problem p = indexer({{"seq_lens_kv", "\"500,300,700\""}, {"index_topk", "32"}});
  const InputTensors in = make_inputs(p, 5);
  const double tolerance = point_tolerance(0.02, p);
  EXPECT_DOUBLE_EQ(tolerance, 1e-3);
  auto selected_with = [&](auto&& change) {
    InputTensors wrong = in;
    change(wrong);
    return backend("naive").forward(wrong.view());
  };
  // The weights ignored (all ones), or the ReLU dropped (scores below zero kept negative: a
  // plain weighted sum, as if the weights' signs were the ReLU's).
  EXPECT_GT(forward_error(in, selected_with([](InputTensors& w) {
              w.set_input("weights", at::ones_like(w.input("weights")));
            })).rel_err,
            tolerance);
  EXPECT_GT(forward_error(in, selected_with([](InputTensors& w) {
              w.set_input("weights", w.input("weights").abs());
            })).rel_err,
            tolerance);
  // Invalid selections: a token after the row's position, a token twice, unwritten.
  const at::Tensor right = backend("naive").forward(in.view());
  at::Tensor ahead = right.clone();
  ahead[1][0] = 600;  // the second row of a 500-token sequence stands at 499
  ReferenceError e = forward_error(in, ahead);
  EXPECT_EQ(e.whole_rel_err, 1);
  at::Tensor twice = right.clone();
  twice[0][1] = twice[0][0];
  e = forward_error(in, twice);
  EXPECT_GT(e.judged(), tolerance);
  at::Tensor unwritten = right.clone();
  poison(unwritten);
  EXPECT_EQ(forward_error(in, unwritten).whole_rel_err, 1);
  EXPECT_THROW(forward_error(in, right.to(at::kLong)), std::runtime_error);  // int32 only
}

}  // namespace
}  // namespace attnbench
