// `dsa`: DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): MLA in its absorbed form, q of
// kv_lora_rank + qk_rope_head_dim features against one latent cache of the same width whose first
// kv_lora_rank columns are v (MLA's widths: kinds/mla.cpp), where each query row attends only to
// its own top-k tokens, chosen by the model's lightning indexer. Its input `indices` (int32, shaped
// like q's rows: [batch, seq_len, index_topk] or packed [total_q, index_topk]) holds each row's
// token positions in its sequence, distinct, in no order, each at or before the query's position
// (causal, bottom-right), the valid ones first and -1 after them where a query sees fewer than
// index_topk tokens. Which tokens: `index_pattern`, uniform (drawn among those the query sees),
// recent(N) (the N last, then drawn among the older), or file(PATH), a replayed index file. The
// work model counts the selected tokens alone; its checks: the indices ignored (attention over
// every token the query sees) and read one token off either way.
#include "kinds/list.hpp"
#include "kinds/problem_kind.hpp"
#include "kinds/problem.hpp"

#include "base/hash.hpp"
#include "base/names.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace attnbench {

std::vector<Field<Problem>> latent_width_fields();  // mla.cpp: the widths DSA shares

namespace {

constexpr const char* kDsa = "dsa";
constexpr int64_t kTopk = 2048;  // DeepSeek-V3.2's and GLM-5's index_topk

// How a point's indices are chosen (index_pattern).
struct IndexPattern {
  enum Form { uniform, recent, file } form = uniform;
  int64_t recent_tokens = 0;  // recent: the last N tokens, 0: a quarter of index_topk
  std::string path;           // file
};

IndexPattern parse_pattern(const std::string& text) {
  const std::string forms =
      "index_pattern is uniform, recent, recent(N) (the N last tokens, then drawn among the older) "
      "or file(PATH) (a replayed index file), not '" + text + "'";
  IndexPattern out;
  auto argument = [&](const std::string& name) -> std::optional<std::string> {
    if (text.rfind(name + "(", 0) != 0 || text.back() != ')') return std::nullopt;
    return text.substr(name.size() + 1, text.size() - name.size() - 2);
  };
  if (text == "uniform") return out;
  if (text == "recent") return out.form = IndexPattern::recent, out;
  if (const auto n = argument("recent")) {
    out.form = IndexPattern::recent;
    FieldValue v;
    try {
      v = parse_field_text(FieldType::integer, *n);
    } catch (const std::invalid_argument&) {
    }
    const int64_t* count = std::get_if<int64_t>(&v);
    if (!count || *count < 1 || *count > (int64_t{1} << 30)) throw std::invalid_argument(forms);
    out.recent_tokens = *count;
    return out;
  }
  if (const auto path = argument("file"); path && !path->empty())
    return out.form = IndexPattern::file, out.path = *path, out;
  throw std::invalid_argument(forms);
}

int64_t topk_of(const Problem& p) { return static_cast<int64_t>(p.extra_number("index_topk", kTopk)); }
IndexPattern pattern_of(const Problem& p) {
  const std::string* text = p.extra_text("index_pattern");
  return parse_pattern(text ? *text : "uniform");
}

// The tokens query row i of a sequence with `queries` queries and `keys` keys selects: as many as
// it sees (causal: its position + 1), at most index_topk.
int64_t selected(int64_t topk, int64_t queries, int64_t keys, int64_t i) {
  return std::clamp<int64_t>(keys - queries + i + 1, 0, topk);
}

// Selected (query row, token) pairs of one sequence.
double sequence_selected(int64_t topk, int64_t queries, int64_t keys) {
  double pairs = 0;
  for (int64_t i = 0; i < queries; ++i) pairs += static_cast<double>(selected(topk, queries, keys, i));
  return pairs;
}

double selected_pairs(const Problem& p) {
  const int64_t topk = topk_of(p);
  if (!p.ragged())
    return static_cast<double>(p.batch) * sequence_selected(topk, p.seq_len, p.seq_len_kv);
  double pairs = 0;
  for (int64_t b = 0; b < p.batch; ++b) pairs += sequence_selected(topk, p.q_len(b), p.kv_len(b));
  return pairs;
}

double element_bytes(DType d) { return d == DType::fp8_e4m3 ? 1 : d == DType::f32 ? 4 : 2; }

Field<Problem> topk_field() {
  Field<Problem> f = extra_field("index_topk", FieldType::integer, "count",
                                 "dsa: the tokens each query attends to, chosen by the indexer "
                                 "(DeepSeek-V3.2, GLM-5: 2048)",
                                 int64_t{kTopk});
  f.id_part = [](const Problem& p) { return "-topk" + std::to_string(topk_of(p)); };
  const auto set = f.set;
  f.set = [set](Problem& p, const FieldValue& v) {
    if (const int64_t* k = std::get_if<int64_t>(&v); k && (*k < 1 || *k > (int64_t{1} << 20)))
      throw std::invalid_argument("index_topk is a count of tokens from 1 to 1048576, not " +
                                  std::to_string(*k));
    set(p, v);
  };
  return owned_by(kDsa, f);
}

Field<Problem> pattern_field() {
  Field<Problem> f = extra_field(
      "index_pattern", FieldType::text, "",
      "dsa: which tokens each query selects: `uniform` (drawn among those it sees), `recent` or "
      "`recent(N)` (its N last, a quarter of index_topk unless written, then drawn among the "
      "older), `file(PATH)` (a replayed index file: a line a query, token distances back from its "
      "position, the best first; docs/kinds.md)",
      std::string("uniform"));
  f.example = "recent(256)";
  const auto set = f.set;
  f.set = [set](Problem& p, const FieldValue& v) {
    if (const std::string* text = std::get_if<std::string>(&v); text && !text->empty())
      parse_pattern(*text);  // throws what is wrong
    set(p, v);
  };
  f.id_part = [](const Problem& p) -> std::string {
    const IndexPattern pattern = pattern_of(p);
    if (pattern.form == IndexPattern::uniform) return "";
    if (pattern.form == IndexPattern::recent)
      return "-recent" + (pattern.recent_tokens ? std::to_string(pattern.recent_tokens) : "");
    return "-replay-" + std::filesystem::path(pattern.path).stem().string() + "-" +
           fnv1a_hex(pattern.path).substr(0, 6);
  };
  return owned_by(kDsa, f);
}

}  // namespace

