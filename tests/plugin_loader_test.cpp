#include "plugins/plugin_loader.hpp"
#include "base/names.hpp"
#include "plugins/elf_exports.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace attnbench {
namespace {

namespace fs = std::filesystem;

// Every bundled plugin this build made (plugins/CMakeLists.txt: the study's six, fa3, and cudnn-fe
// and flashinfer where their headers were found): all load, on any machine, and refuse what they
// cannot run.
std::vector<std::string> bundled() {
  std::vector<std::string> names = split(ATTNBENCH_BUNDLED, ',');
  std::sort(names.begin(), names.end());
  return names;
}
const std::vector<std::string> kBundled = bundled();

TEST(PluginLoader, LoadsTheSixBackends) {
  const PluginSet set = load_plugins(ATTNBENCH_PLUGIN_DIR);
  EXPECT_TRUE(set.failures.empty())
      << set.failures.front().file << ": " << set.failures.front().reason;
  EXPECT_EQ(set.names(), kBundled);
  for (const char* always : {"naive", "inplace", "math", "efficient", "flash", "cudnn", "fa3"})
    EXPECT_NE(std::find(kBundled.begin(), kBundled.end(), always), kBundled.end()) << always;
  for (const auto& b : set.backends) EXPECT_FALSE(b.description.empty()) << b.name;
}

std::string reason_for(const PluginSet& set, const std::string& file_part) {
  for (const auto& f : set.failures)
    if (f.file.find(file_part) != std::string::npos) return f.reason;
  return "<loaded or not tried>";
}

// A folder with the good plugins, the test-only bad ones and a duplicate: the bad are refused,
// each with its reason, and the good still load.
TEST(PluginLoader, BadPluginsAreRefusedWithReasonsWhileGoodOnesLoad) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnbench-plugins-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(ATTNBENCH_PLUGIN_DIR))
    fs::copy(entry.path(), dir / entry.path().filename());
  for (const auto& entry : fs::directory_iterator(ATTNBENCH_BAD_PLUGIN_DIR))
    fs::copy(entry.path(), dir / entry.path().filename());
  fs::copy(fs::path(ATTNBENCH_PLUGIN_DIR) / "attnbench_naive.so",
           dir / "attnbench_zz_naive_again.so");
  fs::copy(fs::path(ATTNBENCH_PLUGIN_DIR) / "attnbench_naive.so",
           dir / "not_a_plugin_name.so");  // not looked at

  const PluginSet set = load_plugins(dir);
  EXPECT_EQ(set.names(), kBundled);
  EXPECT_EQ(set.failures.size(), 6u);
  EXPECT_NE(reason_for(set, "missing_factory").find("no factory"), std::string::npos)
      << reason_for(set, "missing_factory");
  EXPECT_NE(reason_for(set, "wrong_abi").find("built for ABI 48, this attnbench speaks 7;"),
            std::string::npos)
      << reason_for(set, "wrong_abi");
  EXPECT_NE(reason_for(set, "abi1")
                .find("built for ABI 1, this attnbench speaks 7 (2 added "
                      "kv_heads, seq_len_kv, direction and prepare_backward; 3 fp8_e4m3 and the "
                      "inputs' scales; 4 ragged, paged, window and softcap; 5 problem kinds (mla), "
                      "the v width, the scale, Backend::kinds() and variants(); 6 kv_dtype (an "
                      "fp8 KV cache), attention sinks and chunked local attention; 7 kinds' and "
                  "variants' inputs by name (Inputs::input) in place of Inputs::sinks, their "
                  "fields without a member (Problem::extra), Problem::present, kind dsa)"),
            std::string::npos)
      << reason_for(set, "abi1");
  EXPECT_NE(reason_for(set, "throwing_factory")
                .find("the factory threw: cannot initialise the vendor library"),
            std::string::npos)
      << reason_for(set, "throwing_factory");
  EXPECT_NE(reason_for(set, "not_a_library").find("cannot load the library"), std::string::npos)
      << reason_for(set, "not_a_library");
  EXPECT_EQ(reason_for(set, "zz_naive_again"),
            "two plugins named 'naive': " + (dir / "attnbench_naive.so").string() + " and " +
                (dir / "attnbench_zz_naive_again.so").string() + "; this one is not loaded");
  fs::remove_all(dir);
}

