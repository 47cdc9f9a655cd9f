#include "fa3_library.hpp"

#include <attnbench/backend.hpp>

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

namespace attnbench::fa3 {

namespace fs = std::filesystem;

namespace {

// The package folders of the two wheels, with their op namespace.
struct Package {
  const char* folder;
  const char* name;
  const char* op;
  const char* config;  // the build flags, beside the package folder
  Features features;   // when the config file is absent
};
const Package kPackages[] = {{"fa3_fwd",
                              "fa3-fwd",
                              "fa3_fwd::fwd",
                              "fa3_fwd_config.py",
                              {false, false, false, true, true, true, true}},
                             {"flash_attn_3",
                              "tokenspeed-fa3",
                              "flash_attn_3::fwd",
                              "flash_attn_config.py",
                              {true, true, true, false, true, false, false}}};

// The wheel's own record of what it was built without: 'FLASHATTENTION_DISABLE_PAGEDKV': True.
Features read_features(const fs::path& config, Features features) {
  std::ifstream in(config);
  if (!in) return features;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // FLASHATTENTION_DISABLE_PAGEDKV, and the two HDIMDIFF flags as FLASH_ATTENTION_DISABLE_*.
  auto disabled = [&](const std::string& flag, bool fallback) {
    size_t at = text.find("'FLASHATTENTION_DISABLE_" + flag + "': ");
    if (at == std::string::npos) at = text.find("'FLASH_ATTENTION_DISABLE_" + flag + "': ");
    if (at == std::string::npos) return fallback;
    return text.compare(text.find(": ", at) + 2, 4, "True") == 0;
  };
  features.fp16 = !disabled("FP16", !features.fp16);
  features.paged = !disabled("PAGEDKV", !features.paged);
  features.local = !disabled("LOCAL", !features.local);
  features.softcap = !disabled("SOFTCAP", !features.softcap);
  features.varlen = !disabled("VARLEN", !features.varlen);
  features.hdimdiff192 = !disabled("HDIMDIFF192", !features.hdimdiff192);
  features.hdimdiff64 = !disabled("HDIMDIFF64", !features.hdimdiff64);
  return features;
}

const char* kHowToInstall =
    "pip install fa3-fwd (forward, bf16/fp8) or tokenspeed-fa3 (adds fp16), into the Python "
    "whose torch attnbench links or onto $PYTHONPATH; or point $ATTNBENCH_FA3_LIB at its "
    "_C.abi3.so";

// site-packages holding the LibTorch this process runs: .../site-packages/torch/lib/libtorch_cpu.so
std::optional<fs::path> torch_site_packages() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&at::globalContext), &info) == 0 || !info.dli_fname)
    return std::nullopt;
  return fs::path(info.dli_fname).parent_path().parent_path().parent_path();
}

std::vector<fs::path> search_folders() {
  std::vector<fs::path> out;
  if (const char* pp = std::getenv("PYTHONPATH")) {
    std::string list = pp;
    size_t start = 0;
    while (start <= list.size()) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) out.emplace_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  if (auto site = torch_site_packages()) out.push_back(*site);
  return out;
}

Library load(const fs::path& so, const Package& package) {
  Library lib;
  lib.path = so.string();
  lib.package = package.name;
  lib.op = package.op;
  lib.features = read_features(so.parent_path().parent_path() / package.config, package.features);
  // RTLD_LAZY: the library is also a Python extension module, and its module init is its only
  // use of libpython (PyModule_Create2), which this process neither has nor calls. RTLD_LOCAL:
  // both wheels are built from the same sources with default visibility, so with RTLD_GLOBAL the
  // second one's op called the first one's mha_fwd (tokenspeed-fa3's paged decode answered "does
  // not support paged KV" from fa3-fwd's code on an H100). Never unloaded: its ops are registered
  // with the process-wide dispatcher.
  if (!dlopen(lib.path.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
    const char* why = dlerror();
    lib.error = "FlashAttention-3 found at " + lib.path +
                " but not loaded: " + (why ? why : "unknown dlopen error");
    return lib;
  }
  if (!c10::Dispatcher::singleton().findSchema({lib.op, ""}))
    lib.error = "FlashAttention-3 loaded from " + lib.path + " but it registered no op " + lib.op;
  return lib;
}

std::vector<Library> find_and_load() {
  if (const char* explicit_path = std::getenv("ATTNBENCH_FA3_LIB")) {
    const fs::path so = explicit_path;
    if (!fs::exists(so)) {
      Library lib;
      lib.error = std::string("FlashAttention-3 not found: $ATTNBENCH_FA3_LIB is ") +
                  explicit_path + ", which does not exist";
      return {lib};
    }
    const bool tokenspeed = so.parent_path().filename() == "flash_attn_3";
    return {load(so, kPackages[tokenspeed ? 1 : 0])};
  }
  std::string looked;
  std::vector<Library> found;
  for (const Package& package : kPackages)
    for (const fs::path& folder : search_folders()) {
      const fs::path so = folder / package.folder / "_C.abi3.so";
      if (fs::exists(so)) {
        found.push_back(load(so, package));
        break;
      }
    }
  if (!found.empty()) return found;
  for (const fs::path& folder : search_folders())
    looked += (looked.empty() ? "" : ", ") + folder.string();
  Library lib;
  lib.error = "FlashAttention-3 not found (looked in " + (looked.empty() ? "nothing" : looked) +
              "): " + kHowToInstall;
  return {lib};
}

bool is_shape_refusal(const std::string& what) {
  // FA3's argument checks (head_dim, dtype, architecture); CUDA failures and memory stay errors.
  return what.find("CUDA error") == std::string::npos &&
         what.find("out of memory") == std::string::npos;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

const std::vector<Library>& libraries() {
  static const std::vector<Library> libs = find_and_load();
  return libs;
}

at::Tensor call_forward(const Library& lib, const std::map<std::string, c10::IValue>& args) {
  // Looked up once per op (a call must not pay for the dispatcher's table).
  static std::map<std::string, c10::OperatorHandle> handles;
  auto it = handles.find(lib.op);
  if (it == handles.end())
    it = handles
             .emplace(lib.op, c10::Dispatcher::singleton().findSchemaOrThrow(lib.op.c_str(), ""))
             .first;
  const c10::OperatorHandle& op = it->second;
  std::vector<c10::IValue> stack;
  size_t used = 0;
  for (const c10::Argument& a : op.schema().arguments()) {
    if (auto it = args.find(a.name()); it != args.end())
      stack.push_back(it->second), ++used;
    else if (a.default_value())
      stack.push_back(*a.default_value());
    else
      throw std::runtime_error(lib.op + " needs argument '" + a.name() +
                               "', which attnbench does "
                               "not give: another FA3 version than the one this plugin knows");
  }
  // An argument the schema does not name would be dropped, and the call run without it (`qv`
  // for the schema's `q_v` once ran the MLA decode without its latent part: wrong, not refused).
  if (used != args.size())
    for (const auto& [name, value] : args)
      if (!op.schema().argumentIndexWithName(name))
        throw std::runtime_error(lib.op + " takes no argument '" + name +
                                 "': another FA3 version than the one this plugin knows");
  try {
    op.callBoxed(&stack);
  } catch (const std::exception& e) {
    if (is_shape_refusal(e.what()))
      throw attnbench::Unsupported("FlashAttention-3 refused: " + first_line(e.what()));
    throw;
  }
  return stack.at(0).toTensor();
}

}  // namespace attnbench::fa3
