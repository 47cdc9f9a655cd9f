#include "run/resume.hpp"

#include "base/errors.hpp"
#include "base/files.hpp"
#include "write/csv.hpp"
#include "write/report_writer.hpp"
#include "write/schema.hpp"

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

namespace attnbench {

namespace {

void refuse(const std::string& path, const std::string& why) {
  throw InputError(path + ": cannot resume: " + why +
                   "; --force starts it over, or give another -o");
}

// The rows this run appends must line up with the file's: its header must be the one this
// attnbench writes, column for column (another schema version, a column added, dropped or moved
// by hand is refused before anything is measured).
void check_header(const CsvTable& t, const std::vector<std::string>& mine) {
  if (t.header == mine) return;
  size_t i = 0;
  while (i < t.header.size() && i < mine.size() && t.header[i] == mine[i]) ++i;
  const std::string where = "column " + std::to_string(i + 1) + " is " +
                            (i < t.header.size() ? "'" + t.header[i] + "'" : "missing") +
                            " where this attnbench writes " +
                            (i < mine.size() ? "'" + mine[i] + "'" : "none");
  refuse(t.path, "its columns are not the ones this attnbench writes (" + where +
                     "), so appended rows would not line up");
}

// The records of a table whose key is in `done`, with its header; "" for no file.
std::string keep(const std::string& text, const std::string& path,
                 const std::vector<std::string>& header, const std::set<RecordKey>& done) {
  const std::string complete = complete_records(text);
  if (complete.empty()) return "";  // no file, or killed inside its header: written anew
  const CsvTable t = parse_csv(complete, path);
  check_header(t, header);
  std::string out = csv_line(t.header);
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (done.count(record_key(t, r))) out += csv_line(t.rows[r]);
  return out;
}

RecordKey key_of(const Row& row) { return {row.point_id, row.backend, row.repetition}; }

}  // namespace

RecordKey record_key(const CsvTable& t, size_t r) {
  const auto rep = t.integer(r, "repetition");  // absent before schema 5: 0
  if (rep && (*rep < 0 || *rep > std::numeric_limits<int>::max()))
    throw InputError(t.where(r) + ": column 'repetition' holds " + std::to_string(*rep) +
                     ", not a repetition");
  return {t.at(r, "point_id"), t.at(r, "backend"), rep ? static_cast<int>(*rep) : 0};
}

Resumed resume_report(const ReportTexts& files, const std::string& path,
                      const std::string& fingerprint, const std::string& device_name,
                      const std::string& torch_version, size_t modes_per_cuda_point,
                      const std::map<std::string, std::string>& builds) {
  Resumed out;
  const std::string rows_text = complete_records(files.rows);
  if (rows_text.empty()) return out;  // not even a header survived: start over
  const CsvTable t = parse_csv(rows_text, path);
  if (t.column("config_fingerprint") < 0)
    refuse(path, "it has no config_fingerprint column (an older report)");
  check_header(t, row_header());
  const std::vector<Row> rows = typed_rows(t);
  std::map<RecordKey, size_t> found;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const RunInfo& run = row.run;
    // One version of each backend's code in a report: rows of an edited source, a rebuilt
    // plugin or a changed Python file are not the same backend's.
    const auto now = builds.find(row.backend);
    if (now != builds.end() && !now->second.empty() && !row.backend_build.empty() &&
        row.backend_build != now->second)
      refuse(t.where(r), "backend '" + row.backend + "' was measured there with build " +
                             row.backend_build + ", and its code is now build " + now->second +
                             " (a plugin rebuilt, a source or a header it includes edited, a "
                             "Python file changed): a report holds one version of each backend");
    if (run.config_fingerprint != fingerprint)
      refuse(path, "it was written by another sweep (config fingerprint " +
                       run.config_fingerprint + ", this run " + fingerprint + ")");
    if (run.device_name != device_name || run.torch_version != torch_version)
      refuse(path, "it was measured on " + run.device_name + " with torch " + run.torch_version +
                       ", this is " + device_name + " with torch " + torch_version);
    ++found[key_of(row)];
  }
  for (const Row& row : rows) {  // complete: one row per timing mode of its point
    const size_t expected = row.problem.device == Device::cuda ? modes_per_cuda_point : 1;
    if (found[key_of(row)] == expected) out.done.insert(key_of(row));
  }
  out.kept.rows = keep(files.rows, path, row_header(), out.done);
  out.kept.kernels =
      keep(files.kernels, sibling(path, side::kernels), kernel_row_header(), out.done);
  out.kept.samples = keep(files.samples, sibling(path, side::samples), sample_header(), out.done);
  return out;
}

ReportTexts read_report_texts(const std::string& output_csv) {
  auto slurp = [](const std::string& path) { return file_bytes(path).value_or(""); };
  return {slurp(output_csv), slurp(sibling(output_csv, side::kernels)),
          slurp(sibling(output_csv, side::samples))};
}

void replace_file_text(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".resume-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error(tmp + ": write failed");
  }
  std::filesystem::rename(tmp, path);  // atomic: a kill now leaves the old file or the new one
}

void write_report_texts(const std::string& output_csv, const ReportTexts& texts) {
  auto put = [](const std::string& path, const std::string& text) {
    if (text.empty()) {  // nothing of it belongs to the report: no stale file beside it
      std::filesystem::remove(path);
      return;
    }
    replace_file_text(path, text);
  };
  put(output_csv, texts.rows);
  put(sibling(output_csv, side::kernels), texts.kernels);
  put(sibling(output_csv, side::samples), texts.samples);
}

}  // namespace attnbench
