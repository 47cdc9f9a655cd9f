#include "analysis/normalize.hpp"

#include "analysis/compare.hpp"
#include "base/errors.hpp"
#include "records/fields.hpp"

#include <cmath>
#include <map>
#include <set>

namespace attnbench {

std::vector<Row> normalized_by(const std::vector<Row>& rows, const std::string& path,
                               const std::string& reference,
                               const std::vector<std::string>& metrics) {
  auto key = [](const Row& row) {
    return row.point_id + "|" + to_string(row.timing_mode) + "|" + std::to_string(row.repetition);
  };
  std::map<std::string, const Row*> ref;
  for (const Row& row : rows)
    if (row.backend == reference) ref[key(row)] = &row;
  if (ref.empty())
    throw InputError(path + ": no rows for --normalize-by backend '" + reference + "'");
  std::vector<Row> out;
  for (const Row& row : rows) {
    if (row.backend == reference) continue;
    Row normalized = row;
    auto it = ref.find(key(row));
    const Row* base = it == ref.end() || it->second->status != Status::ok ? nullptr : it->second;
    std::set<std::string> noise_done;
    for (const auto& name : metrics) {
      const Metric& m = find_metric(name);
      if (m.deterministic()) continue;
      const std::optional<double> divisor = base ? row_number(*base, m.name) : std::nullopt;
      for (const std::string& column : {m.name, m.p10_column, m.p90_column}) {
        if (column.empty()) continue;
        const auto v = row_number(row, column);
        set_row_number(normalized, column,
                       v && divisor && *divisor != 0 ? std::optional(*v / *divisor) : std::nullopt);
      }
      if (!m.noise_column.empty() && noise_done.insert(m.noise_column).second && divisor) {
        const double a = row_number(row, m.noise_column).value_or(0);
        const double b = row_number(*base, m.noise_column).value_or(0);
        set_row_number(normalized, m.noise_column, std::hypot(a, b));
      }
    }
    out.push_back(std::move(normalized));
  }
  return out;
}

}  // namespace attnbench
