#include "run/judging_writer.hpp"

#include "records/expectations.hpp"

#include <algorithm>

namespace attnbench {

JudgingWriter::JudgingWriter(ReportWriter& writer, const Expectations& expect,
                             std::map<std::pair<int, std::string>, std::set<std::string>> expected,
                             std::set<std::string> sharded_sweep)
    : writer_(writer),
      expect_(expect),
      expected_(std::move(expected)),
      sharded_sweep_(std::move(sharded_sweep)) {}

bool JudgingWriter::ready(const Point& point, const std::set<std::string>& in_run,
                          const std::string& backend) const {
  for (const std::string& peer : peers_of(expect_, backend)) {
    const bool measured = std::any_of(point.measured.begin(), point.measured.end(),
                                      [&](const BackendRecords& r) { return r.backend == peer; });
    if (in_run.count(peer) && !measured) return false;
  }
  return true;
}

void JudgingWriter::write(Point& point, size_t i, const std::set<std::string>& in_run) {
  BackendRecords& records = point.measured[i];
  std::set<std::string> elsewhere;
  for (const std::string& backend : sharded_sweep_)
    if (!in_run.count(backend)) elsewhere.insert(backend);
  for (Row& row : records.rows) {
    row.expectation = judge_row(
        row, expect_,
        [&](const std::string& backend) -> const Row* {
          for (const BackendRecords& other : point.measured)
            if (other.backend == backend)
              for (const Row& r : other.rows)
                if (r.timing_mode == row.timing_mode) return &r;
          return nullptr;
        },
        elsewhere);
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
    if (!point.written[i] && ready(point, in_run, point.measured[i].backend))
      write(point, i, in_run);
  if (point.measured.size() >= in_run.size()) {  // the point is complete: nothing waits longer
    for (size_t i = 0; i < point.measured.size(); ++i)
      if (!point.written[i]) write(point, i, in_run);
    open_.erase(key);
  }
}

}  // namespace attnbench
