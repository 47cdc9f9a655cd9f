// Reads what an ELF shared library exports straight from its file, without loading it: none of the
// library's code (static initialisers included) runs. The plugin loader checks the ABI this way
// before dlopen. Boost.DLL's library_info reads the full symbol table, which `strip` removes from
// installed libraries; this reads the dynamic one, which the loader itself uses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace attnbench {

class ElfExports {
 public:
  // Throws std::runtime_error when the file is not a 64-bit little-endian ELF shared object.
  explicit ElfExports(const std::filesystem::path& file);

  bool defines(const std::string& symbol) const;
  // The initial value of an exported `const int`; nullopt when the symbol is not defined.
  std::optional<int32_t> int_value(const std::string& symbol) const;

 private:
  struct Symbol {
    uint64_t value = 0, size = 0;
    uint16_t section = 0;
  };

  std::filesystem::path file_;
  std::map<std::string, Symbol> symbols_;  // defined, visible dynamic symbols
};

}  // namespace attnbench
