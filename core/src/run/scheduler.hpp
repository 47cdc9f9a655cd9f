// The run's queue: the (point, backend)s of every repetition, in the order a run takes them, and
// the measurers (one per GPU with --devices, each on a thread of its own) that drain it.
#pragma once

#include "isolate/measurer.hpp"
#include "run/judging_writer.hpp"
#include "run/progress.hpp"
#include "run/run_plan.hpp"

#include <memory>
#include <string>
#include <vector>

namespace attnbench {

// One repetition's task: the whole sweep runs once per repetition, so drift between repetitions
// hits every backend alike.
struct Job {
  int repetition;
  const Task* task;
};

// Each measurer takes the next job from one queue and hands its records to `judged`. A measurer
// that throws stops the others after their current job; the first error is rethrown.
void run_jobs(const std::vector<Job>& jobs, const RunPlan& plan,
              const std::vector<std::unique_ptr<Measurer>>& measurers,
              const std::vector<std::string>& devices, Progress& progress, JudgingWriter& judged);

}  // namespace attnbench
