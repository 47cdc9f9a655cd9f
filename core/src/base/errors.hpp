// One error policy: throw these with context, catch once in main.
#pragma once

#include <stdexcept>
#include <string>

namespace attnbench {

// The first line of a message: exceptions from LibTorch and CUDA carry backtraces after it.
inline std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Bad input the user can fix (config, CSV, command line). main() exits with code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A located problem in a YAML config: "file:line:column: key 'a.b': message".
class ConfigError : public InputError {
 public:
  ConfigError(const std::string& file, int line, int column, const std::string& key,
              const std::string& message)
      : InputError(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": key '" +
                   key + "': " + message),
        file_(file),
        line_(line),
        column_(column),
        key_(key) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }  // 1-based
  int column() const { return column_; }
  const std::string& key() const { return key_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_;
};

}  // namespace attnbench
