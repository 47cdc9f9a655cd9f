#include "run/progress.hpp"

#include <unistd.h>
#include <cstdio>

namespace attnbench {

Progress::Progress(size_t total, std::ostream& out, bool interactive)
    : total_(total),
      out_(out),
      interactive_(interactive),
      start_(std::chrono::steady_clock::now()) {}

std::string Progress::eta() const {
  if (done_ == 0) return "ETA --:--";
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const long left = static_cast<long>(
      elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_) + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "ETA %ld:%02ld", left / 60, left % 60);
  return buf;
}

void Progress::begin(const std::string& item) {
  const std::string counter = "[" + std::to_string(done_ + 1) + "/" + std::to_string(total_) + "] ";
  if (interactive_)
    out_ << "\r\033[K" << counter << item << "  " << eta() << std::flush;
  else
    out_ << counter << item << '\n' << std::flush;
}

void Progress::end() { ++done_; }

void Progress::finish() {
  if (interactive_) out_ << "\r\033[K" << std::flush;
}

bool stderr_is_terminal() { return isatty(fileno(stderr)) != 0; }

}  // namespace attnbench
