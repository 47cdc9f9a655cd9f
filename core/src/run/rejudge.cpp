#include "run/rejudge.hpp"

#include "records/expectations.hpp"
#include "write/csv.hpp"
#include "write/schema.hpp"

#include <map>
#include <utility>
#include <vector>

namespace attnbench {

std::string rejudged_report(const std::string& text, const std::string& path,
                            const Expectations& expect) {
  if (text.empty()) return text;
  CsvTable t = parse_csv(text, path);
  const int column = t.column("expectation");
  if (column < 0 || t.rows.empty()) return text;
  std::vector<Row> rows;
  std::map<std::pair<int, std::string>, std::vector<size_t>> by_point;  // (repetition, point)
  for (size_t r = 0; r < t.rows.size(); ++r) {
    rows.push_back(row_from_cells(t, r));
    by_point[{rows.back().repetition, rows.back().point_id}].push_back(r);
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const auto& peers = by_point[{row.repetition, row.point_id}];
    t.rows[r][static_cast<size_t>(column)] =
        judge_row(row, expect, [&](const std::string& backend) -> const Row* {
          for (size_t p : peers)
            if (rows[p].backend == backend && rows[p].timing_mode == row.timing_mode)
              return &rows[p];
          return nullptr;
        });
  }
  std::string out = csv_line(t.header);
  for (const auto& cells : t.rows) out += csv_line(cells);
  return out;
}

}  // namespace attnbench
