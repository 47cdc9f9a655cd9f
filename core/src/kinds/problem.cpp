#include "kinds/problem.hpp"

#include "base/hash.hpp"
#include "kinds/problem_kind.hpp"
#include "kinds/variant.hpp"
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

// A length spec as part of an id: letters, digits, '.' and '-' as they are, a mix's counts written
// COUNTxSPEC (its '*' as 'x': the mix 2*32 + 2*1 and the list 2,32,2,1 are two ids), runs of the
// rest as one '-'. What that would lose (another character, or a file name holding anything but
// letters, digits, '.' and '-': a+b.csv and a_b.csv are two files) is kept by the spec's hash, as
// is a long one's tail (a list of 256 lengths).
std::string id_word(const std::string& spec) {
  std::string word;
  bool lossy = false, counted = false;  // counted: right after a count's 'x'
  int depth = 0;                        // inside parentheses (a file, a distribution's numbers)
  const bool file = spec.find("histogram(") != std::string::npos;
  for (char c : spec) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (!plain && std::string("(),*+ ").find(c) == std::string::npos) lossy = true;
    if (depth > 0 && file && !plain && c != '(') lossy = true;
    if (depth > 0 && c == '+') lossy = true;  // a number's exponent: 2e+1 and 2e-1 both read 2e-1
    if (plain) {
      word += c;
      counted = false;
    } else if (c == '*') {
      while (!word.empty() && word.back() == '-') word.pop_back();
      word += 'x';
      counted = true;
    } else if (!counted && !word.empty() && word.back() != '-') {
      word += '-';
    }
  }
  while (!word.empty() && word.back() == '-') word.pop_back();
  if (lossy) return word + "-" + fnv1a_hex(spec).substr(0, 8);
  if (word.size() > 32) word = word.substr(0, 20) + "-" + fnv1a_hex(spec).substr(0, 8);
  return word;
}

// `f` refusing values past `most` (where the arithmetic on it stays finite: widths summed, tokens
// counted in int32) or below `least`, saying why: a sweep's key, a report's cell read back.
Field<Problem> bounded(Field<Problem> f, double least, double most, const std::string& why) {
  f.set = [set = std::move(f.set), name = f.name, least, most, why](Problem& p,
                                                                    const FieldValue& v) {
    const double* d = std::get_if<double>(&v);
    const int64_t* i = std::get_if<int64_t>(&v);
    const double x = d ? *d : i ? static_cast<double>(*i) : least;
    if (!(x >= least && x <= most))
      throw std::invalid_argument(name + " is from " + format_number(least) + " to " +
                                  format_number(most) + " (" + why + "), not " + field_text(v));
    set(p, v);
  };
  return f;
}

// A field with its part of the point id.
Field<Problem> id_field(Field<Problem> f, std::function<std::string(const Problem&)> id_part) {
  f.id_part = std::move(id_part);
  return f;
}

std::string count_part(const char* word, int64_t n) { return word + std::to_string(n); }

// The kinds' names in words, for the field's doc: "`attention` (default), `mla` or `dsa`".
std::string kind_names() {
  std::string out;
  const auto& kinds = problem_kinds();
  for (size_t i = 0; i < kinds.size(); ++i)
    out += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + ("`" + kinds[i]->name() + "`") +
           (i == 0 ? " (default)" : "");
  return out;
}

// A kind's or variant's field joined to the table: a field of the same name another kind has
// brought already is one field of both (the same type), else it is appended.
void join(std::vector<Field<Problem>>& fields, Field<Problem> f) {
  for (Field<Problem>& had : fields)
    if (had.name == f.name) {
      if (had.type != f.type || had.kinds.empty() || f.kinds.empty())
        throw std::logic_error("two fields named '" + f.name + "' that are not one field");
      for (const std::string& k : f.kinds)
        if (std::find(had.kinds.begin(), had.kinds.end(), k) == had.kinds.end())
          had.kinds.push_back(k);
      return;
    }
  fields.push_back(std::move(f));
}