// The top-k DSA's indexer picks and its attention reads: one field of both kinds
// (kinds/dsa_indexer.cpp).
std::vector<Field<Problem>> index_topk_fields();
#ifndef ATTNBENCH_TENSORS
std::vector<Field<Problem>> index_topk_fields() { return {topk_field()}; }
#endif

namespace {

class DsaKind final : public ProblemKind {
 public:
  std::string name() const override { return kDsa; }
  std::string summary() const override {
    return "DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): absorbed MLA over each query's top "
           "index_topk tokens of the latent cache (input `indices`)";
  }
  std::string id_prefix() const override { return "dsa-"; }
  std::vector<Field<Problem>> own_fields() const override {
    std::vector<Field<Problem>> fields;
    for (Field<Problem>& f : latent_width_fields()) fields.push_back(owned_by(kDsa, std::move(f)));
    fields.push_back(topk_field());
    fields.push_back(pattern_field());
    return fields;
  }
  // Its indices select among the tokens a query sees (causal), and it is served (forward).
  std::vector<std::string> derived_axes() const override {
    return {"head_dim", "kv_heads", "causal", "direction"};
  }
  void complete(Problem& p) const override {
    p.causal = true;
    p.direction = Direction::fwd;
    p.mla.absorbed = true;
    p.head_dim = p.mla.kv_lora_rank + p.mla.qk_rope_head_dim;
    p.head_dim_v = p.mla.kv_lora_rank;
    p.v_in_k = true;
    p.kv_heads = 1;
    if (p.scale == 0) p.scale = default_scale(p);
  }
  double default_scale(const Problem& p) const override {
    return 1.0 / std::sqrt(static_cast<double>(p.mla.qk_nope_head_dim + p.mla.qk_rope_head_dim));
  }
  void settle(Problem& p, const std::string& config_dir) const override {
    IndexPattern pattern = pattern_of(p);
    if (pattern.form != IndexPattern::file) return;
    std::filesystem::path path(pattern.path);
    if (path.is_relative()) path = std::filesystem::path(config_dir) / path;
    std::string resolved = "file(" + std::filesystem::absolute(path).lexically_normal().string() + ")";
    for (auto& [key, value] : p.extra)
      if (key == "index_pattern") value = resolved;
  }
  std::optional<FieldRefusal> refuse(const Problem& p) const override {
    const IndexPattern pattern = pattern_of(p);
    if (pattern.form == IndexPattern::recent && pattern.recent_tokens > topk_of(p))
      return FieldRefusal{"index_pattern", "recent(" + std::to_string(pattern.recent_tokens) +
                                               ") selects more recent tokens than index_topk " +
                                               std::to_string(topk_of(p))};
    if (pattern.form == IndexPattern::file && !std::filesystem::is_regular_file(pattern.path))
      return FieldRefusal{"index_pattern", "no index file " + pattern.path};
    return std::nullopt;
  }
  std::vector<std::string> input_names() const override { return {"indices"}; }
  std::vector<std::string> check_names() const override {
    return {"indices", "indices+1", "indices-1"};
  }
  // Two matrix products over the selected pairs alone: 2 (head_dim + head_dim_v) a pair and head.
  double flop(const Problem& p) const override {
    return 2.0 * static_cast<double>(p.heads) *
           static_cast<double>(p.head_dim + p.v_dim()) * selected_pairs(p);
  }
  // q and the output once, each selected token's cache row once per query row that selects it
  // (head_dim elements of the cache's dtype: 1152 bytes in bf16, 576 in fp8), the indices and the
  // page table: the floor a kernel that gathers each row's tokens reads.
  double bytes(const Problem& p) const override {
    const double in = element_bytes(p.dtype), cache = element_bytes(p.cache_dtype());
    const double rows = static_cast<double>(total_q_tokens(p));
    const double heads = static_cast<double>(p.heads);
    double pages = 0;
    if (p.paged() && p.page_size > 0)
      for (int64_t b = 0; b < p.batch; ++b)
        pages += std::ceil(static_cast<double>(p.kv_len(b)) / static_cast<double>(p.page_size));
    return rows * heads * static_cast<double>(p.head_dim) * in +
           rows * heads * static_cast<double>(p.v_dim()) * in +
           selected_pairs(p) * static_cast<double>(p.head_dim) * cache +
           rows * static_cast<double>(topk_of(p)) * 4 + pages * 4;
  }
  // Each row's softmax runs over its selected tokens, not the cache.
  double tolerance(double base, const Problem& p) const override {
    Problem reduced = p;
    reduced.seq_len_kv = std::min(p.seq_len_kv, topk_of(p));
    return scaled_tolerance(base, reduced);
  }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

#include <random>
#include <unordered_set>

namespace attnbench {
namespace {

// A replayed index file's rows: each a list of distances back from the query's position (0: its
// own token), the best first. Read once a path.
const std::vector<std::vector<int64_t>>& index_file(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::vector<int64_t>>> files;
  std::lock_guard<std::mutex> lock(mutex);
  auto [at, added] = files.try_emplace(path);
  if (!added) return at->second;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the index file " + path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    for (char& c : line)
      if (c == ',') c = ' ';
    std::istringstream words(line);
    std::vector<int64_t> row;
    std::string word;
    while (words >> word) {
      size_t used = 0;
      long long d = -1;
      try {
        d = std::stoll(word, &used);
      } catch (const std::exception&) {
      }
      if (used != word.size() || d < 0)
        throw std::runtime_error(path + ":" + std::to_string(number) +
                                 ": a distance is a count of tokens back from the query (0: its "
                                 "own), not '" + word + "'");
      row.push_back(d);
    }
    if (!row.empty()) at->second.push_back(std::move(row));
  }
  if (at->second.empty()) throw std::runtime_error("the index file " + path + " has no row");
  return at->second;
}

// Each query row's positions among the `visible` tokens 0 .. visible-1 it sees, in no order: the
// pattern's choice, then drawn uniformly among the rest until min(topk, visible) are chosen.
void select_row(const IndexPattern& pattern, int64_t topk, int64_t visible, int64_t row,
                std::mt19937_64& rng, std::unordered_set<int64_t>& chosen, int32_t* out) {
  const int64_t count = std::min(topk, visible);
  chosen.clear();
  std::vector<int64_t> picked;
  picked.reserve(static_cast<size_t>(count));
  auto take = [&](int64_t position) {
    if (static_cast<int64_t>(picked.size()) < count && chosen.insert(position).second)
      picked.push_back(position);
  };
  const int64_t pos = visible - 1;  // the query's own
  if (pattern.form == IndexPattern::recent) {
    const int64_t recent = pattern.recent_tokens ? pattern.recent_tokens : std::max<int64_t>(1, topk / 4);
    for (int64_t d = 0; d < std::min(recent, visible); ++d) take(pos - d);
  } else if (pattern.form == IndexPattern::file) {
    const auto& rows = index_file(pattern.path);
    for (int64_t d : rows[static_cast<size_t>(row) % rows.size()])
      if (d < visible) take(pos - d);
  }
  // Floyd's sampling of the rest: uniform among the tokens not chosen yet.
  std::uniform_int_distribution<int64_t> any(0, visible - 1);
  while (static_cast<int64_t>(picked.size()) < count) take(any(rng));
  std::shuffle(picked.begin(), picked.end(), rng);
  for (int64_t i = 0; i < topk; ++i)
    out[i] = i < count ? static_cast<int32_t>(picked[static_cast<size_t>(i)]) : -1;
}

// Each query row's position in its sequence ([rows], int64 on the host): i + kv_len - q_len.
std::vector<int64_t> row_positions(const Problem& p) {
  std::vector<int64_t> out;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t i = 0; i < p.q_len(b); ++i) out.push_back(p.kv_len(b) - p.q_len(b) + i);
  return out;
}

// The indices as [rows, topk] (packed: they are; uniform: [batch, seq_len, topk] flattened).
at::Tensor flat_rows(const at::Tensor& indices) { return indices.reshape({-1, indices.size(-1)}); }

class DsaTensors final : public KindTensors {
 public:
  void draw(InputTensors& in) const override {
    draw_layout(in);
    const Problem& p = in.problem;
    const int64_t topk = topk_of(p);
    const IndexPattern pattern = pattern_of(p);
    const std::vector<int64_t> pos = row_positions(p);
    at::Tensor indices = at::empty({static_cast<int64_t>(pos.size()), topk}, at::kInt);
    std::mt19937_64 rng(in.seed ^ 0xd5a1d5a1ULL);
    std::unordered_set<int64_t> chosen;
    chosen.reserve(static_cast<size_t>(2 * topk));
    int32_t* rows = indices.data_ptr<int32_t>();
    for (size_t r = 0; r < pos.size(); ++r)
      select_row(pattern, topk, pos[r] + 1, static_cast<int64_t>(r), rng, chosen,
                 rows + static_cast<int64_t>(r) * topk);
    if (!p.packed()) indices = indices.view({p.batch, p.seq_len, topk});
    in.set_input("indices", indices.to(in.q.device()));
  }

