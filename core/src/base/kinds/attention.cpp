// `attention`: multi-head and grouped-query attention, q·k and v of one width (head_dim), with its
// variants: ragged lengths and paged caches (common fields), a sliding window, a softcap,
// attention sinks and chunked local attention (its own). The kind every sweep had before kinds,
// so its ids have no prefix.
#include "base/kinds/problem_kind.hpp"

#include "base/names.hpp"

#include <cmath>
#include <cstdio>

namespace attnbench {

namespace {

// window: "LEFT,RIGHT", or empty when both are unbounded.
Field<Problem> window_field() {
  Field<Problem> f;
  f.name = "window";
  f.type = FieldType::text;
  f.example = "4,0";
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

Field<Problem> softcap_field() {
  Field<Problem> f = field(
      "softcap", &Problem::softcap, "",
      "above 0: scores s become softcap * tanh(s / softcap) before the softmax (Gemma-2: 50)");
  f.id_part = [](const Problem& p) -> std::string {
    if (p.softcap <= 0) return "";
    char cap[32];
    std::snprintf(cap, sizeof cap, "-cap%g", p.softcap);
    return cap;
  };
  return f;
}

// sinks: gpt-oss's learned logit per head in every row's softmax; the harness draws the logits.
Field<Problem> sinks_field() {
  Field<Problem> f = field("sinks", &Problem::sinks, "",
                           "attention sinks (gpt-oss): a logit per query head joins every row's "
                           "softmax (drawn from the seed near the scores' log-sum-exp)");
  f.id_part = [](const Problem& p) { return std::string(p.sinks ? "-sinks" : ""); };
  return f;
}

// chunk: Llama 4's chunked local attention, keys of the query's own chunk of positions.
Field<Problem> chunk_field() {
  Field<Problem> f = field("chunk", &Problem::chunk, "count",
                           "chunked local attention (Llama 4: 8192): a query sees the keys of its "
                           "own chunk of positions only; unset (empty): none");
  f.id_part = [](const Problem& p) {
    return p.chunk > 0 ? "-chunk" + std::to_string(p.chunk) : std::string();
  };
  return f;
}

class AttentionKind final : public ProblemKind {
 public:
  std::string name() const override { return "attention"; }
  std::string summary() const override {
    return "multi-head and grouped-query attention: q, k and v of head_dim features, a softmax "
           "scale of 1/sqrt(head_dim) unless written";
  }
  std::string id_prefix() const override { return ""; }
  std::vector<Field<Problem>> own_fields() const override {
    return {owned_by(name(), window_field()), owned_by(name(), softcap_field()),
            owned_by(name(), sinks_field()), owned_by(name(), chunk_field())};
  }
  void complete(Problem& p) const override {
    p.head_dim_v = p.head_dim;
    p.v_in_k = false;
    if (p.scale == 0) p.scale = default_scale(p);
  }
  double default_scale(const Problem& p) const override {
    return 1.0 / std::sqrt(static_cast<double>(p.head_dim));
  }
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
    if (p.sinks && p.direction == Direction::bwd)
      return FieldRefusal{"direction",
                          "attention sinks are checked in the forward pass only (the sinks' own "
                          "gradient is not checked here)"};
    // A cap past the dtype's largest number is infinite in it: every score NaN.
    const double largest = p.dtype == DType::f16 ? 65504.0 : 3.3895313892515355e38;
    if (p.softcap > largest)
      return FieldRefusal{"softcap", "softcap " + format_number(p.softcap) +
                                         " is past the largest number of " + to_string(p.dtype) +
                                         "'s scores (" + format_number(largest) + ")"};
    return std::nullopt;
  }
};

}  // namespace

const ProblemKind& attention_kind() {
  static const AttentionKind kind;
  return kind;
}

}  // namespace attnbench