// The loader reads the ABI from the file: the wrong-ABI and factory-less test plugins abort in
// their static initialisers, so loading either of them would end this test program.
TEST(ElfExports, ReadsTheAbiWithoutLoadingTheLibrary) {
  const ElfExports good(fs::path(ATTNBENCH_PLUGIN_DIR) / "attnbench_naive.so");
  EXPECT_EQ(good.int_value("attnbench_abi_version"), kPluginAbiVersion);
  EXPECT_TRUE(good.defines("attnbench_create_backend"));
  EXPECT_FALSE(good.defines("attnbench_no_such_symbol"));
  EXPECT_FALSE(good.int_value("attnbench_no_such_symbol"));
  const ElfExports wrong(fs::path(ATTNBENCH_BAD_PLUGIN_DIR) / "attnbench_wrong_abi.so");
  EXPECT_EQ(wrong.int_value("attnbench_abi_version"), kPluginAbiVersion + 41);
  const ElfExports no_factory(fs::path(ATTNBENCH_BAD_PLUGIN_DIR) / "attnbench_missing_factory.so");
  EXPECT_FALSE(no_factory.defines("attnbench_create_backend"));
  EXPECT_THROW(ElfExports(fs::path(ATTNBENCH_BAD_PLUGIN_DIR) / "attnbench_not_a_library.so"),
               std::runtime_error);
  EXPECT_THROW(ElfExports("/nonexistent/attnbench_x.so"), std::runtime_error);
}

