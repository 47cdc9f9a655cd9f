#include "kinds/tensors.hpp"

#include "kinds/list.hpp"
#include "kinds/problem_kind.hpp"
#include "kinds/variant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnbench {

at::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::f16: return at::kHalf;
    case DType::bf16: return at::kBFloat16;
    case DType::f32: return at::kFloat;
    case DType::fp8_e4m3: return at::kFloat8_e4m3fn;
  }
  return at::kFloat;
}

namespace {

constexpr double kFp8E4m3Max = 448;

// Quantizes `t` to fp8_e4m3 with one scale for the whole tensor; returns the scale.
double quantize_fp8(at::Tensor& t) {
  const double amax = t.abs().max().item<double>();
  const double scale = amax > 0 ? amax / kFp8E4m3Max : 1.0;
  t = (t.to(at::kFloat) / scale).to(at::kFloat8_e4m3fn);
  return scale;
}

}  // namespace

at::Tensor widened(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat8_e4m3fn ? t.to(at::kBFloat16) : t;
}

at::Tensor dequantized(const at::Tensor& t, double scale) {
  return scale == 1 ? t.to(at::kDouble) : t.to(at::kDouble) * scale;
}

namespace {

at::Tensor int32_on(const std::vector<int64_t>& values, const at::TensorOptions& like) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong))
      .to(at::kInt)
      .to(like.device());
}

std::vector<int64_t> offsets(const Problem& p, bool keys) {
  std::vector<int64_t> cu{0};
  for (int64_t b = 0; b < p.batch; ++b) cu.push_back(cu.back() + (keys ? p.kv_len(b) : p.q_len(b)));
  return cu;
}

}  // namespace

int64_t pages_of(const Problem& p, int64_t b) { return (p.kv_len(b) + p.page_size - 1) / p.page_size; }

std::pair<at::Tensor, at::Tensor> positions(const at::Tensor& rows, int64_t keys, int64_t offset) {
  return {(rows + offset).unsqueeze(1), at::arange(keys, rows.options()).unsqueeze(0)};
}

at::Tensor hidden_keys(const Problem& p, const at::Tensor& rows, int64_t keys, int64_t offset) {
  at::Tensor out;
  auto add = [&](const at::Tensor& m) {
    if (m.defined()) out = out.defined() ? out.logical_or(m) : m;
  };
  if (p.causal) {
    const auto [pos, key] = positions(rows, keys, offset);
    add(key > pos);
  }
  for (const ProblemVariant* v : variants_of(p))
    add(variant_tensors(v->name()).masked(p, rows, keys, offset));
  return out;
}

std::vector<int64_t> KindTensors::output_sizes(const InputTensors& in) const {
  std::vector<int64_t> sizes = in.q.sizes().vec();
  sizes.back() = in.problem.v_dim();
  return sizes;
}

std::vector<int64_t> output_sizes(const InputTensors& in) {
  return kind_tensors(in.problem).output_sizes(in);
}

