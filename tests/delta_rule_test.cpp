// Kinds gdn and kda (kinds/delta_rule.hpp, docs/linear-attention.md): their fields and refusals,
// their work model worked out by hand, their reference against a scalar loop written here from the
// contract, and the checks that name what a backend dropped.
#include "base/errors.hpp"
#include "config/sweep.hpp"
#include "kinds/problem.hpp"
#include "kinds/problem_kind.hpp"
#include "test_support.hpp"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace attnbench {
namespace {

std::vector<Point> points_of(const std::string& yaml) {
  return expand_sweep(parse_config(yaml, "linear.yaml"), false);
}

// A small point on the CPU: `kind`, `hk` key heads, `hv` value heads, widths 4 and 3, lengths.
Problem linear(const std::string& kind, int64_t hk, int64_t hv, const std::string& lengths,
               const std::string& dtype = "fp32", const std::string& more = "") {
  const std::string value_heads =
      kind == "gdn" ? "\n  linear_num_value_heads: " + std::to_string(hv) : "";
  EXPECT_TRUE(kind == "gdn" || hk == hv) << "kda has as many value heads as key heads";
  return points_of("sweep:\n  kind: " + kind + "\n  dtype: " + dtype +
                   "\n  linear_num_key_heads: " + std::to_string(hk) + value_heads +
                   "\n  linear_key_head_dim: 4\n  linear_value_head_dim: 3\n  batch: 3\n"
                   "  seq_lens: \"" +
                   lengths + "\"\n" + more)
      .at(0)
      .problem;
}

TEST(DeltaRule, ItsFieldsAreTheModelsAndDeriveHeadsAndWidths) {
  const std::vector<Point> points = points_of(
      "sweep:\n  - {kind: gdn, linear_num_key_heads: 16, linear_num_value_heads: 16, seq_len: 2,"
      " batch: 4}\n  - {kind: kda, linear_num_key_heads: 16, seq_len: 2, batch: 4}\n");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].id, "gdn-b4-s2-bf16-cpu-hk16-hv16-dk128-dv128");
  EXPECT_EQ(points[1].id, "kda-b4-s2-bf16-cpu-hk16-dk128-dv128");
  const Problem gdn = points_of(
                          "sweep:\n  kind: gdn\n  seq_len: 1\n  linear_num_value_heads: 64\n"
                          "  linear_value_head_dim: 256\n  state_dtype: bf16\n"
                          "  chunk_size: 128\n")
                          .at(0)
                          .problem;
  EXPECT_EQ(gdn.heads, 64);      // the value heads
  EXPECT_EQ(gdn.kv_heads, 16);   // the key heads (the default)
  EXPECT_EQ(gdn.head_dim, 128);  // the key width
  EXPECT_EQ(gdn.head_dim_v, 256);
  EXPECT_DOUBLE_EQ(gdn.scale, 1.0 / std::sqrt(128.0));
  EXPECT_EQ(point_id(gdn), "gdn-b1-s1-bf16-cpu-hk16-hv64-dk128-dv256-statebf16-c128");
  // GDN's value heads unset: as many as the key heads, in the point and its id. KDA has no
  // value-head field: as many as its key heads.
  const Problem same =
      points_of("sweep:\n  kind: gdn\n  seq_len: 1\n  linear_num_key_heads: 8\n").at(0).problem;
  EXPECT_EQ(same.heads, 8);
  EXPECT_EQ(field_text(find_problem_field("linear_num_value_heads")->get(same)), "8");
  EXPECT_EQ(point_id(same), "gdn-b1-s1-bf16-cpu-hk8-hv8-dk128-dv128");
  const Problem kda =
      points_of("sweep:\n  kind: kda\n  seq_len: 1\n  linear_num_key_heads: 8\n").at(0).problem;
  EXPECT_EQ(kda.heads, 8);
  EXPECT_EQ(kda.kv_heads, 8);
  EXPECT_EQ(field_text(find_problem_field("linear_num_value_heads")->get(kda)), "");
  for (const char* name : {"linear_num_key_heads", "linear_key_head_dim", "linear_value_head_dim",
                           "state_dtype", "chunk_size"}) {
    const Field<Problem>* f = find_problem_field(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->kinds, (std::vector<std::string>{"gdn", "kda"})) << name;
  }
  EXPECT_EQ(find_problem_field("linear_num_value_heads")->kinds, std::vector<std::string>{"gdn"});
  for (const char* kind : {"gdn", "kda"}) {
    const ProblemKind* k = find_problem_kind(kind);
    ASSERT_NE(k, nullptr) << kind;
    EXPECT_EQ(k->input_names(), (std::vector<std::string>{"g", "beta", "state", "state_indices"}));
    EXPECT_EQ(k->check_names(),
              (std::vector<std::string>{"gate", "beta", "initial_state", "state_indices"}));
  }
}