  // Each row's valid entries rotated among the tokens it sees, (index + by) mod (position + 1):
  // still distinct and visible, every one moved where the row sees two tokens or more.
  void move(InputTensors& in, int64_t shift) const override {
    const at::Tensor& indices = in.input("indices");
    const at::Tensor visible =
        at::tensor(row_positions(in.problem), at::TensorOptions().dtype(at::kLong))
            .add_(1)
            .to(indices.device())
            .unsqueeze(1);
    const at::Tensor by = at::full_like(visible, shift).remainder((visible - 1).clamp_min(1)) + 1;
    const at::Tensor rows = flat_rows(indices).to(at::kLong);
    const at::Tensor moved = at::where(rows >= 0, (rows + by).remainder(visible), rows);
    flat_rows(indices).copy_(moved.to(at::kInt));
  }

  // Each row against its selected tokens alone, gathered: the scores [heads, n, topk], the
  // invalid entries (-1) masked, the values of the same tokens. Rows in blocks of a bounded size.
  at::Tensor attend(const InputTensors& in, int64_t b, const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v, const at::Tensor& rows, int64_t first_head) const override {
    const Problem& p = in.problem;
    int64_t start = 0;  // sequence b's first row in the flat indices
    for (int64_t i = 0; i < b; ++i) start += p.q_len(i);
    const at::Tensor indices = flat_rows(in.input("indices")).to(q.device());
    const int64_t topk = indices.size(1), n = rows.size(0);
    const at::Tensor keys = k.reshape({-1, k.size(-1)}), values = v.reshape({-1, v.size(-1)});
    const int64_t block = std::max<int64_t>(1, (int64_t{1} << 24) / (topk * keys.size(1)));
    std::vector<at::Tensor> out;
    for (int64_t at_row = 0; at_row < n; at_row += block) {
      const int64_t m = std::min(block, n - at_row);
      const at::Tensor idx =
          indices.index_select(0, rows.narrow(0, at_row, m).to(q.device()) + start).to(at::kLong);
      const at::Tensor valid = idx >= 0, flat = idx.clamp_min(0).view({-1});
      const at::Tensor k_sel = keys.index_select(0, flat).view({m, topk, -1});
      const at::Tensor v_sel = values.index_select(0, flat).view({m, topk, -1});
      // q [kv_heads(1), group, n, d]: the rows of this block, every head
      const at::Tensor q_rows = q.narrow(-2, at_row, m);
      const at::Tensor scores = at::einsum("...hnd,ntd->...hnt", {q_rows, k_sel}) * in.scale;
      const at::Tensor weights = softmax_of(in, scores, valid.logical_not(), first_head);
      out.push_back(at::einsum("...hnt,ntd->...hnd", {weights, v_sel}));
    }
    return at::cat(out, -2);
  }

