// The output lock: one writer per report, exclusive even within one process, released when its
// holder ends, naming the holder's pid.
#include "base/errors.hpp"
#include "write/output_lock.hpp"

#include <gtest/gtest.h>

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

namespace attnbench {
namespace {

std::string temp_report(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("attnbench-lock-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string message_of_second_lock(const std::string& report) {
  try {
    OutputLock second(report);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(OutputLock, IsExclusiveAndNamesTheHoldersPid) {
  const std::string report = temp_report("r.csv");
  const std::string lock_file = report.substr(0, report.size() - 4) + ".lock";
  std::optional<OutputLock> first(std::in_place, report);
  // The lock file holds this process's pid, and nothing else.
  std::ifstream in(lock_file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, std::to_string(::getpid()) + "\n");
  // A second lock of the same report is refused even in this process (flock is per open file):
  // a shared lock would let two writers in.
  const std::string refused = message_of_second_lock(report);
  EXPECT_NE(refused.find(report + " is being written by another attnbench run (pid " +
                         std::to_string(::getpid()) + ", lock " + lock_file + ")"),
            std::string::npos)
      << refused;
  // Another process cannot take it either, exclusively or shared.
  const int fd = ::open(lock_file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_NE(::flock(fd, LOCK_SH | LOCK_NB), 0) << "the lock must be exclusive";
  ::close(fd);
  // Released and removed when its holder goes: the next writer gets it.
  first.reset();
  EXPECT_FALSE(std::filesystem::exists(lock_file));
  EXPECT_EQ(message_of_second_lock(report), "");
  // Another report beside it is another lock.
  const OutputLock a(report);
  EXPECT_EQ(message_of_second_lock(temp_report("other.csv")), "");
}

// The lock file is the user's, readable by others (0644), and made with its folders.
TEST(OutputLock, MakesItsFolderAndAReadableFile) {
  const std::string report = temp_report("deep/er/r.csv");
  const mode_t old_mask = ::umask(022);
  std::optional<OutputLock> lock(std::in_place, report);
  ::umask(old_mask);
  struct stat st {};
  ASSERT_EQ(::stat((std::filesystem::path(report).parent_path() / "r.lock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

// The folders it made go again when the run left nothing in them (a run refused before its first
// row); a folder with the report in it, or one that was there before, stays.
TEST(OutputLock, FoldersItMadeForNothingGoAgain) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(temp_report("kept")).parent_path();
  const fs::path unused = base / "unused", used = base / "used";
  fs::remove_all(unused);
  fs::remove_all(used);
  { OutputLock lock((unused / "a" / "b" / "r.csv").string()); }
  EXPECT_FALSE(fs::exists(unused));
  EXPECT_TRUE(fs::exists(base));
  {
    OutputLock lock((used / "a" / "r.csv").string());
    std::ofstream(used / "a" / "r.csv") << "rows\n";
  }
  EXPECT_TRUE(fs::exists(used / "a" / "r.csv"));
  EXPECT_FALSE(fs::exists(used / "a" / "r.lock"));
}

// A folder that cannot be made is an InputError naming the report and why, not a filesystem
// exception's raw text.
TEST(OutputLock, AFolderThatCannotBeMadeIsALocatedError) {
  const std::string file = temp_report("a-file");
  std::ofstream(file) << "not a folder\n";
  try {
    OutputLock lock(file + "/sub/r.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              file + "/sub/r.csv: cannot make its folder " + file + "/sub: Not a directory");
  }
}

}  // namespace
}  // namespace attnbench
