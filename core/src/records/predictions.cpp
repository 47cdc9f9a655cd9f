#include "records/predictions.hpp"

#include "base/names.hpp"
#include "config/sweep.hpp"
#include "config/yaml_reader.hpp"
#include "records/row_columns.hpp"

#include <algorithm>

namespace attnbench {

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> filter_fields() {
  std::vector<std::string> fields;
  for (const auto& f : problem_fields()) fields.push_back(f.name);
  fields.push_back("timing_mode");
  fields.push_back("point_id");
  return fields;
}

// A `where` value as the CSV writes it, so matching a row is a string comparison.
std::string filter_value(const YamlReader& r, const YAML::Node& item, const std::string& field,
                         const std::string& key) {
  const std::string text = r.scalar(item, key);
  if (field == "timing_mode" || field == "point_id") {
    if (field == "timing_mode" && !parse_enum<TimingMode>(text))
      r.fail(item, key, "unknown timing mode '" + text + "'; use " + enum_hint<TimingMode>());
    return text;
  }
  return field_text(read_problem_value(r, *find_problem_field(field), item, key, /*in_sweep=*/false));
}

class Parser {
 public:
  Parser(const YamlReader& r, const std::vector<std::string>& backends, Expectations& out)
      : r_(r), backends_(backends), out_(out) {}

  void backend_reference(const YAML::Node& node, const std::string& name, const std::string& key) {
    if (!backends_.empty() && !contains(backends_, name))
      r_.fail(
          node, key,
          "backend '" + name + "' is not in this config's backends (" + one_of(backends_) + ")");
    out_.references.push_back({name, key, node.Mark().line + 1, node.Mark().column + 1});
  }

  Expectation entry(const std::string& backend, const YAML::Node& node, const std::string& where) {
    std::vector<std::string> allowed = {"where", "faster_than", "slower_than", "aten_ops"};
    for (const auto& c : numeric_row_columns()) allowed.push_back(c);
    r_.check_keys(node, where, allowed);
    Expectation e;
    e.backend = backend;
    for (const auto& kv : node) {
      const std::string name = kv.first.as<std::string>();
      const std::string key = YamlReader::qualified(where, name);
      const size_t before = e.predictions.size();
      if (name == "where") {
        e.where = filters(kv.second, key);
      } else if (name == "faster_than" || name == "slower_than") {
        Prediction p;
        p.column = "time_ms_median";
        (name == "faster_than" ? p.less_than : p.more_than) = backend_list(kv.second, key, backend);
        e.predictions.push_back(std::move(p));
      } else if (name == "aten_ops") {
        Prediction p;
        p.column = name;
        p.ops.emplace();
        for (const auto& item : r_.list(kv.second, key))
          p.ops->push_back(op_name(r_.scalar(item, key)));  // as the CSV writes them
        e.predictions.push_back(std::move(p));
      } else {
        e.predictions.push_back(numeric(name, kv.second, key, backend));
      }
      if (e.predictions.size() > before) same_relation_once(e.predictions, kv.second, key);
    }
    if (e.predictions.empty()) r_.fail(node, where, "predicts nothing (only 'where')");
    return e;
  }

 private:
  // One entry states each relation once: `faster_than: [math]` beside `time_ms_median: {less_than:
  // math}` would count one comparison twice, and below-and-above the same backend can never hold.
  void same_relation_once(const std::vector<Prediction>& predictions, const YAML::Node& node,
                          const std::string& key) const {
    const Prediction& last = predictions.back();
    for (size_t i = 0; i + 1 < predictions.size(); ++i) {
      const Prediction& p = predictions[i];
      if (p.column != last.column) continue;
      for (const auto* mine : {&last.less_than, &last.more_than})
        for (const std::string& other : *mine) {
          const bool below = mine == &last.less_than;
          if (contains(below ? p.less_than : p.more_than, other))
            r_.fail(node, key,
                    "repeats a relation to '" + other + "' that this entry already states for " +
                        p.column);
          if (contains(below ? p.more_than : p.less_than, other))
            r_.fail(node, key,
                    "contradicts this entry: " + p.column + " cannot be both below and above '" +
                        other + "'");
        }
    }
    for (const std::string& other : last.less_than)
      if (contains(last.more_than, other))
        r_.fail(node, key, last.column + " cannot be both below and above '" + other + "'");
  }

