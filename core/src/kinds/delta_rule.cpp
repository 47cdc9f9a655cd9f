#include "kinds/delta_rule.hpp"

#include "kinds/problem.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnbench {

namespace {

constexpr int64_t kChunk = 64;  // FLA's and FlashInfer's chunk of the chunked prefill

int64_t count(const Problem& p, const std::string& name) {
  return static_cast<int64_t>(extra_value(p, name));
}

// A count of heads or features, 1 to `most`, its id part `word` and the count.
Field<Problem> count_field(std::string name, std::string word, int64_t fallback, int64_t most,
                           std::string doc) {
  Field<Problem> f = extra_field(name, FieldType::integer, "count", std::move(doc), fallback);
  const auto set = f.set;
  f.set = [set, name, most](Problem& p, const FieldValue& v) {
    if (const int64_t* n = std::get_if<int64_t>(&v); n && (*n < 1 || *n > most))
      throw std::invalid_argument(name + " is a count from 1 to " + std::to_string(most) +
                                  ", not " + std::to_string(*n));
    set(p, v);
  };
  f.id_part = [name, word](const Problem& p) {
    return "-" + word + std::to_string(count(p, name));
  };
  return f;
}

bool bf16_state(const Problem& p) {
  const std::string* s = p.extra_text("state_dtype");
  return s && *s == "bf16";
}

double element_bytes(DType d) { return d == DType::fp8_e4m3 ? 1 : d == DType::f32 ? 4 : 2; }

}  // namespace

// What a point is, built once (the LibTorch build of this file defines the tensors alone).
#ifndef ATTNBENCH_TENSORS
std::vector<Field<Problem>> DeltaRuleKind::own_fields() const {
  Field<Problem> state = extra_field(
      "state_dtype", FieldType::text, "",
      "gdn, kda: the state pool's dtype, `fp32` (the models' and engines' default) or `bf16`",
      std::string("fp32"));
  const auto set_state = state.set;
  state.set = [set_state](Problem& p, const FieldValue& v) {
    if (const std::string* s = std::get_if<std::string>(&v); s && *s != "fp32" && *s != "bf16")
      throw std::invalid_argument("state_dtype is fp32 or bf16, not '" + *s + "'");
    set_state(p, v);
  };
  state.id_part = [](const Problem& p) { return bf16_state(p) ? "-statebf16" : ""; };
  state.example = "bf16";
  Field<Problem> chunk =
      count_field("chunk_size", "c", kChunk, 4096,
                  "gdn, kda: the chunk of the chunked prefill the work model counts (64)");
  chunk.id_part = [](const Problem& p) {
    const int64_t c = count(p, "chunk_size");
    return c == kChunk ? std::string() : "-c" + std::to_string(c);
  };
  // The model's heads; a GPU's (`tp:` divides them into heads and kv_heads) name the point.
  Field<Problem> key_heads =
      count_field("linear_num_key_heads", "hk", 16, 1 << 12,
                  "gdn, kda: the model's q and k heads (Qwen3-Next: 16; Kimi Linear: num_heads "
                  "32); a GPU's at tensor-parallel tp: kv_heads");
  key_heads.id_part = [](const Problem& p) { return "-hk" + std::to_string(p.kv_heads); };
  Field<Problem> value_heads = count_field(
      "linear_num_value_heads", "hv", 0, 1 << 12,
      "gdn, kda: the model's v heads, the state's and the output's (Qwen3-Next: 32; "
      "Qwen3.5-397B: 64; Kimi Linear: 32; unset: as many as the key heads); a GPU's: heads");
  value_heads.id_part = [](const Problem& p) { return "-hv" + std::to_string(p.heads); };
  std::vector<Field<Problem>> fields = {
      key_heads,
      count_field("linear_key_head_dim", "dk", 128, 1 << 12,
                  "gdn, kda: q's and k's features (128)"),
      count_field("linear_value_head_dim", "dv", 128, 1 << 12, "gdn, kda: v's features (128)"),
      state, chunk};
  // KDA has as many value heads as key heads: no field of its own for them.
  if (gate_ == GateShape::per_head) fields.insert(fields.begin() + 1, value_heads);
  for (Field<Problem>& f : fields) f = owned_by(name(), std::move(f));
  return fields;
}

