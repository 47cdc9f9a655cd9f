// The source kind: `{source: FILE, name: NAME}`, a C++ (.cpp) or CUDA (.cu) file with one
// ATTNBENCH_PLUGIN backend, compiled on first use into a plugin against this attnbench's headers
// and LibTorch, with the compiler and flags CMake recorded (attnbench-source.json beside the
// binary, or in ../lib/attnbench/). The plugin is cached by the hash of the source, the files it
// includes from outside those headers, the compiler and the flags: editing the file and running
// again recompiles it, nothing else does. A compile error is the backend's load failure, with the
// compiler's first error lines.
#include "plugins/backend_kind.hpp"

#include "base/files.hpp"
#include "base/hash.hpp"

#define BOOST_PROCESS_USE_STD_FS
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace attnbench {

namespace {

namespace fs = std::filesystem;
constexpr const char* kRecipeFile = "attnbench-source.json";

std::string file_text(const fs::path& path) { return file_bytes(path).value_or(""); }

// How to compile a backend against this attnbench: what CMake knew (cmake/source_recipe.cmake).
struct Recipe {
  fs::path file;
  std::string text;  // hashed: another attnbench, another plugin
  std::string cxx, nvcc;
  std::vector<std::string> defines, include_dirs, libraries, rpath;
};

std::optional<fs::path> recipe_path() {
  std::error_code ec;
  if (const char* env = std::getenv("ATTNBENCH_SOURCE_RECIPE"); env && *env)
    return fs::is_regular_file(env, ec) ? std::optional<fs::path>(env) : std::nullopt;
  const fs::path exe_dir = boost::dll::program_location().parent_path();
  for (const auto& candidate : {exe_dir / kRecipeFile, exe_dir / ".." / "lib" / "attnbench" / kRecipeFile})
    if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal();
  return std::nullopt;
}

Recipe read_recipe(const fs::path& path) {
  Recipe r;
  r.file = path;
  r.text = file_text(path);
  const auto j = nlohmann::json::parse(r.text);
  // Paths relative to the recipe's folder (an installed one), absolute otherwise.
  auto resolved = [&](const std::string& p) {
    return p.empty() || fs::path(p).is_absolute() ? p
                                                  : (path.parent_path() / p).lexically_normal().string();
  };
  r.cxx = j.at("cxx").get<std::string>();
  r.nvcc = j.value("nvcc", std::string());
  r.defines = j.at("defines").get<std::vector<std::string>>();
  for (const auto& d : j.at("include_dirs")) r.include_dirs.push_back(resolved(d));
  for (const auto& l : j.at("libraries")) r.libraries.push_back(resolved(l));
  for (const auto& d : j.at("rpath")) r.rpath.push_back(resolved(d));
  return r;
}

// The GPU's architecture for nvcc: $ATTNBENCH_CUDA_ARCH, else the first GPU's (9.0 -> sm_90a, so
// that Hopper's wgmma and TMA are there), else sm_90a.
std::string cuda_arch() {
  if (const char* env = std::getenv("ATTNBENCH_CUDA_ARCH"); env && *env) return env;
  std::string cap;
  if (std::FILE* p = ::popen("nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null", "r")) {
    char line[64] = {};
    if (std::fgets(line, sizeof line, p)) cap = line;
    ::pclose(p);
  }
  const size_t dot = cap.find('.');
  if (dot == std::string::npos || dot == 0) return "sm_90a";
  const std::string major = cap.substr(0, dot), minor = cap.substr(dot + 1, 1);
  if (major.find_first_not_of("0123456789") != std::string::npos || minor.empty() || !std::isdigit(minor[0]))
    return "sm_90a";
  const int m = std::stoi(major);
  return "sm_" + major + minor + (m == 9 || m == 10 || m == 12 ? "a" : "");
}

struct Output {
  int code = 0;
  std::string text;  // stdout and stderr together
};

// Seconds a compile may take ($ATTNBENCH_COMPILE_TIMEOUT_S, default 1200): a compiler that never
// ends (an endless template instantiation, an include that blocks) fails its backend, not the run.
// A value that is no number of seconds from 1 to a day is refused, naming the variable.
double compile_timeout_s() {
  const char* env = std::getenv("ATTNBENCH_COMPILE_TIMEOUT_S");
  if (!env || !*env) return 1200;
  char* end = nullptr;
  const double s = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(s >= 1 && s <= 86400))
    throw std::invalid_argument(std::string("$ATTNBENCH_COMPILE_TIMEOUT_S is '") + env +
                                "'; give the seconds a compile may take, from 1 to 86400");
  return s;
}

// `exe` under a deadline: coreutils' timeout runs it in a process group of its own and kills the
// whole group (the compiler's own children too) when `limit_s` passes; exit 137 then.
Output run(const std::string& exe, const std::vector<std::string>& args, double limit_s) {
  namespace bp = boost::process;
  bp::ipstream out;
  Output o;
  try {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", limit_s);
    std::vector<std::string> timed = {"-s", "KILL", seconds, exe};
    timed.insert(timed.end(), args.begin(), args.end());
    bp::child child(bp::exe = on_path("timeout").value_or("timeout").string(), bp::args = timed,
                    bp::std_in < bp::null, (bp::std_out & bp::std_err) > out);
    for (std::string line; std::getline(out, line);) o.text += line + "\n";
    child.wait();
    o.code = child.exit_code();
  } catch (const std::exception& e) {
    o.code = -1;
    o.text = exe + ": " + e.what();
  }
  return o;
}

// The first few lines a user needs: those that say error (file:line: error: ...), else the
// first lines of whatever the compiler said.
std::string first_errors(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> errors, all;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    all.push_back(line);
    if (line.find("error") != std::string::npos) errors.push_back(line);
  }
  const std::vector<std::string>& pick = errors.empty() ? all : errors;
  std::string out;
  for (size_t i = 0; i < pick.size() && i < 5; ++i) out += (i ? " | " : "") + pick[i];
  if (pick.size() > 5) out += " | (" + std::to_string(pick.size() - 5) + " more)";
  return out;
}

