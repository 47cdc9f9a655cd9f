// Owns every file a run writes: <output>.csv, <output>.kernels.csv and, on request,
// <output>.samples.csv. It only reads records; each row is flushed as it is written, and a
// (point, backend)'s main rows come last, so a killed run keeps every (point, backend) it finished
// and --resume can tell them from the one it was in.
#pragma once

#include "records/row.hpp"
#include "write/csv.hpp"

#include <memory>
#include <string>

namespace attnbench {

class ReportWriter {
 public:
  // Creates (truncates) the files and writes their headers, or appends to them (--resume).
  ReportWriter(const std::string& output_csv, bool keep_samples, bool append);

  void write(const BackendRecords& records);

  const std::string& rows_path() const { return rows_.path(); }
  const std::string& kernels_path() const { return kernels_.path(); }

 private:
  CsvWriter rows_;
  CsvWriter kernels_;
  std::unique_ptr<CsvWriter> samples_;
};

// The files and folders beside a report <stem>.csv, each suffix named once.
namespace side {
inline constexpr const char* kernels = ".kernels.csv";  // the kernels pass, one row per kernel
inline constexpr const char* samples = ".samples.csv";  // raw timing samples (keep_samples)
inline constexpr const char* traces = ".traces";        // a Chrome trace per (point, backend)
inline constexpr const char* plots = ".plots";          // attnbench plot's pictures
inline constexpr const char* lock = ".lock";            // held by the one run writing the report
}  // namespace side

// <dir>/<stem><suffix> beside a report: sibling("r/x.csv", side::kernels) is "r/x.kernels.csv".
std::string sibling(const std::string& csv, const std::string& suffix);

}  // namespace attnbench
