// `dsa_indexer`: DSA's lightning indexer (DeepSeek-V3.2, GLM-5), the step an engine pays before each
// sparse attention call: for each query row, a score of every token it sees, the sum over its
// `heads` index heads of weight x ReLU(scale x q·k) (q of head_dim per head, one key of head_dim a
// token in an index cache of its own: kv_heads 1, causal), and the top index_topk tokens by score.
// Its input `weights` (float32, [query rows, heads]: the model's weights_proj, q's scale folded in)
// joins q and the index cache (k; v is a view of it and unused). Its output is the selection:
// int32, shaped like q's rows with index_topk entries ([batch, seq_len, index_topk], packed
// [total_q, index_topk]), the tokens' positions in their sequence in any order, the valid first and
// -1 after where a query sees fewer; what kind dsa reads as `indices`. A backend's selection is
// judged by the score it loses against the best one (kinds/dsa_indexer.cpp: its error), so that
// near-ties rounded either way pass and a selection that ignores the weights or the ReLU does not.
#include "kinds/list.hpp"
#include "kinds/problem.hpp"
#include "kinds/problem_kind.hpp"

#include <algorithm>
#include <cmath>

namespace attnbench {

std::vector<Field<Problem>> index_topk_fields();  // dsa.cpp: the top-k the indexer picks for it

namespace {

constexpr const char* kIndexer = "dsa_indexer";

double element_bytes(DType d) { return d == DType::fp8_e4m3 ? 1 : d == DType::f32 ? 4 : 2; }

int64_t topk_of(const Problem& p) { return static_cast<int64_t>(p.extra_number("index_topk", 2048)); }

class DsaIndexerKind final : public ProblemKind {
 public:
  std::string name() const override { return kIndexer; }
  std::string summary() const override {
    return "DSA's lightning indexer (DeepSeek-V3.2, GLM-5): each query row's weighted ReLU "
           "q·k scores over its heads (input `weights`) and its top index_topk tokens (the "
           "output, int32)";
  }
  std::string id_prefix() const override { return "dsa-indexer-"; }
  std::vector<Field<Problem>> own_fields() const override {
    std::vector<Field<Problem>> fields;
    for (Field<Problem>& f : index_topk_fields()) fields.push_back(owned_by(kIndexer, std::move(f)));
    return fields;
  }
  // One index key a token, shared by every head; causal, served (forward).
  std::vector<std::string> derived_axes() const override {
    return {"kv_heads", "causal", "direction", "kv_dtype"};
  }
  void complete(Problem& p) const override {
    p.kv_heads = 1;
    p.causal = true;
    p.direction = Direction::fwd;
    p.kv_dtype.reset();
    p.head_dim_v = p.head_dim;
    p.v_in_k = true;  // no values: v is k, unread
    if (p.scale == 0) p.scale = default_scale(p);
  }
  double default_scale(const Problem& p) const override {
    return 1.0 / std::sqrt(static_cast<double>(p.head_dim));
  }
  std::vector<std::string> input_names() const override { return {"weights"}; }
  // One product of head_dim multiply-adds per (row, token it sees) and head.
  double flop(const Problem& p) const override {
    return 2.0 * static_cast<double>(p.heads) * static_cast<double>(p.head_dim) *
           attended_pairs(p);
  }
  // q, each token's index key once per sequence (the keys its rows see), the weights, the
  // selection written and the page table.
  double bytes(const Problem& p) const override {
    const double in = element_bytes(p.dtype);
    const double rows = static_cast<double>(total_q_tokens(p));
    double keys = 0, pages = 0;
    for (int64_t b = 0; b < p.batch; ++b) {
      keys += static_cast<double>(keys_read(p, p.q_len(b), p.kv_len(b)));
      if (p.paged() && p.page_size > 0)
        pages += std::ceil(static_cast<double>(p.kv_len(b)) / static_cast<double>(p.page_size));
    }
    return rows * static_cast<double>(p.heads * p.head_dim) * in +
           keys * static_cast<double>(p.head_dim) * in + rows * static_cast<double>(p.heads) * 4 +
           rows * static_cast<double>(topk_of(p)) * 4 + pages * 4;
  }
  // The share of the best selection's score a backend may lose to rounding near the k-th score.
  double tolerance(double /*base*/, const Problem& /*p*/) const override { return 1e-3; }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

#include <limits>
#include <stdexcept>

namespace attnbench {
namespace {

// Query row i of sequence b stands at position kv_len - q_len + i (bottom-right).
int64_t position(const Problem& p, int64_t b, int64_t i) { return p.kv_len(b) - p.q_len(b) + i; }

// Sequence b's rows of a tensor shaped like q's rows ([batch, seq_len, ...] or packed).
at::Tensor rows_of(const InputTensors& in, const at::Tensor& t, int64_t b) {
  const Problem& p = in.problem;
  if (!p.packed()) return t[b];
  int64_t start = 0;
  for (int64_t i = 0; i < b; ++i) start += p.q_len(i);
  return t.narrow(0, start, p.q_len(b));
}

class DsaIndexerTensors final : public KindTensors {
 public:
  void draw(InputTensors& in) const override {
    draw_layout(in);
    const Problem& p = in.problem;
    std::vector<int64_t> sizes = in.q.sizes().vec();  // q's rows, then its heads
    sizes.pop_back();
    if (!p.packed()) std::swap(sizes[1], sizes[2]);  // uniform q is [batch, heads, seq, dim]
    in.set_input("weights", at::randn(sizes, at::kFloat).to(in.q.device()));
  }
  void move(InputTensors& in, int64_t) const override { move_values(in.input("weights")); }
  std::vector<int64_t> output_sizes(const InputTensors& in) const override {
    std::vector<int64_t> sizes = in.input("weights").sizes().vec();
    sizes.back() = topk_of(in.problem);
    return sizes;
  }
  // Each checked row's scores in float64, the best selection's and the backend's: the share of
  // the best score it loses (0: as good as the best; a row whose selection is not that many
  // distinct visible tokens: 1). The whole output: every row's count and range.
  std::optional<ReferenceError> error(const InputTensors& in, const at::Tensor& out) const override {
    const Problem& p = in.problem;
    const std::vector<int64_t> sizes = output_sizes(in);
    if (out.sizes() != at::IntArrayRef(sizes) || out.scalar_type() != at::kInt)
      throw std::runtime_error("the selection has shape " + c10::str(out.sizes()) + " and dtype " +
                               std::string(c10::toString(out.scalar_type())) + ", expected " +
                               c10::str(sizes) + " int32");
    const int64_t topk = sizes.back();
    ReferenceError e{0, "out", 0};
    // Every row: its valid entries first, as many as it sees (up to topk), each at or before it.
    for (int64_t b = 0; b < p.batch; ++b) {
      const at::Tensor rows = rows_of(in, out, b).reshape({-1, topk}).to(at::kLong);
      const at::Tensor pos = at::arange(p.q_len(b), rows.options()) + (p.kv_len(b) - p.q_len(b));
      const at::Tensor count = (pos + 1).clamp_max(topk).unsqueeze(1);
      const at::Tensor j = at::arange(topk, rows.options()).unsqueeze(0);
      const at::Tensor bad = at::where(j < count, (rows < 0).logical_or(rows > pos.unsqueeze(1)),
                                       rows != -1);
      if (bad.any().item<bool>()) e.whole_rel_err = 1;
    }
    // The checked rows against the float64 scores.
    const at::Tensor& weights = in.input("weights");
    for (int64_t b : checked_sequences(p, in.seed)) {
      if (p.q_len(b) == 0) continue;
      const auto [keys, values] = sequence_kv(in, b);  // [1, kv_len, d]
      const at::Tensor k = dequantized(widened(keys[0]), in.k_scale);
      const at::Tensor q = dequantized(widened(rows_of(in, p.packed() ? in.q : in.q.transpose(1, 2), b)),
                                       in.q_scale);  // [rows, heads, d]
      const at::Tensor w = rows_of(in, weights, b).to(at::kDouble);  // [rows, heads]
      const at::Tensor got = rows_of(in, out, b).reshape({-1, topk}).to(at::kLong);
      for (int64_t i : checked_rows(p.q_len(b), in.seed ^ static_cast<uint64_t>(b))) {
        const int64_t pos = position(p, b, i), count = std::min(topk, pos + 1);
        const at::Tensor scores =
            (at::relu(at::matmul(q[i], k.narrow(0, 0, pos + 1).t()) * in.scale) *
             w[i].unsqueeze(1))
                .sum(0);  // [pos + 1]
        const at::Tensor chosen = got[i].narrow(0, 0, count);
        double loss = 1;  // an invalid selection
        if ((chosen >= 0).all().item<bool>() && (chosen <= pos).all().item<bool>() &&
            std::get<0>(at::_unique(chosen)).numel() == count) {
          const double best = std::get<0>(scores.topk(count)).sum().item<double>();
          const double picked = scores.index_select(0, chosen).sum().item<double>();
          const double norm = std::get<0>(scores.abs().topk(count)).sum().item<double>();
          loss = norm > 0 ? (best - picked) / norm : 0;
        }
        e.rel_err = std::max(e.rel_err, loss);
      }
    }
    return e;
  }
};

}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_KIND(dsa_indexer, DsaIndexerKind, DsaIndexerTensors)
}  // namespace attnbench
