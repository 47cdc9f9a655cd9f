// Sweep progress on stderr: one rewritten line with done/total, the current item and an ETA on a
// terminal; one plain line per item otherwise (logs, CI).
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace attnbench {

class Progress {
 public:
  Progress(size_t total, std::ostream& out, bool interactive);
  void begin(const std::string& item);  // about to measure `item`
  void end();                           // finished the current item
  void finish();                        // leaves the terminal line clean

 private:
  std::string eta() const;

  size_t total_, done_ = 0;
  std::ostream& out_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_;
};

bool stderr_is_terminal();

}  // namespace attnbench