  std::vector<PointVariant> checks(const InputTensors& in) const override {
    std::vector<PointVariant> out;
    // Every token the query sees: the same latent attention, dense (kind mla, absorbed).
    InputTensors dense = in;
    dense.problem.kind = "mla";
    dense.set_input("indices", at::Tensor());
    out.push_back({"indices", std::move(dense),
                   "attention over every token the query sees, not its selected ones",
                   "indices ignored"});
    const at::Tensor rows = flat_rows(in.input("indices")).to(at::kLong);
    const at::Tensor last =
        at::tensor(row_positions(in.problem), at::TensorOptions().dtype(at::kLong))
            .to(rows.device())
            .unsqueeze(1);
    for (int64_t by : {int64_t{1}, int64_t{-1}}) {
      // Each index one token late (early), kept among the tokens the query sees.
      const at::Tensor off = at::where(rows >= 0, (rows + by).clamp(0).minimum(last), rows);
      InputTensors misread = in;
      misread.set_input("indices", off.to(at::kInt).view(in.input("indices").sizes()));
      const std::string name = by > 0 ? "indices+1" : "indices-1";
      out.push_back({name, std::move(misread),
                     std::string("attention over each selected token's ") +
                         (by > 0 ? "next" : "previous") + " one",
                     "indices read one token " + std::string(by > 0 ? "late" : "early")});
    }
    return out;
  }

  bool checks_backward() const override { return false; }
};

}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_KIND(dsa, DsaKind, DsaTensors)
}  // namespace attnbench