// A field of some kinds only: empty (not measured) on other kinds' rows, and an empty cell read
// back leaves the problem as it was.
void own(Field<Problem>& f) {
  if (f.kinds.empty()) return;
  f.get = [kinds = f.kinds, get = std::move(f.get)](const Problem& p) {
    return std::find(kinds.begin(), kinds.end(), p.kind) != kinds.end() ? get(p) : FieldValue{};
  };
  f.set = [set = std::move(f.set)](Problem& p, const FieldValue& v) {
    if (!std::holds_alternative<std::monostate>(v)) set(p, v);
  };
}

// The kind: one of problem_kinds()'s names; its id part is the kind's id prefix.
Field<Problem> kind_field() {
  Field<Problem> f = field("kind", &Problem::kind, "",
                           "the problem kind (docs/kinds.md): " + kind_names());
  f.example = problem_kinds().back()->name();
  f.set = [](Problem& p, const FieldValue& v) {
    Problem probe;
    probe.kind = field_detail::as<std::string>(v);
    kind_of(probe);  // throws, naming the kinds, for one there is not
    p.kind = probe.kind;
  };
  return f;
}

bool fields_made = false;

std::vector<Field<Problem>> make_problem_fields() {
  using P = Problem;
  // The common fields in the order reports have always had them, each kind's own in the kinds'
  // order, then what kinds brought. A point's id is its kind's prefix and the parts of its
  // kind's axes, in this order.
  std::vector<Field<P>> fields = {
      id_field(
          field("batch", &P::batch, "count", "sequences; q is [batch, heads, seq_len, head_dim]"),
          [](const P& p) { return count_part("b", p.batch); }),
      id_field(bounded(field("heads", &P::heads, "count", "query heads"), 1, 1 << 20,
                       "heads of a layer"),
               [](const P& p) { return count_part("-h", p.heads); }),
      id_field(bounded(field("kv_heads", &P::kv_heads, "count",
                             "key/value heads; below `heads`: grouped-query attention (head h "
                             "reads h / group)"),
                       1, 1 << 20, "heads of a layer"),
               [](const P& p) {
                 return p.kv_heads == p.heads ? std::string() : count_part("-kv", p.kv_heads);
               }),
      id_field(bounded(field("seq_len", &P::seq_len, "count",
                             "query positions per sequence (decode: 1)"),
                       1, 2147483647.0, "token offsets are int32"),
               [](const P& p) { return count_part("-s", p.seq_len); }),
      id_field(bounded(field("seq_len_kv", &P::seq_len_kv, "count",
                             "key/value positions; above seq_len a query block runs against a "
                             "longer cache"),
                       1, 2147483647.0, "token offsets are int32"),
               [](const P& p) {
                 return p.seq_len_kv == p.seq_len ? std::string()
                                                  : count_part("-skv", p.seq_len_kv);
               }),
      id_field(bounded(field("head_dim", &P::head_dim, "count",
                             "features of q and k per head (a kind may derive it from its own "
                             "widths)"),
                       1, 1 << 16, "features of a head"),
               [](const P& p) { return count_part("-d", p.head_dim); }),
      id_field(field("dtype", &P::dtype, "", "`fp16`, `bf16` or `fp32`"),
               [](const P& p) { return "-" + to_string(p.dtype); }),
      id_field(field("kv_dtype", &P::kv_dtype, "",
                     "the KV cache's dtype: `fp8_e4m3` under bf16 or fp16 queries (a scale each "
                     "for k and v); unset: dtype"),
               [](const P& p) {
                 return p.cache_dtype() == p.dtype ? std::string() : "-kv" + to_string(p.cache_dtype());
               }),
      id_field(field("causal", &P::causal, "",
                     "causal mask aligned bottom-right (query i sees keys 0 .. i + seq_len_kv - "
                     "seq_len)"),
               [](const P& p) { return std::string(p.causal ? "-causal" : "-full"); }),
      id_field(field("device", &P::device, "", "`cpu` or `cuda`"),
               [](const P& p) { return "-" + to_string(p.device); }),
      id_field(field("direction", &P::direction, "",
                     "`fwd`, or `bwd`: the backward pass alone is timed (docs/timing.md)"),
               [](const P& p) {
                 return p.direction == Direction::fwd ? std::string()
                                                      : "-" + to_string(p.direction);
               }),
      id_field(length_field("seq_lens", &P::seq_lens,
                            "each sequence's query length: a number, a list, uniform(LO,HI), "
                            "normal(MEAN,STD), lognormal(MEDIAN,SIGMA) or histogram(FILE) drawn "
                            "from the seed (docs/workloads.md); empty: seq_len for all",
                            "uniform(2,9)"),
               [](const P& p) {
                 return p.seq_lens.empty() || !p.ragged() ? std::string()
                                                          : "-qlens-" + id_word(p.seq_lens);
               }),
      id_field(length_field("seq_lens_kv", &P::seq_lens_kv,
                            "each sequence's key/value length, the same forms; empty: its query "
                            "length when seq_lens is drawn, else seq_len_kv",
                            "uniform(10,20)"),
               [](const P& p) {
                 return p.seq_lens_kv.empty() || !p.ragged() ? std::string()
                                                             : "-kvlens-" + id_word(p.seq_lens_kv);
               }),
      id_field(field("kv_layout", &P::kv_layout, "",
                     "`contiguous`, or `paged`: k and v are caches of pages read through a page "
                     "table"),
               [](const P& p) { return std::string(p.paged() ? "-paged" : ""); }),
      id_field(
          bounded(field("page_size", &P::page_size, "count", "tokens per page of a paged cache"), 0,
                  1 << 20, "tokens of a page"),
          [](const P& p) { return std::to_string(p.page_size); }),  // "-paged16"
      id_field(field("page_order", &P::page_order, "",
                     "`in_order` (each sequence's pages one after another) or `shuffled` (a "
                     "random permutation from the seed, as a serving engine's cache ends up)"),
               [](const P& p) {
                 return std::string(p.page_order == PageOrder::shuffled ? "-shuffled" : "");
               }),
  };
  for (Field<P>& f : fields)
    if (f.name == "page_size" || f.name == "page_order") {
      f.applies = [](const P& p) { return p.paged(); };
      f.applies_to = "it is a paged cache's: add kv_layout: paged";
    }
  // The variants' fields (each its kinds'), then the kinds' own, a field two kinds share once.
  const size_t common = fields.size();
  for (const ProblemVariant* variant : problem_variants())
    for (Field<P>& f : variant->fields()) join(fields, owned_by(variant->kinds(), std::move(f)));
  for (const ProblemKind* kind : problem_kinds())
    for (Field<P>& f : kind->own_fields()) join(fields, std::move(f));
  for (size_t i = common; i < fields.size(); ++i) own(fields[i]);

  fields.push_back(kind_field());
  Field<P> scale = id_field(
      bounded(
          field("scale", &P::scale, "",
                "the softmax scale; unless written, the kind's (docs/kinds.md; 1/sqrt(head_dim) "
                "unless the kind says otherwise)"),
          0, 1e30, "the scaled scores stay within float32's range"),
      [](const P& p) {
        return p.scale == 0 || p.scale == kind_of(p).default_scale(p)
                   ? std::string()
                   : "-scale" + format_number(p.scale);
      });
  scale.above_zero = true;
  fields.push_back(scale);
  Field<P> head_dim_v = bounded(field("head_dim_v", &P::head_dim_v, "count",
                                      "features of v and of the output per head (attention: "
                                      "head_dim)"),
                                1, 1 << 16, "features of a head");
  head_dim_v.derived = true;
  head_dim_v.get = [](const P& p) -> FieldValue { return p.v_dim(); };  // 0 in a Problem: head_dim
  fields.push_back(head_dim_v);
  Field<P> v_in_k = field("v_in_k", &P::v_in_k, "",
                          "v is k's first head_dim_v columns, a view of one cache (a latent cache)");
  v_in_k.derived = true;
  fields.push_back(v_in_k);
  // Which plots the point shares (plots.py): its kind's family, the id without the batch and the
  // lengths.
  Field<P> family;
  family.name = "family";
  family.doc = "the point's plot family: its id without the batch and the lengths (the kind's)";
  family.derived = true;
  family.get = [](const P& p) -> FieldValue {
    const ProblemKind* kind = find_problem_kind(p.kind);
    return kind ? kind->plot_family(p) : std::string();
  };
  family.set = [](P&, const FieldValue&) {};  // read off the others
  fields.push_back(family);
  return fields;
}

}  // namespace

