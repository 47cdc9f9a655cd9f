// One run writes a report at a time: a second run on the same output is refused, naming the
// first's process, instead of both appending to one file that neither can read back.
#pragma once

#include <filesystem>
#include <string>

namespace attnbench {

class OutputLock {
 public:
  // Locks `<report stem>.lock` beside the report (flock: released by the kernel however this
  // process ends) and writes this process's pid into it. Throws InputError when another process
  // holds it, or when the report's folder cannot be made. The folders it made are removed again
  // at the end when the run left them empty.
  explicit OutputLock(const std::string& report_csv);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string path_;
  std::filesystem::path created_;  // the outermost folder it made; empty: none
  int fd_ = -1;
};

}  // namespace attnbench
