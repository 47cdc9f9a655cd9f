#include "config/measurement_section.hpp"

#include "base/names.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace attnbench {

void parse_measurement(const YamlReader& r, const YAML::Node& node, MeasureSettings& m) {
  const std::string where = "measurement";
  std::vector<std::string> keys;
  for (const auto& s : measure_settings_fields())
    if (s.config_key) keys.push_back(s.field.name);
  r.check_keys(node, where, keys);
  auto key = [&](const std::string& k) { return YamlReader::qualified(where, k); };
  // Scalars from the table (records/fields.cpp): type and lower bound; lists below.
  for (const auto& s : measure_settings_fields()) {
    const std::string& name = s.field.name;
    if (!s.config_key || !node[name]) continue;
    const YAML::Node item = node[name];
    FieldValue value;
    switch (s.field.type) {
      case FieldType::number: value = r.number(item, key(name), s.min, s.min_exclusive); break;
      case FieldType::integer:
        value = r.integer(item, key(name), static_cast<int64_t>(s.min));
        break;
      case FieldType::boolean: value = r.boolean(item, key(name)); break;
      case FieldType::choice: {
        std::string text = r.scalar(item, key(name));
        if (std::find(s.field.choices.begin(), s.field.choices.end(), text) ==
            s.field.choices.end())
          r.fail(item, key(name), "'" + text + "' is not one of " + one_of(s.field.choices));
        value = std::move(text);
        break;
      }
      default: continue;
    }
    try {
      s.field.set(m, value);
    } catch (const std::invalid_argument& e) {
      r.fail(item, key(name), e.what());
    }
  }
  // A list setting: the shared parser, its error located at the offending item.
  auto list_setting = [&](const std::string& name, auto parse) {
    const std::vector<YAML::Node> items = r.list(node[name], key(name));
    std::vector<std::string> names;
    for (const auto& item : items) names.push_back(r.scalar(item, key(name)));
    try {
      return parse(names);
    } catch (const ListItemError& e) {
      r.fail(items[e.index()], key(name), e.what());
    }
  };
  if (node["timing_modes"]) m.timing_modes = list_setting("timing_modes", parse_timing_modes);
  if (node["passes"]) m.passes = list_setting("passes", parse_passes);
  if (m.max_samples < m.min_samples)
    r.fail(node, key("max_samples"),
           "max_samples (" + std::to_string(m.max_samples) + ") is below min_samples (" +
               std::to_string(m.min_samples) + ")");
  if (m.max_time_s < m.min_time_s)
    r.fail(node, key("max_time_s"), "max_time_s is below min_time_s");
}

}  // namespace attnbench
