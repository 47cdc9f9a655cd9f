// The workloads people serve, on the CPU: ragged batches (packed rows and their offsets), paged
// caches (page tables in order and shuffled), sliding windows and softcap. The inputs are checked
// for what they must hold, the bundled backends against the float64 reference, and the reference
// against planted errors: a window off by one, softcap not applied, a page table read in order,
// the last sequence's offset wrong.
#include "test_support.hpp"

#include <c10/core/InferenceMode.h>

#include <limits>
#include <set>

namespace attnbench {
namespace {

using test::backend;

constexpr double kExact = 1e-5;  // float32 against float64
constexpr double kWrong = 1e-2;  // every planted error is far above this

Problem ragged(std::vector<int64_t> q_lens, std::vector<int64_t> kv_lens, bool causal) {
  Problem p = test::problem(static_cast<int64_t>(q_lens.size()), 4, 1, 16, DType::f32, causal,
                            Device::cpu);
  p.kv_heads = 2;
  p.q_lens = std::move(q_lens);
  p.kv_lens = std::move(kv_lens);
  p.seq_len = *std::max_element(p.q_lens.begin(), p.q_lens.end());
  p.seq_len_kv = *std::max_element(p.kv_lens.begin(), p.kv_lens.end());
  return p;
}

Problem paged(Problem p, int64_t page_size, PageOrder order) {
  p.kv_layout = KvLayout::paged;
  p.page_size = page_size;
  p.page_order = order;
  return p;
}

// A paged batch's cache copied into the contiguous packed layout, through `table`: the inputs a
// backend that reads pages this way would have attended over.
InputTensors contiguous_through(const InputTensors& in, const at::Tensor& table) {
  InputTensors copy = in;
  copy.page_table = table;
  InputTensors out = in;
  out.problem.kv_layout = KvLayout::contiguous;
  std::vector<at::Tensor> ks, vs;
  std::vector<int64_t> cu{0};
  for (int64_t b = 0; b < in.problem.batch; ++b) {
    auto [k, v] = sequence_kv(copy, b);  // [kv_heads, len, dim]
    ks.push_back(k.transpose(0, 1)), vs.push_back(v.transpose(0, 1));
    cu.push_back(cu.back() + in.problem.kv_len(b));
  }
  out.k = at::cat(ks), out.v = at::cat(vs);
  out.cu_seqlens_kv = at::tensor(cu, at::kLong).to(at::kInt);
  out.page_table = at::Tensor();
  return out;
}

TEST(Variants, PackedInputsHoldEachSequenceAtItsOffset) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(ragged({3, 7, 1, 5}, {3, 9, 4, 5}, true), 1);
  EXPECT_EQ(in.q.sizes(), (c10::IntArrayRef{16, 4, 16}));
  EXPECT_EQ(in.k.sizes(), (c10::IntArrayRef{21, 2, 16}));
  EXPECT_EQ(in.cu_seqlens_q.scalar_type(), at::kInt);
  const std::vector<int64_t> cu_q{0, 3, 10, 11, 16}, cu_kv{0, 3, 12, 16, 21};
  for (size_t b = 0; b < cu_q.size(); ++b) {
    EXPECT_EQ(in.cu_seqlens_q[b].item<int64_t>(), cu_q[b]) << b;
    EXPECT_EQ(in.cu_seqlens_kv[b].item<int64_t>(), cu_kv[b]) << b;
  }
  EXPECT_EQ(in.kv_lens[1].item<int64_t>(), 9);
  EXPECT_FALSE(in.mask.defined());  // the packed layout masks per sequence
  EXPECT_EQ(in.view().cu_seqlens_q, &in.cu_seqlens_q);
  EXPECT_EQ(in.view().page_table, nullptr);
}

TEST(Variants, APageTableIsInOrderOrAPermutationOfEveryPage) {
  c10::InferenceMode guard;
  const Problem p = paged(ragged({1, 1, 1}, {5, 12, 1}, false), 4, PageOrder::in_order);
  const InputTensors in = make_inputs(p, 2);
  // 2 + 3 + 1 pages of 4 tokens; rows are padded with page 0 past a sequence's last page.
  EXPECT_EQ(in.k.sizes(), (c10::IntArrayRef{6, 4, 2, 16}));
  ASSERT_EQ(in.page_table.sizes(), (c10::IntArrayRef{3, 3}));
  const std::vector<std::vector<int>> in_order{{0, 1, 0}, {2, 3, 4}, {5, 0, 0}};
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 3; ++i) EXPECT_EQ(in.page_table[b][i].item<int>(), in_order[b][i]);

