#include "report/report_writer.hpp"

#include "report/schema.hpp"

#include <filesystem>

namespace attnbench {

std::string sibling(const std::string& csv, const std::string& suffix) {
  const std::filesystem::path p(csv);
  return (p.parent_path() / (p.stem().string() + suffix)).string();
}

ReportWriter::ReportWriter(const std::string& output_csv, bool keep_samples)
    : rows_(output_csv, row_header()),
      kernels_(sibling(output_csv, ".kernels.csv"), kernel_row_header()) {
  if (keep_samples)
    samples_ = std::make_unique<CsvWriter>(sibling(output_csv, ".samples.csv"), sample_header());
}

void ReportWriter::write(const BackendRecords& records) {
  for (const Row& row : records.rows) rows_.write(row_fields(row));
  for (const KernelRow& k : records.kernels) kernels_.write(kernel_row_fields(k));
  if (!samples_) return;
  for (const SampleSeries& series : records.samples)
    for (size_t i = 0; i < series.time_ms.size(); ++i)
      samples_->write(
          sample_fields(records.point_id, records.backend, series.mode, i, series.time_ms[i]));
}

}  // namespace attnbench