void draw_layout(InputTensors& in) {
  const Problem& p = in.problem;
  const auto options = at::TensorOptions()
                           .dtype(p.dtype == DType::fp8_e4m3 ? at::kBFloat16 : scalar_type(p.dtype))
                           .device(p.device == Device::cuda ? at::kCUDA : at::kCPU);
  // v of its own, or (v_in_k: MLA's latent cache) a view of k's first head_dim_v columns.
  auto values_for = [&](const at::Tensor& k, std::vector<int64_t> sizes) {
    if (p.v_in_k) return k.narrow(-1, 0, p.v_dim());
    sizes.back() = p.v_dim();
    return at::randn(sizes, options);
  };
  if (!p.packed()) {
    in.q = at::randn({p.batch, p.heads, p.seq_len, p.head_dim}, options);
    in.k = at::randn({p.batch, p.kv_heads, p.seq_len_kv, p.head_dim}, options);
    in.v = values_for(in.k, in.k.sizes().vec());
  } else {
    const std::vector<int64_t> cu_q = offsets(p, false), cu_kv = offsets(p, true);
    in.q = at::randn({cu_q.back(), p.heads, p.head_dim}, options);
    in.cu_seqlens_q = int32_on(cu_q, options);
    std::vector<int64_t> lens;
    for (int64_t b = 0; b < p.batch; ++b) lens.push_back(p.kv_len(b));
    in.kv_lens = int32_on(lens, options);
    if (!p.paged()) {
      in.k = at::randn({cu_kv.back(), p.kv_heads, p.head_dim}, options);
      in.v = values_for(in.k, in.k.sizes().vec());
      in.cu_seqlens_kv = int32_on(cu_kv, options);
    } else {
      int64_t pages = 0, widest = 0;
      for (int64_t b = 0; b < p.batch; ++b) pages += pages_of(p, b), widest = std::max(widest, pages_of(p, b));
      in.k = at::randn({pages, p.page_size, p.kv_heads, p.head_dim}, options);
      in.v = values_for(in.k, in.k.sizes().vec());
      // Page ids in order, or a permutation of them: sequence b's pages are then scattered.
      const at::Tensor ids = p.page_order == PageOrder::shuffled
                                 ? at::randperm(pages, at::TensorOptions().dtype(at::kLong))
                                 : at::arange(pages, at::TensorOptions().dtype(at::kLong));
      at::Tensor table = at::zeros({p.batch, std::max<int64_t>(widest, 1)}, at::kLong);
      int64_t next = 0;
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t i = 0; i < pages_of(p, b); ++i) table[b][i] = ids[next++];
      in.page_table = table.to(at::kInt).to(options.device());
    }
  }
  if (p.direction == Direction::bwd) in.grad_out = at::randn(output_sizes(in), in.q.options());
  // The uniform layout's mask: the causal mask and the variants' (their hooks read the problem).
  if (!p.packed())
    in.mask = hidden_keys(p, at::arange(p.seq_len, in.q.options().dtype(at::kLong)), p.seq_len_kv,
                          p.seq_len_kv - p.seq_len);
}

void KindTensors::draw(InputTensors& in) const { draw_layout(in); }

InputTensors make_inputs(const Problem& p, uint64_t seed) {
  at::manual_seed(seed);
  InputTensors in;
  in.problem = p;
  in.seed = seed;
  kind_tensors(p).draw(in);
  for (const ProblemVariant* v : variants_of(p)) variant_tensors(v->name()).draw(in);
  if (p.dtype == DType::fp8_e4m3) in.q_scale = quantize_fp8(in.q);
  if (p.cache_dtype() == DType::fp8_e4m3) {
    in.k_scale = quantize_fp8(in.k);
    if (p.v_in_k)  // the view of the quantized cache, under its scale
      in.v = in.k.narrow(-1, 0, p.v_dim()), in.v_scale = in.k_scale;
    else
      in.v_scale = quantize_fp8(in.v);
  }
  in.scale = p.softmax_scale();
  return in;
}

namespace {
// The tensor named `name` in a list of named ones; undefined when there is none.
const at::Tensor& named_in(const std::vector<std::pair<std::string, at::Tensor>>& list,
                           const std::string& name) {
  static const at::Tensor none;
  for (const auto& [key, tensor] : list)
    if (key == name) return tensor;
  return none;
}
}  // namespace

const at::Tensor& InputTensors::input(const std::string& name) const {
  return named_in(named, name);
}

void InputTensors::set_input(const std::string& name, at::Tensor t) {
  for (auto it = named.begin(); it != named.end(); ++it)
    if (it->first == name) {
      if (t.defined())
        it->second = std::move(t);
      else
        named.erase(it);
      return;
    }
  if (t.defined()) named.emplace_back(name, std::move(t));
}

const at::Tensor& InputTensors::held_copy(const std::string& name) const {
  return named_in(held, name);
}

void InputTensors::hold(const std::string& name, at::Tensor t) {
  for (auto& [key, tensor] : held)
    if (key == name) {
      tensor = std::move(t);
      return;
    }
  held.emplace_back(name, std::move(t));
}

Inputs InputTensors::view() const {
  auto opt = [](const at::Tensor& t) { return t.defined() ? &t : nullptr; };
  named_view_.clear();
  for (const auto& [key, tensor] : named) named_view_.emplace_back(key, &tensor);
  return {problem,           q,       k,       v,       opt(mask),
          scale,             q_scale, k_scale, v_scale, opt(cu_seqlens_q),
          opt(cu_seqlens_kv), opt(kv_lens), opt(page_table), &named_view_};
}