  const InputTensors shuffled = make_inputs(paged(p, 4, PageOrder::shuffled), 2);
  std::set<int> ids;
  for (auto [b, n] : {std::pair{0, 2}, {1, 3}, {2, 1}})
    for (int i = 0; i < n; ++i) ids.insert(shuffled.page_table[b][i].item<int>());
  EXPECT_EQ(ids, (std::set<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_FALSE(shuffled.page_table.equal(in.page_table));
  // The same seed gives the same table: every backend of a run reads one cache.
  EXPECT_TRUE(make_inputs(paged(p, 4, PageOrder::shuffled), 2).page_table.equal(shuffled.page_table));
}

// The float64 check's positions: the first, the last and the longest sequence and others drawn from
// the seed, the first and last row and others drawn; another seed draws others.
TEST(Variants, TheFloat64PositionsAreDrawnFromTheSeed) {
  const Problem p = ragged({5, 2, 9, 3, 4, 1, 2, 2, 6, 3}, {5, 2, 9, 3, 4, 1, 2, 2, 6, 3}, true);
  std::set<std::vector<int64_t>> drawn;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<int64_t> checked = checked_sequences(p, seed);
    for (int64_t b : {0, 9, 2})  // the first, the last, the longest
      EXPECT_NE(std::find(checked.begin(), checked.end(), b), checked.end()) << b;
    EXPECT_LE(checked.size(), 6u);
    EXPECT_TRUE(std::is_sorted(checked.begin(), checked.end()));
    EXPECT_EQ(checked, checked_sequences(p, seed));
    drawn.insert(checked);
  }
  EXPECT_GT(drawn.size(), 4u);
  const std::vector<int64_t> rows = checked_rows(1000, 7);
  ASSERT_EQ(rows.size(), 64u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), 999);
  EXPECT_NE(rows, checked_rows(1000, 8));
  EXPECT_EQ(checked_rows(3, 7), (std::vector<int64_t>{0, 1, 2}));
}

TEST(Variants, TextbookAndMathRunARaggedBatchPaddedAndCorrect) {
  c10::InferenceMode guard;
  for (bool causal : {true, false}) {
    const InputTensors in = make_inputs(ragged({3, 7, 1, 5}, {3, 9, 4, 5}, causal), 3);
    for (const char* name : {"naive", "inplace", "math"}) {
      const Support s = backend(name).supports(in.problem);
      ASSERT_TRUE(s.supported) << name << ": " << s.reason;
      EXPECT_NE(s.feed.find("padded"), std::string::npos) << name;  // never silently
      const at::Tensor out = backend(name).forward(in.view());
      EXPECT_EQ(out.sizes(), in.q.sizes()) << name;
      EXPECT_LT(forward_error(in, out).rel_err, kExact) << name << (causal ? " causal" : "");
    }
  }
}

TEST(Variants, PlantedLastSequenceOffsetIsCaught) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(ragged({3, 7, 1, 5}, {3, 9, 4, 5}, true), 4);
  const at::Tensor out = backend("naive").forward(in.view());
  // The last sequence read one row late: its rows shifted by one inside the packed output.
  at::Tensor wrong = out.clone();
  wrong.narrow(0, 11, 5).copy_(out.narrow(0, 11, 5).roll(1, 0));
  EXPECT_GT(forward_error(in, wrong).rel_err, kWrong);
}

TEST(Variants, WindowIsInTheReferenceAndOffByOneIsCaught) {
  c10::InferenceMode guard;
  for (bool causal : {true, false}) {
    Problem p = test::with_kv(test::problem(2, 4, 24, 16, DType::f32, causal, Device::cpu), 2, 40);
    p.window_left = 5, p.window_right = causal ? -1 : 3;
    const InputTensors in = make_inputs(p, 5);
    ASSERT_TRUE(in.mask.defined());
    // Query 0 stands at key 16: it sees keys 11 .. 16 (causal) or 11 .. 19.
    for (int64_t j = 0; j < 40; ++j)
      EXPECT_EQ(in.mask[0][j].item<bool>(), !(j >= 11 && j <= (causal ? 16 : 19))) << j;
    for (const char* name : {"naive", "inplace", "math"})
      EXPECT_LT(forward_error(in, backend(name).forward(in.view())).rel_err, kExact) << name;
    // The window one key wider on the left: a different attention.
    Problem wider = p;
    wider.window_left = 6;
    const InputTensors off = make_inputs(wider, 5);
    EXPECT_GT(forward_error(in, backend("naive").forward(off.view())).rel_err, kWrong)
        << (causal ? "causal" : "full");
  }
  // A ragged batch with a window, padded.
  Problem r = ragged({6, 9}, {10, 9}, true);
  r.window_left = 2;
  const InputTensors in = make_inputs(r, 6);
  EXPECT_LT(forward_error(in, backend("naive").forward(in.view())).rel_err, kExact);
  r.window_left = 3;
  EXPECT_GT(forward_error(in, backend("naive").forward(make_inputs(r, 6).view())).rel_err, kWrong);
}