// The common fields its own say: heads (the value heads), kv_heads (the key heads), head_dim (the
// key width); no cache (seq_len_kv is seq_len; no cache dtype, layout or pages); a recurrence,
// causal and served forward.
std::vector<std::string> DeltaRuleKind::derived_axes() const {
  return {"heads",     "kv_heads",  "head_dim",   "seq_len_kv", "seq_lens_kv", "kv_dtype",
          "kv_layout", "page_size", "page_order", "causal",     "direction"};
}

void DeltaRuleKind::complete(Problem& p) const {
  // GDN's value heads unset, and KDA's always: as many as the key heads.
  if (gate_ == GateShape::per_head && !p.extra_text("linear_num_value_heads"))
    p.extra.emplace_back("linear_num_value_heads",
                         std::to_string(count(p, "linear_num_key_heads")));
  p.heads = gate_ == GateShape::per_head ? count(p, "linear_num_value_heads")
                                         : count(p, "linear_num_key_heads");
  p.kv_heads = count(p, "linear_num_key_heads");
  p.head_dim = count(p, "linear_key_head_dim");
  p.head_dim_v = count(p, "linear_value_head_dim");
  p.seq_len_kv = 0;  // no cache: the sweep makes it seq_len once the lengths are drawn
  p.causal = true;
  p.direction = Direction::fwd;
  p.v_in_k = false;
  if (p.scale == 0) p.scale = default_scale(p);
}

double DeltaRuleKind::default_scale(const Problem& p) const {
  return 1.0 / std::sqrt(static_cast<double>(count(p, "linear_key_head_dim")));
}

std::vector<std::string> DeltaRuleKind::input_names() const {
  return {"g", "beta", "state", "state_indices"};
}

std::vector<std::string> DeltaRuleKind::check_names() const {
  return {"gate", "beta", "initial_state", "state_indices"};
}

std::optional<FieldRefusal> DeltaRuleKind::refuse(const Problem& p) const {
  // The model's heads (a GPU's under tp: are divided after).
  const int64_t hk = count(p, "linear_num_key_heads");
  const int64_t hv = gate_ == GateShape::per_head ? count(p, "linear_num_value_heads") : hk;
  if (hv % hk != 0)
    return FieldRefusal{"linear_num_value_heads",
                        "a multiple of linear_num_key_heads (" + std::to_string(hk) +
                            "): each key head serves a group of value heads, not " +
                            std::to_string(hv)};
  if (p.dtype == DType::fp8_e4m3)
    return FieldRefusal{"dtype", "kind " + name() + " runs bf16, fp16 or fp32 q, k and v"};
  return std::nullopt;  // the softmax's variants (a window, sinks) are fields of other kinds
}

// The chunked algorithm's products, two FLOPs a multiply-add: per token and value head the three
// products with the state (q·S, k·S, k u^T: dk x dv each), and per causal pair of tokens within
// a chunk q·k, k·k and the pair's value (2 dk + dv). A decode's few tokens are one chunk.
double DeltaRuleKind::flop(const Problem& p) const {
  const double dk = static_cast<double>(p.head_dim), dv = static_cast<double>(p.v_dim());
  const int64_t chunk = count(p, "chunk_size");
  double tokens = 0, pairs = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t n = p.q_len(b), full = n / chunk, rest = n % chunk;
    tokens += static_cast<double>(n);
    pairs += static_cast<double>(full) * static_cast<double>(chunk * (chunk + 1) / 2) +
             static_cast<double>(rest * (rest + 1) / 2);
  }
  return 2.0 * static_cast<double>(p.heads) * (3 * tokens * dk * dv + pairs * (2 * dk + dv));
}

// q, k, v, the gates, beta and the output once; each sequence's state read and written once (a
// decode's floor: the state dwarfs its few tokens); the slots and offsets.
double DeltaRuleKind::bytes(const Problem& p) const {
  const double in = element_bytes(p.dtype), tokens = static_cast<double>(total_q_tokens(p));
  const double hk = static_cast<double>(p.kv_heads), hv = static_cast<double>(p.heads);
  const double dk = static_cast<double>(p.head_dim), dv = static_cast<double>(p.v_dim());
  const double gate = gate_ == GateShape::per_key ? dk : 1;
  const double state = (bf16_state(p) ? 2 : 4) * hv * dk * dv;
  return tokens * (2 * hk * dk * in + 2 * hv * dv * in + hv * (gate + 1) * 4) +
         static_cast<double>(p.batch) * (2 * state + 8) + 4;
}

