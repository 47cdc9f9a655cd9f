#include "config/config.hpp"

#include "kinds/problem_kind.hpp"
#include "base/names.hpp"
#include "kinds/problem.hpp"
#include "config/measurement_section.hpp"
#include "config/point_checks.hpp"
#include "config/sweep.hpp"
#include "config/yaml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace attnbench {

namespace {

constexpr int kMaxAxisValues = 10000;
constexpr size_t kMaxPoints = 100000;

// {from: 512, to: 16384, mul: 2} or {from: 1, to: 8, step: 1}.
std::vector<AxisValue> parse_range(const YamlReader& r, const YAML::Node& node,
                                   const std::string& key) {
  r.check_keys(node, key, {"from", "to", "step", "mul"});
  if (!node["from"]) r.fail(node, key + ".from", "a range needs 'from'");
  if (!node["to"]) r.fail(node, key + ".to", "a range needs 'to'");
  const int64_t from = r.integer(node["from"], key + ".from", 1);
  const int64_t to = r.integer(node["to"], key + ".to", 1);
  if (to < from)
    r.fail(node["to"], key + ".to",
           "'to' (" + std::to_string(to) + ") is below 'from' (" + std::to_string(from) + ")");
  const bool has_step = static_cast<bool>(node["step"]);
  const bool has_mul = static_cast<bool>(node["mul"]);
  if (has_step == has_mul) r.fail(node, key, "a range needs exactly one of 'step' or 'mul'");
  std::vector<AxisValue> values;
  if (has_step) {
    const int64_t step = r.integer(node["step"], key + ".step", 1);
    for (int64_t v = from;; v += step) {  // v + step stays within to: no overflow
      values.emplace_back(v);
      if (values.size() > kMaxAxisValues) r.fail(node, key, "the range has more than 10000 values");
      if (to - v < step) break;
    }
  } else {
    const int64_t mul = r.integer(node["mul"], key + ".mul", 2);
    for (int64_t v = from;; v *= mul) {  // v * mul stays within to: no overflow
      values.emplace_back(v);
      if (v > to / mul) break;
    }
  }
  return values;
}

// `zipped`: the axis moves with others, so a value may repeat (batch [1, 1] with seq_len [512,
// 1024]); a free axis's repeated value would measure one point twice.
std::vector<AxisValue> parse_axis_values(const YamlReader& r, const std::string& axis,
                                         const YAML::Node& node, const std::string& key,
                                         bool zipped = false) {
  const Field<Problem>& f = *find_problem_field(axis);
  if (f.type == FieldType::integer && node.IsMap()) {
    std::vector<AxisValue> values = parse_range(r, node, key);
    for (AxisValue& v : values) v = settable_value(r, f, node, key, std::move(v));
    return values;
  }
  std::vector<AxisValue> values;
  const bool flat = node.IsSequence() && node.size() > 0 &&
                    std::all_of(node.begin(), node.end(), [](const YAML::Node& n) { return n.IsScalar(); });
  if (pair_valued(f) && flat) return {read_problem_value(r, f, node, key, /*in_sweep=*/true)};
  for (const auto& item : r.list(node, key))
    values.push_back(read_problem_value(r, f, item, key, /*in_sweep=*/true));
  for (size_t i = 0; i < values.size() && !zipped; ++i)
    for (size_t j = 0; j < i; ++j)
      if (values[i] == values[j]) r.fail(node, key, "a value appears twice");
  return values;
}

}  // namespace

const std::vector<std::string>& config_keys() {
  static const std::vector<std::string> keys = {
      "name",      "description", "output",          "backends", "measurement", "sweep",
      "tolerance", "peak_tflops", "peak_tflops_fp8", "seed",     "expect",      "layers"};
  return keys;
}

