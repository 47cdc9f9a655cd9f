// `attnbench merge`: the reports of a sweep's shards (run --shard K/N, on other GPUs or machines)
// joined into one, main, kernel and sample CSVs alike. Pure: texts in, texts out.
#pragma once

#include "run/resume.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnbench {

struct MergeInput {
  std::string path;  // the main CSV's, for messages
  ReportTexts texts;
};

struct Merged {
  ReportTexts texts;
  size_t measurements = 0;        // (point, backend, repetition)s in the result
  std::vector<std::string> gaps;  // what the sweep has and no report holds, in words
};

// Refuses (InputError naming the files) reports of different sweeps (config_fingerprint) or
// schemas, shards of different splits (K/N with different N), and any (point, backend,
// repetition, timing mode) found in two reports. `expected`: every (point, backend, repetition)
// the sweep measures, in its order, when the config is known; then gaps name each missing one and
// the rows follow that order. Without it, gaps name only the missing shards.
Merged merge_reports(const std::vector<MergeInput>& inputs,
                     const std::optional<std::vector<RecordKey>>& expected);

}  // namespace attnbench
