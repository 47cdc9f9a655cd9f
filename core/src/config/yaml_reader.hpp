// Reads YAML nodes into values, failing with ConfigError located at the node: "file:line:column:
// key 'a.b': message". Every check of a config's values goes through here.
#pragma once

#include "base/errors.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnbench {

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& msg) const;
  [[noreturn]] void fail_at(const YAML::Mark& mark, const std::string& key,
                            const std::string& msg) const;

  // Every key of `map` must be in `allowed` and have a value; suggests the closest allowed key.
  void check_keys(const YAML::Node& map, const std::string& where,
                  const std::vector<std::string>& allowed) const;

  std::string scalar(const YAML::Node& node, const std::string& key) const;
  int64_t integer(const YAML::Node& node, const std::string& key, int64_t min_value) const;
  double number(const YAML::Node& node, const std::string& key, double min_value,
                bool exclusive_min) const;
  bool boolean(const YAML::Node& node, const std::string& key) const;
  // A scalar or a list of scalars, never empty.
  std::vector<YAML::Node> list(const YAML::Node& node, const std::string& key) const;

  static std::string qualified(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }

 private:
  std::string file_;
};

}  // namespace attnbench
