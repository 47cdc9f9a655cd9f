#include "write/report_writer.hpp"

#include "write/schema.hpp"
#include "write/trace_json.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace attnbench {

namespace {

CsvWriter open(const std::string& path, const std::vector<std::string>& header, bool append) {
  return append ? CsvWriter::append(path, header) : CsvWriter(path, header);
}

}  // namespace

std::string sibling(const std::string& csv, const std::string& suffix) {
  const std::filesystem::path p(csv);
  return (p.parent_path() / (p.stem().string() + suffix)).string();
}

ReportWriter::ReportWriter(const std::string& output_csv, bool keep_samples, bool append)
    : rows_(open(output_csv, row_header(), append)),
      kernels_(open(sibling(output_csv, side::kernels), kernel_row_header(), append)) {
  if (keep_samples)
    samples_ = std::make_unique<CsvWriter>(
        open(sibling(output_csv, side::samples), sample_header(), append));
  else if (!append)  // a report and its side files are one unit: none is left from another run
    std::filesystem::remove(sibling(output_csv, side::samples));
}

void ReportWriter::write(const BackendRecords& records) {
  if (records.trace) {
    const std::string path =
        trace_path(rows_.path(), records.point_id, records.backend, records.repetition);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream out(path);
    out << chrome_trace_json(records) << '\n';
    if (!out.flush()) throw std::runtime_error(path + ": cannot write the trace");
  }
  for (const KernelRow& k : records.kernels) kernels_.write(kernel_row_cells(k));
  if (samples_)
    for (const SampleSeries& series : records.samples)
      for (size_t i = 0; i < series.time_ms.size(); ++i)
        samples_->write(sample_fields(records.point_id, records.backend, series.mode,
                                      records.repetition, i, series.time_ms[i],
                                      i < series.sm_clock_mhz.size()
                                          ? std::optional<double>(series.sm_clock_mhz[i])
                                          : std::nullopt));
  for (const Row& row : records.rows) rows_.write(row_cells(row));  // last: they mark it done
}

}  // namespace attnbench