const std::vector<Field<Problem>>& problem_fields() {
  static const std::vector<Field<Problem>> fields = [] {
    fields_made = true;
    return make_problem_fields();
  }();
  return fields;
}

bool problem_fields_made() { return fields_made; }

const Field<Problem>* find_problem_field(const std::string& name) {
  return find_field(problem_fields(), name);
}

std::string point_id(const Problem& p) {
  const ProblemKind& kind = kind_of(p);
  std::string id = kind.id_prefix();
  for (const auto& f : problem_fields())
    if (f.id_part && kind_has_axis(kind, f) && (!f.applies || f.applies(p))) id += f.id_part(p);
  return id;
}

namespace {

// The keys 0 .. keys-1 the query at position `pos` sees: causal's and each narrowing variant's
// bounds (kinds/variant.hpp), as [lo, hi] (empty when hi < lo).
std::pair<int64_t, int64_t> visible(const Problem& p,
                                    const std::vector<const ProblemVariant*>& narrowing,
                                    int64_t pos, int64_t keys) {
  int64_t lo = 0, hi = keys - 1;
  if (p.causal) hi = std::min(hi, pos);
  for (const ProblemVariant* v : narrowing) v->narrow(p, pos, keys, lo, hi);
  return {std::max<int64_t>(lo, 0), hi};
}

std::vector<const ProblemVariant*> narrowing(const Problem& p) {
  std::vector<const ProblemVariant*> out;
  for (const ProblemVariant* v : variants_of(p))
    if (v->narrows(p)) out.push_back(v);
  return out;
}

}  // namespace

