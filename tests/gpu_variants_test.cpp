// GPU checks of the served variants per backend: ragged batches, paged caches with a shuffled
// page table, sliding windows and softcap. Each case is one the backend runs (natively, or as its
// feed says) and must be correct against float64; the backends that cannot run it must say why.
// Skipped without a CUDA device; a plugin this build lacks, or FA3 without its library, is skipped
// with its own reason.
#include "kinds/problem.hpp"
#include "gpu_support.hpp"
#include "measure/runner.hpp"
#include "test_support.hpp"

#include <iostream>

namespace attnbench {
namespace {

using test::host;

Problem base(int64_t batch, int64_t heads, int64_t kv_heads, int64_t head_dim, bool causal) {
  Problem p = test::problem(batch, heads, 1, head_dim, DType::bf16, causal, Device::cuda);
  p.kv_heads = kv_heads;
  return p;
}

Problem ragged(Problem p, std::vector<int64_t> q_lens, std::vector<int64_t> kv_lens) {
  p.batch = static_cast<int64_t>(kv_lens.size());
  if (!q_lens.empty()) {
    p.q_lens = q_lens;
    p.seq_len = *std::max_element(q_lens.begin(), q_lens.end());
    p.seq_lens = "list";
  }
  p.kv_lens = kv_lens;
  p.seq_len_kv = *std::max_element(kv_lens.begin(), kv_lens.end());
  p.seq_lens_kv = "list";
  return p;
}

Problem paged(Problem p, int64_t page_size) {
  p.kv_layout = KvLayout::paged;
  p.page_size = page_size;
  p.page_order = PageOrder::shuffled;
  return p;
}

Problem window(Problem p, int64_t left, int64_t right = -1) {
  p.window_left = left;
  p.window_right = right;
  return p;
}

Problem softcap(Problem p, double cap) {
  p.softcap = cap;
  return p;
}

struct Case {
  const char* backend;
  const char* what;
  Problem problem;
};

std::vector<Case> cases() {
  const std::vector<int64_t> prompts{300, 1000, 17, 640};
  const Problem prefill = ragged(base(4, 16, 4, 128, true), prompts, prompts);
  const Problem decode = paged(ragged(base(4, 16, 4, 128, false), {}, {4000, 129, 1500, 64}), 16);
  const Problem gemma_decode =
      paged(ragged(base(4, 16, 8, 256, false), {}, {4000, 129, 1500, 64}), 16);
  Problem square = base(2, 16, 4, 128, true);
  square.seq_len = square.seq_len_kv = 1024;
  Problem gemma = base(2, 16, 8, 256, true);
  gemma.seq_len = gemma.seq_len_kv = 1024;
  std::vector<Case> out;
  for (const char* b : {"fa3", "flashinfer", "cudnn-fe", "flash", "math"})
    out.push_back({b, "ragged prefill", prefill});
  // SDPA's efficient varlen entry point has no grouped-query heads: its case has as many kv heads.
  out.push_back(
      {"efficient", "ragged prefill, mha", ragged(base(4, 16, 16, 128, true), prompts, prompts)});
  for (const char* b : {"fa3", "flashinfer", "cudnn-fe"}) {
    out.push_back({b, "paged decode, shuffled", decode});
    out.push_back({b, "paged decode, window 255", window(decode, 255)});
    out.push_back({b, "paged decode, window [255, 0] (Mistral's)", window(decode, 255, 0)});
  }
  for (const char* b : {"fa3", "flashinfer"}) {
    out.push_back({b, "paged decode, softcap 50, d256", softcap(gemma_decode, 50)});
    out.push_back(
        {b, "paged decode, softcap 50, window 255, d256", softcap(window(gemma_decode, 255), 50)});
  }
  for (const char* b : {"fa3", "flashinfer", "cudnn-fe", "flash", "math", "cudnn"})
    out.push_back({b, "window 255 causal", window(square, 255)});
  out.push_back({"flash", "ragged window", window(prefill, 63)});
  for (const char* b : {"fa3", "flashinfer", "naive"})
    out.push_back({b, "softcap 50 d256", softcap(gemma, 50)});
  out.push_back({"flashinfer", "softcap 50, window 255, d256", softcap(window(gemma, 255), 50)});
  out.push_back({"fa3", "ragged softcap", softcap(prefill, 30)});
  return out;
}

TEST(GpuVariants, EachBackendRunsItsVariantsCorrectly) {
  REQUIRE_CUDA();
  test::MeasuringRunner runner(host(), test::correctness_options());
  int measured = 0;
  for (const Case& c : cases()) {
    const LoadedBackend* loaded = test::plugins().find(c.backend);
    if (!loaded) {
      std::cout << "[ skipped  ] " << c.backend << ": not built here\n";
      continue;
    }
    const BackendRecords r = runner.measure({c.problem, point_id(c.problem)}, *loaded);
    ASSERT_FALSE(r.rows.empty());
    const Row& row = r.rows[0];
    std::cout << "[ measured ] " << c.backend << " " << c.what << ": " << to_string(row.status)
              << " " << row.reason << (row.feed.empty() ? "" : " (fed: " + row.feed + ")");
    if (row.rel_err) std::cout << " rel_err " << *row.rel_err;
    std::cout << "\n";
    if (row.status == Status::unsupported && row.reason.find("built without") != std::string::npos)
      continue;  // an FA3 wheel without the feature: the reason names it
    if (row.status == Status::unsupported && row.reason.find("not found") != std::string::npos)
      continue;
    ++measured;
    EXPECT_EQ(row.status, Status::ok) << c.backend << " " << c.what << ": " << row.reason;
    if (row.status == Status::ok)
      EXPECT_LT(*row.rel_err, *row.tolerance) << c.backend << " " << c.what;
  }
  std::cout << "[ measured ] " << measured << " cases\n";
}

// What no bundled backend may do: run a variant it does not have as if it were another.
TEST(GpuVariants, BackendsWithoutAVariantSayWhy) {
  REQUIRE_CUDA();
  Problem gemma = base(2, 16, 8, 256, true);
  gemma.seq_len = gemma.seq_len_kv = 512;
  const Problem capped = softcap(gemma, 50);
  for (const char* b : {"flash", "efficient", "math", "cudnn", "cudnn-fe"}) {
    const LoadedBackend* loaded = test::plugins().find(b);
    if (!loaded) continue;
    const Support s = loaded->backend->supports(capped);
    EXPECT_FALSE(s.supported) << b;
    EXPECT_NE(s.reason.find("softcap"), std::string::npos) << b << ": " << s.reason;
  }
}

}  // namespace
}  // namespace attnbench