// A file that is not a library says so, however short: a text file is not an ELF file, never a
// "truncated" one; a file cut inside its header after the magic number is truncated.
TEST(ElfExports, ATextFileIsNotAnElfFileHoweverShort) {
  const fs::path dir = fs::temp_directory_path() / "attnbench-elf";
  fs::create_directories(dir);
  for (const std::string& text : {std::string("hi\n"), std::string(200, 'x')}) {
    std::ofstream(dir / "attnbench_text.so") << text;
    try {
      ElfExports e(dir / "attnbench_text.so");
      ADD_FAILURE() << "a text file was read as ELF";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("not an ELF file"), std::string::npos) << e.what();
    }
  }
  std::ofstream(dir / "attnbench_cut.so") << "\x7f" "ELF" << std::string(8, '\0');
  try {
    ElfExports e(dir / "attnbench_cut.so");
    ADD_FAILURE() << "a cut header was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

// Installed libraries are often stripped: the dynamic symbol table, which the check reads, stays.
TEST(ElfExports, ReadsAStrippedPlugin) {
  const fs::path copy =
      fs::temp_directory_path() / ("attnbench-stripped-" + std::to_string(::getpid()) + ".so");
  fs::copy_file(fs::path(ATTNBENCH_PLUGIN_DIR) / "attnbench_flash.so", copy,
                fs::copy_options::overwrite_existing);
  ASSERT_EQ(std::system(("strip --strip-all " + copy.string()).c_str()), 0)
      << "strip (binutils) is needed";
  const ElfExports stripped(copy);
  EXPECT_EQ(stripped.int_value("attnbench_abi_version"), kPluginAbiVersion);
  EXPECT_TRUE(stripped.defines("attnbench_create_backend"));
  fs::remove(copy);
}

// Several folders are read in order; a name found twice names both files, wherever they are.
TEST(PluginLoader, SeveralFoldersInOrderAndADuplicateAcrossThem) {
  const fs::path root =
      fs::temp_directory_path() / ("attnbench-search-" + std::to_string(getpid()));
  fs::create_directories(root / "a");
  fs::create_directories(root / "b");
  fs::copy(fs::path(ATTNBENCH_PLUGIN_DIR) / "attnbench_naive.so", root / "a");
  fs::copy(fs::path(ATTNBENCH_PLUGIN_DIR) / "attnbench_math.so", root / "b");
  fs::copy(fs::path(ATTNBENCH_PLUGIN_DIR) / "attnbench_naive.so", root / "b");
  const PluginSet set = load_plugins({root / "a", root / "b"});
  EXPECT_EQ(set.names(), (std::vector<std::string>{"math", "naive"}));
  EXPECT_EQ(set.find("naive")->file, (root / "a" / "attnbench_naive.so").string());
  ASSERT_EQ(set.failures.size(), 1u);
  EXPECT_TRUE(set.failures[0].duplicate);
  EXPECT_EQ(set.failures[0].reason,
            "two plugins named 'naive': " + (root / "a" / "attnbench_naive.so").string() + " and " +
                (root / "b" / "attnbench_naive.so").string() + "; this one is not loaded");
  fs::remove_all(root);
}

TEST(PluginLoader, SearchPathIsTheFoldersGivenThenThePluginPath) {
  ::unsetenv("ATTNBENCH_PLUGIN_PATH");
  EXPECT_EQ(plugin_search_path({"x", "y"}), (std::vector<fs::path>{"x", "y"}));
  EXPECT_EQ(plugin_search_path({}), (std::vector<fs::path>{default_plugin_dir()}));
  ::setenv("ATTNBENCH_PLUGIN_PATH", "/p/one::/p/two:", 1);
  EXPECT_EQ(plugin_search_path({"x"}), (std::vector<fs::path>{"x", "/p/one", "/p/two"}));
  EXPECT_EQ(plugin_search_path({}),
            (std::vector<fs::path>{default_plugin_dir(), "/p/one", "/p/two"}));
  ::unsetenv("ATTNBENCH_PLUGIN_PATH");
}

TEST(PluginLoader, MissingFolderIsAFailureNotACrash) {
  const PluginSet set = load_plugins("/nonexistent/plugins");
  EXPECT_TRUE(set.backends.empty());
  ASSERT_EQ(set.failures.size(), 1u);
  EXPECT_NE(set.failures[0].reason.find("does not exist"), std::string::npos);
}

// The backend object keeps its library loaded: using it after the PluginSet is gone is fine.
TEST(PluginLoader, BackendKeepsItsLibraryAlive) {
  std::shared_ptr<Backend> naive;
  {
    const PluginSet set = load_plugins(ATTNBENCH_PLUGIN_DIR);
    naive = set.find("naive")->backend;
  }
  EXPECT_EQ(naive->name(), "naive");  // the vtable lives in the plugin's code
  Problem p;
  EXPECT_TRUE(naive->supports(p).supported);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// The message's list of what each ABI version added, at its edges: none for the current version,
// a newer one, or one below 1 (version 0 has no entry to read); every version after an older one.
TEST(PluginLoader, AbiChangesAreListedFromTheVersionAfterThePluginsOwn) {
  EXPECT_EQ(abi_changes_since(kPluginAbiVersion), "");
  EXPECT_EQ(abi_changes_since(kPluginAbiVersion + 1), "");
  EXPECT_EQ(abi_changes_since(0), "");
  EXPECT_EQ(abi_changes_since(-3), "");
  EXPECT_EQ(abi_changes_since(kPluginAbiVersion - 1),
            " (7 added kinds' and variants' inputs by name (Inputs::input) in place of "
            "Inputs::sinks, their fields without a member (Problem::extra), Problem::present, "
            "kind dsa)");
  EXPECT_EQ(abi_changes_since(kPluginAbiVersion - 2).rfind(" (6 added kv_dtype", 0), 0u);
  const std::string from_one = abi_changes_since(1);
  EXPECT_EQ(from_one.rfind(" (2 added kv_heads", 0), 0u) << from_one;
  for (const char* v : {"; 3 ", "; 4 ", "; 5 ", "; 6 ", "; 7 "})
    EXPECT_NE(from_one.find(v), std::string::npos) << from_one;
}

}  // namespace
}  // namespace attnbench
