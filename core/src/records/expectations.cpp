#include "records/expectations.hpp"

#include "base/names.hpp"
#include "kinds/problem.hpp"
#include "records/row_columns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnbench {

namespace {

// How a `where` field reads in `row`, as the CSV writes it.
std::string field_of(const Row& row, const std::string& field) {
  const Problem& p = row.problem;
  if (field == "timing_mode") return to_string(row.timing_mode);
  if (field == "point_id") return row.point_id;
  if (const Field<Problem>* f = find_problem_field(field)) return field_text(f->get(p));
  return "";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Counts are averages over traced calls: 5 kernels per call reads 5 exactly, but allow rounding.
bool equal(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string why_no_value(const Row& row) {
  return row.status == Status::ok ? "not measured" : "no value (" + to_string(row.status) + ")";
}

// The misses of one numeric prediction, appended to `misses`.
void check_numeric(const Prediction& p, const Row& row, const PeerRow& peer,
                   const std::set<std::string>& elsewhere, std::vector<std::string>& misses,
                   std::set<std::string>& unjudged) {
  const std::optional<double> seen = numeric_row_value(row, p.column);
  if (p.min || p.max) {
    std::string predicted =
        p.min && p.max && equal(*p.min, *p.max)
            ? number(*p.min)
            : (p.min ? number(*p.min) : "") + ".." + (p.max ? number(*p.max) : "");
    if (!seen)
      misses.push_back(p.column + " predicted " + predicted + ", seen " + why_no_value(row));
    else if ((p.min && *seen < *p.min && !equal(*seen, *p.min)) ||
             (p.max && *seen > *p.max && !equal(*seen, *p.max)))
      misses.push_back(p.column + " predicted " + predicted + ", seen " + number(*seen));
  }
  auto relation = [&](const std::vector<std::string>& others, bool below) {
    for (const auto& other : others) {
      const std::string predicted = p.column + " predicted " + (below ? "< " : "> ") + other + "'s";
      const Row* o = peer(other);
      if (!o && elsewhere.count(other)) {
        unjudged.insert(other);
        continue;
      }
      const std::optional<double> theirs =
          o ? numeric_row_value(*o, p.column) : std::optional<double>();
      if (!seen) {
        misses.push_back(predicted + ", seen " + why_no_value(row));
      } else if (!theirs) {
        misses.push_back(predicted + ", but " + other + " has " +
                         (o ? why_no_value(*o) : "no row here"));
      } else if (below ? !(*seen < *theirs) : !(*seen > *theirs)) {
        misses.push_back(predicted + " " + number(*theirs) + ", seen " + number(*seen));
      }
    }
  };
  relation(p.less_than, true);
  relation(p.more_than, false);
}

void check_ops(const Prediction& p, const Row& row, std::vector<std::string>& misses) {
  const std::string predicted = joined(*p.ops);
  if (!row.aten_ops_per_call)
    misses.push_back("aten_ops predicted '" + predicted + "', seen " + why_no_value(row));
  else if (row.aten_ops != predicted)
    misses.push_back("aten_ops predicted '" + predicted + "', seen '" + row.aten_ops + "'");
}

}  // namespace

bool applies(const Expectation& e, const Row& row) {
  if (e.backend != row.backend) return false;
  return std::all_of(e.where.begin(), e.where.end(), [&](const RowFilter& f) {
    const std::string value = field_of(row, f.field);
    return std::find(f.values.begin(), f.values.end(), value) != f.values.end();
  });
}

std::string judge_row(const Row& row, const Expectations& expectations, const PeerRow& peer,
                      const std::set<std::string>& elsewhere) {
  bool predicted = false;
  std::vector<std::string> misses;
  std::set<std::string> unjudged;
  for (const Expectation& e : expectations.items) {
    if (!applies(e, row)) continue;
    predicted = true;
    for (const Prediction& p : e.predictions) {
      if (p.ops)
        check_ops(p, row, misses);
      else
        check_numeric(p, row, peer, elsewhere, misses, unjudged);
    }
  }
  if (!predicted) return "";
  if (misses.empty() && !unjudged.empty())
    return "unjudged: " + joined(std::vector<std::string>(unjudged.begin(), unjudged.end())) +
           " measured by another shard here (attnbench merge judges it)";
  if (misses.empty()) return "met";
  std::string out = "missed: ";
  for (size_t i = 0; i < misses.size(); ++i) out += (i ? "; " : "") + misses[i];
  return out;
}

std::set<std::string> peers_of(const Expectations& expectations, const std::string& backend) {
  std::set<std::string> out;
  for (const Expectation& e : expectations.items) {
    if (e.backend != backend) continue;
    for (const Prediction& p : e.predictions) {
      out.insert(p.less_than.begin(), p.less_than.end());
      out.insert(p.more_than.begin(), p.more_than.end());
    }
  }
  out.erase(backend);
  return out;
}

bool is_missed(const std::string& expectation) { return expectation.rfind("missed", 0) == 0; }

}  // namespace attnbench