// The files a make-style dependency file names (the compiler's -MD output).
std::vector<fs::path> dependencies(const std::string& depfile) {
  std::string text = file_text(depfile);
  std::vector<fs::path> out;
  const size_t colon = text.find(": ");
  if (colon == std::string::npos) return out;
  std::string item;
  auto flush = [&] {
    if (!item.empty()) out.emplace_back(item);
    item.clear();
  };
  for (size_t i = colon + 2; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == ' ') {
      item += ' ';
      ++i;
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
    } else if (c == ' ' || c == '\n' || c == '\t') {
      flush();
    } else {
      item += c;
    }
  }
  flush();
  return out;
}

bool under(const fs::path& file, const std::vector<std::string>& dirs) {
  const std::string f = fs::weakly_canonical(file).string();
  for (const auto& d : dirs) {
    std::error_code ec;
    const std::string dir = fs::weakly_canonical(d, ec).string();
    if (!dir.empty() && f.rfind(dir + "/", 0) == 0) return true;
  }
  return f.rfind("/usr/", 0) == 0;
}

// A cache folder's builds: each compile's library and list of sources carry its id (a hash of that
// list: the source and the user's headers it included, each with its hash), and `current` names
// the newest. A compile never replaces a library another run's workers may still load: editing a
// header while a sweep runs leaves that sweep measuring the code it started with.
struct Build {
  fs::path library, sources;
};
Build build_files(const fs::path& dir, const std::string& stem, const std::string& id) {
  return {dir / ("attnbench_" + stem + "-" + id + ".so"), dir / ("sources-" + id + ".txt")};
}
std::optional<Build> current_build(const fs::path& dir, const std::string& stem) {
  std::ifstream in(dir / "current");
  std::string id;
  if (!(in >> id) || id.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  return build_files(dir, stem, id);
}

// The cached build is good while every file it was compiled from is as it was.
bool still_good(const fs::path& library, const fs::path& deps_file) {
  std::error_code ec;
  if (!fs::is_regular_file(library, ec) || !fs::is_regular_file(deps_file, ec)) return false;
  std::ifstream in(deps_file);
  for (std::string hash, path; in >> hash && std::getline(in >> std::ws, path);) {
    if (!fs::is_regular_file(path, ec) || fnv1a_hex(file_text(path)) != hash) return false;
  }
  return true;
}

fs::path cache_dir() {
  if (const char* env = std::getenv("ATTNBENCH_CACHE_DIR"); env && *env) return fs::path(env) / "source";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "attnbench" / "source";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "attnbench" / "source";
  return fs::temp_directory_path() / "attnbench-source";
}

class SourceKind final : public BackendKind {
 public:
  std::string name() const override { return "source"; }
  std::string noun() const override { return "source backend"; }
  std::string form() const override { return "source: FILE"; }

  BackendSpec parse(const std::string& value, const std::string& backend) const override {
    const fs::path file = value;
    const std::string ext = file.extension().string();
    if (ext != ".cpp" && ext != ".cc" && ext != ".cxx" && ext != ".cu")
      throw SpecError("source", "'" + value + "': a source backend is a .cpp, .cc, .cxx or .cu file");
    return {name(), backend.empty() ? file.stem().string() : backend,
            existing_file("source", value), value, "", 0, 0};
  }

  std::string unavailable() const override {
    if (!recipe_path())
      return std::string("this attnbench has no compile recipe (") + kRecipeFile +
             " beside the binary or in ../lib/attnbench/; $ATTNBENCH_SOURCE_RECIPE names one)";
    try {
      compile_timeout_s();  // a deadline the environment sets wrong refuses the run, not a row
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }

  bool prepares() const override { return true; }  // it compiles
  std::optional<LoadFailure> prepare(BackendSpec& spec) const override {
    auto failed = [&](const std::string& why) { return spec_failure(spec, why); };
    Recipe recipe;
    try {
      recipe = read_recipe(*recipe_path());
    } catch (const std::exception& e) {
      return failed(std::string("cannot read the compile recipe: ") + e.what());
    }
    const fs::path source = spec.target;
    const bool cuda = source.extension() == ".cu";
    if (cuda && recipe.nvcc.empty())
      return failed("is CUDA, and this attnbench was built without a CUDA compiler (nvcc)");
    const std::string compiler = cuda ? recipe.nvcc : recipe.cxx;
    std::vector<std::string> flags = {"-std=c++17", "-O2", "-DNDEBUG", "-shared"};
    if (cuda) {
      flags.insert(flags.end(), {"-ccbin", recipe.cxx, "-arch=" + cuda_arch(), "-Xcompiler",
                                 "-fPIC,-fvisibility=hidden"});
    } else {
      flags.insert(flags.end(), {"-fPIC", "-fvisibility=hidden"});
    }
    for (const auto& d : recipe.defines) flags.push_back(d);
    flags.push_back("-I" + source.parent_path().string());
    for (const auto& d : recipe.include_dirs) flags.insert(flags.end(), {"-isystem", d});
    // The key: what went into the plugin, whatever the cache folder's history.
    const Output version = run(compiler, {"--version"}, 60);
    std::string key = "attnbench source 1|" + recipe.text + "|" + compiler + "|" + version.text;
    for (const auto& f : flags) key += "|" + f;
    key += "|" + file_text(source);
    const std::string stem_name = source.stem().string();
    const fs::path dir = cache_dir() / (stem_name + "-" + fnv1a_hex(key));
    if (const auto cached = current_build(dir, stem_name);
        cached && still_good(cached->library, cached->sources)) {
      spec.library = cached->library.string();
      std::cerr << "attnbench: " << spec.written << ": compiled before (" << dir.string() << ")\n";
      return std::nullopt;
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return failed("cannot make the cache folder " + dir.string() + ": " + ec.message());
    std::cerr << "attnbench: compiling " << spec.written << " (first use, or it changed) into "
              << dir.string() << " ...\n";
    const auto t0 = std::chrono::steady_clock::now();
    const std::string stem = (dir / ("build-" + std::to_string(::getpid()))).string();
    std::vector<std::string> args = flags;
    args.insert(args.end(), {"-MD", "-MF", stem + ".d", source.string(), "-o", stem + ".so"});
    for (const auto& l : recipe.libraries) args.push_back(l);
    for (const auto& d : recipe.rpath)
      if (cuda)
        args.insert(args.end(), {"-Xlinker", "-rpath=" + d});
      else
        args.push_back("-Wl,-rpath," + d);
    const double limit = compile_timeout_s();
    const Output built = run(compiler, args, limit);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (built.code != 0) {
      fs::remove(stem + ".so", ec);
      fs::remove(stem + ".d", ec);
      // Killed at the deadline: timeout's group signal takes timeout itself too (exit 9 or 137).
      if (took >= limit) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", limit);
        return failed(std::string("did not compile within ") + seconds + " s (" + compiler +
                      " was killed; $ATTNBENCH_COMPILE_TIMEOUT_S sets the deadline)");
      }
      return failed("did not compile (" + compiler + ", exit " + std::to_string(built.code) +
                    "): " + first_errors(built.text));
    }
    // The files of the user's to watch: the source and what it includes from outside the
    // recipe's (attnbench's, LibTorch's, the toolkit's) and the system's headers.
    std::ostringstream deps;
    deps << fnv1a_hex(file_text(source)) << ' ' << source.string() << '\n';
    for (const fs::path& dep : dependencies(stem + ".d"))
      if (fs::is_regular_file(dep, ec) && !fs::equivalent(dep, source, ec) &&
          !under(dep, recipe.include_dirs))
        deps << fnv1a_hex(file_text(dep)) << ' ' << fs::absolute(dep).lexically_normal().string()
             << '\n';
    fs::remove(stem + ".d", ec);
    const Build build = build_files(dir, stem_name, fnv1a_hex(deps.str()));
    std::ofstream(stem + ".sources") << deps.str();
    std::ofstream(stem + ".current") << fnv1a_hex(deps.str()) << '\n';
    // Whole or not at all (another run may read them): the library and its sources under the
    // build's own names, then `current` pointing at them.
    fs::rename(stem + ".so", build.library, ec);
    if (!ec) fs::rename(stem + ".sources", build.sources, ec);
    if (!ec) fs::rename(stem + ".current", dir / "current", ec);
    if (ec) return failed("cannot keep the compiled plugin in " + dir.string() + ": " + ec.message());
    spec.library = build.library.string();
    std::cerr << "attnbench: " << spec.written << " compiled in " << took << " s\n";
    return std::nullopt;
  }

  void load(const BackendSources& sources, const std::vector<std::string>& skip,
            const OnLoading& on_loading, PluginSet& set) const override {
    for (const BackendSpec& spec : sources.specs) {
      if (spec.kind != name() || std::find(skip.begin(), skip.end(), spec.target) != skip.end())
        continue;
      if (name_taken(spec, set)) continue;
      if (on_loading) on_loading(spec.target, spec.name);
      try {
        LoadedBackend loaded = load_plugin(spec.library);
        loaded.name = spec.name;  // the report's name, whatever the class calls itself
        loaded.file = spec.target;
        set.backends.push_back(std::move(loaded));
      } catch (const std::exception& e) {
        set.failures.push_back(
            spec_failure(spec, std::string("compiled (") + spec.library + "), but " + e.what()));
      }
    }
  }
};

}  // namespace

const BackendKind& source_kind() {
  static const SourceKind kind;
  return kind;
}

}  // namespace attnbench
