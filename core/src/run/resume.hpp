// `run --resume`: what an interrupted report already holds. A (point, backend) counts as done when
// all its rows are in the main CSV (the writer writes them last, after its kernel and sample rows);
// everything else, a torn last line included, is dropped from all three files, and measured again.
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>

namespace attnbench {

using RecordKey = std::tuple<std::string, std::string, int>;  // (point_id, backend, repetition)

struct CsvTable;
// Row `r`'s key; reports from before repetitions have repetition 0.
RecordKey record_key(const CsvTable& t, size_t r);

struct ReportTexts {
  std::string rows, kernels, samples;  // file contents; empty when a file is missing
};

struct Resumed {
  ReportTexts kept;  // the files as they must be before appending
  std::set<RecordKey> done;
};

// `modes_per_cuda_point`: rows a CUDA (point, backend) has when complete (a CPU one has one).
// Throws InputError, naming `path`, when the report was written by another sweep (fingerprint) or
// on another machine (device_name, torch_version), or has no fingerprint at all; naming the row,
// when a backend's rows were measured with another build of its code than `builds` says it has
// now (backend -> Row::backend_build).
Resumed resume_report(const ReportTexts& files, const std::string& path,
                      const std::string& fingerprint, const std::string& device_name,
                      const std::string& torch_version, size_t modes_per_cuda_point,
                      const std::map<std::string, std::string>& builds = {});

// The files of the report at `output_csv` (missing ones empty), and writing them back.
ReportTexts read_report_texts(const std::string& output_csv);
void write_report_texts(const std::string& output_csv, const ReportTexts& texts);
// Replaces a file's text at once (a temporary file renamed over it): a kill leaves old or new.
void replace_file_text(const std::string& path, const std::string& text);

}  // namespace attnbench
