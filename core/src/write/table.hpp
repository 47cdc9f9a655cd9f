// Aligned plain-text and Markdown tables, for the run summary and for compare.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace attnbench {

struct TextTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  void print(std::ostream& out, bool markdown) const;
};

}  // namespace attnbench
