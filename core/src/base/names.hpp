// One name table per enum (the CUTLASS profiler's enumerated_types.cpp shape): to_string, parsing,
// the "use a, b or c" hints and the allowed-name lists all come from the tables in names.cpp.
#pragma once

#include "base/enums.hpp"

#include <attnbench/backend.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace attnbench {

template <class E>
struct EnumName {
  E value;
  const char* name;
  bool alias = false;  // accepted when parsing, never written
};

// Defined in names.cpp for DType, Device, Direction, TimingMode, Pass, Status,
// ActivityKind, Verdict.
template <class E>
const std::vector<EnumName<E>>& name_table();

template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
std::string to_string(E value) {
  for (const auto& n : name_table<E>())
    if (n.value == value && !n.alias) return n.name;
  return "?";
}

template <class E>
std::optional<E> parse_enum(std::string_view text) {
  for (const auto& n : name_table<E>())
    if (text == n.name) return n.value;
  return std::nullopt;
}

// Every value's name, in table order (aliases left out).
template <class E>
std::vector<std::string> enum_names() {
  std::vector<std::string> out;
  for (const auto& n : name_table<E>())
    if (!n.alias) out.push_back(n.name);
  return out;
}

const char* flag_doc(Flag flag);  // one line: what the flag means

// "a, b or c", for messages that say what is allowed.
std::string one_of(const std::vector<std::string>& names);

template <class E>
std::string enum_hint() {
  return one_of(enum_names<E>());
}

// "a:b::c" split at ':' -> {"a", "b", "", "c"}: empty items kept, for the caller to refuse or skip.
std::vector<std::string> split(const std::string& text, char separator);


// An ATen operator's name as the reports write it: "aten::masked_fill" -> "masked_fill".
std::string op_name(std::string name);

}  // namespace attnbench