TEST(DeltaRule, WhatItCannotMakeIsALocatedError) {
  auto refused_at = [](const std::string& yaml, const std::string& key, const std::string& says) {
    try {
      parse_config("sweep:\n  seq_len: 1\n" + yaml, "linear.yaml");
      ADD_FAILURE() << "accepted: " << yaml;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), key) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  auto accepted = [](const std::string& yaml) {
    EXPECT_NO_THROW(parse_config("sweep:\n  seq_len: 1\n" + yaml, "linear.yaml")) << yaml;
  };
  // KDA: as many value heads as key heads, no field for them.
  refused_at("  kind: kda\n  linear_num_key_heads: 8\n  linear_num_value_heads: 8\n",
             "sweep.linear_num_value_heads",
             "linear_num_value_heads is a field of kind gdn, not of kda");
  accepted("  kind: kda\n  linear_num_key_heads: 8\n");
  // GDN: value heads a multiple of the key heads.
  refused_at("  kind: gdn\n  linear_num_key_heads: 16\n  linear_num_value_heads: 24\n",
             "sweep.linear_num_value_heads", "a multiple of linear_num_key_heads (16)");
  refused_at("  kind: gdn\n  linear_num_key_heads: 16\n  linear_num_value_heads: 8\n",
             "sweep.linear_num_value_heads", "a multiple of linear_num_key_heads (16)");
  accepted("  kind: gdn\n  linear_num_key_heads: 16\n  linear_num_value_heads: 16\n");
  accepted("  kind: gdn\n  linear_num_key_heads: 16\n  linear_num_value_heads: 48\n");
  // Counts from 1 to 4096.
  refused_at("  kind: gdn\n  linear_key_head_dim: 0\n", "sweep.linear_key_head_dim", "");
  refused_at("  kind: gdn\n  linear_key_head_dim: 4097\n", "sweep.linear_key_head_dim",
             "from 1 to 4096, not 4097");
  accepted("  kind: gdn\n  linear_key_head_dim: 4096\n");
  accepted("  kind: gdn\n  linear_key_head_dim: 1\n");
  refused_at("  kind: gdn\n  state_dtype: fp16\n", "sweep.state_dtype", "fp32 or bf16, not 'fp16'");
  // What it derives, and what a recurrence has none of.
  refused_at("  kind: gdn\n  heads: 8\n", "sweep.heads", "kind gdn derives heads");
  refused_at("  kind: gdn\n  seq_len_kv: 8\n", "sweep.seq_len_kv", "kind gdn derives seq_len_kv");
  refused_at("  kind: gdn\n  dtype: fp8_e4m3\n", "sweep.dtype", "bf16, fp16 or fp32");
  refused_at("  kind: kda\n  kv_dtype: fp8_e4m3\n", "sweep.kv_dtype", "kind kda derives kv_dtype");
  refused_at("  kind: gdn\n  kv_layout: paged\n", "sweep.kv_layout", "kind gdn derives kv_layout");
  refused_at("  kind: gdn\n  page_size: 16\n", "sweep.page_size", "kind gdn derives page_size");
  refused_at("  kind: gdn\n  window: [4, 0]\n", "sweep.window",
             "window is a field of kind attention");
  refused_at("  kind: kda\n  softcap: 30\n", "sweep.softcap",
             "softcap is a field of kind attention");
}

TEST(DeltaRule, ItsWorkIsTheChunkedAlgorithmsAndTheStateReadAndWritten) {
  // Two sequences of 70 and 3 tokens, chunk 64: 64 + 6 and 3 tokens a chunk, so causal pairs
  // 64*65/2 + 6*7/2 + 3*4/2 = 2080 + 21 + 6 = 2107, 73 tokens. hk 2, hv 4, dk 4, dv 3.
  const Problem p = points_of(
                        "sweep:\n  kind: gdn\n  dtype: bf16\n  linear_num_key_heads: 2\n"
                        "  linear_num_value_heads: 4\n  linear_key_head_dim: 4\n"
                        "  linear_value_head_dim: 3\n  batch: 2\n  seq_lens: \"70,3\"\n")
                        .at(0)
                        .problem;
  EXPECT_DOUBLE_EQ(point_flop(p), 2.0 * 4 * (3 * 73 * 4 * 3 + 2107 * (2 * 4 + 3)));
  // Per token q, k (2 x 2 heads x 4 x 2 bytes), v and o (2 x 4 heads x 3 x 2 bytes), g and beta
  // (4 heads x 2 x 4 bytes); per sequence the state read and written (2 x 4 x 4 x 3 x 4 bytes)
  // and its slot and offset (8); the last offset (4).
  const double per_token = 2 * 2 * 4 * 2 + 2 * 4 * 3 * 2 + 4 * 2 * 4;
  EXPECT_DOUBLE_EQ(point_bytes(p), 73 * per_token + 2 * (2 * 4 * 4 * 3 * 4 + 8) + 4);
  // KDA's gate is a key channel's: dk + 1 floats a head and token for g and beta; a bf16 state
  // is half the bytes.
  Problem k = points_of(
                  "sweep:\n  kind: kda\n  dtype: bf16\n  linear_num_key_heads: 4\n"
                  "  linear_key_head_dim: 4\n"
                  "  linear_value_head_dim: 3\n  batch: 2\n  seq_lens: \"70,3\"\n"
                  "  state_dtype: bf16\n")
                  .at(0)
                  .problem;
  const double kda_token = 2 * 4 * 4 * 2 + 2 * 4 * 3 * 2 + 4 * (4 + 1) * 4;
  EXPECT_DOUBLE_EQ(point_bytes(k), 73 * kda_token + 2 * (2 * 4 * 4 * 3 * 2 + 8) + 4);
  // A decode's single token a sequence: one chunk of one token, one pair.
  const Problem d = points_of(
                        "sweep:\n  kind: gdn\n  linear_num_key_heads: 1\n"
                        "  linear_num_value_heads: 1\n  linear_key_head_dim: 2\n"
                        "  linear_value_head_dim: 2\n  batch: 5\n  seq_len: 1\n")
                        .at(0)
                        .problem;
  EXPECT_DOUBLE_EQ(point_flop(d), 2.0 * 1 * (3 * 5 * 2 * 2 + 5 * (2 * 2 + 2)));
  // The tolerance: the dtype's base, twice it with a bf16 state.
  EXPECT_DOUBLE_EQ(point_tolerance(0.02, p), 0.02);
  EXPECT_DOUBLE_EQ(point_tolerance(0.02, k), 0.04);
}

