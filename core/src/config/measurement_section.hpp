// The `measurement:` section of a sweep, read into MeasureSettings: every key off the settings
// table (config/settings.hpp), each error located at its key.
#pragma once

#include "config/settings.hpp"
#include "config/yaml_reader.hpp"

namespace attnbench {

void parse_measurement(const YamlReader& r, const YAML::Node& node, MeasureSettings& m);

}  // namespace attnbench