  std::vector<RowFilter> filters(const YAML::Node& node, const std::string& key) {
    const std::vector<std::string> fields = filter_fields();
    r_.check_keys(node, key, fields);
    std::vector<RowFilter> out;
    for (const auto& kv : node) {
      RowFilter f;
      f.field = kv.first.as<std::string>();
      const std::string field_key = YamlReader::qualified(key, f.field);
      for (const auto& item : r_.list(kv.second, field_key))
        f.values.push_back(filter_value(r_, item, f.field, field_key));
      out.push_back(std::move(f));
    }
    return out;
  }

  // The backends a row is compared with. Itself is refused (the relation could never hold) and so
  // is a name given twice (a copy-paste slip that would count one comparison twice).
  std::vector<std::string> backend_list(const YAML::Node& node, const std::string& key,
                                        const std::string& self) {
    std::vector<std::string> names;
    for (const auto& item : r_.list(node, key)) {
      const std::string name = r_.scalar(item, key);
      if (name == self)
        r_.fail(item, key,
                "compares '" + self + "' with itself: a row is never below or above its own value");
      if (contains(names, name)) r_.fail(item, key, "names '" + name + "' twice");
      names.push_back(name);
      backend_reference(item, name, key);
    }
    return names;
  }

  Prediction numeric(const std::string& column, const YAML::Node& node, const std::string& key,
                     const std::string& self) {
    Prediction p;
    p.column = column;
    if (node.IsScalar()) {
      p.min = p.max = r_.number(node, key, -1e300, false);
      return p;
    }
    if (!node.IsMap())
      r_.fail(node, key, "expected a value, or a mapping with min, max, less_than or more_than");
    r_.check_keys(node, key, {"min", "max", "less_than", "more_than"});
    if (node["min"]) p.min = r_.number(node["min"], key + ".min", -1e300, false);
    if (node["max"]) p.max = r_.number(node["max"], key + ".max", -1e300, false);
    if (p.min && p.max && *p.max < *p.min)
      r_.fail(node["max"], key + ".max", "max is below min: the range holds no value");
    if (node["less_than"]) p.less_than = backend_list(node["less_than"], key + ".less_than", self);
    if (node["more_than"]) p.more_than = backend_list(node["more_than"], key + ".more_than", self);
    return p;
  }

  const YamlReader& r_;
  const std::vector<std::string>& backends_;
  Expectations& out_;
};

Expectations parse_expectations(const YamlReader& r, const YAML::Node& node,
                                const std::vector<std::string>& backends) {
  if (!node.IsMap()) r.fail(node, "expect", "expected a mapping of backend names to predictions");
  Expectations out;
  Parser parser(r, backends, out);
  std::vector<std::string> seen;
  for (const auto& kv : node) {
    const std::string backend = kv.first.as<std::string>();
    const std::string key = "expect." + backend;
    if (contains(seen, backend))
      r.fail(kv.first, key, "appears twice; give a list to make several predictions");
    seen.push_back(backend);
    if (kv.second.IsNull()) r.fail(kv.first, key, "has no value");
    parser.backend_reference(kv.first, backend, key);
    if (kv.second.IsSequence()) {
      if (kv.second.size() == 0) r.fail(kv.second, key, "the list is empty");
      for (size_t i = 0; i < kv.second.size(); ++i)
        out.items.push_back(
            parser.entry(backend, kv.second[i], key + "[" + std::to_string(i) + "]"));
    } else {
      out.items.push_back(parser.entry(backend, kv.second, key));
    }
  }
  return out;
}

}  // namespace

Expectations read_expectations(const SweepConfig& config) {
  if (!config.expect) return {};
  const YamlReader r(config.file);
  try {
    return parse_expectations(r, *config.expect, config.backend_names());
  } catch (const YAML::Exception& e) {  // e.g. a key that is not a plain word
    r.fail_at(e.mark, "", e.msg);
  }
}

}  // namespace attnbench