// The contract's recurrence, one number at a time (docs/linear-attention.md): sequence b's
// outputs [tokens][hv][dv] and final states [hv][dk][dv], from the drawn inputs.
struct Scalar {
  std::vector<std::vector<std::vector<double>>> out;
  std::vector<std::vector<std::vector<double>>> state;
};
Scalar scalar_recurrence(const InputTensors& in, int64_t b, bool per_key) {
  const Problem& p = in.problem;
  const int64_t hk = p.kv_heads, hv = p.heads, dk = p.head_dim, dv = p.v_dim();
  int64_t first = 0;
  for (int64_t i = 0; i < b; ++i) first += p.q_len(i);
  const at::Tensor q = in.q.to(at::kDouble), k = in.k.to(at::kDouble), v = in.v.to(at::kDouble);
  const at::Tensor g = in.input("g").to(at::kDouble), beta = in.input("beta").to(at::kDouble);
  const int64_t slot = in.input("state_indices")[b].item<int64_t>();
  const at::Tensor s0 = in.held_copy("state")[slot].to(at::kDouble);
  Scalar r;
  r.state.assign(hv, std::vector<std::vector<double>>(dk, std::vector<double>(dv)));
  for (int64_t h = 0; h < hv; ++h)
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) r.state[h][i][j] = s0[h][i][j].item<double>();
  for (int64_t t = first; t < first + p.q_len(b); ++t) {
    std::vector<std::vector<double>> o(hv, std::vector<double>(dv));
    for (int64_t h = 0; h < hv; ++h) {
      const int64_t kh = h / (hv / hk);
      double qn = 1e-6, kn = 1e-6;
      for (int64_t i = 0; i < dk; ++i) {
        qn += std::pow(q[t][kh][i].item<double>(), 2);
        kn += std::pow(k[t][kh][i].item<double>(), 2);
      }
      auto& s = r.state[h];
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j)
          s[i][j] *= std::exp(per_key ? g[t][h][i].item<double>() : g[t][h].item<double>());
      for (int64_t j = 0; j < dv; ++j) {
        double ks = 0;
        for (int64_t i = 0; i < dk; ++i) ks += k[t][kh][i].item<double>() / std::sqrt(kn) * s[i][j];
        const double u = beta[t][h].item<double>() * (v[t][h][j].item<double>() - ks);
        for (int64_t i = 0; i < dk; ++i) s[i][j] += k[t][kh][i].item<double>() / std::sqrt(kn) * u;
      }
      for (int64_t j = 0; j < dv; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < dk; ++i)
          acc += q[t][kh][i].item<double>() / std::sqrt(qn) * s[i][j];
        o[h][j] = acc * in.scale;
      }
    }
    r.out.push_back(o);
  }
  return r;
}

// What a right backend leaves: the outputs packed in q's dtype and every sequence's final state
// in its slot, computed by the scalar loop (`drop`: the part a faulty one leaves out).
at::Tensor scalar_backend(InputTensors& in, bool per_key, const std::string& drop = "") {
  InputTensors used = in;
  if (drop == "gate") used.set_input("g", at::zeros_like(in.input("g")));
  if (drop == "beta") used.set_input("beta", at::ones_like(in.input("beta")));
  if (drop == "initial_state") used.hold("state", at::zeros_like(in.held_copy("state")));
  if (drop == "state_indices")
    used.set_input("state_indices",
                   at::arange(in.problem.batch, in.input("state_indices").options()));
  const Problem& p = in.problem;
  at::Tensor out = at::empty({in.v.size(0), p.heads, p.v_dim()}, at::kDouble);
  int64_t row = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    const Scalar r = scalar_recurrence(used, b, per_key);
    for (const auto& o : r.out) {
      for (int64_t h = 0; h < p.heads; ++h)
        for (int64_t j = 0; j < p.v_dim(); ++j) out[row][h][j] = o[h][j];
      ++row;
    }
    const int64_t slot = in.input("state_indices")[b].item<int64_t>();
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t i = 0; i < p.head_dim; ++i)
        for (int64_t j = 0; j < p.v_dim(); ++j) in.input("state")[slot][h][i][j] = r.state[h][i][j];
  }
  return out.to(in.q.scalar_type());
}

