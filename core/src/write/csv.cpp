#include "write/csv.hpp"

#include "base/errors.hpp"

#include <charconv>
#include <filesystem>
#include <sstream>

namespace attnbench {

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_escape(fields[i]);
  return line + "\n";
}

CsvWriter::CsvWriter(const std::string& path, size_t width, std::ios::openmode mode)
    : path_(path), width_(width) {
  const auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  out_.open(path, std::ios::out | mode);
  if (!out_) throw InputError(path + ": cannot open for writing");
}

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& header)
    : CsvWriter(path, header.size(), std::ios::trunc) {
  write(header);
}

CsvWriter CsvWriter::append(const std::string& path, const std::vector<std::string>& header) {
  std::error_code ec;  // absent, or empty (a run killed before its header, a full disk): a new file
  if (!std::filesystem::exists(path) || std::filesystem::file_size(path, ec) == 0 || ec)
    return CsvWriter(path, header);
  return CsvWriter(path, header.size(), std::ios::app);
}

void CsvWriter::write(const std::vector<std::string>& fields) {
  if (fields.size() != width_)
    throw std::logic_error("CSV row width differs from its header: " + path_);
  out_ << csv_line(fields);
  out_.flush();  // a killed run keeps every row written so far
  if (!out_) throw std::runtime_error(path_ + ": write failed");
}

int CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

const std::string& CsvTable::at(size_t row, const std::string& name) const {
  const int c = column(name);
  if (c < 0) throw InputError(path + ": no column '" + name + "'");
  return rows.at(row).at(static_cast<size_t>(c));
}

std::string CsvTable::where(size_t row) const {
  return path + (row < lines.size() ? ":" + std::to_string(lines[row]) : "");
}

const std::string* CsvTable::cell(size_t row, const std::string& name) const {
  const int c = column(name);
  if (c < 0) return nullptr;
  const std::string& text = rows.at(row).at(static_cast<size_t>(c));
  return text.empty() ? nullptr : &text;
}

std::optional<double> CsvTable::number(size_t row, const std::string& name) const {
  const std::string* cell_text = cell(row, name);
  if (!cell_text) return std::nullopt;
  const std::string& text = *cell_text;
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw InputError(where(row) + ": column '" + name + "' holds '" + text + "', not a number");
  }
}

std::optional<int64_t> CsvTable::integer(size_t row, const std::string& name) const {
  const std::string* cell_text = cell(row, name);
  if (!cell_text) return std::nullopt;
  const std::string& text = *cell_text;
  try {
    return std::get<int64_t>(parse_field_text(FieldType::integer, text));
  } catch (const std::exception&) {
    throw InputError(where(row) + ": column '" + name + "' holds '" + text + "', not an integer");
  }
}

CsvTable parse_csv(const std::string& text, const std::string& path) {
  CsvTable table;
  table.path = path;
  std::vector<std::vector<std::string>> records;
  std::vector<int> record_lines;  // where each record starts, for messages
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false, field_started = false;
  int line = 1, record_line = 1;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&] {
    end_field();
    if (!(record.size() == 1 && record[0].empty())) {  // skip blank lines
      records.push_back(std::move(record));
      record_lines.push_back(record_line);
    }
    record.clear();
    record_line = line;
  };
  // A UTF-8 byte-order mark (a spreadsheet's save) is no part of the first column's name.
  const size_t start = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        if (field_started || !field.empty())
          throw InputError(path + ":" + std::to_string(line) +
                           ": a quote inside an unquoted field");
        in_quotes = true;
        field_started = true;
        break;
      case ',': end_field(); break;
      case '\r': break;
      case '\n':
        ++line;
        end_record();
        break;
      default: field += c; field_started = true;
    }
  }
  if (in_quotes)
    throw InputError(path + ":" + std::to_string(record_line) + ": a quoted field is never closed");
  if (field_started || !field.empty() || !record.empty()) end_record();
  if (records.empty()) throw InputError(path + ": the file is empty, expected a header line");
  table.header = records.front();
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.header.size())
      throw InputError(path + ":" + std::to_string(record_lines[r]) + ": row has " +
                       std::to_string(records[r].size()) + " fields, the header has " +
                       std::to_string(table.header.size()));
    table.rows.push_back(std::move(records[r]));
    table.lines.push_back(record_lines[r]);
  }
  return table;
}

std::string complete_records(const std::string& text) {
  bool in_quotes = false;
  size_t end = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"')
      in_quotes = !in_quotes;  // a doubled quote toggles twice
    else if (text[i] == '\n' && !in_quotes)
      end = i + 1;
  }
  return text.substr(0, end);
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the CSV file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path);
}

}  // namespace attnbench
