// `window`: sliding-window attention (Mistral, Gemma's local layers, gpt-oss): a query sees the keys
// from LEFT behind its position to RIGHT ahead of it (-1: unbounded; causal makes RIGHT 0).
#include "kinds/list.hpp"
#include "kinds/variant.hpp"

#include "base/names.hpp"

namespace attnbench {

namespace {

// window: "LEFT,RIGHT", or empty when both are unbounded.
Field<Problem> window_field() {
  Field<Problem> f;
  f.name = "window";
  f.type = FieldType::text;
  f.example = "4,0";
  f.pair = true;
  f.doc =
      "keys a query sees behind and ahead of its position, `[LEFT, RIGHT]` (-1: unbounded; "
      "causal makes RIGHT 0); empty: no window";
  f.get = [](const Problem& p) -> FieldValue {
    if (p.window_left < 0 && p.window_right < 0) return std::string();
    return std::to_string(p.window_left) + "," + std::to_string(p.window_right);
  };
  f.set = [](Problem& p, const FieldValue& v) {
    const std::string& text = field_detail::as<std::string>(v);
    if (text.empty()) {
      p.window_left = p.window_right = -1;
      return;
    }
    const std::vector<std::string> parts = split(text, ',');
    auto edge = [&](const std::string& s) {
      FieldValue value;
      try {
        value = parse_field_text(FieldType::integer, s);
      } catch (const std::invalid_argument&) {
      }
      const int64_t* e = std::get_if<int64_t>(&value);
      // Past 1e9 keys (a sequence's most) an edge would overflow the mask's positions.
      if (!e || *e < -1 || *e > 1000000000)
        throw std::invalid_argument(
            "a window is [LEFT, RIGHT], each -1 (unbounded) or a count "
            "of keys up to 1e9, not '" +
            text + "'");
      return *e;
    };
    if (parts.size() != 2)
      throw std::invalid_argument("a window is [LEFT, RIGHT], two numbers, not '" + text + "'");
    p.window_left = edge(parts[0]);
    p.window_right = edge(parts[1]);
  };
  f.id_part = [](const Problem& p) -> std::string {
    if (p.window_left < 0 && p.window_right < 0) return "";
    return "-win" + std::to_string(p.window_left) + "_" + std::to_string(p.window_right);
  };
  return f;
}

class Window final : public ProblemVariant {
 public:
  std::string name() const override { return "window"; }
  std::string words() const override { return "a sliding window"; }
  std::string summary() const override {
    return "sliding-window attention: a query sees LEFT keys behind it and RIGHT ahead";
  }
  std::vector<std::string> kinds() const override { return {"attention"}; }
  std::vector<Field<Problem>> fields() const override { return {window_field()}; }
  bool present(const Problem& p) const override { return p.windowed(); }
  bool in_abi4() const override { return true; }
  std::optional<FieldRefusal> refuse(const Problem& p) const override {
    if (p.causal && p.window_right > 0)
      return FieldRefusal{"window",
                          "a causal mask sees no key ahead (RIGHT is 0); write RIGHT 0 or -1, or "
                          "causal: false"};
    // Bottom-right, a sequence with more queries than keys puts its first queries before key 0:
    // a window bounded on the right leaves them no key at all (causal's twin: config's check).
    const int64_t sequences = p.ragged() ? p.batch : 1;  // a uniform batch's are all alike
    if (!p.causal && p.window_right >= 0)
      for (int64_t b = 0; b < sequences; ++b)
        if (p.q_len(b) - p.kv_len(b) > p.window_right)
          return FieldRefusal{
              "window", "with " + std::to_string(p.q_len(b)) + " queries and " +
                            std::to_string(p.kv_len(b)) + " keys (sequence " + std::to_string(b) +
                            ") the first " +
                            std::to_string(p.q_len(b) - p.kv_len(b) - p.window_right) +
                            " queries see no key inside a window whose RIGHT is " +
                            std::to_string(p.window_right) +
                            " (aligned bottom-right); widen RIGHT or give the sequences keys"};
    return std::nullopt;
  }
  // (left, right): -1 unbounded, right 0 under causal.
  std::vector<PythonKeyword> python_keywords() const override {
    return {{"window",
             [](const Problem& p) {
               return std::vector<double>{static_cast<double>(p.window_left),
                                          static_cast<double>(p.right_edge())};
             },
             true}};
  }
  bool mask_serves() const override { return true; }
  std::vector<PythonKeyword> python_attributes() const override {
    return {{"window_left",
             [](const Problem& p) { return std::vector<double>{static_cast<double>(p.window_left)}; },
             true},
            {"window_right",
             [](const Problem& p) { return std::vector<double>{static_cast<double>(p.right_edge())}; },
             true}};
  }
  bool narrows(const Problem& p) const override { return p.windowed(); }
  void narrow(const Problem& p, int64_t pos, int64_t keys, int64_t& lo,
              int64_t& hi) const override {
    if (p.window_left >= 0) lo = std::max<int64_t>(lo, pos - p.window_left);
    if (p.right_edge() >= 0) hi = std::min<int64_t>(hi, pos + p.right_edge());
    hi = std::min<int64_t>(hi, keys - 1);
  }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
class WindowTensors final : public VariantTensors {
 public:
  at::Tensor masked(const Problem& p, const at::Tensor& rows, int64_t keys,
                    int64_t offset) const override {
    const auto [pos, key] = positions(rows, keys, offset);
    at::Tensor out = at::zeros({rows.size(0), keys}, rows.options().dtype(at::kBool));
    if (p.window_left >= 0) out = out.logical_or(key < pos - p.window_left);
    if (p.right_edge() >= 0) out = out.logical_or(key > pos + p.right_edge());
    return out;
  }
  std::vector<PointVariant> without(const InputTensors& in) const override {
    InputTensors copy = in;
    copy.problem.window_left = copy.problem.window_right = -1;
    return {{"window", std::move(copy), "", ""}};
  }
};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_VARIANT(window, Window, WindowTensors)
}  // namespace attnbench