// The dtype's base: the output is rounded once, the state kept in fp32. A bf16 state is rounded
// at every token (twice the base) and when it is written: 8 bits, about 1.7e-3 normwise, which an
// fp32 point's base (1e-4) cannot hold (an audit's plant found fp32 points with a bf16 state
// `wrong` from every right backend): at least 4e-3.
double DeltaRuleKind::tolerance(double base, const Problem& p) const {
  return bf16_state(p) ? std::max(2 * base, 4e-3) : base;
}
#endif

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <limits>

namespace attnbench {

namespace {

// Each sequence's first row in the packed tokens.
std::vector<int64_t> starts(const Problem& p) {
  std::vector<int64_t> out;
  int64_t at = 0;
  for (int64_t b = 0; b < p.batch; ++b) out.push_back(at), at += p.q_len(b);
  return out;
}

// The sequences `seqs`' tokens padded to the longest: a [n, L] gather of the packed rows (clamped
// where a sequence is shorter) and which of them are real.
std::pair<at::Tensor, at::Tensor> padded_rows(const Problem& p, const std::vector<int64_t>& seqs,
                                              const at::Device& device) {
  int64_t longest = 1;
  for (int64_t b : seqs) longest = std::max(longest, p.q_len(b));
  const std::vector<int64_t> first = starts(p);
  const int64_t total = std::max<int64_t>(total_q_tokens(p), 1);
  std::vector<int64_t> rows, real;
  for (int64_t b : seqs)
    for (int64_t t = 0; t < longest; ++t) {
      rows.push_back(
          std::min(first[b] + std::min(t, std::max<int64_t>(p.q_len(b) - 1, 0)), total - 1));
      real.push_back(t < p.q_len(b));
    }
  const auto opts = at::TensorOptions().dtype(at::kLong);
  const int64_t n = static_cast<int64_t>(seqs.size());
  return {at::tensor(rows, opts).view({n, longest}).to(device),
          at::tensor(real, opts).view({n, longest}).to(at::kBool).to(device)};
}

at::Tensor l2_normalized(const at::Tensor& x) { return x / (x * x).sum(-1, true).add(1e-6).sqrt(); }

struct Recurrence {
  at::Tensor out;    // [n, L, Hv, dv]
  at::Tensor state;  // [n, Hv, dk, dv], the final states
};

// The recurrence of sequences `seqs` (docs/linear-attention.md) in `type`, step by step, from
// `initial` ([n, Hv, dk, dv]); padded steps leave the state as it is.
Recurrence recur(const InputTensors& in, const std::vector<int64_t>& seqs,
                 const at::Tensor& initial, at::ScalarType type) {
  const Problem& p = in.problem;
  const auto [rows, real] = padded_rows(p, seqs, in.q.device());
  const int64_t n = rows.size(0), steps = rows.size(1), group = p.heads / p.kv_heads;
  auto take = [&](const at::Tensor& t) {  // [T, ...] -> [n, L, ...] in `type`
    std::vector<int64_t> sizes{n, steps};
    for (int64_t d = 1; d < t.dim(); ++d) sizes.push_back(t.size(d));
    return t.index_select(0, rows.view({-1})).to(type).view(sizes);
  };
  const at::Tensor q = l2_normalized(take(in.q)).repeat_interleave(group, 2);
  const at::Tensor k = l2_normalized(take(in.k)).repeat_interleave(group, 2);
  const at::Tensor v = take(in.v);
  const at::Tensor live = real.to(type);         // [n, L]
  at::Tensor decay = take(in.input("g")).exp();  // [n, L, Hv] or [n, L, Hv, dk]
  std::vector<int64_t> shape{n, steps};
  while (static_cast<int64_t>(shape.size()) < decay.dim()) shape.push_back(1);
  decay = decay * live.view(shape) + (1 - live.view(shape));
  const at::Tensor beta = take(in.input("beta")) * live.unsqueeze(-1);  // [n, L, Hv]
  at::Tensor s = initial.to(type).clone();
  std::vector<at::Tensor> out;
  out.reserve(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) {
    const at::Tensor d = decay.select(1, t);
    s = s * (d.dim() == 2 ? d.view({n, -1, 1, 1}) : d.unsqueeze(-1));
    const at::Tensor kt = k.select(1, t);                               // [n, Hv, dk]
    const at::Tensor ks = at::matmul(kt.unsqueeze(-2), s).squeeze(-2);  // [n, Hv, dv]
    const at::Tensor u = beta.select(1, t).unsqueeze(-1) * (v.select(1, t) - ks);
    s = s + kt.unsqueeze(-1) * u.unsqueeze(-2);
    out.push_back(at::matmul(q.select(1, t).unsqueeze(-2), s).squeeze(-2) * in.scale);
  }
  return {at::stack(out, 1), s};
}

// The drawn states of sequences `seqs` ([n, Hv, dk, dv]), from the held pool.
at::Tensor initial_states(const InputTensors& in, const std::vector<int64_t>& seqs) {
  const at::Tensor slots = in.input("state_indices").to(at::kLong);
  const at::Tensor picked = slots.index_select(
      0, at::tensor(seqs, at::TensorOptions().dtype(at::kLong)).to(slots.device()));
  return in.held_copy("state").index_select(0, picked);
}

// Sequence `seqs[i]`'s real rows of a padded [n, L, ...] tensor, or of the packed output.
at::Tensor sequence_of(const Problem& p, const at::Tensor& padded, size_t i, int64_t b) {
  return padded[static_cast<int64_t>(i)].narrow(0, 0, p.q_len(b));
}
at::Tensor packed_sequence(const Problem& p, const at::Tensor& out, int64_t b) {
  return out.narrow(0, starts(p)[b], p.q_len(b));
}

std::vector<int64_t> all_sequences(const Problem& p) {
  std::vector<int64_t> out;
  for (int64_t b = 0; b < p.batch; ++b) out.push_back(b);
  return out;
}

// One sequence's output rows [tokens, Hv, dv] against the reference's: each row's error over the
// larger of its reference's norm and the RMS of its head's row norms in the sequence. A
// recurrence's output rows can be near zero where an attention row cannot (a convex combination
// of v's rows): against its own norm, a bf16 kernel's rounding read 0.045 on a row 20 times
// smaller than its head's (FLA's chunk path, dk 128, 200 tokens), 0.006 against the RMS.
at::Tensor sequence_errors(const at::Tensor& got, const at::Tensor& ref) {
  const at::Tensor norms = ref.norm(2, {-1});                // [tokens, Hv]
  const at::Tensor rms = norms.pow(2).mean(0, true).sqrt();  // [1, Hv]
  const at::Tensor err = (got - ref).norm(2, {-1}) / at::maximum(norms, rms);
  return at::where(err.isnan(), at::zeros_like(err), err);
}

// Worst per-(batch, head) relative error of final states [n, Hv, dk, dv].
double worst_state_error(const at::Tensor& got, const at::Tensor& ref) {
  const at::Tensor g = got.flatten(2), r = ref.flatten(2).to(g.scalar_type());
  const at::Tensor err = (g - r).norm(2, {-1}) / r.norm(2, {-1});
  return at::where(err.isnan(), at::zeros_like(err), err).max().item<double>();
}

// Sequences `seqs` of the output and of the pool against the recurrence in `type`: the worst
// output row (sequence_errors) and the worst final state raise `worst`, and name it in `what`.
void judge(const InputTensors& in, const at::Tensor& out, const std::vector<int64_t>& seqs,
           at::ScalarType type, double& worst, std::string* what) {
  const Problem& p = in.problem;
  const Recurrence r = recur(in, seqs, initial_states(in, seqs), type);
  auto note = [&](double err, const char* name) {
    if (err > worst) {
      worst = err;
      if (what) *what = name;
    }
  };
  for (size_t i = 0; i < seqs.size(); ++i)
    if (p.q_len(seqs[i]) > 0)
      note(sequence_errors(packed_sequence(p, out, seqs[i]).to(type),
                           sequence_of(p, r.out, i, seqs[i]))
               .max()
               .item<double>(),
           "out");
  const at::Tensor slots = in.input("state_indices").to(at::kLong);
  const at::Tensor got =
      in.input("state").index_select(0, slots.index_select(0, at::tensor(seqs, slots.options())));
  note(worst_state_error(got.to(type), r.state), "state");
}

}  // namespace

void DeltaRuleTensors::draw(InputTensors& in) const {
  const Problem& p = in.problem;
  const auto options = at::TensorOptions()
                           .dtype(scalar_type(p.dtype))
                           .device(p.device == Device::cuda ? at::kCUDA : at::kCPU);
  const auto f32 = options.dtype(at::kFloat);
  const int64_t tokens = total_q_tokens(p), hk = p.kv_heads, hv = p.heads;
  const int64_t dk = p.head_dim, dv = p.v_dim();
  in.q = at::randn({tokens, hk, dk}, options);
  in.k = at::randn({tokens, hk, dk}, options);
  in.v = at::randn({tokens, hv, dv}, options);
  std::vector<int64_t> cu{0};
  for (int64_t b = 0; b < p.batch; ++b) cu.push_back(cu.back() + p.q_len(b));
  in.cu_seqlens_q =
      at::tensor(cu, at::TensorOptions().dtype(at::kLong)).to(at::kInt).to(options.device());
  // Decays e^g from about 0.3 to 0.97 a token (log-sigmoid of N(1, 1.5)): strong enough that a
  // backend dropping the gate, beta or the initial state misses by far more than the tolerance
  // at a single decode token, weak enough that a prefill's state carries across a chunk.
  const std::vector<int64_t> gate = gate_ == GateShape::per_key
                                        ? std::vector<int64_t>{tokens, hv, dk}
                                        : std::vector<int64_t>{tokens, hv};
  in.set_input("g", at::log_sigmoid(at::randn(gate, f32) * 1.5 + 1));
  in.set_input("beta", at::sigmoid(at::randn({tokens, hv}, f32)));
  // A pool of twice the batch's slots, each sequence in a slot drawn among them: a backend that
  // reads slot b for sequence b reads another sequence's state.
  const int64_t slots = 2 * p.batch;
  // An ordinary tensor, not an inference one: a backend updates it in place, which PyTorch
  // refuses for inference tensors outside inference mode (a Python backend's call).
  c10::InferenceMode ordinary(false);
  const at::Tensor pool =
      at::randn({slots, hv, dk, dv}, f32).to(bf16_state(p) ? at::kBFloat16 : at::kFloat);
  in.set_input("state", pool);
  in.hold("state", pool.clone());
  // No sequence in its own index's slot: a backend that reads slot b for sequence b is caught at
  // every batch (drawn alike, one batch of two in twelve put both in their own).
  std::vector<int64_t> drawn(static_cast<size_t>(slots));
  const at::Tensor perm = at::randperm(slots, at::TensorOptions().dtype(at::kLong));
  for (int64_t i = 0; i < slots; ++i) drawn[static_cast<size_t>(i)] = perm[i].item<int64_t>();
  for (int64_t b = 0; b < p.batch; ++b)
    if (drawn[static_cast<size_t>(b)] == b)  // swap in a later slot: never b, never an earlier's
      std::swap(drawn[static_cast<size_t>(b)], drawn[static_cast<size_t>(b + 1)]);
  drawn.resize(static_cast<size_t>(p.batch));
  in.set_input(
      "state_indices",
      at::tensor(drawn, at::TensorOptions().dtype(at::kLong)).to(at::kInt).to(options.device()));
}

void DeltaRuleTensors::restore(InputTensors& in) const {
  in.input("state").copy_(in.held_copy("state"));
}

// New gates, betas and states, and each sequence in another slot (the slots rotated one place
// among the sequences), then the pool as held: each sample starts from the state its check reads.
void DeltaRuleTensors::move(InputTensors& in, int64_t) const {
  move_values(in.input("g"));
  move_values(in.input("beta"));
  move_values(in.held_copy("state"));
  if (in.problem.batch > 1) move_values(in.input("state_indices"));
  restore(in);
}

std::vector<int64_t> DeltaRuleTensors::output_sizes(const InputTensors& in) const {
  return {in.v.size(0), in.problem.heads, in.problem.v_dim()};
}

std::vector<at::Tensor> DeltaRuleTensors::reference_rows(const InputTensors& in) const {
  const Problem& p = in.problem;
  const std::vector<int64_t> seqs = checked_sequences(p, in.seed);
  const Recurrence r = recur(in, seqs, initial_states(in, seqs), at::kDouble);
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < seqs.size(); ++i)
    if (p.q_len(seqs[i]) > 0) out.push_back(sequence_of(p, r.out, i, seqs[i]));
  return out;
}