namespace {

// One block; `where` is "sweep", or "sweep[i]" in a list of blocks.
SweepBlock parse_sweep_block(const YamlReader& r, const YAML::Node& node,
                             const std::string& block_key) {
  SweepBlock config;
  std::vector<std::string> allowed;
  for (const auto& f : problem_fields())
    if (!f.derived) allowed.push_back(f.name);
  allowed.push_back("tp");
  allowed.push_back("zip");
  r.check_keys(node, block_key, allowed);

  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    if (name == "zip") {
      config.zips_at = config.axes.size();
      continue;
    }
    if (name == "tp") {  // not a problem field: it divides the heads of the block's points
      config.tp_key = block_key + ".tp";
      config.tp_line = kv.first.Mark().line + 1, config.tp_column = kv.first.Mark().column + 1;
      config.tp.clear();
      const YAML::Node values = kv.second;
      for (size_t i = 0; i < (values.IsSequence() ? values.size() : 1); ++i) {
        const YAML::Node one = values.IsSequence() ? values[i] : values;
        config.tp.push_back(static_cast<int64_t>(r.number(one, config.tp_key, 1, false)));
        if (config.tp.back() != r.number(one, config.tp_key, 1, false) || config.tp.back() > 4096)
          r.fail(one, config.tp_key, "a tensor-parallel degree is a whole number from 1 to 4096");
      }
      if (config.tp.empty()) r.fail(values, config.tp_key, "expected a degree or a list of them");
      continue;
    }
    const std::string key = block_key + "." + name;
    config.axes.push_back({name, parse_axis_values(r, name, kv.second, key), key,
                           kv.first.Mark().line + 1, kv.first.Mark().column + 1});
    seen.insert(name);
  }
  if (const YAML::Node zip = node["zip"]) {
    if (!zip.IsSequence() || zip.size() == 0)
      r.fail(
          zip, block_key + ".zip",
          "expected a non-empty list of groups, each a mapping of axes to lists of equal length");
    for (size_t g = 0; g < zip.size(); ++g) {
      const YAML::Node group = zip[g];
      const std::string where = block_key + ".zip[" + std::to_string(g) + "]";
      std::vector<std::string> axis_names(allowed.begin(), allowed.end() - 2);  // not tp, zip
      r.check_keys(group, where, axis_names);
      ZipGroup zg;
      zg.line = group.Mark().line + 1;
      size_t length = 0;
      for (const auto& kv : group) {
        const std::string name = kv.first.as<std::string>();
        if (seen.count(name))
          r.fail_at(kv.first.Mark(), where + "." + name,
                    "axis '" + name + "' is already swept elsewhere; an axis belongs to one place");
        seen.insert(name);
        Axis a{name, parse_axis_values(r, name, kv.second, where + "." + name, /*zipped=*/true),
               where + "." + name, kv.first.Mark().line + 1, kv.first.Mark().column + 1};
        if (length != 0 && a.values.size() != length)
          r.fail(kv.second, where + "." + name,
                 "has " + std::to_string(a.values.size()) +
                     " values but the group's first axis has " + std::to_string(length) +
                     "; zipped axes move together and need equal lengths");
        length = a.values.size();
        zg.axes.push_back(std::move(a));
      }
      if (zg.axes.size() < 2) r.fail(group, where, "a zip group needs at least two axes");
      config.zips.push_back(std::move(zg));
    }
  }
  if (!seen.count("seq_len") && !seen.count("seq_lens"))
    r.fail(node, block_key + ".seq_len", "the sweep needs seq_len (or seq_lens)");
  return config;
}

void parse_sweep(const YamlReader& r, const YAML::Node& node, SweepConfig& config) {
  if (node.IsSequence()) {
    if (node.size() == 0)
      r.fail(node, "sweep", "expected a sweep block or a non-empty list of them");
    for (size_t i = 0; i < node.size(); ++i)
      config.sweeps.push_back(parse_sweep_block(r, node[i], "sweep[" + std::to_string(i) + "]"));
  } else {
    config.sweeps.push_back(parse_sweep_block(r, node, "sweep"));
  }
  size_t points = 0;
  for (const SweepBlock& block : config.sweeps) {
    size_t product = 1;
    for (const auto& a : block.axes) product = std::min(product * a.values.size(), kMaxPoints + 1);
    for (const auto& z : block.zips)
      product = std::min(product * z.axes.front().values.size(), kMaxPoints + 1);
    points = std::min(points + product, kMaxPoints + 1);
  }
  if (points > kMaxPoints)
    r.fail(node, "sweep",
           "expands to " + std::to_string(points) + " points, more than " +
               std::to_string(kMaxPoints));
}