TEST(Variants, SoftcapIsInTheReferenceAndLeavingItOutIsCaught) {
  c10::InferenceMode guard;
  Problem p = test::problem(2, 4, 32, 16, DType::f32, true, Device::cpu);
  p.softcap = 1.0;  // scores of about N(0, 1) are capped hard
  const InputTensors in = make_inputs(p, 7);
  // tanh in float32 and a row whose capped scores nearly cancel: up to 5e-5 was seen under load
  // (the matmul's reduction order follows its thread count), still 100x below a wrong answer.
  EXPECT_LT(forward_error(in, backend("naive").forward(in.view())).rel_err, 20 * kExact);
  Problem uncapped = p;
  uncapped.softcap = 0;
  const InputTensors plain = make_inputs(uncapped, 7);  // the same numbers
  EXPECT_GT(forward_error(in, backend("naive").forward(plain.view())).rel_err, kWrong);
  // The SDPA kernels have no softcap and say so; they never run it uncapped.
  Problem on_gpu = p;
  on_gpu.device = Device::cuda;
  for (const char* name : {"math", "flash", "efficient", "cudnn"}) {
    const Support s = backend(name).supports(on_gpu);
    EXPECT_FALSE(s.supported) << name;
    EXPECT_NE(s.reason.find("softcap"), std::string::npos) << name << ": " << s.reason;
  }
}