std::vector<at::Tensor> DeltaRuleTensors::output_rows(const InputTensors& in,
                                                      const at::Tensor& out) const {
  std::vector<at::Tensor> got;
  for (int64_t b : checked_sequences(in.problem, in.seed))
    if (in.problem.q_len(b) > 0) got.push_back(packed_sequence(in.problem, out, b).to(at::kDouble));
  return got;
}

double DeltaRuleTensors::worst_error(const std::vector<at::Tensor>& got,
                                     const std::vector<at::Tensor>& ref) const {
  double worst = 0;
  for (size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    if (!at::isfinite(got[i]).all().item<bool>()) return std::numeric_limits<double>::quiet_NaN();
    worst = std::max(worst, sequence_errors(got[i], ref[i]).max().item<double>());
  }
  return worst;
}

// The output's every row and the final states of every sequence against the recurrence in
// float32 (whole_rel_err), the checked sequences' in float64 (rel_err); the pool's other slots
// must hold what was drawn.
std::optional<ReferenceError> DeltaRuleTensors::error(const InputTensors& in,
                                                      const at::Tensor& out) const {
  const Problem& p = in.problem;
  const std::vector<int64_t> sizes = output_sizes(in);
  if (out.sizes() != at::IntArrayRef(sizes) || out.scalar_type() != in.q.scalar_type())
    throw std::runtime_error("the output has shape " + c10::str(out.sizes()) + " and dtype " +
                             std::string(c10::toString(out.scalar_type())) + ", expected " +
                             c10::str(sizes) + " " +
                             std::string(c10::toString(in.q.scalar_type())));
  const at::Tensor pool = in.input("state");
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  if (!at::isfinite(out).all().item<bool>()) return ReferenceError{nan, "out", nan};
  if (!at::isfinite(pool.to(at::kFloat)).all().item<bool>())
    return ReferenceError{nan, "state", nan};
  const at::Tensor slots = in.input("state_indices").to(at::kLong);
  // The slots no sequence owns: as drawn.
  at::Tensor others = at::ones({pool.size(0)}, slots.options().dtype(at::kBool));
  others.index_fill_(0, slots, false);
  if (!at::equal(pool.index_select(0, others.nonzero().view({-1})),
                 in.held_copy("state").index_select(0, others.nonzero().view({-1}))))
    return ReferenceError{1, "state (a slot no sequence owns)", 1};

  ReferenceError e{0, "out", 0};
  // Every sequence in float32, in groups of a bounded state size; the checked ones in float64.
  const std::vector<int64_t> every = all_sequences(p);
  const size_t per = static_cast<size_t>(
      std::max<int64_t>(1, (int64_t{1} << 26) / (p.heads * p.head_dim * p.v_dim())));
  for (size_t from = 0; from < every.size(); from += per) {
    const auto first = every.begin() + static_cast<int64_t>(from);
    judge(in, out, {first, first + static_cast<int64_t>(std::min(per, every.size() - from))},
          at::kFloat, e.whole_rel_err, nullptr);
  }
  judge(in, out, checked_sequences(p, in.seed), at::kDouble, e.rel_err, &e.worst);
  return e;
}

std::vector<PointVariant> DeltaRuleTensors::checks(const InputTensors& in) const {
  std::vector<PointVariant> out;
  InputTensors no_gate = in;
  no_gate.set_input("g", at::zeros_like(in.input("g")));
  out.push_back(
      {"gate", std::move(no_gate), "the recurrence without its decay (g = 0)", "gate ignored"});
  InputTensors no_beta = in;
  no_beta.set_input("beta", at::ones_like(in.input("beta")));
  out.push_back({"beta", std::move(no_beta), "the recurrence with beta = 1", "beta ignored"});
  InputTensors no_state = in;
  no_state.hold("state", at::zeros_like(in.held_copy("state")));
  out.push_back({"initial_state", std::move(no_state), "the recurrence from zero states",
                 "initial state ignored"});
  if (in.problem.batch > 1) {
    InputTensors in_order = in;
    in_order.set_input("state_indices",
                       at::arange(in.problem.batch, in.input("state_indices").options()));
    out.push_back({"state_indices", std::move(in_order),
                   "the recurrence from slot b for sequence b", "state_indices ignored"});
  }
  return out;
}

}  // namespace attnbench
#endif