// The kinds a sweep's points have: each block's `kind` values, or the default kind's where a block
// writes none.
std::set<std::string> swept_kinds(const SweepConfig& config) {
  std::set<std::string> kinds;
  for (const SweepBlock& block : config.sweeps) {
    bool written = false;
    auto read = [&](const Axis& a) {
      if (a.name != "kind") return;
      written = true;
      for (const AxisValue& v : a.values) kinds.insert(std::get<std::string>(v));
    };
    for (const Axis& a : block.axes) read(a);
    for (const ZipGroup& z : block.zips)
      for (const Axis& a : z.axes) read(a);
    if (!written) kinds.insert(Problem{}.kind);
  }
  return kinds;
}

// `layers: {KIND: COUNT, ...}`: the model's layers of each problem kind, a kind of the list
// (kinds/list.hpp) that the sweep measures, a count of at least 1. Read after the sweep.
void parse_layers(const YamlReader& r, const YAML::Node& node, SweepConfig& config) {
  std::vector<std::string> names;
  for (const ProblemKind* k : problem_kinds()) names.push_back(k->name());
  const std::string why =
      "layers: counts the model's layers of each problem kind (docs/kinds.md): ";
  if (!node.IsMap() || node.size() == 0)
    r.fail(node, "layers",
           why + "expected a mapping of kinds to counts, such as {" + names.front() + ": 32}");
  const std::set<std::string> swept = swept_kinds(config);
  for (const auto& kv : node) {
    const std::string name = r.scalar(kv.first, "layers");
    const std::string key = "layers." + name;
    if (!find_problem_kind(name))
      r.fail_at(kv.first.Mark(), key,
                "'" + name + "' is no problem kind (the kinds: " + one_of(names) + ")");
  }
  r.check_keys(node, "layers", names);  // a kind written twice, a kind without a count
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    const std::string key = "layers." + name;
    const std::string text = r.scalar(kv.second, key);
    const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
    if (text.empty() || !std::all_of(text.begin(), text.end(), digit))
      r.fail(kv.second, key,
             "a count of layers is a whole number of at least 1, not '" + text + "'");
    const int64_t count = r.integer(kv.second, key, 1);
    if (!swept.count(name)) {
      std::string kinds;
      for (const std::string& k : swept) kinds += (kinds.empty() ? "" : ", ") + k;
      r.fail_at(kv.first.Mark(), key,
                "the sweep measures no " + name + " point (its kinds: " + kinds +
                    "): its layers would have no time to add up");
    }
    config.layers.emplace_back(name, count);
  }
}

}  // namespace

