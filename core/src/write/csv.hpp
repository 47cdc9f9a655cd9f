// CSV in RFC 4180 form: every field quoted when it needs to be, rows flushed as written so a killed
// run keeps what it finished. The reader handles quotes, doubled quotes, commas and newlines in
// fields.
#pragma once

#include "base/field.hpp"  // format_number

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

class CsvWriter {
 public:
  // Opens `path` for writing (creating parent folders) and writes the header.
  CsvWriter(const std::string& path, const std::vector<std::string>& header);
  // Appends to an existing file that already has this header (--resume); creates it otherwise.
  static CsvWriter append(const std::string& path, const std::vector<std::string>& header);
  void write(const std::vector<std::string>& fields);
  const std::string& path() const { return path_; }

 private:
  CsvWriter(const std::string& path, size_t width, std::ios::openmode mode);

  std::string path_;
  std::ofstream out_;
  size_t width_;
};

std::string csv_escape(const std::string& field);
// One record: the fields escaped, joined by commas, ended by a newline.
std::string csv_line(const std::vector<std::string>& fields);

// A CSV read back as text: compare and tests work on column names, not on Row.
struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  int column(const std::string& name) const;  // -1 when absent
  const std::string& at(size_t row,
                        const std::string& name) const;  // throws InputError when absent
  // The cell as a number; nullopt when the column is absent or the cell empty; InputError naming
  // the file and column when it holds anything else.
  std::optional<double> number(size_t row, const std::string& name) const;
  // The cell as an integer, likewise (InputError with file, line and column).
  std::optional<int64_t> integer(size_t row, const std::string& name) const;
  std::string where(size_t row) const;  // "path:line" of a row, for messages
  // The cell's text; nullptr when the column is absent or the cell empty.
  const std::string* cell(size_t row, const std::string& name) const;
  std::vector<int> lines;  // the line each row starts on
};

CsvTable parse_csv(const std::string& text, const std::string& path);

// The text up to the end of its last complete record: what a killed writer left, without a torn
// last line (a newline inside a quoted field does not end a record).
std::string complete_records(const std::string& text);
CsvTable read_csv(const std::string& path);  // throws InputError naming the file and line

}  // namespace attnbench
