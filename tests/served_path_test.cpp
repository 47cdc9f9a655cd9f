// FlashInfer's served path (plugins/flashinfer/served.cu): its batch prefill kernel over a paged
// cache with attnbench's variant, for what 2026's engines serve: 2-8 queries a sequence, attention
// sinks, fp8_e4m3 caches, GQA groups its decode kernel lacks. On the CPU: which points it takes and
// each refusal's reason, on both sides of each rule. On a GPU: each form `ok` against float64.
#include "gpu_support.hpp"
#include "test_support.hpp"

#include "../plugins/flashinfer/kernels.hpp"  // host code only: first_page

#include <c10/core/InferenceMode.h>

namespace attnbench {
namespace {

bool flashinfer_built() { return test::plugins().find("flashinfer") != nullptr; }

// A bf16 decode on the GPU: `queries` a sequence against `seq_len_kv` keys; gpt-oss's width.
Problem decode(int64_t queries = 1, int64_t head_dim = 64, int64_t heads = 8,
               int64_t kv_heads = 1, int64_t seq_len_kv = 4096) {
  return test::with_kv(test::problem(2, heads, queries, head_dim, DType::bf16, true, Device::cuda),
                       kv_heads, seq_len_kv);
}

// One field changed each.
Problem with_sinks(Problem p) {
  p.sinks = true;
  return p;
}
Problem fp8_cache(Problem p) {
  p.kv_dtype = DType::fp8_e4m3;
  return p;
}
Problem paged(Problem p, std::vector<int64_t> kv_lens = {}) {
  p.kv_layout = KvLayout::paged, p.page_size = 16, p.page_order = PageOrder::shuffled;
  p.kv_lens = std::move(kv_lens);
  return p;
}
Problem windowed(Problem p, int64_t left) {
  p.window_left = left, p.window_right = p.causal ? 0 : -1;
  return p;
}
Problem ragged(Problem p, std::vector<int64_t> lens) {
  p.q_lens = p.kv_lens = std::move(lens);
  return p;
}

Support fi(const Problem& p) { return test::backend("flashinfer").supports(p); }

void expect_refused(const Problem& p, const std::string& words) {
  const Support s = fi(p);
  EXPECT_FALSE(s.supported) << words;
  EXPECT_NE(s.reason.find(words), std::string::npos) << s.reason;
}

TEST(ServedPath, TakesTheCompiledInstancesAndNamesTheMissingOne) {
  if (!flashinfer_built()) GTEST_SKIP() << "skipped: flashinfer not built here";
  EXPECT_TRUE(fi(with_sinks(decode())).supported);
  EXPECT_TRUE(fi(windowed(with_sinks(decode()), 127)).supported);
  expect_refused(with_sinks(decode(1, 128)),
                 "no FlashInfer batch prefill kernel compiled for head_dim 128 with sinks (");
  EXPECT_TRUE(fi(fp8_cache(decode(1, 128))).supported);
  EXPECT_TRUE(fi(fp8_cache(decode(1, 256))).supported);
  expect_refused(fp8_cache(decode(1, 64)), "head_dim 64 over an fp8_e4m3 cache (");
  EXPECT_TRUE(fi(windowed(fp8_cache(decode(1, 128)), 1023)).supported);
  expect_refused(windowed(fp8_cache(decode(1, 256)), 1023),
                 "head_dim 256 with a window over an fp8_e4m3 cache");
  expect_refused(fp8_cache(with_sinks(decode(1, 64))), "with sinks over an fp8_e4m3 cache");
}

TEST(ServedPath, TakesGqaGroupsTheDecodeKernelLacks) {
  if (!flashinfer_built()) GTEST_SKIP() << "skipped: flashinfer not built here";
  // GLM-4.6 at TP8: 12 query heads to 1 kv head; the decode kernel dispatches 1-4, 6, 8, 16.
  EXPECT_TRUE(fi(decode(1, 128, 12, 1)).supported);
  EXPECT_TRUE(fi(paged(decode(1, 128, 12, 1), {4096, 100})).supported);
  EXPECT_TRUE(fi(decode(1, 128, 5, 1)).supported);
  expect_refused(decode(1, 64, 5, 1),
                 "head_dim 64 (nor a decode kernel for GQA groups of 5) (ATTNBENCH_FLASHINFER");
  EXPECT_TRUE(fi(decode(1, 64, 8, 1)).supported);  // the decode kernel's group
}

TEST(ServedPath, SeveralQueriesASequenceComePackedAndCausal) {
  if (!flashinfer_built()) GTEST_SKIP() << "skipped: flashinfer not built here";
  for (int64_t queries : {2, 4, 8}) {
    EXPECT_TRUE(fi(paged(decode(queries, 128), {4096, 300})).supported) << queries;
    EXPECT_TRUE(fi(fp8_cache(paged(decode(queries, 128), {4096, 300}))).supported) << queries;
    EXPECT_TRUE(fi(with_sinks(paged(decode(queries)))).supported) << queries;
  }
  Problem full = paged(decode(4, 128));
  full.causal = false;
  expect_refused(full, "is compiled here with the causal mask only");
  full.seq_len = 1;  // one query sees every key: the causal kernel is the same
  EXPECT_TRUE(fi(full).supported);
  // Uniform rows of 2+ queries are not packed; ragged ones are, with a contiguous cache too.
  expect_refused(with_sinks(decode(2)), "takes packed query rows");
  EXPECT_TRUE(fi(with_sinks(decode(1))).supported);
  EXPECT_TRUE(fi(with_sinks(ragged(decode(300, 64, 8, 1, 300), {300, 17}))).supported);
  EXPECT_TRUE(fi(windowed(with_sinks(ragged(decode(300, 64, 8, 1, 300), {300, 17})), 127)).supported);
}

TEST(ServedPath, RefusesWhatItsVariantDoesNotApply) {
  if (!flashinfer_built()) GTEST_SKIP() << "skipped: flashinfer not built here";
  Problem capped = with_sinks(decode());
  capped.softcap = 30;
  expect_refused(capped, "is compiled here without softcap");
  Problem right = with_sinks(ragged(decode(300, 64, 8, 1, 300), {300, 17}));
  right.causal = false, right.window_left = 127, right.window_right = 1;
  expect_refused(right, "takes a window's left bound only");
  right.causal = true, right.window_right = 0;  // causal: the right bound is the diagonal
  EXPECT_TRUE(fi(right).supported);
}

// A windowed sequence is handed over from the page of the first key its first query sees: for
// several queries the first one's window decides, not the last one's; on both sides of the edge
// where the window reaches key 0.
TEST(ServedPath, AWindowedSequenceStartsAtItsFirstQuerysFirstKey) {
  using flashinfer_kernels::first_page;
  EXPECT_EQ(first_page(4096, 1, 127, 16), 248);  // key 3968 = page 248's first
  EXPECT_EQ(first_page(4096, 2, 127, 16), 247);  // key 3967: the first of 2 queries sees it
  EXPECT_EQ(first_page(4096, 4, 1023, 16), 191);  // key 3069
  EXPECT_EQ(first_page(700, 700, 127, 1), 0);     // a prefill: its first query sees key 0
  EXPECT_EQ(first_page(700, 1, 127, 1), 572);     // a decode over packed rows (pages of one key)
  EXPECT_EQ(first_page(128, 1, 127, 16), 0);      // the window reaches key 0 exactly
  EXPECT_EQ(first_page(129, 1, 127, 16), 0);      // key 1, still on page 0
  EXPECT_EQ(first_page(145, 1, 127, 16), 1);      // key 17: page 1
  EXPECT_EQ(first_page(4096, 1, -1, 16), 0);      // no window
}

// On a GPU: each form the served path runs, `ok` within the row's tolerance, with what it read.
TEST(GpuServed, FlashInferRunsEachServedFormRight) {
  REQUIRE_CUDA();
  if (!flashinfer_built()) GTEST_SKIP() << "skipped: flashinfer not built here";
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  const std::vector<std::pair<const char*, Problem>> points = {
      {"sinks, decode", with_sinks(decode(1, 64, 8, 1, 8192))},
      {"sinks, window 128, 2 queries paged", windowed(with_sinks(paged(decode(2), {4096, 333})), 127)},
      {"sinks, ragged prefill", with_sinks(ragged(decode(700, 64, 8, 1, 700), {700, 129}))},
      {"sinks, window 128, ragged prefill",
       windowed(with_sinks(ragged(decode(700, 64, 8, 1, 700), {700, 129})), 127)},
      {"fp8 cache, decode", fp8_cache(decode(1, 128, 8, 1, 8192))},
      {"fp8 cache, 4 queries paged", fp8_cache(paged(decode(4, 128), {4096, 333}))},
      {"fp8 cache, d256, paged", fp8_cache(paged(decode(1, 256, 4, 1), {4096, 333}))},
      {"fp8 cache, window 1024, 4 queries paged",
       windowed(fp8_cache(paged(decode(4, 128, 4, 2), {4096, 333})), 1023)},
      {"bf16, 4 queries paged, group 12", paged(decode(4, 128, 12, 1), {4096, 333})},
      {"bf16, decode, group 5", decode(1, 128, 5, 1)},
      {"bf16, 8 queries paged, group 16", paged(decode(8, 128, 16, 1), {4096, 333})},
  };
  const LoadedBackend* flashinfer = test::plugins().find("flashinfer");
  for (const auto& [what, p] : points) {
    const BackendRecords r = runner.measure({p, point_id(p)}, *flashinfer);
    ASSERT_FALSE(r.rows.empty()) << what;
    const Row& row = r.rows[0];
    std::cout << "[ measured ] flashinfer " << what << ": " << to_string(row.status) << " "
              << (row.rel_err ? "rel_err " + std::to_string(*row.rel_err) + " " : "")
              << row.reason << "\n";
    EXPECT_EQ(row.status, Status::ok) << what << ": " << row.reason;
  }
}

}  // namespace
}  // namespace attnbench