namespace {

// A backend of a kind written as a map, `{python: FILE:FUNCTION, name: NAME}`: the kind's key and
// an optional name, the kind's parse refusing what it cannot take where it stands.
BackendSpec parse_backend_entry(const YamlReader& r, const YAML::Node& item) {
  std::vector<std::string> keys{"name"}, forms;
  const BackendKind* kind = nullptr;
  for (const BackendKind* k : backend_kinds()) {
    if (k->form().empty()) continue;  // named bare (a plugin)
    keys.push_back(k->name());
    forms.push_back("'" + k->form() + "'");
    if (item[k->name()]) {
      if (kind)
        r.fail(item, "backends", "names both '" + kind->name() + "' and '" + k->name() +
                                     "'; one entry is one backend");
      kind = k;
    }
  }
  r.check_keys(item, "backends", keys);
  if (!kind) r.fail(item, "backends", "a backend written as a map needs " + one_of(forms));
  const YAML::Node value = item[kind->name()];
  const std::string written = r.scalar(value, "backends." + kind->name());
  const std::string name = item["name"] ? r.scalar(item["name"], "backends.name") : "";
  BackendSpec spec;
  try {
    spec = kind->parse(written, name);
  } catch (const SpecError& e) {
    const YAML::Node at = item[e.key()] ? item[e.key()] : item;
    r.fail(at, "backends." + e.key(), e.what());
  }
  const bool name_ok =
      !spec.name.empty() && std::all_of(spec.name.begin(), spec.name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  if (!name_ok)
    r.fail(item["name"] ? item["name"] : item, "backends.name",
           "'" + spec.name + "' cannot name a backend (letters, digits, _ and -)");
  spec.line = item.Mark().line + 1;
  spec.column = item.Mark().column + 1;
  return spec;
}

// Lines ended by a lone CR (classic Mac files) as LF: yaml-cpp breaks lines at LF only, and read
// the whole file as one line ("illegal map value" at line 1).
std::string with_lf_lines(const std::string& text) {
  std::string out = text;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == '\r' && (i + 1 == out.size() || out[i + 1] != '\n')) out[i] = '\n';
  return out;
}

SweepConfig parse_config_unguarded(const std::string& raw_text, const std::string& file_name) {
  const std::string yaml_text = with_lf_lines(raw_text);
  YamlReader r(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    r.fail_at(e.mark, "", "not valid YAML: " + e.msg);
  }
  if (!root || root.IsNull()) throw ConfigError(file_name, 1, 1, "", "the file is empty");
  r.check_keys(root, "", config_keys());
  SweepConfig config;
  config.file = file_name;
  config.tolerance = default_tolerances();
  if (root["name"]) config.name = r.scalar(root["name"], "name");
  if (root["description"]) config.description = r.scalar(root["description"], "description");
  if (root["output"]) {
    config.output = r.scalar(root["output"], "output");
    if (config.output.empty()) r.fail(root["output"], "output", "the output path is empty");
  }
  if (root["backends"]) {
    for (const auto& item : r.list(root["backends"], "backends")) {
      BackendSpec spec = item.IsMap() ? parse_backend_entry(r, item)
                                      : plugin_kind().parse(r.scalar(item, "backends"), "");
      spec.line = item.Mark().line + 1;
      spec.column = item.Mark().column + 1;
      for (const BackendSpec& earlier : config.backends)
        if (earlier.name == spec.name)
          r.fail(item, "backends", "backend '" + spec.name + "' appears twice");
      config.backends.push_back(std::move(spec));
    }
  }
  if (root["measurement"]) parse_measurement(r, root["measurement"], config.measurement);
  if (root["tolerance"]) {
    const YAML::Node tol = root["tolerance"];
    r.check_keys(tol, "tolerance", enum_names<DType>());
    for (const auto& kv : tol) {
      const std::string name = kv.first.as<std::string>();
      config.tolerance[*parse_enum<DType>(name)] =
          r.number(kv.second, "tolerance." + name, 0, true);
    }
  }
  if (root["peak_tflops"])
    config.peak_tflops = r.number(root["peak_tflops"], "peak_tflops", 0, true);
  if (root["peak_tflops_fp8"])
    config.peak_tflops_fp8 = r.number(root["peak_tflops_fp8"], "peak_tflops_fp8", 0, true);
  if (root["seed"]) config.seed = static_cast<uint64_t>(r.integer(root["seed"], "seed", 0));
  if (!root["sweep"]) r.fail(root, "sweep", "the config needs a 'sweep' section");
  parse_sweep(r, root["sweep"], config);
  check_points(config);
  if (root["layers"]) parse_layers(r, root["layers"], config);
  if (root["expect"]) config.expect = root["expect"];
  return config;
}
}  // namespace

SweepConfig parse_config(const std::string& yaml_text, const std::string& file_name) {
  try {
    return parse_config_unguarded(yaml_text, file_name);
  } catch (const YAML::Exception& e) {  // e.g. a key that is not a plain word
    YamlReader(file_name).fail_at(e.mark, "", e.msg);
  }
}

std::vector<std::string> SweepConfig::backend_names() const {
  std::vector<std::string> names;
  for (const BackendSpec& b : backends) names.push_back(b.name);
  return names;
}

SweepConfig load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read the config file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

}  // namespace attnbench