const VariantCheck* check_named(const std::vector<VariantCheck>& checks, const std::string& name) {
  for (const VariantCheck& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

// Of the checks an output is nearer than the reference, the nearest (what the report names).
const VariantCheck* nearest_ignored(const std::vector<VariantCheck>& checks) {
  const VariantCheck* best = nullptr;
  for (const VariantCheck& c : checks)
    if (c.off_without < c.off_with && (!best || c.off_without < best->off_without)) best = &c;
  return best;
}

TEST(DeltaRule, TheReferenceIsTheContractsRecurrenceForBothGateShapes) {
  c10::InferenceMode guard;
  for (const auto& [kind, hk, hv] : {std::tuple{"gdn", 1, 2}, {"kda", 2, 2}, {"gdn", 2, 2}}) {
    const bool per_key = std::string(kind) == "kda";
    InputTensors in = make_inputs(linear(kind, hk, hv, "1,5,3"), 7);
    ASSERT_EQ(in.input("g").dim(), per_key ? 3 : 2) << kind;
    const at::Tensor out = scalar_backend(in, per_key);
    const std::optional<ReferenceError> e = kind_tensors(in.problem).error(in, out);
    ASSERT_TRUE(e.has_value());
    EXPECT_LT(e->rel_err, 1e-6) << kind << " " << e->worst;
    EXPECT_LT(e->whole_rel_err, 1e-5) << kind;
    // Every check is near its own reference and far from this output.
    for (const VariantCheck& c : check_variants(in, out)) {
      EXPECT_LT(c.off_with, 1e-6) << kind << " " << c.name;
      EXPECT_GT(c.moved, 0.05) << kind << " " << c.name;
    }
  }
}

TEST(DeltaRule, WhatABackendLeavesOutIsWrongAndNamed) {
  c10::InferenceMode guard;
  for (const char* kind : {"gdn", "kda"}) {
    const bool per_key = std::string(kind) == "kda";
    for (const char* drop : {"gate", "beta", "initial_state", "state_indices"}) {
      InputTensors in = make_inputs(linear(kind, 2, 2, "2,4,1"), 11);
      const at::Tensor out = scalar_backend(in, per_key, drop);
      const ReferenceError e = *kind_tensors(in.problem).error(in, out);
      EXPECT_GT(e.rel_err, 0.05) << kind << " without " << drop;
      const std::vector<VariantCheck> checks = check_variants(in, out);
      const VariantCheck* own = check_named(checks, drop);
      ASSERT_NE(own, nullptr) << drop;
      EXPECT_LT(own->off_without, 1e-6) << kind << " " << drop;
      const VariantCheck* named = nearest_ignored(checks);
      ASSERT_NE(named, nullptr) << drop;
      EXPECT_EQ(named->name, drop) << kind;
    }
  }
}

TEST(DeltaRule, TheStatePoolIsJudgedSlotBySlot) {
  c10::InferenceMode guard;
  InputTensors in = make_inputs(linear("gdn", 1, 2, "3,1,2"), 5);
  const at::Tensor out = scalar_backend(in, false);
  const at::Tensor right = in.input("state").clone();
  const KindTensors& kind = kind_tensors(in.problem);
  // The states not written: the output is right, the state is not.
  in.input("state").copy_(in.held_copy("state"));
  ReferenceError e = *kind.error(in, out);
  EXPECT_EQ(e.worst, "state");
  EXPECT_GT(e.rel_err, 0.05);
  // Right, then one element of a slot no sequence owns changed.
  in.input("state").copy_(right);
  EXPECT_LT(kind.error(in, out)->rel_err, 1e-6);
  const at::Tensor slots = in.input("state_indices").to(at::kLong);
  int64_t free_slot = 0;
  while ((slots == free_slot).any().item<bool>()) ++free_slot;
  in.input("state")[free_slot][1][0][0] += 1;
  e = *kind.error(in, out);
  EXPECT_EQ(e.worst, "state (a slot no sequence owns)");
  EXPECT_EQ(e.rel_err, 1);
  // A non-finite state.
  in.input("state").copy_(right);
  in.input("state")[slots[0].item<int64_t>()][0][0][0] = std::nan("");
  EXPECT_TRUE(std::isnan(kind.error(in, out)->rel_err));
  EXPECT_EQ(kind.error(in, out)->worst, "state");
  // The output's shape and dtype.
  EXPECT_THROW(kind.error(in, out.to(at::kDouble)), std::runtime_error);
  EXPECT_THROW(kind.error(in, out.narrow(0, 0, 2)), std::runtime_error);
}

TEST(DeltaRule, TheStateIsLeftOutOfTheInputPrintsAndRestoredAndMoved) {
  c10::InferenceMode guard;
  InputTensors in = make_inputs(linear("kda", 2, 2, "2,3,1"), 3);
  std::vector<std::string> printed;
  for (const InputPrint& print : input_prints(in)) printed.push_back(print.name);
  for (const char* name : {"q", "k", "v", "cu_seqlens_q", "g", "beta", "state_indices"})
    EXPECT_NE(std::find(printed.begin(), printed.end(), name), printed.end()) << name;
  EXPECT_EQ(std::find(printed.begin(), printed.end(), "state"), printed.end());
  const KindTensors& kind = kind_tensors(in.problem);
  EXPECT_EQ(kind.written_inputs(), std::vector<std::string>{"state"});
  // The pool as drawn, its held copy its own memory; a call's writes are put back.
  EXPECT_TRUE(at::equal(in.input("state"), in.held_copy("state")));
  EXPECT_NE(in.input("state").data_ptr(), in.held_copy("state").data_ptr());
  in.input("state").add_(1);
  kind.restore(in);
  EXPECT_TRUE(at::equal(in.input("state"), in.held_copy("state")));
  // Moved: new gates, betas and states, each sequence in another of the same distinct slots.
  const at::Tensor g = in.input("g").clone(), beta = in.input("beta").clone();
  const at::Tensor held = in.held_copy("state").clone();
  const at::Tensor slots = in.input("state_indices").clone();
  move_inputs(in, 5);
  EXPECT_FALSE(at::equal(in.input("g"), g));
  EXPECT_FALSE(at::equal(in.input("beta"), beta));
  EXPECT_FALSE(at::equal(in.held_copy("state"), held));
  EXPECT_TRUE(at::equal(in.input("state"), in.held_copy("state")));
  const at::Tensor moved = in.input("state_indices");
  EXPECT_FALSE(at::equal(moved, slots));
  EXPECT_TRUE(at::equal(std::get<0>(moved.sort()), std::get<0>(slots.sort())));
  // The state, drawn as an ordinary tensor: a backend outside inference mode may write it.
  EXPECT_FALSE(in.input("state").is_inference());
}

TEST(DeltaRule, NoSequenceSitsInItsOwnIndexsSlot) {
  c10::InferenceMode guard;
  for (int64_t batch : {1, 2, 3, 5})
    for (uint64_t seed = 0; seed < 24; ++seed) {
      const Problem p = points_of(
                            "sweep:\n  kind: gdn\n  dtype: fp32\n  linear_num_key_heads: 1\n"
                            "  linear_key_head_dim: 2\n  linear_value_head_dim: 2\n"
                            "  seq_len: 1\n  batch: " +
                            std::to_string(batch) + "\n")
                            .at(0)
                            .problem;
      const at::Tensor slots = make_inputs(p, seed).input("state_indices").to(at::kLong);
      ASSERT_EQ(slots.size(0), batch);
      EXPECT_FALSE((slots == at::arange(batch, slots.options())).any().item<bool>())
          << "batch " << batch << " seed " << seed;
      EXPECT_EQ(std::get<0>(at::_unique(slots)).numel(), batch);
      EXPECT_TRUE(((slots >= 0) & (slots < 2 * batch)).all().item<bool>());
    }
}

TEST(DeltaRule, ARowIsJudgedAgainstItsHeadsTypicalRowNotItsOwnNorm) {
  c10::InferenceMode guard;
  InputTensors in = make_inputs(linear("gdn", 1, 1, "4,4,4"), 2);
  const KindTensors& kind = kind_tensors(in.problem);
  // One head, four rows of norms 1, 1, 1 and 0.01: their RMS is about 0.866.
  at::Tensor ref = at::zeros({4, 1, 3}, at::kDouble);
  ref[0][0][0] = 1, ref[1][0][1] = 1, ref[2][0][2] = 1, ref[3][0][0] = 0.01;
  at::Tensor got = ref.clone();
  got[3][0][0] = 0.02;  // off by 0.01: 100% of its own norm, 1.2% of the head's RMS
  const double rms = std::sqrt((3 + 1e-4) / 4);
  EXPECT_NEAR(kind.worst_error({got}, {ref}), 0.01 / rms, 1e-12);
  got = ref.clone();
  got[1][0][1] = 0.9;  // a typical row off by 0.1: against its own norm
  EXPECT_NEAR(kind.worst_error({got}, {ref}), 0.1, 1e-12);
  got[2][0][2] = std::nan("");
  EXPECT_TRUE(std::isnan(kind.worst_error({got}, {ref})));
  // Attention's default: every row against its own norm.
  at::Tensor small = ref.narrow(0, 3, 1).clone();
  small[0][0][0] = 0.02;
  EXPECT_NEAR(KindTensors().worst_error({small}, {ref.narrow(0, 3, 1)}), 1.0, 1e-12);
}


// Audit (branch audit-linear): facts the tests above left open, each worked out by hand.

// The work model reads the sweep's chunk_size, and a float32 q, k and v are 4 bytes an element.
TEST(DeltaRule, TheWorkModelReadsTheChunkAndAFloat32sBytes) {
  // One sequence of 5 tokens, chunk 2: chunks of 2, 2 and 1 tokens, causal pairs 3 + 3 + 1 = 7
  // (chunk 64 would be one chunk, 15 pairs). hk 1, hv 1, dk 2, dv 2.
  const Problem p = points_of("sweep:\n  kind: gdn\n  dtype: fp32\n  linear_num_key_heads: 1\n"
                              "  linear_key_head_dim: 2\n  linear_value_head_dim: 2\n"
                              "  batch: 1\n  seq_len: 5\n  chunk_size: 2\n")
                        .at(0)
                        .problem;
  EXPECT_DOUBLE_EQ(point_flop(p), 2.0 * 1 * (3 * 5 * 2 * 2 + 7 * (2 * 2 + 2)));  // 204
  // Per token q and k (2 x 1 head x 2 x 4 bytes), v and o (the same), g and beta (2 x 4 bytes):
  // 40; the state read and written (2 x 1 x 2 x 2 x 4 bytes) and its slot and offset (8); the
  // last offset (4).
  EXPECT_DOUBLE_EQ(point_bytes(p), 5 * 40 + (2 * 16 + 8) + 4);  // 244
}

// Every count field refuses 0 itself (`a count from 1 to ...`), whoever sets it.
TEST(DeltaRule, ACountFieldRefusesZeroItself) {
  Problem p = linear("gdn", 1, 1, "1,1,1");
  for (const char* name : {"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                           "linear_value_head_dim", "chunk_size"}) {
    const Field<Problem>* f = find_problem_field(name);
    ASSERT_NE(f, nullptr) << name;
    try {
      f->set(p, FieldValue{int64_t{0}});
      ADD_FAILURE() << name << " took 0";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("is a count from 1 to 4096, not 0"), std::string::npos)
          << e.what();
    }
    EXPECT_NO_THROW(f->set(p, FieldValue{int64_t{1}})) << name;
  }
}

// The sequence whose one head's final state is 1.5 times the right one: 0.5 off, in float64 and
// in float32, normwise per sequence and head (not over the whole pool), the last sequence too.
TEST(DeltaRule, OneHeadsFinalStateIsJudgedOnItsOwnInEverySequence) {
  c10::InferenceMode guard;
  InputTensors in = make_inputs(linear("gdn", 1, 4, "2,3,4"), 9);
  const at::Tensor out = scalar_backend(in, false);
  const at::Tensor right = in.input("state").clone();
  const KindTensors& kind = kind_tensors(in.problem);
  for (int64_t b = 0; b < in.problem.batch; ++b) {
    in.input("state").copy_(right);
    const int64_t slot = in.input("state_indices")[b].item<int64_t>();
    in.input("state")[slot][3].mul_(1.5);
    const ReferenceError e = *kind.error(in, out);
    EXPECT_NEAR(e.rel_err, 0.5, 1e-6) << "sequence " << b;
    EXPECT_NEAR(e.whole_rel_err, 0.5, 1e-5) << "sequence " << b;
    EXPECT_EQ(e.worst, "state") << "sequence " << b;
  }
}

// Every sequence's output in float32: one the float64 check does not draw, its one head's rows
// 1.5 times the right ones (one token a sequence: each row is its head's RMS), is 0.5 off.
TEST(DeltaRule, EverySequencesRowsAreJudgedInFloat32) {
  c10::InferenceMode guard;
  const Problem p = points_of("sweep:\n  kind: gdn\n  dtype: fp32\n  linear_num_key_heads: 1\n"
                              "  linear_num_value_heads: 2\n  linear_key_head_dim: 4\n"
                              "  linear_value_head_dim: 3\n  batch: 12\n  seq_len: 1\n")
                        .at(0)
                        .problem;
  InputTensors in = make_inputs(p, 4);
  const at::Tensor out = scalar_backend(in, false);
  const KindTensors& kind = kind_tensors(in.problem);
  const std::vector<int64_t> drawn = checked_sequences(p, in.seed);
  int64_t tried = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    if (std::find(drawn.begin(), drawn.end(), b) != drawn.end()) continue;
    ++tried;
    at::Tensor wrong = out.clone();
    wrong[b][1].mul_(1.5);  // sequence b's one token, value head 1
    const ReferenceError e = *kind.error(in, wrong);
    EXPECT_NEAR(e.whole_rel_err, 0.5, 1e-5) << "sequence " << b;
    EXPECT_LT(e.rel_err, 1e-6) << "sequence " << b;  // not one the float64 check draws
  }
  EXPECT_GT(tried, 0);
}

// A non-finite output is never right: NaN, whatever row it is in.
TEST(DeltaRule, ANonFiniteOutputReadsNaN) {
  c10::InferenceMode guard;
  for (const double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    InputTensors in = make_inputs(linear("kda", 2, 2, "2,3,1"), 6);
    at::Tensor out = scalar_backend(in, true);
    ASSERT_LT(kind_tensors(in.problem).error(in, out)->rel_err, 1e-6);
    out[3][1][2] = bad;
    const ReferenceError e = *kind_tensors(in.problem).error(in, out);
    EXPECT_TRUE(std::isnan(e.rel_err)) << bad << ": " << e.rel_err;
    EXPECT_TRUE(std::isnan(e.whole_rel_err)) << bad << ": " << e.whole_rel_err;
    EXPECT_EQ(e.worst, "out");
  }
}

// At batch 2 the slots are checked too (no sequence sits in its own index's slot), and a backend
// that reads slot b for sequence b is named; at batch 1 there is no such check.
TEST(DeltaRule, AtBatchTwoABackendReadingSlotBIsNamed) {
  c10::InferenceMode guard;
  for (const char* kind : {"gdn", "kda"}) {
    const bool per_key = std::string(kind) == "kda";
    const Problem two = points_of(std::string("sweep:\n  kind: ") + kind +
                                  "\n  dtype: fp32\n  linear_num_key_heads: 2\n"
                                  "  linear_key_head_dim: 4\n  linear_value_head_dim: 3\n"
                                  "  batch: 2\n  seq_lens: \"3,2\"\n")
                            .at(0)
                            .problem;
    for (uint64_t seed : {1, 2, 3}) {
      InputTensors in = make_inputs(two, seed);
      const at::Tensor out = scalar_backend(in, per_key, "state_indices");
      EXPECT_GT(kind_tensors(two).error(in, out)->rel_err, 0.05) << kind;
      const std::vector<VariantCheck> checks = check_variants(in, out);
      const VariantCheck* own = check_named(checks, "state_indices");
      ASSERT_NE(own, nullptr) << kind << " seed " << seed;
      EXPECT_LT(own->off_without, 1e-6) << kind;
      const VariantCheck* named = nearest_ignored(checks);
      ASSERT_NE(named, nullptr) << kind;
      EXPECT_EQ(named->name, "state_indices") << kind;
    }
    const Problem one = points_of(std::string("sweep:\n  kind: ") + kind +
                                  "\n  dtype: fp32\n  linear_num_key_heads: 2\n"
                                  "  linear_key_head_dim: 4\n  linear_value_head_dim: 3\n"
                                  "  batch: 1\n  seq_len: 3\n")
                            .at(0)
                            .problem;
    InputTensors in = make_inputs(one, 1);
    std::vector<std::string> names;
    for (const VariantCheck& c : check_variants(in, scalar_backend(in, per_key)))
      names.push_back(c.name);
    EXPECT_EQ(names, (std::vector<std::string>{"gate", "beta", "initial_state"})) << kind;
  }
}

// The worst error over several sequences is the worst of any of them, not the first's.
TEST(DeltaRule, TheWorstErrorIsOverEverySequence) {
  c10::InferenceMode guard;
  InputTensors in = make_inputs(linear("gdn", 1, 1, "1,2,1"), 2);
  const KindTensors& kind = kind_tensors(in.problem);
  at::Tensor first = at::zeros({1, 1, 3}, at::kDouble);
  first[0][0][0] = 1;
  at::Tensor second = at::zeros({2, 1, 3}, at::kDouble);
  second[0][0][1] = 1, second[1][0][2] = 1;  // row norms 1 and 1: the head's RMS is 1
  at::Tensor off = second.clone();
  off[0][0][1] = 1.5;
  EXPECT_NEAR(kind.worst_error({first, off}, {first, second}), 0.5, 1e-12);
  EXPECT_NEAR(kind.worst_error({first, second}, {first, off}), 0.5 / 1.5, 1e-12);
  EXPECT_EQ(kind.worst_error({first, second}, {first, second}), 0);
}

// The drawn gates and betas are what the contract hands a backend: g the decay in log space
// (<= 0, already activated), beta in (0, 1) (already through the sigmoid).
TEST(DeltaRule, TheDrawnGatesAreLogDecaysAndBetasInZeroOne) {
  c10::InferenceMode guard;
  for (const char* kind : {"gdn", "kda"})
    for (uint64_t seed : {1, 2, 3}) {
      const InputTensors in = make_inputs(linear(kind, 2, 2, "40,70,9"), seed);
      const at::Tensor g = in.input("g"), beta = in.input("beta");
      EXPECT_EQ(g.scalar_type(), at::kFloat);
      EXPECT_EQ(beta.scalar_type(), at::kFloat);
      EXPECT_TRUE((g <= 0).all().item<bool>()) << kind << " max g " << g.max().item<double>();
      EXPECT_TRUE(((beta > 0) & (beta < 1)).all().item<bool>())
          << kind << " beta " << beta.min().item<double>() << " .. " << beta.max().item<double>();
    }
}

// The checks judge a row as error() does: against the larger of its own norm and its head's RMS
// in the sequence. One row, the smallest of its head, off by 1% of the head's RMS.
TEST(DeltaRule, TheChecksJudgeARowAgainstItsHeadsTypicalRow) {
  c10::InferenceMode guard;
  InputTensors in = make_inputs(linear("gdn", 1, 1, "6,6,6", "fp32"), 13);
  const Problem& p = in.problem;
  // The right rows and the rows without the gate, one number at a time.
  std::vector<Scalar> right, no_gate;
  {
    InputTensors without = in;
    without.set_input("g", at::zeros_like(in.input("g")));
    for (int64_t b = 0; b < p.batch; ++b) {
      right.push_back(scalar_recurrence(in, b, false));
      no_gate.push_back(scalar_recurrence(without, b, false));
    }
  }
  auto norm = [](const std::vector<double>& row) {
    double s = 0;
    for (double x : row) s += x * x;
    return std::sqrt(s);
  };
  auto rms = [&](const Scalar& r) {
    double s = 0;
    for (const auto& o : r.out) s += std::pow(norm(o[0]), 2);
    return std::sqrt(s / static_cast<double>(r.out.size()));
  };
  // The doc's measure over every sequence, one head: got against ref.
  auto measure = [&](const std::vector<Scalar>& got, const std::vector<Scalar>& ref) {
    double worst = 0;
    for (size_t b = 0; b < ref.size(); ++b)
      for (size_t t = 0; t < ref[b].out.size(); ++t) {
        std::vector<double> d(ref[b].out[t][0].size());
        for (size_t j = 0; j < d.size(); ++j) d[j] = got[b].out[t][0][j] - ref[b].out[t][0][j];
        worst = std::max(worst, norm(d) / std::max(norm(ref[b].out[t][0]), rms(ref[b])));
      }
    return worst;
  };
  ASSERT_EQ(checked_sequences(p, in.seed).size(), 3u);  // every sequence is checked
  // Sequence 0's smallest row, well under its head's RMS.
  size_t small = 0;
  for (size_t t = 1; t < right[0].out.size(); ++t)
    if (norm(right[0].out[t][0]) < norm(right[0].out[small][0])) small = t;
  const double head = rms(right[0]);
  ASSERT_LT(norm(right[0].out[small][0]), 0.8 * head);
  at::Tensor out = at::empty({in.v.size(0), 1, p.v_dim()}, at::kDouble);
  int64_t row = 0;
  for (const Scalar& r : right)
    for (const auto& o : r.out) {
      for (int64_t j = 0; j < p.v_dim(); ++j) out[row][0][j] = o[0][j];
      ++row;
    }
  out[static_cast<int64_t>(small)][0][0] += 0.01 * head;
  std::vector<Scalar> got = right;
  got[0].out[small][0][0] += 0.01 * head;
  const std::vector<VariantCheck> checks = check_variants(in, out.to(at::kFloat));
  const VariantCheck* gate = check_named(checks, "gate");
  ASSERT_NE(gate, nullptr);
  EXPECT_NEAR(gate->off_with, 0.01, 1e-5);  // 1% of the head's RMS, not of the row's own norm
  EXPECT_NEAR(gate->moved, measure(no_gate, right), 1e-5);
  EXPECT_NEAR(gate->off_without, measure(got, no_gate), 1e-5);
}

// Grouped value heads: value head h reads key head h / (Hv / Hk) (its group's, in order), not
// h % Hk; the tests above had one key head or groups of one, where the two agree.
TEST(DeltaRule, AGroupOfValueHeadsReadsItsOwnKeyHead) {
  c10::InferenceMode guard;
  for (const auto& [hk, hv] : {std::pair{2, 4}, {3, 6}, {2, 6}}) {
    InputTensors in = make_inputs(linear("gdn", hk, hv, "3,1,2"), 21);
    const at::Tensor out = scalar_backend(in, false);
    const ReferenceError e = *kind_tensors(in.problem).error(in, out);
    EXPECT_LT(e.rel_err, 1e-6) << hk << " " << hv << " " << e.worst;
    EXPECT_LT(e.whole_rel_err, 1e-5) << hk << " " << hv;
  }
}

// An fp32 point with a bf16 state: a right backend rounds its final states to bf16 once (about
// 1.7e-3 normwise), which the tolerance holds; a bf16 point's stays twice its base.
TEST(DeltaRule, AFloat32PointWithABf16StateTakesTheStatesRounding) {
  c10::InferenceMode guard;
  for (const char* kind : {"gdn", "kda"}) {
    InputTensors in = make_inputs(linear(kind, 2, 2, "9,70,1", "fp32", "  state_dtype: bf16\n"), 7);
    ASSERT_EQ(in.input("state").scalar_type(), at::kBFloat16);
    const at::Tensor out = scalar_backend(in, std::string(kind) == "kda");
    const ReferenceError e = *kind_tensors(in.problem).error(in, out);
    EXPECT_GT(e.rel_err, 1e-4) << kind << ": the bf16 rounding is there";
    EXPECT_LE(e.rel_err, point_tolerance(1e-4, in.problem)) << kind << " " << e.worst;
  }
  EXPECT_DOUBLE_EQ(point_tolerance(1e-4, linear("gdn", 1, 1, "2", "fp32", "  state_dtype: bf16\n")),
                   4e-3);
  EXPECT_DOUBLE_EQ(point_tolerance(1e-4, linear("gdn", 1, 1, "2", "fp32")), 1e-4);
  EXPECT_DOUBLE_EQ(point_tolerance(0.02, linear("gdn", 1, 1, "2", "bf16", "  state_dtype: bf16\n")),
                   0.04);
}

}  // namespace
}  // namespace attnbench
