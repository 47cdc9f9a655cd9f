// A record's fields declared once: name, type, unit and a one-line doc, with typed access. The CSV
// schema, the worker protocol, the columns `expect:` may name, compare's metrics, the
// `measurement:` keys and docs/columns.md are read off such tables (records/fields.hpp,
// config/settings.hpp), so adding a field is one table entry.
#pragma once

#include "base/names.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace attnbench {

enum class FieldType { text, integer, number, boolean, choice, list };

// A field's value on its way between a record and a writer or reader. monostate: not measured,
// does not apply (an empty optional); a choice (an enum) travels as its name.
using FieldValue =
    std::variant<std::monostate, std::string, int64_t, double, bool, std::vector<std::string>>;

// How compare judges a numeric field of Row; absent on fields compare does not judge.
struct MetricTraits {
  bool higher_is_better = false;
  const char* noise_column = "";  // a relative standard deviation per row, or
  const char* p10_column = "";    // the spread of its quantiles; all empty: deterministic
  const char* p90_column = "";
  double threshold = 0;            // changes smaller than this are `same`; 0: any change counts
  bool from_time_samples = false;  // a function of the median time: judged on the raw samples
  bool host_time = false;          // the host's time: the two sides' hosts are compared too
};

template <class R>
struct Field {
  std::string name;
  FieldType type = FieldType::text;
  std::string unit;  // "ms", "us", "MiB", "count", ...; empty for text and identifiers
  std::string doc;   // one line
  std::function<FieldValue(const R&)> get;
  std::function<void(R&, const FieldValue&)> set;
  std::vector<std::string> choices;    // a choice's allowed names
  std::optional<MetricTraits> metric;  // Row only: compare may judge it
  bool predictable = false;            // Row only: `expect:` may name it (numeric fields)
  // A text field whose values have a form (a window, a length spec): one valid value, for tests
  // that set every field.
  std::string example;
  bool above_zero = false;  // a number that must be above 0 (a sweep's scale), not only >= 0

  // Problem fields only (kinds/problem.hpp, kinds/):
  std::vector<std::string> kinds;  // the problem kinds whose own field it is; empty: every kind's
  bool pair = false;     // a sweep writes it as a list of two numbers (a window's [LEFT, RIGHT])
  bool derived = false;  // read off other fields (head_dim_v): a column, never a sweep key
  // Its part of the point id ("" when it adds none: kv_heads equal to heads); null: none.
  std::function<std::string(const R&)> id_part;
  // Whether its value matters to this point (page_size: a paged cache's); null: always. And when,
  // in words, for the message that refuses it where it never does ("a paged cache's").
  std::function<bool(const R&)> applies;
  std::string applies_to;

  bool numeric() const { return type == FieldType::integer || type == FieldType::number; }
};

namespace field_detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct unwrapped {
  using type = T;
};
template <class T>
struct unwrapped<std::optional<T>> {
  using type = T;
};

template <class T>
constexpr FieldType type_of() {
  if constexpr (is_optional<T>::value)
    return type_of<typename T::value_type>();
  else if constexpr (std::is_same_v<T, std::string>)
    return FieldType::text;
  else if constexpr (std::is_same_v<T, bool>)
    return FieldType::boolean;
  else if constexpr (std::is_enum_v<T>)
    return FieldType::choice;
  else if constexpr (std::is_integral_v<T>)
    return FieldType::integer;
  else if constexpr (std::is_floating_point_v<T>)
    return FieldType::number;
  else
    return FieldType::list;
}

template <class T>
FieldValue to_value(const T& v) {
  if constexpr (is_optional<T>::value)
    return v ? to_value(*v) : FieldValue{};
  else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>)
    return v;
  else if constexpr (std::is_enum_v<T>)
    return to_string(v);
  else if constexpr (std::is_integral_v<T>)
    return static_cast<int64_t>(v);
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(v);
  else {
    std::vector<std::string> names;
    for (const auto& x : v) names.push_back(to_string(x));
    return names;
  }
}

// Throws std::invalid_argument when the value is not of the field's type.
template <class T>
void from_value(const FieldValue& value, T& out);

template <class T>
const T& as(const FieldValue& value) {
  if (const T* p = std::get_if<T>(&value)) return *p;
  throw std::invalid_argument("a value of the wrong type");
}

