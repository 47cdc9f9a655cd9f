// The float64 reference and what is checked against it (tensors.hpp declares them): a sequence's
// keys and values through any layout, the kind's attention on the drawn rows, the whole output
// against float32, each check of the kind and its variants, and the backward's gradients.
#include "kinds/tensors.hpp"

#include "kinds/variant.hpp"

#include <torch/csrc/autograd/autograd.h>

#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>

namespace attnbench {

std::pair<at::Tensor, at::Tensor> sequence_kv(const InputTensors& in, int64_t b) {
  const Problem& p = in.problem;
  if (!p.packed()) return {in.k[b], in.v[b]};
  const int64_t len = p.kv_len(b);
  if (!p.paged()) {
    const int64_t start = in.cu_seqlens_kv[b].item<int64_t>();
    return {in.k.narrow(0, start, len).transpose(0, 1), in.v.narrow(0, start, len).transpose(0, 1)};
  }
  const at::Tensor pages = in.page_table[b].narrow(0, 0, pages_of(p, b)).to(at::kLong);
  auto gather = [&](const at::Tensor& cache) {
    return cache.index_select(0, pages).flatten(0, 1).narrow(0, 0, len).transpose(0, 1);
  };
  return {gather(in.k), gather(in.v)};
}

std::vector<int64_t> checked_sequences(const Problem& p, uint64_t seed) {
  int64_t longest = 0;
  for (int64_t b = 1; b < p.batch; ++b)
    if (p.q_len(b) * p.kv_len(b) > p.q_len(longest) * p.kv_len(longest)) longest = b;
  std::mt19937_64 rng(seed ^ 0x5eed5eedULL);
  std::uniform_int_distribution<int64_t> pick(0, p.batch - 1);
  std::vector<int64_t> out{0, p.batch - 1, longest};
  for (int i = 0; i < 3; ++i) out.push_back(pick(rng));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> checked_rows(int64_t seq, uint64_t seed) {
  std::set<int64_t> rows{0, seq - 1};
  std::mt19937_64 rng(seed ^ 0x7a11e5ULL);
  std::uniform_int_distribution<int64_t> pick(0, seq - 1);
  const size_t count = static_cast<size_t>(std::min<int64_t>(64, seq));
  while (rows.size() < count) rows.insert(pick(rng));
  return {rows.begin(), rows.end()};
}


namespace {

void check_like(const at::Tensor& got, const at::Tensor& want, const char* name) {
  if (got.sizes() != want.sizes())
    throw std::runtime_error(std::string(name) + " has shape " + c10::str(got.sizes()) +
                             ", expected " + c10::str(want.sizes()));
  if (got.scalar_type() != want.scalar_type())
    throw std::runtime_error(std::string(name) + " dtype is " + c10::toString(got.scalar_type()) +
                             ", expected " + c10::toString(want.scalar_type()));
}

}  // namespace

at::Tensor softmax_of(const InputTensors& in, at::Tensor scores, const at::Tensor& masked,
                      int64_t first_head) {
  const std::vector<const ProblemVariant*> variants = variants_of(in.problem);
  for (const ProblemVariant* v : variants)
    scores = variant_tensors(v->name()).scores(in.problem, scores);
  if (masked.defined())
    scores = scores.masked_fill(masked, -std::numeric_limits<double>::infinity());
  // Columns of their own (sinks): one logit per query head in every row, dropped after.
  std::vector<at::Tensor> columns{scores};
  const std::vector<int64_t> sizes = scores.sizes().vec();
  std::vector<int64_t> leading(sizes.begin(), sizes.end() - 2), column = sizes;
  int64_t heads = 1;
  for (int64_t n : leading) heads *= n;
  leading.push_back(1), leading.push_back(1);
  column.back() = 1;
  for (const ProblemVariant* v : variants) {
    const at::Tensor extra = variant_tensors(v->name()).extra_logits(in, first_head, heads);
    if (extra.defined())
      columns.push_back(extra.to(scores.scalar_type()).view(leading).expand(column));
  }
  if (columns.size() == 1) return at::softmax(scores, -1);
  return at::softmax(at::cat(columns, -1), -1).narrow(-1, 0, scores.size(-1));
}

at::Tensor attend_dense(const InputTensors& in, const at::Tensor& q, const at::Tensor& k,
                        const at::Tensor& v, const at::Tensor& rows, int64_t offset,
                        int64_t first_head) {
  const at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * in.scale;
  const at::Tensor hidden = hidden_keys(in.problem, rows, k.size(-2), offset);
  return at::matmul(softmax_of(in, scores, hidden, first_head), v);
}

at::Tensor KindTensors::attend(const InputTensors& in, int64_t b, const at::Tensor& q,
                               const at::Tensor& k, const at::Tensor& v, const at::Tensor& rows,
                               int64_t first_head) const {
  const int64_t offset = in.problem.kv_len(b) - in.problem.q_len(b);
  return attend_dense(in, q, k, v, rows, offset, first_head);
}

namespace {

double normwise(const at::Tensor& got, const at::Tensor& ref) {
  return ((got - ref).norm() / ref.norm()).item<double>();
}

}  // namespace

// A row whose reference is undefined (a query that sees no key: causal with more queries than
// keys, a window past the cache) no backend can be held to. `got` is finite: the caller checked.
at::Tensor row_errors(const at::Tensor& got, const at::Tensor& ref) {
  const at::Tensor err = (got - ref).norm(2, {-1}) / ref.norm(2, {-1});
  return at::where(err.isnan(), at::zeros_like(err), err);
}

namespace {

// Sequence b's query rows the float64 check reads, on q's device.
at::Tensor checked_rows_of(const InputTensors& in, int64_t b) {
  const std::vector<int64_t> picked = checked_rows(in.problem.q_len(b), in.seed ^ static_cast<uint64_t>(b));
  return at::tensor(picked, at::TensorOptions().dtype(at::kLong)).to(in.q.device());
}

// Sequence b's rows of q or of the output as [heads, q_len(b), dim], in either layout.
at::Tensor sequence_rows(const InputTensors& in, const at::Tensor& t, int64_t b) {
  const Problem& p = in.problem;
  if (!p.packed()) return t[b];
  int64_t start = 0;
  for (int64_t i = 0; i < b; ++i) start += p.q_len(i);
  return t.narrow(0, start, p.q_len(b)).transpose(0, 1);
}

}  // namespace

ReferenceError forward_error(const InputTensors& in, const at::Tensor& out_as_returned,
                             int64_t block_scores) {
  if (std::optional<ReferenceError> own = kind_tensors(in.problem).error(in, out_as_returned))
    return *own;
  at::Tensor out = out_as_returned;
  double out_scale = 1;
  if (in.q.scalar_type() == at::kFloat8_e4m3fn) {
    // bf16, or fp8 holding out / v_scale (backend.hpp)
    if (out.scalar_type() == at::kFloat8_e4m3fn)
      out_scale = in.v_scale;
    else if (out.scalar_type() != at::kBFloat16)
      throw std::runtime_error("output dtype is " + std::string(c10::toString(out.scalar_type())) +
                               "; fp8 inputs take a bf16 or float8_e4m3fn output");
    if (out.sizes() != at::IntArrayRef(output_sizes(in)))
      throw std::runtime_error("output has shape " + c10::str(out.sizes()) + ", expected " +
                               c10::str(output_sizes(in)));
  } else {
    check_like(out, at::empty(output_sizes(in), in.q.options().device(at::kMeta)), "output");
  }
  out = widened(out);
  if (!at::isfinite(out).all().item<bool>())
    return {std::numeric_limits<double>::quiet_NaN(), "out",
            std::numeric_limits<double>::quiet_NaN()};

  const Problem& p = in.problem;
  const KindTensors& kind = kind_tensors(p);
  const int64_t group = p.group_size();
  // Every row in float32, the worst kept on the device (one synchronization at the end).
  at::Tensor worst_f32 = at::zeros({}, out.options().dtype(at::kFloat));
  const auto on_device = out.options().dtype(at::kFloat);
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t seq = p.q_len(b);
    if (seq == 0) continue;
    const auto [keys, values] = sequence_kv(in, b);
    const at::Tensor k = keys.to(at::kFloat) * in.k_scale;  // [kv_heads, kv_len, d]
    const at::Tensor v = values.to(at::kFloat) * in.v_scale;
    const at::Tensor q = sequence_rows(in, in.q, b).to(at::kFloat) * in.q_scale;  // [heads, seq, d]
    const at::Tensor got_all = sequence_rows(in, out, b).to(at::kFloat) * out_scale;
    const int64_t block = std::clamp<int64_t>(block_scores / (p.heads * p.kv_len(b)), 1, seq);
    for (int64_t start = 0; start < seq; start += block) {
      const int64_t n = std::min(block, seq - start);
      const at::Tensor rows = at::arange(start, start + n, on_device.dtype(at::kLong));
      // [kv_heads, group, n, d] against [kv_heads, 1, kv_len, d]: each query head its kv head.
      const at::Tensor q_rows =
          q.narrow(1, start, n).reshape({p.kv_heads, group, n, p.head_dim});
      const at::Tensor ref = kind.attend(in, b, q_rows, k.unsqueeze(1), v.unsqueeze(1), rows, 0);
      const at::Tensor got = got_all.narrow(1, start, n).reshape({p.kv_heads, group, n, p.v_dim()});
      worst_f32 = at::maximum(worst_f32, row_errors(got, ref).max());
    }
  }
  const double whole = worst_f32.item<double>();

  // The float64 check, at positions drawn from the inputs' seed.
  return {worst_row_error(checked_output(in, out_as_returned), checked_reference(in)), "out", whole};
}

std::vector<at::Tensor> KindTensors::reference_rows(const InputTensors& in) const {
  return checked_reference(in);
}

std::vector<at::Tensor> KindTensors::output_rows(const InputTensors& in,
                                                 const at::Tensor& out) const {
  return checked_output(in, out);
}

double KindTensors::worst_error(const std::vector<at::Tensor>& got,
                                const std::vector<at::Tensor>& ref) const {
  return worst_row_error(got, ref);
}

std::vector<at::Tensor> checked_reference(const InputTensors& in) {
  const Problem& p = in.problem;
  const KindTensors& kind = kind_tensors(p);
  const int64_t group = p.group_size();
  std::vector<at::Tensor> out;
  for (int64_t b : checked_sequences(p, in.seed)) {
    if (p.q_len(b) == 0) continue;
    const at::Tensor rows = checked_rows_of(in, b);
    const auto [keys, values] = sequence_kv(in, b);
    for (int64_t g = 0; g < p.kv_heads; ++g) {  // every kv head with its group of query heads
      const at::Tensor k = dequantized(keys[g], in.k_scale);
      const at::Tensor v = dequantized(values[g], in.v_scale);
      // fp8 widened to bf16 (exactly) first: not every op takes fp8
      const at::Tensor q =
          widened(sequence_rows(in, in.q, b).narrow(0, g * group, group)).index_select(1, rows);
      // [1, group, rows, d] against [1, 1, kv_len, d]: one kv head and its query heads.
      out.push_back(kind.attend(in, b, dequantized(q, in.q_scale).unsqueeze(0),
                                k.unsqueeze(0).unsqueeze(0), v.unsqueeze(0).unsqueeze(0), rows,
                                g * group)
                        .squeeze(0));
    }
  }
  return out;
}

std::vector<at::Tensor> checked_output(const InputTensors& in, const at::Tensor& out) {
  const Problem& p = in.problem;
  const int64_t group = p.group_size();
  // fp8 inputs may come back as fp8 holding out / v_scale (backend.hpp)
  const double out_scale = out.scalar_type() == at::kFloat8_e4m3fn ? in.v_scale : 1;
  std::vector<at::Tensor> got;
  for (int64_t b : checked_sequences(p, in.seed)) {
    if (p.q_len(b) == 0) continue;
    const at::Tensor rows = checked_rows_of(in, b);
    for (int64_t g = 0; g < p.kv_heads; ++g)
      got.push_back(dequantized(
          widened(sequence_rows(in, out, b).narrow(0, g * group, group)).index_select(1, rows),
          out_scale));
  }
  return got;
}

double worst_row_error(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& ref) {
  double worst = 0;
  for (size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    if (!at::isfinite(got[i]).all().item<bool>()) return std::numeric_limits<double>::quiet_NaN();
    worst = std::max(worst, row_errors(got[i], ref[i]).max().item<double>());
  }
  return worst;
}

std::vector<PointVariant> point_variants(const InputTensors& in) {
  std::vector<PointVariant> out = kind_tensors(in.problem).checks(in);
  for (const ProblemVariant* v : variants_of(in.problem))
    for (PointVariant& check : variant_tensors(v->name()).without(in)) out.push_back(std::move(check));
  return out;
}

std::vector<VariantCheck> check_variants(const InputTensors& in, const at::Tensor& out,
                                         const std::string& only) {
  std::vector<VariantCheck> checks;
  std::vector<PointVariant> variants;
  if (only.empty()) {
    variants = point_variants(in);
  } else {
    for (const ProblemVariant* v : variants_of(in.problem))
      if (v->name() == only) variants = variant_tensors(v->name()).without(in);
  }
  if (variants.empty()) return checks;
  const KindTensors& kind = kind_tensors(in.problem);
  const std::vector<at::Tensor> ref = kind.reference_rows(in), got = kind.output_rows(in, out);
  const double off = kind.worst_error(got, ref);
  for (const PointVariant& v : variants) {
    const std::vector<at::Tensor> ref_without = kind.reference_rows(v.without);
    checks.push_back({v.name, kind.worst_error(ref_without, ref),
                      kind.worst_error(got, ref_without), off, false, v.what, v.verdict});
  }
  return checks;
}

std::vector<std::pair<std::string, double>> own_call_spreads(const Problem& problem) {
  std::vector<std::pair<std::string, double>> out;
  for (const ProblemVariant* v : variants_of(problem))
    if (const double spread = variant_tensors(v->name()).own_call_spread(problem); spread > 1)
      out.emplace_back(v->name(), spread);
  return out;
}

ReferenceError backward_error(const InputTensors& in, const at::Tensor& dq, const at::Tensor& dk,
                              const at::Tensor& dv, int64_t block_scores) {
  check_like(dq, in.q, "dq");
  check_like(dk, in.k, "dk");
  check_like(dv, in.v, "dv");
  for (const auto& [name, grad] : {std::pair{"dq", &dq}, {"dk", &dk}, {"dv", &dv}})
    if (!at::isfinite(widened(*grad)).all().item<bool>())  // fp8 has no isfinite of its own
      return {std::numeric_limits<double>::quiet_NaN(), name};

  if (in.problem.packed())
    throw std::runtime_error("attnbench checks the backward pass in the uniform layout only");
  const KindTensors& kind = kind_tensors(in.problem);
  if (!kind.checks_backward())
    throw std::runtime_error("attnbench checks no backward pass of kind " + in.problem.kind);
  c10::InferenceMode no_inference(false);  // autograd needs ordinary tensors
  at::AutoGradMode grad_mode(true);
  const int64_t batch = in.q.size(0), kv_heads = in.k.size(1), seq = in.q.size(2);
  const int64_t seq_kv = in.k.size(2), group = in.q.size(1) / kv_heads;
  const int64_t block = std::clamp<int64_t>(block_scores / (group * seq_kv), 1, seq);
  const auto dbl = in.q.options().dtype(at::kDouble);

  ReferenceError worst;
  auto note = [&](double err, const char* name) {
    if (err > worst.rel_err || worst.worst.empty()) worst = {err, name};
  };
  for (int64_t b : {int64_t{0}, batch - 1}) {
    for (int64_t g : {int64_t{0}, kv_heads - 1}) {
      const at::Tensor k = in.k[b][g].to(at::kDouble).requires_grad_(true);
      const at::Tensor v = in.v[b][g].to(at::kDouble).requires_grad_(true);
      const at::Tensor heads_q = in.q[b].narrow(0, g * group, group).to(at::kDouble);
      const at::Tensor heads_do = in.grad_out[b].narrow(0, g * group, group).to(at::kDouble);
      at::Tensor ref_dq = at::empty_like(heads_q);
      at::Tensor ref_dk = at::zeros_like(k), ref_dv = at::zeros_like(v);
      for (int64_t start = 0; start < seq; start += block) {
        const int64_t n = std::min(block, seq - start);
        const at::Tensor q = heads_q.narrow(1, start, n).detach().requires_grad_(true);
        const at::Tensor rows = at::arange(start, start + n, dbl.dtype(at::kLong));
        const at::Tensor out = kind.attend(in, b, q.unsqueeze(0), k.unsqueeze(0).unsqueeze(0),
                                           v.unsqueeze(0).unsqueeze(0), rows, g * group)
                                   .squeeze(0);
        const auto grads = torch::autograd::grad({out}, {q, k, v}, {heads_do.narrow(1, start, n)});
        ref_dq.narrow(1, start, n).copy_(grads[0]);
        ref_dk += grads[1];
        ref_dv += grads[2];
      }
      const at::Tensor got_dq = dq[b].narrow(0, g * group, group).to(at::kDouble);
      for (int64_t h = 0; h < group; ++h) note(normwise(got_dq[h], ref_dq[h]), "dq");
      note(normwise(dk[b][g].to(at::kDouble), ref_dk), "dk");
      note(normwise(dv[b][g].to(at::kDouble), ref_dv), "dv");
    }
  }
  return worst;
}

}  // namespace attnbench
