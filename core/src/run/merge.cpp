#include "run/merge.hpp"

#include "analysis/compare.hpp"
#include "base/errors.hpp"
#include "run/run_plan.hpp"
#include "write/csv.hpp"
#include "write/report_writer.hpp"
#include "write/schema.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace attnbench {

namespace {

std::string describe(const RecordKey& k) {
  return std::get<1>(k) + " @ " + std::get<0>(k) +
         (std::get<2>(k) > 0 ? " (repetition " + std::to_string(std::get<2>(k) + 1) + ")" : "");
}

// One side file (kernels or samples) of every input, its rows kept when their measurement is in
// the merged main rows; "" when any input lacks it (a partial file would mislead).
std::string merge_side(const std::vector<MergeInput>& inputs, std::string ReportTexts::*file,
                       const char* suffix, const std::set<RecordKey>& kept,
                       const std::map<RecordKey, size_t>& order) {
  std::vector<std::string> header;
  std::vector<std::pair<size_t, std::vector<std::string>>> rows;  // (order, fields)
  for (const MergeInput& in : inputs) {
    const std::string& text = in.texts.*file;
    if (text.empty()) return "";
    const CsvTable t = parse_csv(complete_records(text), sibling(in.path, suffix));
    if (header.empty()) header = t.header;
    if (t.header != header)
      throw InputError(sibling(in.path, suffix) + ": its columns differ from " +
                       sibling(inputs.front().path, suffix) +
                       "'s (reports of different schema versions)");
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const RecordKey k = record_key(t, r);
      if (kept.count(k)) rows.emplace_back(order.at(k), t.rows[r]);
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = csv_line(header);
  for (const auto& [o, fields] : rows) out += csv_line(fields);
  return out;
}

}  // namespace

Merged merge_reports(const std::vector<MergeInput>& inputs,
                     const std::optional<std::vector<RecordKey>>& expected) {
  if (inputs.empty()) throw InputError("merge: no reports given");
  std::vector<CsvTable> tables;
  std::vector<std::vector<Row>> typed;  // each table's rows, read through the field tables
  for (const MergeInput& in : inputs) {
    if (in.texts.rows.empty()) throw InputError(in.path + ": cannot read the report");
    tables.push_back(parse_csv(complete_records(in.texts.rows), in.path));
    check_report(tables.back(), {});
    if (tables.back().column("config_fingerprint") < 0)
      throw InputError(in.path + ": no config_fingerprint column (a report older than merge)");
    if (tables.back().header != tables.front().header)
      throw InputError(in.path + ": its columns differ from " + inputs.front().path +
                       "'s (reports of different schema versions)");
    typed.push_back(typed_rows(tables.back()));
  }

  // One version of each backend's code across the shards.
  std::vector<const CsvTable*> all;
  for (const CsvTable& t : tables) all.push_back(&t);
  require_one_build_per_backend(all);

  // One sweep: the same fingerprint everywhere; one split: the same N.
  std::string fingerprint, fingerprint_file;
  int shard_count = 0;
  std::string shard_file;
  std::set<int> shards;
  for (size_t i = 0; i < tables.size(); ++i)
    for (size_t r = 0; r < tables[i].rows.size(); ++r) {
      const CsvTable& t = tables[i];
      const std::string& f = typed[i][r].run.config_fingerprint;
      if (fingerprint.empty()) fingerprint = f, fingerprint_file = t.path;
      if (f != fingerprint)
        throw InputError("merge: " + t.path + " is of another sweep than " + fingerprint_file +
                         " (config fingerprint " + f + ", not " + fingerprint + ")");
      const std::string& shard = typed[i][r].run.shard;
      if (shard.empty()) continue;
      Shard parsed;
      try {
        parsed = parse_shard(shard);
      } catch (const InputError&) {
        throw InputError(t.where(r) + ": column 'shard' holds '" + shard + "', not K/N");
      }
      const int k = parsed.index, n = parsed.count;
      if (shard_count == 0) shard_count = n, shard_file = t.path;
      if (n != shard_count)
        throw InputError("merge: " + t.path + " is a shard of " + std::to_string(n) + " parts, " +
                         shard_file + " of " + std::to_string(shard_count) +
                         ": shards of different splits overlap");
      shards.insert(k);
    }

  // Every row once: a (point, backend, repetition, mode) in two reports is refused, by name.
  std::map<RecordKey, size_t> order;  // position in the sweep, or of first appearance
  if (expected)
    for (size_t i = 0; i < expected->size(); ++i) order.emplace((*expected)[i], i);
  std::map<std::tuple<std::string, std::string, int, std::string>, std::string> seen;
  std::vector<std::pair<size_t, std::vector<std::string>>> rows;
  std::set<RecordKey> kept;
  for (size_t i = 0; i < tables.size(); ++i)
    for (size_t r = 0; r < tables[i].rows.size(); ++r) {
      const CsvTable& t = tables[i];
      const Row& row = typed[i][r];
      const RecordKey k{row.point_id, row.backend, row.repetition};
      const std::string mode = to_string(row.timing_mode);
      const auto full = std::tuple_cat(k, std::make_tuple(mode));
      if (auto [it, fresh] = seen.emplace(full, t.path); !fresh)
        throw InputError("merge: " + describe(k) + " [" + mode + "] is in both " +
                         it->second + " and " + t.path +
                         ": the same measurement twice (a shard given twice, or run unsharded)");
      order.emplace(k, order.size() + (expected ? expected->size() : 0));
      rows.emplace_back(order.at(k), t.rows[r]);
      kept.insert(k);
    }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  Merged out;
  out.texts.rows = csv_line(tables.front().header);
  for (const auto& [o, fields] : rows) out.texts.rows += csv_line(fields);
  out.texts.kernels = merge_side(inputs, &ReportTexts::kernels, side::kernels, kept, order);
  out.texts.samples = merge_side(inputs, &ReportTexts::samples, side::samples, kept, order);
  out.measurements = kept.size();

  for (int k = 1; k <= shard_count; ++k)
    if (!shards.count(k))
      out.gaps.push_back("shard " + std::to_string(k) + "/" + std::to_string(shard_count) +
                         ": no report given");
  if (expected)
    for (const RecordKey& k : *expected)
      if (!kept.count(k)) out.gaps.push_back(describe(k) + ": not measured");
  return out;
}

}  // namespace attnbench