double sequence_pairs(const Problem& p, int64_t queries, int64_t keys) {
  const double s = static_cast<double>(queries), skv = static_cast<double>(keys);
  const std::vector<const ProblemVariant*> narrow = narrowing(p);
  if (narrow.empty() && !p.causal) return s * skv;
  if (narrow.empty()) {
    // Causal: query i sees keys 0 .. i + skv - s; rows 0 .. s-1 see (skv - s + 1) .. skv keys,
    // each at least none.
    const double offset = skv - s;
    const double first = std::max(0.0, -offset);  // rows before this see no key
    const double rows = s - first;
    return rows > 0 ? rows * (offset + 1) + (first + s - 1) * rows / 2 : 0;
  }
  double pairs = 0;
  for (int64_t i = 0; i < queries; ++i) {
    const auto [lo, hi] = visible(p, narrow, i + keys - queries, keys);
    if (hi >= lo) pairs += static_cast<double>(hi - lo + 1);
  }
  return pairs;
}

double attended_pairs(const Problem& p) {
  if (!p.ragged()) return static_cast<double>(p.batch) * sequence_pairs(p, p.seq_len, p.seq_len_kv);
  double pairs = 0;
  for (int64_t b = 0; b < p.batch; ++b) pairs += sequence_pairs(p, p.q_len(b), p.kv_len(b));
  return pairs;
}

