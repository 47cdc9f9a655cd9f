#include "analysis/normalize.hpp"

#include "analysis/compare.hpp"
#include "base/errors.hpp"

#include <cmath>
#include <map>
#include <set>

namespace attnbench {

CsvTable normalized_by(const CsvTable& t, const std::string& reference,
                       const std::vector<std::string>& metrics) {
  auto key = [&](size_t r) {
    return t.at(r, "point_id") + "|" + t.at(r, "timing_mode") + "|" +
           (t.column("repetition") < 0 ? "0" : t.at(r, "repetition"));
  };
  std::map<std::string, size_t> ref;
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (t.at(r, "backend") == reference) ref[key(r)] = r;
  if (ref.empty())
    throw InputError(t.path + ": no rows for --normalize-by backend '" + reference + "'");
  CsvTable out{t.path, t.header, {}};
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (t.at(r, "backend") == reference) continue;
    std::vector<std::string> row = t.rows[r];
    auto it = ref.find(key(r));
    std::set<std::string> noise_done;
    for (const auto& name : metrics) {
      const Metric& m = find_metric(name);
      if (m.deterministic()) continue;
      const std::optional<double> divisor = it == ref.end() || t.at(it->second, "status") != "ok"
                                                ? std::nullopt
                                                : t.number(it->second, m.name);
      for (const std::string& column : {m.name, m.p10_column, m.p90_column}) {
        if (column.empty()) continue;
        const auto v = t.number(r, column);
        row[static_cast<size_t>(t.column(column))] =
            v && divisor && *divisor != 0 ? format_number(*v / *divisor) : "";
      }
      if (!m.noise_column.empty() && noise_done.insert(m.noise_column).second && divisor) {
        const double a = t.number(r, m.noise_column).value_or(0);
        const double b = t.number(it->second, m.noise_column).value_or(0);
        row[static_cast<size_t>(t.column(m.noise_column))] = format_number(std::hypot(a, b));
      }
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace attnbench