const KindTensors& kind_tensors(const Problem& problem) {
#define ATTNBENCH_DECLARE_KIND_TENSORS(name) const KindTensors& name##_kind_tensors();
  ATTNBENCH_PROBLEM_KINDS(ATTNBENCH_DECLARE_KIND_TENSORS)
#undef ATTNBENCH_DECLARE_KIND_TENSORS
#define ATTNBENCH_KIND_TENSORS_OF(name) \
  if (problem.kind == #name) return name##_kind_tensors();
  ATTNBENCH_PROBLEM_KINDS(ATTNBENCH_KIND_TENSORS_OF)
#undef ATTNBENCH_KIND_TENSORS_OF
  static const KindTensors defaults;  // a test's kind without tensors of its own
  for (const auto& [kind, tensors] : added_problem_kinds())
    if (kind->name() == problem.kind) return tensors ? *tensors : defaults;
  kind_of(problem);  // throws, naming the kinds
  return defaults;
}

const VariantTensors& variant_tensors(const std::string& variant) {
#define ATTNBENCH_DECLARE_VARIANT_TENSORS(name) const VariantTensors& name##_variant_tensors();
  ATTNBENCH_PROBLEM_VARIANTS(ATTNBENCH_DECLARE_VARIANT_TENSORS)
#undef ATTNBENCH_DECLARE_VARIANT_TENSORS
#define ATTNBENCH_VARIANT_TENSORS_OF(name) \
  if (variant == #name) return name##_variant_tensors();
  ATTNBENCH_PROBLEM_VARIANTS(ATTNBENCH_VARIANT_TENSORS_OF)
#undef ATTNBENCH_VARIANT_TENSORS_OF
  for (const auto& [added, tensors] : added_problem_variants())
    if (added->name() == variant && tensors) return *tensors;
  throw std::logic_error("variant '" + variant + "' has no LibTorch half");
}

namespace {
// `t`'s elements as integers of their size, flat: what moves and prints read.
at::Tensor flat_bits(const at::Tensor& t) {
  const auto bits = t.element_size() == 1   ? at::kByte
                    : t.element_size() == 2 ? at::kShort
                    : t.element_size() == 4 ? at::kInt
                                            : at::kLong;
  return t.view(bits).view({-1});
}
}  // namespace

void move_values(const at::Tensor& t, int64_t slice) {
  const at::Tensor flat = flat_bits(t);
  const int64_t n = flat.numel();
  if (n < 2) return;
  // From the last slice to the first: each takes the element before it (still unmoved) at its
  // front, the first slice the tensor's last element.
  const int64_t kSlice = std::max<int64_t>(1, slice);
  const at::Tensor last = flat.narrow(0, n - 1, 1).clone();
  for (int64_t end = n; end > 0;) {
    const int64_t start = std::max<int64_t>(0, end - kSlice);
    const at::Tensor before = start > 0 ? flat.narrow(0, start - 1, 1).clone() : last;
    at::Tensor slice = flat.narrow(0, start, end - start);
    if (end - start > 1) slice.narrow(0, 1, end - start - 1).copy_(slice.narrow(0, 0, end - start - 1).clone());
    slice.narrow(0, 0, 1).copy_(before);
    end = start;
  }
}

namespace {
// [batch, width] true at the entries of the table a sequence uses (its first ceil(kv_len / page)).
at::Tensor used_entries(const InputTensors& in) {
  const Problem& p = in.problem;
  std::vector<int64_t> pages;
  for (int64_t b = 0; b < p.batch; ++b) pages.push_back(pages_of(p, b));
  const auto longs = at::TensorOptions().dtype(at::kLong).device(in.page_table.device());
  const at::Tensor per_sequence = at::tensor(pages, at::TensorOptions().dtype(at::kLong)).to(longs.device());
  return at::arange(in.page_table.size(1), longs).unsqueeze(0) < per_sequence.unsqueeze(1);
}
}  // namespace

void move_inputs(InputTensors& in, int64_t shift) {
  move_values(in.q);
  move_values(in.k);
  if (!in.problem.v_in_k) move_values(in.v);
  kind_tensors(in.problem).move(in, shift);
  if (!in.page_table.defined()) return;
  const int64_t pool = in.k.size(0);
  if (pool < 2) return;
  const int64_t by = ((shift % (pool - 1)) + pool - 1) % (pool - 1) + 1;  // 1 .. pool-1: never 0
  const at::Tensor rotated = (in.page_table.to(at::kLong) + by).remainder(pool).to(at::kInt);
  in.page_table.copy_(at::where(used_entries(in), rotated, in.page_table));
}

at::Tensor scatter_pages(InputTensors& in, uint64_t seed) {
  const at::Tensor before = in.page_table.clone();
  const at::Tensor used = used_entries(in);
  at::manual_seed(seed);  // on every path: what is drawn after it never depends on the table
  const int64_t count = used.sum().item<int64_t>();
  if (count < 2) return before;  // one page read in order is the only reading there is
  // One random cycle through the used entries: each takes the page of the entry after it, so
  // every entry changes (a plain permutation left the table as it was for about half the seeds
  // with two pages in use, and a backend blind to the table passed).
  const at::Tensor order = at::randperm(count, at::TensorOptions().dtype(at::kLong));
  // Row-major order of the used entries is the order make_inputs filled them in.
  const at::Tensor flat = in.page_table.view({-1});
  const at::Tensor where = used.view({-1}).nonzero().view({-1});
  const at::Tensor old_ids = flat.index_select(0, where).to(at::kLong).cpu();
  const at::Tensor new_ids =
      at::empty_like(old_ids).index_copy_(0, order, old_ids.index_select(0, order.roll(-1)));
  flat.index_copy_(0, where, new_ids.to(at::kInt).to(flat.device()));
  return before;
}

std::vector<InputPrint> input_prints(const InputTensors& in) {
  std::vector<InputPrint> out;
  std::vector<std::pair<std::string, const at::Tensor*>> named = {
      {"q", &in.q},
      {"k", &in.k},
      {"v", &in.v},
      {"mask", &in.mask},
      {"grad_out", &in.grad_out},
      {"cu_seqlens_q", &in.cu_seqlens_q},
      {"cu_seqlens_kv", &in.cu_seqlens_kv},
      {"kv_lens", &in.kv_lens},
      {"page_table", &in.page_table}};
  // What a call updates in place the kind judges itself (KindTensors::written_inputs()).
  const std::vector<std::string> written = kind_tensors(in.problem).written_inputs();
  for (const auto& [name, tensor] : in.named)
    if (std::find(written.begin(), written.end(), name) == written.end())
      named.emplace_back(name, &tensor);
  constexpr int64_t kChunk = int64_t{1} << 24;  // int64 copies of 128 MiB at most
  for (const auto& [name, tensor] : named) {
    if (!tensor->defined()) continue;
    InputPrint print{name, tensor->sizes().vec()};
    const at::Tensor flat = flat_bits(tensor->contiguous());
    at::Tensor sum = at::zeros({}, flat.options().dtype(at::kLong)), squares = sum.clone();
    at::Tensor by_position = sum.clone();
    for (int64_t start = 0; start < flat.numel(); start += kChunk) {
      const int64_t n = std::min(kChunk, flat.numel() - start);
      const at::Tensor x = flat.narrow(0, start, n).to(at::kLong);
      sum += x.sum();
      squares += (x * x).sum();
      by_position += (x * at::arange(start + 1, start + n + 1, x.options())).sum();
    }
    print.sum = sum.item<int64_t>();
    print.sum_of_squares = squares.item<int64_t>();
    print.by_position = by_position.item<int64_t>();
    out.push_back(std::move(print));
  }
  return out;
}

std::string changed_input(const std::vector<InputPrint>& before,
                          const std::vector<InputPrint>& after) {
  for (size_t i = 0; i < before.size(); ++i)
    if (i >= after.size() || !before[i].same_as(after[i])) return before[i].name;
  return "";
}

void poison(const at::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return;
  if (t.scalar_type() == at::kFloat8_e4m3fn)
    t.view(at::kByte).fill_(0x7F);  // e4m3fn's NaN
  else if (at::isFloatingType(t.scalar_type()))
    t.fill_(std::numeric_limits<double>::quiet_NaN());
  else if (t.scalar_type() == at::kInt)  // a selection's: an index no token has
    t.fill_(std::numeric_limits<int32_t>::min());
}

}  // namespace attnbench