int64_t total_q_tokens(const Problem& p) {
  if (p.q_lens.empty()) return p.batch * p.seq_len;
  int64_t n = 0;
  for (int64_t b = 0; b < p.batch; ++b) n += p.q_len(b);
  return n;
}

int64_t total_kv_tokens(const Problem& p) {
  if (p.kv_lens.empty()) return p.batch * p.seq_len_kv;
  int64_t n = 0;
  for (int64_t b = 0; b < p.batch; ++b) n += p.kv_len(b);
  return n;
}

int64_t keys_read(const Problem& p, int64_t queries, int64_t keys) {
  const std::vector<const ProblemVariant*> narrow = narrowing(p);
  const int64_t lo = visible(p, narrow, keys - queries, keys).first;  // the first query's lowest
  const int64_t hi = visible(p, narrow, keys - 1, keys).second;       // the last one's highest
  return std::max<int64_t>(0, hi - lo + 1);
}

namespace {

double element_bytes(DType d) {
  switch (d) {
    case DType::fp8_e4m3: return 1;
    case DType::f32: return 4;
    default: return 2;
  }
}

}  // namespace

double attention_bytes(const Problem& p) {
  const double in = element_bytes(p.dtype), cache = element_bytes(p.cache_dtype());
  const double out = p.dtype == DType::fp8_e4m3 ? 2 : in;  // fp8 rows write bf16 at most
  const double q_row = static_cast<double>(p.heads) * static_cast<double>(p.head_dim);
  const double out_row = static_cast<double>(p.heads) * static_cast<double>(p.v_dim());
  // One cache row of k and v; v inside k (MLA's latent cache) is read with k, once.
  const double kv_row = static_cast<double>(p.kv_heads) *
                        static_cast<double>(p.head_dim + (p.v_in_k ? 0 : p.v_dim()));
  double q_tokens = 0, kv_tokens = 0, pages = 0;
  const int64_t sequences = p.ragged() ? p.batch : 1;  // a uniform batch's are all alike
  for (int64_t b = 0; b < sequences; ++b) {
    const int64_t keys = keys_read(p, p.q_len(b), p.kv_len(b));
    q_tokens += static_cast<double>(p.q_len(b));
    kv_tokens += static_cast<double>(keys);
    if (p.paged() && p.page_size > 0)
      pages += std::ceil(static_cast<double>(p.kv_len(b)) / static_cast<double>(p.page_size));
  }
  const double copies = static_cast<double>(p.batch / sequences);
  q_tokens *= copies, kv_tokens *= copies, pages *= copies;
  const double q_bytes = q_tokens * q_row, out_bytes = q_tokens * out_row;
  const double kv_bytes = kv_tokens * kv_row;
  if (p.direction == Direction::bwd)  // read q, k, v, out, grad_out; write dq, dk, dv
    return 2 * q_bytes * in + 2 * out_bytes * out + 2 * kv_bytes * cache + pages * 4;
  return q_bytes * in + out_bytes * out + kv_bytes * cache + pages * 4;  // + the page table, int32
}

double scaled_tolerance(double base, const Problem& p) {
  const double dim = std::max(1.0, std::sqrt(static_cast<double>(p.head_dim) / 64.0));
  const double keys = static_cast<double>(p.seq_len_kv);  // ragged: the longest sequence's
  const double length = keys > 1024 ? 1 + std::log2(keys / 1024) / 16 : 1.0;
  return base * dim * length;
}

double attention_flop(const Problem& p) {
  // QK^T and PV: 2 FLOP per multiply-add, head_dim (q·k) and head_dim_v (p·v) multiply-adds per
  // (query, key) pair. In double throughout: the int64 product of batch, heads and widths can
  // overflow.
  const double widths = static_cast<double>(p.head_dim) + static_cast<double>(p.v_dim());
  const double forward = 2.0 * static_cast<double>(p.heads) * widths * attended_pairs(p);
  return p.direction == Direction::bwd ? 2.5 * forward : forward;
}

}  // namespace attnbench
