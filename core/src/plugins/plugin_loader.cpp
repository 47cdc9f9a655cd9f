#include "plugins/plugin_loader.hpp"

#include "base/files.hpp"
#include "base/hash.hpp"
#include "base/names.hpp"
#include "plugins/elf_exports.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>

namespace attnbench {

namespace {

constexpr const char* kAbiSymbol = "attnbench_abi_version";
constexpr const char* kFactorySymbol = "attnbench_create_backend";
constexpr const char* kFilePrefix = "attnbench_";
}  // namespace

// What each plugin ABI version added (backend.hpp's kPluginAbiVersion).
std::string abi_changes_since(int abi) {
  static const char* const added[] = {
      nullptr,
      nullptr,
      "kv_heads, seq_len_kv, direction and prepare_backward",
      "fp8_e4m3 and the inputs' scales",
      "ragged, paged, window and softcap",
      "problem kinds (mla), the v width, the scale, Backend::kinds() and variants()",
      "kv_dtype (an fp8 KV cache), attention sinks and chunked local attention",
      "kinds' and variants' inputs by name (Inputs::input) in place of Inputs::sinks, their "
      "fields without a member (Problem::extra), Problem::present, kind dsa",
  };
  static_assert(sizeof(added) / sizeof(added[0]) == kPluginAbiVersion + 1,
                "say what the new plugin ABI version adds");
  if (abi < 1 || abi >= kPluginAbiVersion) return "";
  std::string out;
  for (int v = abi + 1; v <= kPluginAbiVersion; ++v)
    out += (out.empty() ? " (" + std::to_string(v) + " added " : "; " + std::to_string(v) + " ") +
           added[v];
  return out + ")";
}

const LoadedBackend* PluginSet::find(const std::string& name) const {
  for (const auto& b : backends)
    if (b.name == name) return &b;
  return nullptr;
}

std::vector<std::string> PluginSet::names() const {
  std::vector<std::string> out;
  for (const auto& b : backends) out.push_back(b.name);
  return out;
}

std::string file_build(const std::string& prefix, const std::filesystem::path& file) {
  const auto bytes = file_bytes(file);
  return bytes ? prefix + fnv1a_hex(*bytes) : "";
}

LoadedBackend load_plugin(const std::filesystem::path& file) {
  namespace dll = boost::dll;
  // Read before dlopen: the bytes that are about to run.
  const std::string build = file_build("so:", file);
  // The ABI and the factory are checked in the file itself, before dlopen runs any of its code.
  std::optional<int32_t> abi;
  bool has_factory = false;
  try {
    const ElfExports exports(file);
    abi = exports.int_value(kAbiSymbol);
    has_factory = exports.defines(kFactorySymbol);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load the library: " + std::string(e.what()));
  }
  if (!abi)
    throw std::runtime_error("not an attnbench plugin: it exports no '" + std::string(kAbiSymbol) +
                             "'");
  if (*abi != kPluginAbiVersion)
    throw std::runtime_error("built for ABI " + std::to_string(*abi) + ", this attnbench speaks " +
                             std::to_string(kPluginAbiVersion) + abi_changes_since(*abi) +
                             "; rebuild the plugin against this attnbench's headers");
  if (!has_factory)
    throw std::runtime_error("no factory: the plugin exports no '" + std::string(kFactorySymbol) +
                             "' (use ATTNBENCH_PLUGIN(YourBackend))");
  std::shared_ptr<dll::shared_library> lib;
  try {
    lib = std::make_shared<dll::shared_library>(
        file, dll::load_mode::rtld_now | dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load the library: " + std::string(e.what()));
  }
  auto& factory = lib->get_alias<std::unique_ptr<Backend>()>(kFactorySymbol);

  std::unique_ptr<Backend> made;
  try {
    made = factory();
  } catch (const std::exception& e) {
    throw std::runtime_error("the factory threw: " + std::string(e.what()));
  }
  if (!made) throw std::runtime_error("the factory returned no backend");

  LoadedBackend loaded;
  loaded.name = made->name();
  loaded.description = made->description();
  loaded.file = file.string();
  loaded.build = build;
  loaded.backend = std::shared_ptr<Backend>(made.release(), [lib](Backend* b) { delete b; });
  if (loaded.name.empty()) throw std::runtime_error("the backend has an empty name");
  return loaded;
}

std::string backend_of_file(const std::string& file) {
  const std::string stem = std::filesystem::path(file).stem().string();
  return stem.rfind(kFilePrefix, 0) == 0 ? stem.substr(std::string(kFilePrefix).size()) : "";
}

PluginSet load_plugins(const std::vector<std::filesystem::path>& dirs,
                       const std::vector<std::string>& skip,
                       const std::function<void(const std::string&)>& on_loading) {
  PluginSet set;
  const std::string suffix = boost::dll::shared_library::suffix().string();
  std::set<std::filesystem::path> seen_dirs, seen_files;  // canonical
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      set.failures.push_back({dir.string(), "plugin folder does not exist"});
      continue;
    }
    if (!seen_dirs.insert(std::filesystem::weakly_canonical(dir, ec)).second) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(kFilePrefix, 0) == 0 && name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      if (!seen_files.insert(std::filesystem::weakly_canonical(file, ec)).second) continue;
      // Named as the protocol carried it back: byte for byte (protocol.cpp's path_json).
      if (std::find(skip.begin(), skip.end(), file.string()) != skip.end()) continue;
      try {
        if (on_loading) on_loading(file.string());
        LoadedBackend b = load_plugin(file);
        if (const LoadedBackend* twin = set.find(b.name)) {
          LoadFailure twice{file.string(), "two plugins named '" + b.name + "': " + twin->file +
                                               " and " + file.string() + "; this one is not loaded"};
          twice.duplicate = true;
          set.failures.push_back(std::move(twice));
          continue;
        }
        set.backends.push_back(std::move(b));
      } catch (const std::exception& e) {
        set.failures.push_back({file.string(), e.what()});
      }
    }
  }
  std::sort(set.backends.begin(), set.backends.end(),
            [](const LoadedBackend& a, const LoadedBackend& b) { return a.name < b.name; });
  return set;
}

std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::string>& dirs) {
  std::vector<std::filesystem::path> path(dirs.begin(), dirs.end());
  if (path.empty()) path.push_back(default_plugin_dir());
  if (const char* env = std::getenv("ATTNBENCH_PLUGIN_PATH"); env && *env) {
    for (const std::string& dir : split(env, ':'))
      if (!dir.empty()) path.emplace_back(dir);
  }
  return path;
}

std::filesystem::path default_plugin_dir() {
  if (const char* env = std::getenv("ATTNBENCH_PLUGIN_DIR"); env && *env) return env;
  const std::filesystem::path exe_dir = boost::dll::program_location().parent_path();
  std::error_code ec;
  if (std::filesystem::is_directory(exe_dir / "plugins", ec)) return exe_dir / "plugins";
  return (exe_dir / ".." / "lib" / "attnbench" / "plugins").lexically_normal();
}

std::string folder_list(const std::vector<std::filesystem::path>& dirs) {
  std::string out;
  for (size_t i = 0; i < dirs.size(); ++i)
    out += (i == 0 ? "" : i + 1 == dirs.size() ? " and " : ", ") + dirs[i].string();
  return out;
}

}  // namespace attnbench
