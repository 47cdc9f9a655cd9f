#include "base/problem.hpp"

#include "base/hash.hpp"
#include "base/lengths.hpp"
#include "base/names.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace attnbench {

namespace {

// A spec the sweep wrote, checked when it is set (the config reader reports the error at its key).
Field<Problem> length_field(std::string name, std::string Problem::*m, std::string doc,
                            std::string example) {
  Field<Problem> f = field(std::move(name), m, "", std::move(doc));
  f.example = std::move(example);
  f.set = [m](Problem& p, const FieldValue& v) {
    const std::string& text = field_detail::as<std::string>(v);
    if (!text.empty()) parse_length_spec(text);
    p.*m = text;
  };
  return f;
}

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
      if (!e || *e < -1)
        throw std::invalid_argument("a window is [LEFT, RIGHT], each -1 (unbounded) or a count "
                                    "of keys, not '" + text + "'");
      return *e;
    };
    if (parts.size() != 2)
      throw std::invalid_argument("a window is [LEFT, RIGHT], two numbers, not '" + text + "'");
    p.window_left = edge(parts[0]);
    p.window_right = edge(parts[1]);
  };
  return f;
}

}  // namespace

const std::vector<Field<Problem>>& problem_fields() {
  using P = Problem;
  static const std::vector<Field<P>> fields = {
      field("batch", &P::batch, "count", "sequences; q is [batch, heads, seq_len, head_dim]"),
      field("heads", &P::heads, "count", "query heads"),
      field("kv_heads", &P::kv_heads, "count",
            "key/value heads; below `heads`: grouped-query attention (head h reads h / group)"),
      field("seq_len", &P::seq_len, "count", "query positions per sequence (decode: 1)"),
      field("seq_len_kv", &P::seq_len_kv, "count",
            "key/value positions; above seq_len a query block runs against a longer cache"),
      field("head_dim", &P::head_dim, "count", "features per head"),
      field("dtype", &P::dtype, "", "`fp16`, `bf16` or `fp32`"),
      field("causal", &P::causal, "",
            "causal mask aligned bottom-right (query i sees keys 0 .. i + seq_len_kv - seq_len)"),
      field("device", &P::device, "", "`cpu` or `cuda`"),
      field("direction", &P::direction, "",
            "`fwd`, or `bwd`: the backward pass alone is timed (docs/timing.md)"),
      length_field("seq_lens", &P::seq_lens,
                   "each sequence's query length: a number, a list, uniform(LO,HI), "
                   "normal(MEAN,STD), lognormal(MEDIAN,SIGMA) or histogram(FILE) drawn from the "
                   "seed (docs/workloads.md); empty: seq_len for all",
                   "uniform(2,9)"),
      length_field("seq_lens_kv", &P::seq_lens_kv,
                   "each sequence's key/value length, the same forms; empty: its query length "
                   "when seq_lens is drawn, else seq_len_kv",
                   "uniform(10,20)"),
      field("kv_layout", &P::kv_layout, "",
            "`contiguous`, or `paged`: k and v are caches of pages read through a page table"),
      field("page_size", &P::page_size, "count", "tokens per page of a paged cache"),
      field("page_order", &P::page_order, "",
            "`in_order` (each sequence's pages one after another) or `shuffled` (a random "
            "permutation from the seed, as a serving engine's cache ends up)"),
      window_field(),
      field("softcap", &P::softcap, "",
            "above 0: scores s become softcap * tanh(s / softcap) before the softmax (Gemma-2: 50)"),
  };
  return fields;
}

const Field<Problem>* find_problem_field(const std::string& name) {
  return find_field(problem_fields(), name);
}


namespace {

// A length spec as part of an id: letters and digits, runs of the rest as one '-'; a long one
// (a list of 256 lengths) shortened and made unique by its hash.
std::string id_word(const std::string& spec) {
  std::string word;
  for (char c : spec) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.')
      word += c;
    else if (!word.empty() && word.back() != '-')
      word += '-';
  }
  while (!word.empty() && word.back() == '-') word.pop_back();
  if (word.size() > 32) word = word.substr(0, 20) + "-" + fnv1a_hex(spec).substr(0, 8);
  return word;
}

}  // namespace

std::string point_id(const Problem& p) {
  std::string id = "b" + std::to_string(p.batch) + "-h" + std::to_string(p.heads);
  if (p.kv_heads != p.heads) id += "-kv" + std::to_string(p.kv_heads);
  id += "-s" + std::to_string(p.seq_len);
  if (p.seq_len_kv != p.seq_len) id += "-skv" + std::to_string(p.seq_len_kv);
  id += "-d" + std::to_string(p.head_dim) + "-" + to_string(p.dtype) +
        (p.causal ? "-causal-" : "-full-") + to_string(p.device);
  if (p.direction != Direction::fwd) id += "-" + to_string(p.direction);
  if (!p.seq_lens.empty() && p.ragged()) id += "-qlens-" + id_word(p.seq_lens);
  if (!p.seq_lens_kv.empty() && p.ragged()) id += "-kvlens-" + id_word(p.seq_lens_kv);
  if (p.paged())
    id += "-paged" + std::to_string(p.page_size) +
          (p.page_order == PageOrder::shuffled ? "-shuffled" : "");
  if (p.window_left >= 0 || p.window_right >= 0)
    id += "-win" + std::to_string(p.window_left) + "_" + std::to_string(p.window_right);
  if (p.softcap > 0) {
    char cap[32];
    std::snprintf(cap, sizeof cap, "-cap%g", p.softcap);
    id += cap;
  }
  return id;
}

