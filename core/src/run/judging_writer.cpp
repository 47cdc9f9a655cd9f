#include "run/judging_writer.hpp"

#include "records/expectations.hpp"

#include <algorithm>

namespace attnbench {

JudgingWriter::JudgingWriter(ReportWriter& writer, const Expectations& expect,
                             std::map<std::pair<int, std::string>, std::set<std::string>> expected)
    : writer_(writer), expect_(expect), expected_(std::move(expected)) {}

bool JudgingWriter::ready(const Point& point, const std::set<std::string>& in_run,
                          const std::string& backend) const {
  for (const std::string& peer : peers_of(expect_, backend)) {
    const bool measured = std::any_of(point.measured.begin(), point.measured.end(),
                                      [&](const BackendRecords& r) { return r.backend == peer; });
    if (in_run.count(peer) && !measured) return false;
  }
  return true;
}

void JudgingWriter::write(Point& point, size_t i) {
  BackendRecords& records = point.measured[i];
  for (Row& row : records.rows) {
    row.expectation = judge_row(row, expect_, [&](const std::string& backend) -> const Row* {
      for (const BackendRecords& other : point.measured)
        if (other.backend == backend)
          for (const Row& r : other.rows)
            if (r.timing_mode == row.timing_mode) return &r;
      return nullptr;
    });
  }
  writer_.write(records);
  point.written[i] = true;
}

void JudgingWriter::add(BackendRecords records) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::pair<int, std::string> key{records.repetition, records.point_id};
  const std::set<std::string>& in_run = expected_[key];
  Point& point = open_[key];
  point.measured.push_back(std::move(records));
  point.written.push_back(false);
  for (size_t i = 0; i < point.measured.size(); ++i)
    if (!point.written[i] && ready(point, in_run, point.measured[i].backend)) write(point, i);
  if (point.measured.size() >= in_run.size()) {  // the point is complete: nothing waits longer
    for (size_t i = 0; i < point.measured.size(); ++i)
      if (!point.written[i]) write(point, i);
    open_.erase(key);
  }
}

}  // namespace attnbench
