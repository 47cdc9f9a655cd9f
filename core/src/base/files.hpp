// What the harness reads from disk whole, and the programs it finds on $PATH.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace attnbench {

// The file's bytes; nullopt when it cannot be opened.
std::optional<std::string> file_bytes(const std::filesystem::path& path);

// `program` in the first folder of $PATH that holds it executable, as a shell finds it; nullopt
// when none does. (Boost.Process 1.74's search_path needs Boost.Filesystem's library.)
std::optional<std::filesystem::path> on_path(const std::string& program);

}  // namespace attnbench
