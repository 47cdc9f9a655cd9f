// Between the measurers and the report writer: rows wait for the rows their predictions compare
// against (same point and repetition), are judged (records/expectations.hpp), then written. With
// the referenced backends listed first, as in the shipped configs, none waits; a (point, backend)
// waits at most until every backend of its point (in this run or shard) is measured. Thread-safe:
// run --devices adds records from one thread per GPU.
#pragma once

#include "records/predictions.hpp"
#include "write/report_writer.hpp"

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

class JudgingWriter {
 public:
  // `expected`: for each (repetition, point_id), the backends this run measures there.
  // `sharded_sweep`: under --shard, every backend of the whole sweep (each point has each), so
  // that a relation to one another shard measures is left to merge; empty: no shard.
  JudgingWriter(ReportWriter& writer, const Expectations& expect,
                std::map<std::pair<int, std::string>, std::set<std::string>> expected,
                std::set<std::string> sharded_sweep = {});

  void add(BackendRecords records);

 private:
  struct Point {
    std::vector<BackendRecords> measured;
    std::vector<bool> written;
  };
  bool ready(const Point& point, const std::set<std::string>& in_run,
             const std::string& backend) const;
  void write(Point& point, size_t i, const std::set<std::string>& in_run);

  ReportWriter& writer_;
  const Expectations& expect_;
  std::map<std::pair<int, std::string>, std::set<std::string>> expected_;
  std::set<std::string> sharded_sweep_;
  std::map<std::pair<int, std::string>, Point> open_;
  mutable std::mutex mutex_;
};

}  // namespace attnbench
