// The `measurement:` section of a sweep, read into MeasureSettings: every key off the settings
// table (config/settings.hpp), each error located at its key.
#pragma once

#include "config/settings.hpp"
#include "config/yaml_reader.hpp"

namespace attnbench {

// The most seconds measurement.timeout_s, max_time_s and run --timeout-s take: a week.
inline constexpr double kMaxTimeoutS = 7 * 86400.0;

void parse_measurement(const YamlReader& r, const YAML::Node& node, MeasureSettings& m);

}  // namespace attnbench
