#include "write/table.hpp"

#include <algorithm>

namespace attnbench {

void TextTable::print(std::ostream& out, bool markdown) const {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());

  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = markdown ? "| " : "";
    for (size_t c = 0; c < width.size(); ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      if (markdown) std::replace(cell.begin(), cell.end(), '|', '/');
      cell.resize(width[c], ' ');
      s += cell + (c + 1 < width.size() ? (markdown ? " | " : "  ") : (markdown ? " |" : ""));
    }
    while (!markdown && !s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line(header);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(std::max<size_t>(w, 3), '-'));
  if (markdown) {
    std::string s = "|";
    for (size_t c = 0; c < width.size(); ++c) s += std::string(width[c] + 2, '-') + "|";
    out << s << '\n';
  } else {
    line(rule);
  }
  for (const auto& row : rows) line(row);
}

}  // namespace attnbench