TEST(Variants, APageTableReadInOrderIsCaught) {
  c10::InferenceMode guard;
  const Problem p = paged(ragged({1, 1, 1, 1}, {9, 30, 17, 4}, false), 4, PageOrder::shuffled);
  const InputTensors in = make_inputs(p, 8);
  ASSERT_TRUE(in.page_table.defined());
  // Read through the real table: right. Read with each sequence's pages in order: wrong.
  const InputTensors right = contiguous_through(in, in.page_table);
  EXPECT_LT(forward_error(in, backend("naive").forward(right.view())).rel_err, kExact);
  const InputTensors in_order = make_inputs(paged(p, 4, PageOrder::in_order), 8);
  const InputTensors wrong = contiguous_through(in, in_order.page_table);
  EXPECT_GT(forward_error(in, backend("naive").forward(wrong.view())).rel_err, kWrong);
  // SDPA and the textbook ops refuse a paged cache rather than gather it.
  for (const char* name : {"naive", "math"}) EXPECT_FALSE(backend(name).supports(p).supported);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// Attention with a softcap in float64, written out here: scores s = q k^T scale, capped to
// tanh(s / cap) cap, then masked (causal, bottom-right), softmax, times v; or, for the planted
// errors, capped another way.
enum class Cap { truth, tanh_of_s_times_cap, tanh_of_s_over_cap_uncapped, after_the_mask };
at::Tensor softcapped(const InputTensors& in, double cap, Cap how) {
  const Problem& p = in.problem;
  const int64_t group = p.heads / p.kv_heads;
  const at::Tensor q = in.q.to(at::kDouble);
  const at::Tensor k = in.k.to(at::kDouble).repeat_interleave(group, 1);
  const at::Tensor v = in.v.to(at::kDouble).repeat_interleave(group, 1);
  at::Tensor s = at::matmul(q, k.transpose(-2, -1)) * in.scale;
  const at::Tensor i = at::arange(p.seq_len, at::kLong).view({-1, 1});
  const at::Tensor j = at::arange(p.seq_len_kv, at::kLong).view({1, -1});
  const at::Tensor hidden = j > i + (p.seq_len_kv - p.seq_len);
  const double inf = std::numeric_limits<double>::infinity();
  switch (how) {
    case Cap::truth: s = (at::tanh(s / cap) * cap).masked_fill(hidden, -inf); break;
    case Cap::tanh_of_s_times_cap: s = (at::tanh(s) * cap).masked_fill(hidden, -inf); break;
    case Cap::tanh_of_s_over_cap_uncapped: s = at::tanh(s / cap).masked_fill(hidden, -inf); break;
    case Cap::after_the_mask: s = at::tanh(s.masked_fill(hidden, -inf) / cap) * cap; break;
  }
  return at::matmul(at::softmax(s, -1), v).to(at::kFloat);
}

// The reference's softcap is tanh(s / cap) * cap, before the mask, at caps where the wrong ways
// differ from it (at a cap of 1, tanh(s) * cap and tanh(s / cap) agree with it): 5 and 30, causal,
// grouped-query heads. Capping after the mask gives the hidden keys a score of -cap, a weight
// the small cap makes visible.
TEST(Variants, TheSoftcapIsTanhOfTheScoreOverTheCapTimesTheCapBeforeTheMask) {
  c10::InferenceMode guard;
  for (const double cap : {5.0, 30.0}) {
    Problem p = test::with_kv(test::problem(2, 4, 32, 16, DType::f32, true, Device::cpu), 2, 32);
    p.softcap = cap;
    const InputTensors in = make_inputs(p, 11);
    EXPECT_LT(forward_error(in, softcapped(in, cap, Cap::truth)).judged(), 20 * kExact) << cap;
    EXPECT_GT(forward_error(in, softcapped(in, cap, Cap::tanh_of_s_times_cap)).rel_err, kWrong)
        << cap;
    EXPECT_GT(
        forward_error(in, softcapped(in, cap, Cap::tanh_of_s_over_cap_uncapped)).rel_err, kWrong)
        << cap;
    if (cap == 5.0)
      EXPECT_GT(forward_error(in, softcapped(in, cap, Cap::after_the_mask)).rel_err, kWrong);
    // The textbook backend caps the same way.
    EXPECT_LT(forward_error(in, backend("naive").forward(in.view())).judged(), 20 * kExact) << cap;
  }
  // Longer keys than queries (bottom-right), not causal-square: the same rule.
  Problem p = test::with_kv(test::problem(1, 2, 8, 16, DType::f32, true, Device::cpu), 2, 24);
  p.softcap = 5;
  const InputTensors in = make_inputs(p, 12);
  EXPECT_LT(forward_error(in, softcapped(in, 5, Cap::truth)).judged(), 20 * kExact);
  // Each query sees 17 keys or more here: the hidden ones' -5 moves it less, still 100 times the
  // float32 error.
  EXPECT_GT(forward_error(in, softcapped(in, 5, Cap::after_the_mask)).rel_err, 100 * kExact);
}

// The inputs' prints see a write into each of the offsets a ragged or paged batch hands a
// backend, each one by its name: cu_seqlens_q, cu_seqlens_kv and kv_lens (packed), and
// page_table (paged); the same tensors put back print as before.
TEST(Variants, AWriteIntoEachOffsetTensorIsSeenByName) {
  c10::InferenceMode guard;
  const Problem packed = ragged({3, 7, 1, 5}, {3, 9, 4, 5}, true);
  const Problem paged_batch = paged(ragged({1, 1, 1}, {5, 12, 1}, false), 4, PageOrder::shuffled);
  struct Case {
    const Problem* problem;
    const char* name;
    at::Tensor InputTensors::*tensor;
  };
  for (const Case& c : {Case{&packed, "cu_seqlens_q", &InputTensors::cu_seqlens_q},
                        Case{&packed, "cu_seqlens_kv", &InputTensors::cu_seqlens_kv},
                        Case{&packed, "kv_lens", &InputTensors::kv_lens},
                        Case{&paged_batch, "cu_seqlens_q", &InputTensors::cu_seqlens_q},
                        Case{&paged_batch, "kv_lens", &InputTensors::kv_lens},
                        Case{&paged_batch, "page_table", &InputTensors::page_table}}) {
    InputTensors in = make_inputs(*c.problem, 3);
    const at::Tensor& t = in.*c.tensor;
    ASSERT_TRUE(t.defined()) << c.name;
    const std::vector<InputPrint> before = input_prints(in);
    EXPECT_EQ(changed_input(before, input_prints(in)), "") << c.name;
    // One entry one higher (the last: a sequence's end, its length, a page id).
    at::Tensor flat = t.view({-1});
    flat[flat.numel() - 1].add_(1);
    EXPECT_EQ(changed_input(before, input_prints(in)), c.name);
    flat[flat.numel() - 1].sub_(1);
    EXPECT_EQ(changed_input(before, input_prints(in)), "") << c.name;
    // The first entry zeroed where it is not 0 already, or set to 1.
    const int64_t first = flat[0].item<int64_t>();
    flat[0].fill_(first == 0 ? 1 : 0);
    EXPECT_EQ(changed_input(before, input_prints(in)), c.name);
    flat[0].fill_(first);
    // Two entries swapped: the same values, and the same sum and sum of squares.
    const int64_t last = flat[flat.numel() - 1].item<int64_t>();
    if (last != first) {
      flat[0].fill_(last), flat[flat.numel() - 1].fill_(first);
      EXPECT_EQ(changed_input(before, input_prints(in)), c.name) << "swapped";
      flat[0].fill_(first), flat[flat.numel() - 1].fill_(last);
    }
  }
  // A page table reordered in place, every row's entries reversed.
  InputTensors in = make_inputs(paged_batch, 3);
  const std::vector<InputPrint> before = input_prints(in);
  in.page_table.copy_(in.page_table.flip({1}));
  EXPECT_EQ(changed_input(before, input_prints(in)), "page_table");
}

}  // namespace
}  // namespace attnbench
