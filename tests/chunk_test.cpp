// Chunked local attention (Llama 4's local layers; `chunk: N`): the mask at a chunk's edges in
// the uniform layout (prefill and a decode's bottom-right query), the textbook backends against
// the float64 reference in both layouts, a chunk boundary off by one caught, the sweep's refusal
// and the point id, and the refusal of every backend that does not declare the variant.
#include "base/errors.hpp"
#include "config/sweep.hpp"
#include "kinds/problem_kind.hpp"
#include "test_support.hpp"

#include <c10/core/InferenceMode.h>

namespace attnbench {
namespace {

using test::backend;

constexpr double kExact = 1e-5;  // float32 against float64

Problem chunked(int64_t seq_len, int64_t seq_len_kv, int64_t chunk, bool causal = true) {
  Problem p = test::with_kv(test::problem(2, 4, seq_len, 32, DType::f32, causal, Device::cpu), 2,
                            seq_len_kv);
  p.chunk = chunk;
  return p;
}

// The keys row `row` of the uniform mask lets through.
std::vector<int64_t> seen(const InputTensors& in, int64_t row) {
  std::vector<int64_t> keys;
  for (int64_t j = 0; j < in.mask.size(1); ++j)
    if (!in.mask[row][j].item<bool>()) keys.push_back(j);
  return keys;
}

TEST(Chunk, AQuerySeesItsOwnChunkUpToItself) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(chunked(10, 10, 4), 1);
  ASSERT_TRUE(in.mask.defined());
  EXPECT_EQ(seen(in, 3), (std::vector<int64_t>{0, 1, 2, 3}));  // the first chunk's last
  EXPECT_EQ(seen(in, 4), (std::vector<int64_t>{4}));           // the second chunk's first
  EXPECT_EQ(seen(in, 7), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(seen(in, 9), (std::vector<int64_t>{8, 9}));  // a last chunk cut short
  // Without causal the whole chunk, ahead too.
  const InputTensors full = make_inputs(chunked(10, 10, 4, false), 1);
  EXPECT_EQ(seen(full, 5), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(seen(full, 9), (std::vector<int64_t>{8, 9}));
  // A decode's query stands at the last key: its chunk is the cache's last.
  const InputTensors decode = make_inputs(chunked(1, 10, 4), 1);
  EXPECT_EQ(seen(decode, 0), (std::vector<int64_t>{8, 9}));
  const InputTensors edge = make_inputs(chunked(1, 12, 4), 1);  // a chunk's last position
  EXPECT_EQ(seen(edge, 0), (std::vector<int64_t>{8, 9, 10, 11}));
  const InputTensors after = make_inputs(chunked(1, 13, 4), 1);  // the next chunk's first
  EXPECT_EQ(seen(after, 0), (std::vector<int64_t>{12}));
}

TEST(Chunk, TheTextbookBackendsRunItInBothLayouts) {
  c10::InferenceMode guard;
  Problem ragged = chunked(40, 70, 16);
  ragged.q_lens = {40, 5}, ragged.kv_lens = {70, 33};
  for (const Problem& p : {chunked(48, 48, 16), chunked(1, 70, 16), chunked(48, 48, 16, false),
                           ragged}) {
    const InputTensors in = make_inputs(p, 2);
    for (const char* name : {"naive", "inplace"}) {
      ASSERT_TRUE(declared_support(backend(name), p).supported) << name;
      ASSERT_TRUE(backend(name).supports(p).supported) << name;
      EXPECT_LT(forward_error(in, backend(name).forward(in.view())).rel_err, kExact)
          << name << " " << point_id(p);
    }
  }
}

// The boundary off by one each way, and the chunk ignored, planted as the mask a kernel would
// use: each far past a bf16 row's tolerance.
TEST(Chunk, ABoundaryOffByOneOrTheChunkIgnoredIsCaught) {
  c10::InferenceMode guard;
  Problem p = chunked(256, 256, 64);
  const InputTensors in = make_inputs(p, 3);
  Problem bf16 = p;
  bf16.dtype = DType::bf16;
  const double bar = point_tolerance(default_tolerances().at(DType::bf16), bf16);
  const at::Tensor i = at::arange(256).unsqueeze(1), j = at::arange(256).unsqueeze(0);
  auto planted = [&](const at::Tensor& visible) {
    InputTensors wrong = in;
    wrong.mask = visible.logical_and(j <= i).logical_not();
    return forward_error(in, backend("naive").forward(wrong.view())).rel_err;
  };
  ASSERT_LT(planted(j.div(64, "floor") == i.div(64, "floor")), kExact);
  EXPECT_GT(planted((j + 1).div(64, "floor") == (i + 1).div(64, "floor")), bar) << "one late";
  EXPECT_GT(planted((j - 1).div(64, "floor") == (i - 1).div(64, "floor")), bar) << "one early";
  EXPECT_GT(planted(j.div(65, "floor") == i.div(65, "floor")), bar) << "chunks of 65";
  EXPECT_GT(planted(at::ones({256, 256}, at::kBool)), bar) << "ignored";
}

TEST(Chunk, TheSweepTakesItAsAnAxisOfAttention) {
  const auto points = expand_sweep(
      parse_config("sweep:\n  - {seq_len: 8}\n  - {seq_len: 8, chunk: [1, 4]}\n", "c.yaml"), false);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].problem.chunk, 0);  // unwritten: none
  EXPECT_EQ(points[0].problem.variant_names(), std::vector<std::string>{});
  EXPECT_EQ(points[1].problem.chunk, 1);
  EXPECT_EQ(points[2].problem.chunk, 4);
  EXPECT_EQ(points[2].id, "b1-h1-s8-d64-bf16-causal-cpu-chunk4");
  EXPECT_EQ(points[2].problem.variant_names(), std::vector<std::string>{"chunk"});
  for (const char* bad : {"0", "-1"}) {  // a chunk holds a position at least
    try {
      parse_config(std::string("sweep:\n  seq_len: 8\n  chunk: ") + bad + "\n", "c.yaml");
      ADD_FAILURE() << "chunk " << bad << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "sweep.chunk") << e.what();
      EXPECT_EQ(e.line(), 3) << e.what();
      EXPECT_NE(std::string(e.what()).find("must be at least 1"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_config("sweep:\n  kind: mla\n  seq_len: 8\n  chunk: 4\n", "c.yaml"),
               ConfigError);
}

TEST(Chunk, BackendsThatDoNotDeclareItRefuseNamingTheVariant) {
  test::expect_undeclared(chunked(1, 64, 16),
                          {"flash", "efficient", "cudnn", "math", "cudnn-fe", "fa3", "flashinfer"},
                          "chunked local attention");
}

}  // namespace
}  // namespace attnbench
