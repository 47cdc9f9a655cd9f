// `chunk`: Llama 4's chunked local attention: a query sees only the keys of its own chunk of
// `chunk` positions (key j with j / chunk == pos / chunk), besides the mask.
#include "kinds/list.hpp"
#include "kinds/variant.hpp"

namespace attnbench {

namespace {

Field<Problem> chunk_field() {
  Field<Problem> f = field("chunk", &Problem::chunk, "count",
                           "chunked local attention (Llama 4: 8192): a query sees the keys of its "
                           "own chunk of positions only; unset (empty): none");
  f.id_part = [](const Problem& p) {
    return p.chunk > 0 ? "-chunk" + std::to_string(p.chunk) : std::string();
  };
  return f;
}

class Chunk final : public ProblemVariant {
 public:
  std::string name() const override { return "chunk"; }
  std::string words() const override { return "chunked local attention"; }
  std::string summary() const override {
    return "Llama 4's chunked local attention: a query sees the keys of its own chunk only";
  }
  std::vector<std::string> kinds() const override { return {"attention"}; }
  std::vector<Field<Problem>> fields() const override { return {chunk_field()}; }
  bool present(const Problem& p) const override { return p.chunk > 0; }
  std::optional<FieldRefusal> refuse(const Problem& p) const override {
    // Bottom-right, queries past the keys' count stand before key 0: their chunk holds no key
    // (causal's twin is refused by the config already).
    if (p.chunk > 0 && !p.causal)
      for (int64_t b = 0; b < (p.ragged() ? p.batch : 1); ++b)
        if (p.q_len(b) > p.kv_len(b))
          return FieldRefusal{"chunk", "with " + std::to_string(p.q_len(b)) + " queries and " +
                                           std::to_string(p.kv_len(b)) + " keys (sequence " +
                                           std::to_string(b) + ") the first " +
                                           std::to_string(p.q_len(b) - p.kv_len(b)) +
                                           " queries stand before key 0, in a chunk with no key"};
    return std::nullopt;
  }
  std::vector<PythonKeyword> python_keywords() const override {
    return {{"chunk",
             [](const Problem& p) { return std::vector<double>{static_cast<double>(p.chunk)}; },
             true}};
  }
  bool mask_serves() const override { return true; }
  bool narrows(const Problem& p) const override { return p.chunk > 0; }
  void narrow(const Problem& p, int64_t pos, int64_t /*keys*/, int64_t& lo,
              int64_t& hi) const override {
    if (pos < 0) return;  // before key 0 (no key: causal's or the refusal's)
    lo = std::max<int64_t>(lo, pos / p.chunk * p.chunk);
    hi = std::min<int64_t>(hi, pos / p.chunk * p.chunk + p.chunk - 1);
  }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
class ChunkTensors final : public VariantTensors {
 public:
  at::Tensor masked(const Problem& p, const at::Tensor& rows, int64_t keys,
                    int64_t offset) const override {
    const auto [pos, key] = positions(rows, keys, offset);
    return key.div(p.chunk, "floor") != pos.div(p.chunk, "floor");
  }
  std::vector<PointVariant> without(const InputTensors& in) const override {
    InputTensors copy = in;
    copy.problem.chunk = 0;
    return {{"chunk", std::move(copy), "", ""}};
  }
};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_VARIANT(chunk, Chunk, ChunkTensors)
}  // namespace attnbench
