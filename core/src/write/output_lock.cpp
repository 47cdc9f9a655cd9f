#include "write/output_lock.hpp"

#include "base/errors.hpp"
#include "write/report_writer.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace attnbench {

OutputLock::OutputLock(const std::string& report_csv) : path_(sibling(report_csv, side::lock)) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path_).parent_path();
  std::error_code ec;
  // The folders -o names that do not exist yet: made here, and taken away again when the run
  // leaves nothing in them (a run refused before it wrote a row).
  for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) created_ = p;
  if (!parent.empty() && !fs::create_directories(parent, ec) && ec)
    throw InputError(report_csv + ": cannot make its folder " + parent.string() + ": " +
                     ec.message());
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(path_ + ": cannot open the lock file: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    fd_ = -1;
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    throw InputError(report_csv + " is being written by another attnbench run (pid " +
                     (holder.empty() ? "unknown" : holder) + ", lock " + path_ +
                     "); wait for it to end, or give another -o");
  }
  const std::string mine = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, mine.data(), mine.size(), 0) < 0) {
    // the lock holds without the pid in it; the message then says "unknown"
  }
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still held: a waiting run then locks a fresh file
  ::close(fd_);
  if (created_.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::path p = fs::path(path_).parent_path(); !p.empty(); p = p.parent_path()) {
    if (!fs::is_empty(p, ec) || ec || !fs::remove(p, ec)) break;  // it holds something: kept
    if (p == created_) break;
  }
}

}  // namespace attnbench