template <class T>
void from_value(const FieldValue& value, T& out) {
  if constexpr (is_optional<T>::value) {
    if (std::holds_alternative<std::monostate>(value)) {
      out.reset();
    } else {
      typename T::value_type inner{};
      from_value(value, inner);
      out = inner;
    }
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
    out = as<T>(value);
  } else if constexpr (std::is_enum_v<T>) {
    const auto parsed = parse_enum<T>(as<std::string>(value));
    if (!parsed) throw std::invalid_argument("unknown name '" + as<std::string>(value) + "'");
    out = *parsed;
  } else if constexpr (std::is_integral_v<T>) {
    const int64_t v = as<int64_t>(value);
    if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      throw std::invalid_argument(std::to_string(v) + " is out of range");
    out = static_cast<T>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    // An integer-valued number may arrive as an integer (JSON, a CSV cell "3").
    if (const int64_t* i = std::get_if<int64_t>(&value))
      out = static_cast<T>(*i);
    else
      out = static_cast<T>(as<double>(value));
  } else {
    using E = typename T::value_type;
    out.clear();
    for (const auto& name : as<std::vector<std::string>>(value)) {
      const auto parsed = parse_enum<E>(name);
      if (!parsed) throw std::invalid_argument("unknown name '" + name + "'");
      out.push_back(*parsed);
    }
  }
}

}  // namespace field_detail

// A field stored in member `m` of R.
template <class R, class T>
Field<R> field(std::string name, T R::*m, std::string unit, std::string doc) {
  Field<R> f;
  f.name = std::move(name);
  f.type = field_detail::type_of<T>();
  f.unit = std::move(unit);
  f.doc = std::move(doc);
  f.get = [m](const R& r) { return field_detail::to_value(r.*m); };
  f.set = [m](R& r, const FieldValue& v) { field_detail::from_value(v, r.*m); };
  f.predictable = f.numeric();
  using V = typename field_detail::unwrapped<T>::type;
  if constexpr (std::is_enum_v<V>) f.choices = enum_names<V>();
  if constexpr (field_detail::type_of<T>() == FieldType::list)
    f.choices = enum_names<typename V::value_type>();
  return f;
}

namespace field_detail {
// S's fields read through R, `part` giving the S of an R.
template <class R, class S, class Part>
std::vector<Field<R>> through(const std::vector<Field<S>>& inner, Part part) {
  std::vector<Field<R>> out;
  for (const auto& f : inner) {
    Field<R> g;
    g.name = f.name, g.type = f.type, g.unit = f.unit, g.doc = f.doc;
    g.choices = f.choices, g.metric = f.metric, g.predictable = f.predictable;
    g.example = f.example, g.above_zero = f.above_zero;
    g.kinds = f.kinds, g.pair = f.pair, g.derived = f.derived;
    g.get = [part, get = f.get](const R& r) { return get(part(const_cast<R&>(r))); };
    g.set = [part, set = f.set](R& r, const FieldValue& v) { set(part(r), v); };
    out.push_back(std::move(g));
  }
  return out;
}
}  // namespace field_detail

// A record S's fields, read through member `outer` of R (Row's problem and run info).
template <class R, class S>
std::vector<Field<R>> nested(S R::*outer, const std::vector<Field<S>>& inner) {
  return field_detail::through<R>(inner, [outer](R& r) -> S& { return r.*outer; });
}

// The fields of R's base class S (KernelRow's KernelStat).
template <class R, class S>
std::vector<Field<R>> inherited(const std::vector<Field<S>>& inner) {
  static_assert(std::is_base_of_v<S, R>);
  return field_detail::through<R>(inner, [](R& r) -> S& { return r; });
}

template <class R>
const Field<R>* find_field(const std::vector<Field<R>>& fields, const std::string& name) {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

// A number as the reports write it: the shortest text that reads back as exactly the same double.
std::string format_number(double value);
// A value as a CSV cell: empty when not measured, numbers in their shortest exact form.
std::string field_text(const FieldValue& value);
// A CSV cell read back as a field of `type`; throws std::invalid_argument when it is not one.
FieldValue parse_field_text(FieldType type, const std::string& text);

inline const char* type_name(FieldType type) {
  switch (type) {
    case FieldType::text: return "text";
    case FieldType::integer: return "integer";
    case FieldType::number: return "number";
    case FieldType::boolean: return "boolean";
    case FieldType::choice: return "name";
    case FieldType::list: return "list";
  }
  return "?";
}

}  // namespace attnbench
