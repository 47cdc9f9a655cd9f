#include "measure/tensors.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace attnbench {

at::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::f16: return at::kHalf;
    case DType::bf16: return at::kBFloat16;
    case DType::f32: return at::kFloat;
  }
  return at::kFloat;
}

InputTensors make_inputs(const Problem& p, uint64_t seed) {
  const auto options = at::TensorOptions()
                           .dtype(scalar_type(p.dtype))
                           .device(p.device == Device::cuda ? at::kCUDA : at::kCPU);
  at::manual_seed(seed);
  InputTensors in;
  const std::vector<int64_t> shape{p.batch, p.heads, p.seq_len, p.head_dim};
  in.q = at::randn(shape, options);
  in.k = at::randn(shape, options);
  in.v = at::randn(shape, options);
  if (p.causal) in.causal_mask = at::ones({p.seq_len, p.seq_len}, options.dtype(at::kBool)).triu(1);
  in.scale = 1.0 / std::sqrt(static_cast<double>(p.head_dim));
  return in;
}

double max_row_rel_error(const InputTensors& in, const at::Tensor& out) {
  if (out.sizes() != in.q.sizes())
    throw std::runtime_error("output has shape " + c10::str(out.sizes()) + ", expected " +
                             c10::str(in.q.sizes()));
  if (out.scalar_type() != in.q.scalar_type())
    throw std::runtime_error(std::string("output dtype is ") + c10::toString(out.scalar_type()) +
                             ", expected " + c10::toString(in.q.scalar_type()));
  if (!at::isfinite(out).all().item<bool>()) return std::numeric_limits<double>::quiet_NaN();

  const int64_t batch = in.q.size(0), heads = in.q.size(1), seq = in.q.size(2);
  const int64_t rows = std::min<int64_t>(64, seq);
  const at::Tensor query_rows =
      at::linspace(0, static_cast<double>(seq - 1), rows, in.q.options().dtype(at::kDouble))
          .round()
          .to(at::kLong);
  const at::Tensor key_pos = at::arange(seq, query_rows.options());
  double worst = 0;
  for (int64_t b : {int64_t{0}, batch - 1}) {
    for (int64_t h : {int64_t{0}, heads - 1}) {
      const at::Tensor q = in.q[b][h].index_select(0, query_rows).to(at::kDouble);
      const at::Tensor k = in.k[b][h].to(at::kDouble);
      const at::Tensor v = in.v[b][h].to(at::kDouble);
      at::Tensor scores = q.mm(k.t()) * in.scale;
      if (in.causal_mask.defined())
        scores.masked_fill_(key_pos.unsqueeze(0) > query_rows.unsqueeze(1),
                            -std::numeric_limits<double>::infinity());
      const at::Tensor ref = at::softmax(scores, -1).mm(v);
      const at::Tensor got = out[b][h].index_select(0, query_rows).to(at::kDouble);
      const at::Tensor err = (got - ref).norm(2, {1}) / ref.norm(2, {1});
      worst = std::max(worst, err.max().item<double>());
    }
  }
  return worst;
}

}  // namespace attnbench
