#include "base/lengths.hpp"

#include "base/field.hpp"
#include "base/names.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace attnbench {

namespace {

const char* kForms =
    "a length (512), a list (100,2000,37), uniform(LO,HI), normal(MEAN,STD[,MAX]), "
    "lognormal(MEDIAN,SIGMA[,MAX]), histogram(FILE), or a mix of them (2*2048 + 32*1)";

// `text` cut at each `sep` outside parentheses.
std::vector<std::string> top_level_split(const std::string& text, char sep) {
  std::vector<std::string> out{""};
  int depth = 0;
  for (char c : text) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == sep && depth == 0)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

double number(const std::string& text, const std::string& whole) {
  const std::string t = trimmed(text);
  FieldValue value;
  try {
    value = parse_field_text(FieldType::number, t);
  } catch (const std::invalid_argument&) {
  }
  if (const double* v = std::get_if<double>(&value)) return *v;
  throw std::invalid_argument("'" + whole + "': '" + t + "' is not a number; write " + kForms);
}

constexpr double kLongest = 1e9;  // tokens of one sequence: far past any served context

int64_t length(const std::string& text, const std::string& whole) {
  const double v = number(text, whole);
  if (v < 1 || v != std::floor(v) || v > kLongest)
    throw std::invalid_argument("'" + whole + "': a length is a whole number of at least 1, not " +
                                trimmed(text));
  return static_cast<int64_t>(v);
}

// A mix part's count of sequences: a whole number from 1 to a ragged batch's largest.
int64_t counted(const std::string& text, const std::string& whole) {
  const double v = number(text, whole);
  if (v < 1 || v != std::floor(v) || v > static_cast<double>(kMaxRaggedBatch))
    throw std::invalid_argument("'" + whole +
                                "': a part's count of sequences is a whole number "
                                "from 1 to " +
                                std::to_string(kMaxRaggedBatch) + ", not " + trimmed(text));
  return static_cast<int64_t>(v);
}

// splitmix64: a stable stream of 64-bit numbers from a seed.
class Generator {
 public:
  explicit Generator(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {  // Box-Muller
    const double u1 = 1.0 - unit(), u2 = unit();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  int64_t between(int64_t lo, int64_t hi) {  // lo .. hi inclusive
    return lo + static_cast<int64_t>(unit() * static_cast<double>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

}  // namespace

LengthSpec parse_length_spec(const std::string& written) {
  const std::string text = trimmed(written);
  LengthSpec spec;
  const std::vector<std::string> terms = top_level_split(text, '+');
  if (terms.size() > 1 || top_level_split(text, '*').size() > 1) {  // a mixed batch
    spec.form = LengthForm::mix;
    for (const std::string& term : terms) {
      const std::vector<std::string> factors = top_level_split(term, '*');
      if (factors.size() != 2)
        throw std::invalid_argument("'" + text + "': a mixed batch is parts COUNT*LENGTHS joined "
                                    "by '+' (2*2048 + 32*1), not '" + trimmed(term) + "'");
      const int64_t count = counted(factors[0], text);
      LengthSpec part = parse_length_spec(factors[1]);
      if (part.form == LengthForm::mix)
        throw std::invalid_argument("'" + text + "': a part of a mix is not a mix");
      spec.counts.push_back(count);
      spec.parts.push_back(std::move(part));
    }
    return spec;
  }
  const size_t open = text.find('(');
  if (open == std::string::npos) {
    const std::vector<std::string> items = split(text, ',');
    for (const auto& item : items) spec.args.push_back(static_cast<double>(length(item, text)));
    spec.form = items.size() == 1 ? LengthForm::number : LengthForm::list;
    return spec;
  }
  if (text.back() != ')')
    throw std::invalid_argument("'" + text + "' does not end with ')'; write " + kForms);
  const std::string name = trimmed(text.substr(0, open));
  const std::string inside = text.substr(open + 1, text.size() - open - 2);
  if (name == "histogram") {
    spec.form = LengthForm::histogram;
    spec.file = trimmed(inside);
    if (spec.file.empty()) throw std::invalid_argument("'" + text + "' names no file");
    return spec;
  }
  const std::vector<std::string> items = split(inside, ',');
  if (name == "uniform") {
    spec.form = LengthForm::uniform;
    if (items.size() != 2)
      throw std::invalid_argument("'" + text + "': uniform takes two lengths, LO and HI");
    const int64_t lo = length(items[0], text), hi = length(items[1], text);
    if (hi < lo) throw std::invalid_argument("'" + text + "': HI is below LO");
    spec.args = {static_cast<double>(lo), static_cast<double>(hi)};
    return spec;
  }
  if (name != "normal" && name != "lognormal")
    throw std::invalid_argument("unknown length form '" + name + "' in '" + text + "'; write " +
                                kForms);
  spec.form = name == "normal" ? LengthForm::normal : LengthForm::lognormal;
  if (items.size() != 2 && items.size() != 3)
    throw std::invalid_argument("'" + text + "': " + name + " takes " +
                                (name == "normal" ? "MEAN, STD" : "MEDIAN, SIGMA") +
                                " and an optional MAX");
  const double centre = number(items[0], text), spread = number(items[1], text);
  if (centre < 1) throw std::invalid_argument("'" + text + "': the centre is below 1");
  if (centre > kLongest)
    throw std::invalid_argument("'" + text + "': the centre is above 1e9 tokens, the longest a "
                                "sequence may be");
  if (spread < 0) throw std::invalid_argument("'" + text + "': the spread is negative");
  spec.args = {centre, spread};
  if (items.size() == 3) spec.max = length(items[2], text);
  return spec;
}

std::vector<LengthBucket> read_length_histogram(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read the histogram file " + path);
  std::vector<LengthBucket> buckets;
  std::string line;
  bool first = true;  // the first line with content may be a header
  for (int number_of_line = 1; std::getline(in, line); ++number_of_line) {
    if (number_of_line == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 BOM
    line = trimmed(line.substr(0, line.find('#')));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> cells = split(line, ',');
    const std::string where = path + ":" + std::to_string(number_of_line);
    if (cells.size() != 3)
      throw std::invalid_argument(where + ": a bucket is LO,HI,WEIGHT, not '" + line + "'");
    // A header is a first line whose LO is no number ("lo,hi,weight"); "-5" is a number, and
    // a bad one.
    const bool header = first && std::isalpha(static_cast<unsigned char>(trimmed(cells[0])[0]));
    first = false;
    if (header) continue;
    LengthBucket b{};
    try {
      b = {length(cells[0], line), length(cells[1], line), number(cells[2], line)};
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
    if (b.hi <= b.lo || b.weight < 0)
      throw std::invalid_argument(where + ": needs LO < HI and a weight of at least 0");
    buckets.push_back(b);
  }
  double total = 0;
  for (const auto& b : buckets) total += b.weight;
  if (buckets.empty() || total <= 0)
    throw std::invalid_argument(path + ": no bucket with a weight above 0");
  if (!std::isfinite(total))
    throw std::invalid_argument(path + ": the weights sum past the largest number (" +
                                "a double's); scale them down, only their ratios count");
  return buckets;
}

namespace {

std::vector<int64_t> drawn_lengths(const LengthSpec& spec, int64_t batch, uint64_t seed,
                                   const std::string& base_dir) {
  std::vector<int64_t> out;
  if (batch < 1 || batch > kMaxRaggedBatch)
    throw std::invalid_argument("a batch of " + std::to_string(batch) +
                                " sequences with a length each; 1 to " +
                                std::to_string(kMaxRaggedBatch) + " (their offsets are int32)");
  if (spec.form == LengthForm::number)
    return std::vector<int64_t>(batch, static_cast<int64_t>(spec.args.at(0)));
  if (spec.form == LengthForm::mix) {  // each part its own sequences, drawn with its own seed
    const int64_t total = std::accumulate(spec.counts.begin(), spec.counts.end(), int64_t{0});
    if (total != batch)
      throw std::invalid_argument("the mix gives " + std::to_string(total) +
                                  " sequences for a batch of " + std::to_string(batch) +
                                  "; write batch: " + std::to_string(total));
    for (size_t i = 0; i < spec.parts.size(); ++i) {
      const uint64_t part_seed = seed ^ ((i + 1) * 0x9e3779b97f4a7c15ull);
      std::vector<int64_t> part;
      try {
        part = drawn_lengths(spec.parts[i], spec.counts[i], part_seed, base_dir);
      } catch (const std::invalid_argument& e) {  // a part's own batch is its count
        throw std::invalid_argument("part " + std::to_string(i + 1) + " of the mix (" +
                                    std::to_string(spec.counts[i]) + " of the batch's " +
                                    std::to_string(batch) + " sequences): " + e.what());
      }
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  }
  if (spec.form == LengthForm::list) {
    if (static_cast<int64_t>(spec.args.size()) != batch)
      throw std::invalid_argument("the list gives " + std::to_string(spec.args.size()) +
                                  " lengths for a batch of " + std::to_string(batch) +
                                  "; give one per sequence");
    for (double v : spec.args) out.push_back(static_cast<int64_t>(v));
    return out;
  }
  Generator gen(seed);
  std::vector<LengthBucket> buckets;
  if (spec.form == LengthForm::histogram) {
    std::filesystem::path file = spec.file;
    if (file.is_relative() && !base_dir.empty()) file = std::filesystem::path(base_dir) / file;
    buckets = read_length_histogram(file.string());
  }
  double total = 0;
  for (const auto& b : buckets) total += b.weight;
  for (int64_t i = 0; i < batch; ++i) {
    double v = 1;
    switch (spec.form) {
      case LengthForm::uniform:
        v = static_cast<double>(gen.between(static_cast<int64_t>(spec.args[0]),
                                            static_cast<int64_t>(spec.args[1])));
        break;
      case LengthForm::normal: v = std::round(spec.args[0] + spec.args[1] * gen.normal()); break;
      case LengthForm::lognormal:
        v = std::round(spec.args[0] * std::exp(spec.args[1] * gen.normal()));
        break;
      case LengthForm::histogram: {
        double pick = gen.unit() * total;
        size_t k = 0;
        while (k + 1 < buckets.size() && pick >= buckets[k].weight) pick -= buckets[k++].weight;
        v = static_cast<double>(gen.between(buckets[k].lo, buckets[k].hi - 1));
        break;
      }
      default: break;
    }
    v = std::max(v, 1.0);
    if (spec.max > 0) v = std::min(v, static_cast<double>(spec.max));
    // A wide lognormal draws past any sequence (and past int64: its cast would be undefined).
    if (!(v <= kLongest))
      throw std::invalid_argument("drew a length of " + format_number(v) +
                                  ", past 1e9 tokens, the longest a sequence may be; give the "
                                  "spec a MAX (its third argument)");
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

}  // namespace

std::string histogram_contents(const LengthSpec& spec, const std::string& base_dir) {
  std::ostringstream out;
  out.precision(17);
  if (spec.form == LengthForm::mix)
    for (const LengthSpec& part : spec.parts) out << histogram_contents(part, base_dir);
  if (spec.form != LengthForm::histogram) return out.str();
  std::filesystem::path file = spec.file;
  if (file.is_relative() && !base_dir.empty()) file = std::filesystem::path(base_dir) / file;
  out << spec.file << ':';
  for (const LengthBucket& b : read_length_histogram(file.string()))
    out << b.lo << ',' << b.hi << ',' << b.weight << ';';
  return out.str();
}

std::vector<int64_t> draw_lengths(const LengthSpec& spec, int64_t batch, uint64_t seed,
                                  const std::string& base_dir) {
  std::vector<int64_t> out = drawn_lengths(spec, batch, seed, base_dir);
  int64_t tokens = 0;
  for (int64_t n : out)
    if (n > std::numeric_limits<int32_t>::max() - tokens)
      throw std::invalid_argument("the batch's lengths sum past " +
                                  std::to_string(std::numeric_limits<int32_t>::max()) +
                                  " tokens (its offsets are int32)");
    else
      tokens += n;
  return out;
}

}  // namespace attnbench