double sequence_pairs(int64_t queries, int64_t keys, int64_t window_left, int64_t window_right) {
  const double s = static_cast<double>(queries), skv = static_cast<double>(keys);
  if (window_left < 0 && window_right < 0) return s * skv;
  if (window_left < 0 && window_right == 0) {
    // Causal: query i sees keys 0 .. i + skv - s; rows 0 .. s-1 see (skv - s + 1) .. skv keys,
    // each at least none.
    const double offset = skv - s;
    const double first = std::max(0.0, -offset);  // rows before this see no key
    const double rows = s - first;
    return rows > 0 ? rows * (offset + 1) + (first + s - 1) * rows / 2 : 0;
  }
  double pairs = 0;
  for (int64_t i = 0; i < queries; ++i) {
    const int64_t pos = i + keys - queries;
    const int64_t lo = window_left < 0 ? 0 : std::max<int64_t>(0, pos - window_left);
    const int64_t hi = window_right < 0 ? keys - 1 : std::min(keys - 1, pos + window_right);
    if (hi >= lo) pairs += static_cast<double>(hi - lo + 1);
  }
  return pairs;
}

double attended_pairs(const Problem& p) {
  const int64_t right = p.right_edge();
  if (!p.ragged())
    return static_cast<double>(p.batch) *
           sequence_pairs(p.seq_len, p.seq_len_kv, p.window_left, right);
  double pairs = 0;
  for (int64_t b = 0; b < p.batch; ++b)
    pairs += sequence_pairs(p.q_len(b), p.kv_len(b), p.window_left, right);
  return pairs;
}

int64_t total_q_tokens(const Problem& p) {
  int64_t n = 0;
  for (int64_t b = 0; b < p.batch; ++b) n += p.q_len(b);
  return n;
}

int64_t total_kv_tokens(const Problem& p) {
  int64_t n = 0;
  for (int64_t b = 0; b < p.batch; ++b) n += p.kv_len(b);
  return n;
}

namespace {

// Keys some query of the sequence can see: from the first query's lowest to the last one's highest.
int64_t keys_read(int64_t queries, int64_t keys, int64_t window_left, int64_t window_right) {
  const int64_t first = keys - queries, last = keys - 1;  // positions of the first and last query
  const int64_t lo = window_left < 0 ? 0 : std::max<int64_t>(0, first - window_left);
  const int64_t hi = window_right < 0 ? keys - 1 : std::min(keys - 1, last + window_right);
  return std::max<int64_t>(0, hi - lo + 1);
}

double element_bytes(DType d) {
  switch (d) {
    case DType::fp8_e4m3: return 1;
    case DType::f32: return 4;
    default: return 2;
  }
}

}  // namespace

double attention_bytes(const Problem& p) {
  const double in = element_bytes(p.dtype);
  const double out = p.dtype == DType::fp8_e4m3 ? 2 : in;  // fp8 rows write bf16 at most
  const double q_row = static_cast<double>(p.heads * p.head_dim);
  const double kv_row = static_cast<double>(p.kv_heads * p.head_dim);
  double q_tokens = 0, kv_tokens = 0, pages = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t keys = keys_read(p.q_len(b), p.kv_len(b), p.window_left, p.right_edge());
    q_tokens += static_cast<double>(p.q_len(b));
    kv_tokens += static_cast<double>(keys);
    if (p.paged() && p.page_size > 0)
      pages += std::ceil(static_cast<double>(p.kv_len(b)) / static_cast<double>(p.page_size));
  }
  const double q_bytes = q_tokens * q_row, kv_bytes = kv_tokens * kv_row;
  if (p.direction == Direction::bwd)  // read q, k, v, out, grad_out; write dq, dk, dv
    return q_bytes * (2 * in + 2 * out) + kv_bytes * 4 * in + pages * 4;
  return q_bytes * (in + out) + 2 * kv_bytes * in + pages * 4;  // + the page table, int32
}

double scaled_tolerance(double base, const Problem& p) {
  const double dim = std::max(1.0, std::sqrt(static_cast<double>(p.head_dim) / 64.0));
  const double keys = static_cast<double>(p.seq_len_kv);  // ragged: the longest sequence's
  const double length = keys > 1024 ? 1 + std::log2(keys / 1024) / 16 : 1.0;
  return base * dim * length;
}

double attention_flop(const Problem& p) {
  // QK^T and PV: 2 FLOP per multiply-add, head_dim multiply-adds per (query, key) pair each.
  // In double throughout: the int64 product of batch, heads and head_dim can overflow.
  const double forward = 4.0 * static_cast<double>(p.heads) * static_cast<double>(p.head_dim) *
                         attended_pairs(p);
  return p.direction == Direction::bwd ? 2.5 * forward : forward;
}

}  // namespace attnbench
