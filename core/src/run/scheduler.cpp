#include "run/scheduler.hpp"

#include <exception>
#include <iostream>
#include <mutex>
#include <thread>

namespace attnbench {

void run_jobs(const std::vector<Job>& jobs, const RunPlan& plan,
              const std::vector<std::unique_ptr<Measurer>>& measurers,
              const std::vector<std::string>& devices, Progress& progress, JudgingWriter& judged) {
  const int repetitions = plan.config.measurement.repetitions;
  std::mutex queue_mutex;  // the queue, the progress line and stderr
  size_t next = 0;
  auto drain = [&](Measurer& m, const std::string& device) {
    while (true) {
      Job job;
      {
        const std::lock_guard<std::mutex> lock(queue_mutex);
        if (next == jobs.size()) return;
        job = jobs[next++];
        progress.begin(
            plan.points[job.task->point].id + " " + job.task->backend +
            (repetitions > 1 ? " (repetition " + std::to_string(job.repetition + 1) + ")" : "") +
            (device.empty() ? "" : " on GPU " + device));
      }
      const Point& point = plan.points[job.task->point];
      BackendRecords records = m.measure(point, job.task->backend);
      records.repetition = job.repetition;
      for (Row& row : records.rows) row.repetition = job.repetition, row.device_index = device;
      for (KernelRow& k : records.kernels) k.repetition = job.repetition;
      if (!records.notes.empty()) {
        const std::lock_guard<std::mutex> lock(queue_mutex);
        std::cerr << "\nattnbench: " << job.task->backend << " @ " << point.id << ": "
                  << records.notes << '\n';
      }
      judged.add(std::move(records));
      const std::lock_guard<std::mutex> lock(queue_mutex);
      progress.end();
    }
  };
  if (measurers.size() == 1)
    return drain(*measurers.front(), devices.empty() ? "" : devices.front());
  std::vector<std::exception_ptr> errors(measurers.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < measurers.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        drain(*measurers[i], devices[i]);
      } catch (...) {
        errors[i] = std::current_exception();
        const std::lock_guard<std::mutex> lock(queue_mutex);
        next = jobs.size();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace attnbench
