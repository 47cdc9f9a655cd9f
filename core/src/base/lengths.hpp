// A batch's sequence lengths as a sweep writes them (`seq_lens:`, `seq_lens_kv:`) and as they are
// drawn: a list, or a distribution sampled from the run's seed, so every backend of a run (and every
// rerun with the same seed) sees the same batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnbench {

enum class LengthForm { number, list, uniform, normal, lognormal, histogram, mix };

struct LengthSpec {
  LengthForm form = LengthForm::number;
  std::vector<double> args;     // number: {N}; list: the lengths; uniform: {LO, HI}; normal:
                                // {MEAN, STD}; lognormal: {MEDIAN, SIGMA}; histogram: none
  std::string file;             // histogram only, as written
  int64_t max = 0;              // the largest length drawn; 0: no cap (normal, lognormal: MAX)
  // mix only: part i gives counts[i] sequences their lengths from parts[i] (a mixed batch).
  std::vector<int64_t> counts;
  std::vector<LengthSpec> parts;
  bool drawn() const { return form != LengthForm::number; }  // gives a length per sequence
};

// "512", "100,2000,37", "uniform(128,4096)", "normal(2048,512)", "lognormal(1024,0.8)",
// "normal(2048,512,8192)" (a third argument caps the lengths), "histogram(lengths.csv)", and a
// mixed batch of such parts, "2*2048 + 32*1" (two sequences of 2048, then 32 of 1; with
// seq_lens_kv "2*2048 + 32*uniform(1024,4096)": two prefills and 32 decodes in one call).
// Throws std::invalid_argument with what is wrong and the forms allowed.
LengthSpec parse_length_spec(const std::string& text);

// A histogram file: one bucket per line, "LO,HI,WEIGHT" (lengths LO .. HI-1 drawn with weight
// WEIGHT, uniformly within), '#' starts a comment. Throws std::invalid_argument naming the line.
struct LengthBucket {
  int64_t lo, hi;
  double weight;
};
std::vector<LengthBucket> read_length_histogram(const std::string& path);

// What decides the lengths a histogram draws, as text: its buckets (not its comments or spacing),
// for each file `spec` reads (a mix's parts too), resolved against `base_dir` as draw_lengths
// resolves them; the config fingerprint hashes it. Throws std::invalid_argument as
// read_length_histogram does.
std::string histogram_contents(const LengthSpec& spec, const std::string& base_dir);

// A batch with a length per sequence is packed with int32 offsets (every varlen kernel's): at most
// this many sequences, and their tokens at most INT32_MAX.
inline constexpr int64_t kMaxRaggedBatch = int64_t{1} << 20;

// `batch` lengths drawn from `spec` (each at least 1) with a generator seeded by `seed`: the same
// on every machine (no std:: distributions, whose algorithms are the library's). A list must have
// `batch` entries, a mix's counts sum to `batch`. `base_dir` resolves a histogram's relative path (the config file's folder).
// Throws std::invalid_argument past kMaxRaggedBatch sequences or INT32_MAX tokens.
std::vector<int64_t> draw_lengths(const LengthSpec& spec, int64_t batch, uint64_t seed,
                                  const std::string& base_dir);

}  // namespace attnbench
