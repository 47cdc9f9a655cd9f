// The source kind end to end (core/src/plugins/source_kind.cpp): a .cpp named in the sweep is
// compiled on first use, measured like a plugin, taken from the cache while nothing it was built
// from changed, compiled again when the user edits it or a header of theirs; a compile error is
// that backend's rows, quoting the compiler at the file and line, and the other backends are
// measured as usual.
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace attnbench {
namespace {

using test::Cli;
using test::Result;
using test::rows_of;
using test::run;
using test::small_sweep;

const std::string kSources = std::string(ATTNBENCH_SOURCE_DIR) + "/tests/source_backends";

bool has_recipe() {
  return std::filesystem::exists(std::string(ATTNBENCH_BINARY_DIR) + "/attnbench-source.json");
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A source that did not compile, in a run beside naive: at both points of small_sweep naive is
// `ok` and the source's row is `error`, its reason holding each of `words`, no build measured.
void expect_not_compiled(const test::Rows& rows, const std::string& backend,
                         const std::vector<std::string>& words) {
  ASSERT_EQ(rows.size(), 4u);
  for (int seq : {32, 48}) {
    const std::string point = "b1-h2-s" + std::to_string(seq) + "-d16-fp32-causal-cpu ";
    EXPECT_EQ(rows.at(point + "naive wall").at("status"), "ok");
    const auto& row = rows.at(point + backend + " wall");
    EXPECT_EQ(row.at("status"), "error");
    for (const std::string& word : words)
      EXPECT_NE(row.at("reason").find(word), std::string::npos) << word << ": " << row.at("reason");
    EXPECT_EQ(row.at("backend_build"), "");
  }
}

class SourceBackends : public Cli {
 protected:
  void SetUp() override {
    if (!has_recipe()) GTEST_SKIP() << "skipped: this build wrote no attnbench-source.json";
    Cli::SetUp();
    // The user's copy, which the tests edit, and a cache of this test's own.
    for (const char* f : {"scaled_textbook.cpp", "scaled_textbook.hpp", "does_not_compile.cpp"})
      std::filesystem::copy(kSources + "/" + f, dir_ / f);
    env_ = "ATTNBENCH_CACHE_DIR=" + path("cache");
  }
  Result run_with(const std::string& backends, const std::string& out) {
    return run("run " + write(out + ".yaml", small_sweep(backends)) + " -o " + path(out + ".csv"),
               env_);
  }
  std::string env_;
};

TEST_F(SourceBackends, CompiledOnFirstUseCachedUntilTheUserEditsIt) {
  const std::string backends = "naive, {source: " + path("scaled_textbook.cpp") + ", name: mine}";
  const Result first = run_with(backends, "first");
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_EQ(count(first.output, "compiling "), 1u) << first.output;
  auto rows = rows_of(path("first.csv"));
  ASSERT_EQ(rows.size(), 4u) << first.output;
  for (int seq : {32, 48}) {
    const auto& row = rows.at("b1-h2-s" + std::to_string(seq) + "-d16-fp32-causal-cpu mine wall");
    EXPECT_EQ(row.at("status"), "ok") << row.at("reason");
    EXPECT_NE(row.at("time_ms_median"), "");
  }

  const Result again = run_with(backends, "again");
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_EQ(count(again.output, "compiling "), 0u) << again.output;
  EXPECT_EQ(count(again.output, "compiled before"), 1u) << again.output;
  EXPECT_EQ(rows_of(path("again.csv")).size(), 4u);

  // An edit of the user's header (not of the source) is seen through the compiler's dependencies.
  std::ofstream(path("scaled_textbook.hpp"), std::ios::app) << "// edited\n";
  const Result edited = run_with(backends, "edited");
  ASSERT_EQ(edited.code, 0) << edited.output;
  EXPECT_EQ(count(edited.output, "compiling "), 1u) << edited.output;
  EXPECT_EQ(rows_of(path("edited.csv")).at("b1-h2-s32-d16-fp32-causal-cpu mine wall").at("status"),
            "ok");
}

// A dry run lists the points at once: it compiles nothing, and says so of the source backend,
// which it still lists; the next real run compiles.
TEST_F(SourceBackends, ADryRunCompilesNothing) {
  const std::string backends = "naive, {source: " + path("scaled_textbook.cpp") + ", name: mine}";
  const Result dry = run("run " + write("dry.yaml", small_sweep(backends)) + " --dry-run", env_);
  ASSERT_EQ(dry.code, 0) << dry.output;
  EXPECT_EQ(count(dry.output, "compiling "), 0u) << dry.output;
  EXPECT_NE(dry.output.find("not compiled: a dry run compiles nothing"), std::string::npos)
      << dry.output;
  EXPECT_NE(dry.output.find("mine"), std::string::npos) << dry.output;
  EXPECT_FALSE(std::filesystem::exists(path("dry.csv")));
  const Result real = run_with(backends, "real");
  EXPECT_EQ(count(real.output, "compiling "), 1u) << real.output;
}

TEST_F(SourceBackends, ACompileErrorIsThatBackendsRowsQuotingTheCompiler) {
  const Result r = run_with("naive, {source: " + path("does_not_compile.cpp") + "}", "out");
  EXPECT_EQ(r.code, 1) << r.output;
  expect_not_compiled(rows_of(path("out.csv")), "does_not_compile",
                      {"did not compile", "does_not_compile.cpp:6",
                       "undeclared_name_in_source_backend"});
  // A failed compile keeps nothing: the next run tries again.
  const Result again = run_with("{source: " + path("does_not_compile.cpp") + "}", "again");
  EXPECT_EQ(count(again.output, "compiling "), 1u) << again.output;
}

// A report says which code it measured: each row's backend_build is the compiled library's hash.
// An edit of a header recompiles into a library of its own (the old one stays for a sweep still
// loading it), the rows' build changes with it, and --resume of the old report refuses the
// mixture at its first row of the old build.
TEST_F(SourceBackends, ARowSaysWhichBuildItMeasuredAndResumeRefusesAnother) {
  const std::string backends = "naive, {source: " + path("scaled_textbook.cpp") + ", name: mine}";
  const Result first = run_with(backends, "first");
  ASSERT_EQ(first.code, 0) << first.output;
  const auto rows = rows_of(path("first.csv"));
  const std::string mine = rows.at("b1-h2-s32-d16-fp32-causal-cpu mine wall").at("backend_build");
  const std::string naive = rows.at("b1-h2-s32-d16-fp32-causal-cpu naive wall").at("backend_build");
  EXPECT_EQ(mine.rfind("so:", 0), 0u) << mine;
  EXPECT_EQ(naive.rfind("so:", 0), 0u) << naive;
  EXPECT_EQ(rows.at("b1-h2-s48-d16-fp32-causal-cpu mine wall").at("backend_build"), mine);
  std::set<std::string> libraries;
  for (const auto& e : std::filesystem::recursive_directory_iterator(path("cache")))
    if (e.path().extension() == ".so") libraries.insert(e.path().filename().string());
  ASSERT_EQ(libraries.size(), 1u);

  // The header gains a definition the library keeps (a comment, or an inline function nothing
  // calls, would leave the library, and so the build, as it was).
  std::ofstream(path("scaled_textbook.hpp"), std::ios::app)
      << "extern \"C\" int attnbench_test_edit = 7;\n";
  const Result edited = run_with(backends, "edited");
  ASSERT_EQ(edited.code, 0) << edited.output;
  const auto after = rows_of(path("edited.csv"));
  EXPECT_NE(after.at("b1-h2-s32-d16-fp32-causal-cpu mine wall").at("backend_build"), mine);
  EXPECT_EQ(after.at("b1-h2-s32-d16-fp32-causal-cpu naive wall").at("backend_build"), naive);
  libraries.clear();
  for (const auto& e : std::filesystem::recursive_directory_iterator(path("cache")))
    if (e.path().extension() == ".so") libraries.insert(e.path().filename().string());
  EXPECT_EQ(libraries.size(), 2u) << "the first build stays beside the second";

  // The first report, cut to its first point, resumed with the edited code.
  std::ifstream in(path("first.csv"));
  std::string header, line1, line2;
  std::getline(in, header), std::getline(in, line1), std::getline(in, line2);
  std::ofstream(path("first.csv"), std::ios::trunc) << header << '\n' << line1 << '\n' << line2 << '\n';
  const Result resumed = run("run " + write("first.yaml", small_sweep(backends)) + " -o " +
                                 path("first.csv") + " --resume",
                             env_);
  EXPECT_EQ(resumed.code, 2) << resumed.output;
  EXPECT_NE(resumed.output.find("first.csv:"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("cannot resume: backend 'mine' was measured there with build " +
                                mine),
            std::string::npos)
      << resumed.output;
}

// A compile that never ends (here an include of a FIFO no one writes) is killed at the deadline
// ($ATTNBENCH_COMPILE_TIMEOUT_S); the backend's rows say so and the others are measured.
TEST_F(SourceBackends, ACompileThatNeverEndsIsKilledAtItsDeadline) {
  const std::string fifo = path("never.h");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  write("blocks.cpp", "#include \"" + fifo + "\"\n");
  const Result r = run("run " + write("b.yaml", small_sweep("naive, {source: " +
                                                             path("blocks.cpp") + "}")) +
                           " -o " + path("out.csv"),
                       env_ + " ATTNBENCH_COMPILE_TIMEOUT_S=3");
  EXPECT_EQ(r.code, 1) << r.output;
  expect_not_compiled(rows_of(path("out.csv")), "blocks", {"did not compile within 3 s"});
}

// The deadline kills what no polite signal stops: a compiler (and the processes it started) that
// ignores SIGTERM is killed all the same, and the run ends within seconds of it.
TEST_F(SourceBackends, ACompilerThatIgnoresTermIsKilledAllTheSame) {
  std::ifstream in(std::string(ATTNBENCH_BINARY_DIR) + "/attnbench-source.json");
  std::stringstream recipe;
  recipe << in.rdbuf();
  const std::string stubborn = write("stubborn-cxx", "#!/bin/sh\ncase \"$1\" in --version) echo "
                                                   "stubborn 1;; *) trap '' TERM; sleep 60;; esac\n");
  std::filesystem::permissions(stubborn, std::filesystem::perms::owner_all);
  std::string text = recipe.str();
  const size_t at = text.find("\"cxx\": \"");
  ASSERT_NE(at, std::string::npos) << text;
  const size_t start = at + 8, end = text.find('"', start);
  text.replace(start, end - start, stubborn);
  const std::string recipe_file = write("recipe.json", text);
  const Result r = run("run " + write("s.yaml", small_sweep("naive, {source: " +
                                                             path("scaled_textbook.cpp") + "}")) +
                           " -o " + path("out.csv"),
                       env_ + " ATTNBENCH_SOURCE_RECIPE=" + recipe_file +
                           " ATTNBENCH_COMPILE_TIMEOUT_S=2 timeout 40");
  EXPECT_EQ(r.code, 1) << r.output;  // 124: the run outlived its 40 s
  expect_not_compiled(rows_of(path("out.csv")), "scaled_textbook", {"did not compile within 2 s"});
}

// The compiler reads no terminal: a source that includes /dev/stdin reads nothing from the
// run's standard input, however long that stays open, and compiles.
TEST_F(SourceBackends, TheCompilerReadsNothingFromTheRunsInput) {
  std::ifstream in(path("scaled_textbook.cpp"));
  std::stringstream source;
  source << "#include \"/dev/stdin\"\n" << in.rdbuf();
  write("reads_stdin.cpp", source.str());
  const std::string config = write("r.yaml", small_sweep("{source: " + path("reads_stdin.cpp") +
                                                         ", name: mine}"));
  // The run's input: a FIFO a background sleep holds open for 330 s. A compiler reading it would
  // wait out the 300 s deadline and fail; one that does not compiles in its own time, however
  // loaded the machine (a 20 s deadline missed neighbouring compiles of 60-144 s).
  const std::string fifo = path("input");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result r = run("run " + config + " -o " + path("out.csv"),
                       env_ + " ATTNBENCH_COMPILE_TIMEOUT_S=300 sh -c '(sleep 330 >" + fifo +
                           ") >/dev/null 2>&1 & exec \"$0\" \"$@\" <" + fifo + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(count(r.output, "compiled in"), 1u) << r.output;
}

// A source in a folder whose name is not UTF-8 compiles, loads and runs: its paths reach the
// worker byte for byte.
TEST_F(SourceBackends, AFolderNameThatIsNotUtf8IsNoObstacle) {
  const std::filesystem::path odd = path("caf\xe9");
  std::filesystem::create_directory(odd);
  for (const char* f : {"scaled_textbook.cpp", "scaled_textbook.hpp"})
    std::filesystem::copy(path(f), odd / f);
  const Result r = run_with("{source: " + (odd / "scaled_textbook.cpp").string() + ", name: mine}",
                            "odd");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(rows_of(path("odd.csv")).at("b1-h2-s32-d16-fp32-causal-cpu mine wall").at("status"),
            "ok");
}

TEST_F(SourceBackends, ASourceThatIsNotThereOrNotCppIsAConfigErrorAtItsLine) {
  Result r = run_with("naive,\n  {source: " + path("nowhere.cpp") + "}", "missing");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("missing.yaml:2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nowhere.cpp: no such file"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("missing.csv")));
  write("kernel.py", "pass\n");
  r = run_with("{source: " + path("kernel.py") + "}", "python");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("a source backend is a .cpp, .cc, .cxx or .cu file"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// The build's recipe, as JSON, to write changed copies of.
nlohmann::json build_recipe() {
  std::ifstream in(std::string(ATTNBENCH_BINARY_DIR) + "/attnbench-source.json");
  return nlohmann::json::parse(in);
}

// The compiled libraries in the cache, by their folder and file names.
std::set<std::string> libraries_in(const std::filesystem::path& cache) {
  std::set<std::string> out;
  if (!std::filesystem::exists(cache)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache))
    if (e.path().extension() == ".so")
      out.insert(e.path().parent_path().filename().string() + "/" + e.path().filename().string());
  return out;
}

class SourceCacheKey : public SourceBackends {
 protected:
  // A run of scaled_textbook.cpp (as `mine`) under `recipe`; how many compiles it made.
  size_t compiles(const nlohmann::json& recipe, const std::string& out) {
    const std::string file = write(out + "-recipe.json", recipe.dump());
    const Result r = run("run " + write(out + ".yaml", small_sweep("{source: " +
                                                                    path("scaled_textbook.cpp") +
                                                                    ", name: mine}")) +
                             " -o " + path(out + ".csv"),
                         env_ + " ATTNBENCH_SOURCE_RECIPE=" + file);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(rows_of(path(out + ".csv")).at("b1-h2-s32-d16-fp32-causal-cpu mine wall").at("status"),
              "ok");
    return count(r.output, "compiling ");
  }
};

// The compiler's version is in the key: the same compiler path answering another --version (an
// upgraded toolchain) compiles anew; the same answer takes the cache.
TEST_F(SourceCacheKey, TheCompilersVersionIsInTheKey) {
  nlohmann::json recipe = build_recipe();
  const std::string real = recipe.at("cxx").get<std::string>();
  const std::string version = write("version.txt", "c++ 1.0\n");
  const std::string wrapper =
      write("cxx", "#!/bin/sh\nif [ \"$1\" = --version ]; then cat " + version +
                       "; exit 0; fi\nexec " + real + " \"$@\"\n");
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  recipe["cxx"] = wrapper;
  EXPECT_EQ(compiles(recipe, "first"), 1u);
  EXPECT_EQ(compiles(recipe, "same"), 0u);
  write("version.txt", "c++ 1.1\n");
  EXPECT_EQ(compiles(recipe, "upgraded"), 1u);
  EXPECT_EQ(libraries_in(path("cache")).size(), 2u);
}

// What the recipe says goes into the key, the link lines too (libraries and rpath are no compile
// flag): one rpath more compiles anew.
TEST_F(SourceCacheKey, TheRecipesLinkLinesAreInTheKey) {
  nlohmann::json recipe = build_recipe();
  EXPECT_EQ(compiles(recipe, "first"), 1u);
  EXPECT_EQ(compiles(recipe, "same"), 0u);
  recipe["rpath"].push_back(path("lib"));
  EXPECT_EQ(compiles(recipe, "relinked"), 1u);
}

// The source's folder is in the key (its -I): the same file, word for word, in another folder
// beside a header of its own is another plugin, not the first folder's build again.
TEST_F(SourceBackends, TheSameSourceInAnotherFolderIsCompiledWithItsOwnHeader) {
  const std::filesystem::path other = path("other");
  std::filesystem::create_directory(other);
  for (const char* f : {"scaled_textbook.cpp", "scaled_textbook.hpp"})
    std::filesystem::copy(path(f), other / f);
  std::ofstream(other / "scaled_textbook.hpp", std::ios::app)
      << "extern \"C\" int attnbench_test_other_folder = 3;\n";
  const Result first = run_with("{source: " + path("scaled_textbook.cpp") + ", name: mine}", "a");
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_EQ(count(first.output, "compiling "), 1u) << first.output;
  const Result second =
      run_with("{source: " + (other / "scaled_textbook.cpp").string() + ", name: mine}", "b");
  ASSERT_EQ(second.code, 0) << second.output;
  EXPECT_EQ(count(second.output, "compiling "), 1u) << second.output;
  EXPECT_NE(rows_of(path("a.csv")).at("b1-h2-s32-d16-fp32-causal-cpu mine wall").at("backend_build"),
            rows_of(path("b.csv")).at("b1-h2-s32-d16-fp32-causal-cpu mine wall").at("backend_build"));
}

// A .cpp and a .cu of the same stem, side by side: each compiled by its own compiler into a cache
// folder of its own, `<stem>-<16 hex digits>`, holding `attnbench_<stem>-<16 hex digits>.so`; the
// rows of both are measured.
TEST_F(SourceBackends, ACppAndACuOfOneStemAreTwoLibrariesNamedAfterTheStem) {
  if (build_recipe().value("nvcc", std::string()).empty() ||
      !std::filesystem::exists(build_recipe().value("nvcc", std::string())))
    GTEST_SKIP() << "skipped: this build has no nvcc";
  std::filesystem::copy(path("scaled_textbook.cpp"), path("scaled_textbook.cu"));
  const Result r = run_with("{source: " + path("scaled_textbook.cpp") + ", name: cpp}, {source: " +
                                path("scaled_textbook.cu") + ", name: cu}",
                            "out");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(count(r.output, "compiling "), 2u) << r.output;
  const auto rows = rows_of(path("out.csv"));
  for (const char* name : {"cpp", "cu"})
    EXPECT_EQ(rows.at(std::string("b1-h2-s32-d16-fp32-causal-cpu ") + name + " wall").at("status"),
              "ok")
        << name;
  const std::set<std::string> libraries = libraries_in(path("cache"));
  ASSERT_EQ(libraries.size(), 2u);
  const std::regex named("scaled_textbook-([0-9a-f]{16})/attnbench_scaled_textbook-[0-9a-f]{16}\\.so");
  std::set<std::string> folders;
  for (const std::string& library : libraries) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(library, m, named)) << library;
    if (!m.empty()) folders.insert(m[1]);
  }
  EXPECT_EQ(folders.size(), 2u) << "one cache folder each";
}

}  // namespace
}  // namespace attnbench
