#include "plugins/elf_exports.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace attnbench {

namespace {

class Reader {
 public:
  explicit Reader(const std::filesystem::path& file) : in_(file, std::ios::binary) {
    if (!in_) throw std::runtime_error("cannot open the file");
  }
  template <class T>
  T at(uint64_t offset) {
    T value{};
    read(offset, &value, sizeof value);
    return value;
  }
  void read(uint64_t offset, void* out, size_t bytes) {
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(bytes));
    if (!in_) throw std::runtime_error("truncated ELF file");
  }

 private:
  std::ifstream in_;
};

std::vector<Elf64_Shdr> section_headers(Reader& r) {
  // The magic number first: a text file shorter than an ELF header is no library, not a
  // truncated one.
  unsigned char magic[SELFMAG] = {};
  try {
    r.read(0, magic, SELFMAG);
  } catch (const std::runtime_error&) {
  }
  if (std::memcmp(magic, ELFMAG, SELFMAG) != 0)
    throw std::runtime_error("not an ELF file (a shared library starts with \\x7fELF)");
  const auto header = r.at<Elf64_Ehdr>(0);
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    throw std::runtime_error("not a 64-bit little-endian ELF file");
  if (header.e_type != ET_DYN) throw std::runtime_error("not a shared library");
  std::vector<Elf64_Shdr> out(header.e_shnum);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = r.at<Elf64_Shdr>(header.e_shoff + i * header.e_shentsize);
  return out;
}

}  // namespace

ElfExports::ElfExports(const std::filesystem::path& file) : file_(file) {
  Reader r(file);
  const std::vector<Elf64_Shdr> sections = section_headers(r);
  for (const auto& s : sections) {
    if (s.sh_type != SHT_DYNSYM || s.sh_link >= sections.size() || s.sh_entsize == 0) continue;
    const Elf64_Shdr& strings = sections[s.sh_link];
    std::vector<char> names(strings.sh_size + 1, '\0');
    r.read(strings.sh_offset, names.data(), strings.sh_size);
    for (uint64_t i = 0; i < s.sh_size / s.sh_entsize; ++i) {
      const auto sym = r.at<Elf64_Sym>(s.sh_offset + i * s.sh_entsize);
      const int binding = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sections.size() ||
          sym.st_name >= strings.sh_size)
        continue;
      if ((binding != STB_GLOBAL && binding != STB_WEAK) ||
          ELF64_ST_VISIBILITY(sym.st_other) == STV_HIDDEN)
        continue;
      symbols_[&names[sym.st_name]] = Symbol{sym.st_value, sym.st_size, sym.st_shndx};
    }
  }
}

bool ElfExports::defines(const std::string& symbol) const { return symbols_.count(symbol) > 0; }

std::optional<int32_t> ElfExports::int_value(const std::string& symbol) const {
  const auto it = symbols_.find(symbol);
  if (it == symbols_.end()) return std::nullopt;
  const Symbol& sym = it->second;
  if (sym.size != sizeof(int32_t)) throw std::runtime_error("'" + symbol + "' is not an int");
  Reader r(file_);
  const Elf64_Shdr s = section_headers(r).at(sym.section);
  if (s.sh_type == SHT_NOBITS) return 0;  // zero-initialised
  return r.at<int32_t>(s.sh_offset + (sym.value - s.sh_addr));
}

}  // namespace attnbench
