// Seeded fuzzing of the two readers a user feeds by hand: the YAML sweep reader and the report
// reader (resume, merge and compare's checks). Every mutation of a valid input must be either
// read or refused with InputError (ConfigError included), which the CLI turns into a located
// message and exit 2: never another exception, a crash or a hang. The seeds are fixed, so a failure
// reproduces; ATTNBENCH_FUZZ_ITERATIONS runs more (CI runs the default, a few seconds).
#include "analysis/compare.hpp"
#include "base/errors.hpp"
#include "config/config.hpp"
#include "config/sweep.hpp"
#include "records/predictions.hpp"
#include "run/merge.hpp"
#include "run/resume.hpp"
#include "write/csv.hpp"
#include "write/schema.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

namespace attnbench {
namespace {

int iterations(int fallback) {
  const char* env = std::getenv("ATTNBENCH_FUZZ_ITERATIONS");
  return env && std::atoi(env) > 0 ? std::atoi(env) : fallback;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Pieces a broken or hostile input is made of: YAML syntax, numbers at and past every limit,
// CSV quoting, and names of real keys.
const std::vector<std::string>& tokens() {
  static const std::vector<std::string> t = {":",
                                             "- ",
                                             "[",
                                             "]",
                                             "{",
                                             "}",
                                             ",",
                                             "\"",
                                             "'",
                                             "\n",
                                             "  ",
                                             "#",
                                             "&a ",
                                             "*a",
                                             "!!int ",
                                             "~",
                                             "null",
                                             "true",
                                             "-1",
                                             "0",
                                             "1e308",
                                             "-1e308",
                                             "inf",
                                             ".nan",
                                             "nan",
                                             "1e-320",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "-9223372036854775808",
                                             "18446744073709551616",
                                             "0x10",
                                             "1.5",
                                             "seq_len",
                                             "batch",
                                             "kv_heads",
                                             "zip",
                                             "sweep",
                                             "expect",
                                             "where",
                                             "from",
                                             "to",
                                             "mul",
                                             "step",
                                             "fp8_e4m3",
                                             "measurement",
                                             "timing_modes",
                                             "tolerance",
                                             "{from: 1, to: 9223372036854775807, mul: 2}",
                                             "\r\n",
                                             "\t",
                                             "\xff\xfe",
                                             std::string(1, '\0'),
                                             "ok",
                                             "status",
                                             "time_ms_median",
                                             "schema_version",
                                             "point_id",
                                             "repetition",
                                             "\"a,b\"",
                                             "\"\"\"\"",
                                             "1/0",
                                             // The served variants at and past their limits.
                                             "window",
                                             "[0, 9223372036854775807]",
                                             "[-1, -1]",
                                             "[1000000000, 0]",
                                             "[-2, 3]",
                                             "softcap",
                                             "1e300",
                                             "3.3895313892515355e+38",
                                             "chunk",
                                             "sinks",
                                             "kv_dtype",
                                             "histogram(h.csv)",
                                             "2*2048 + 32*1",
                                             "9223372036854775807*1"};
  return t;
}

std::string mutate(std::string text, std::mt19937_64& rng) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t at = text.empty() ? 0 : rng() % (text.size() + 1);
    switch (rng() % 6) {
      case 0:  // insert a token
        text.insert(at, tokens()[rng() % tokens().size()]);
        break;
      case 1:  // delete a span
        text.erase(at, rng() % 16);
        break;
      case 2:  // flip a byte
        if (!text.empty()) text[rng() % text.size()] = static_cast<char>(rng() % 256);
        break;
      case 3:  // truncate (a kill, a full disk)
        text.resize(at);
        break;
      case 4: {  // duplicate a line elsewhere
        const size_t start = text.rfind('\n', at == 0 ? 0 : at - 1);
        const size_t end = text.find('\n', at);
        const std::string line =
            text.substr(start == std::string::npos ? 0 : start,
                        end == std::string::npos ? std::string::npos : end - start);
        text.insert(rng() % (text.size() + 1), line);
        break;
      }
      default:  // replace a number with one from the token list
        if (const size_t d = text.find_first_of("0123456789", at); d != std::string::npos) {
          const size_t e2 = text.find_first_not_of("0123456789.", d);
          text.replace(d, (e2 == std::string::npos ? text.size() : e2) - d,
                       tokens()[20 + rng() % 10]);
        }
    }
  }
  return text;
}

TEST(Fuzz, TheYamlReaderReadsOrRefusesEveryMutationOfTheShippedConfigs) {
  // Each read under its own path, so that what it names beside it (a histogram of lengths, a
  // Python file, a source file) is found: the entries of every backend kind and the served
  // variants' axes are fuzzed past their files.
  // A backend's file is relative to the working directory (as the README runs attnbench: from the
  // repository's root), a histogram to its config.
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(ATTNBENCH_SOURCE_DIR);
  struct Back {
    std::filesystem::path to;
    ~Back() { std::filesystem::current_path(to); }
  } back{cwd};
  std::vector<std::string> paths;
  for (const char* name : {"seed", "hopper", "training", "decode", "hopper-check", "tiny", "python",
                           "models/gemma-2-9b", "models/mistral-7b", "models/gpt-oss-120b",
                           "models/gemma-3-27b", "models/llama-4-scout", "models/qwen3-32b"})
    paths.push_back(std::string(ATTNBENCH_SOURCE_DIR) + "/configs/" + name + ".yaml");
  paths.push_back(std::string(ATTNBENCH_SOURCE_DIR) + "/examples/custom-cuda-attention/source.yaml");
  std::vector<std::string> seeds;
  for (const std::string& path : paths) {
    seeds.push_back(file_text(path));
    // Unmutated, each is read whole (else every mutation of it would be refused for nothing).
    EXPECT_NO_THROW((void)expand_sweep(parse_config(seeds.back(), path), false)) << path;
  }
  std::mt19937_64 rng(20261203);
  int read = 0, refused = 0;
  const int n = iterations(20000);
  for (int i = 0; i < n; ++i) {
    const size_t which = static_cast<size_t>(i) % seeds.size();
    const std::string text = mutate(seeds[which], rng);
    try {
      const SweepConfig c = parse_config(text, paths[which]);
      (void)read_expectations(c);
      (void)expand_sweep(c, false);
      ++read;
    } catch (const InputError&) {
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << i << ": " << typeid(e).name() << ": " << e.what()
                    << "\n--- input ---\n"
                    << text;
    }
  }
  std::cout << "[ fuzzed   ] yaml: " << read << " read, " << refused << " refused\n";
  EXPECT_GT(read, 0);
  EXPECT_GT(refused, 0);
}

// A histogram of lengths is a file a user edits by hand: every mutation of the shipped one is
// read or refused with a located message when the sweep that names it is expanded.
TEST(Fuzz, TheHistogramReaderReadsOrRefusesEveryMutationOfAHistogram) {
  const std::string seed =
      file_text(std::string(ATTNBENCH_SOURCE_DIR) + "/configs/models/azure-conv-2023-prompts.csv");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("attnbench-fuzz-hist-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string config_path = (dir / "c.yaml").string();
  const std::string config =
      "backends: [naive]\nsweep:\n  - {batch: 8, heads: 2, head_dim: 16, dtype: fp32, device: "
      "cpu, seq_lens: \"histogram(h.csv)\"}\n";
  std::mt19937_64 rng(20261206);
  int read = 0, refused = 0;
  const int n = iterations(3000);
  for (int i = 0; i < n; ++i) {
    const std::string text = mutate(seed, rng);
    std::ofstream(dir / "h.csv", std::ios::binary | std::ios::trunc) << text;
    try {
      (void)expand_sweep(parse_config(config, config_path), false);
      ++read;
    } catch (const InputError& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find("c.yaml:"), std::string::npos)
          << "iteration " << i << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << i << ": " << typeid(e).name() << ": " << e.what()
                    << "\n--- histogram ---\n"
                    << text;
    }
  }
  std::filesystem::remove_all(dir);
  std::cout << "[ fuzzed   ] histogram: " << read << " read, " << refused << " refused\n";
  EXPECT_GT(read, 0);
  EXPECT_GT(refused, 0);
}

// A small valid report as the writers write it: two points, two backends.
std::string report_text() {
  std::string text = csv_line(row_header());
  for (int p = 0; p < 2; ++p)
    for (const char* backend : {"naive", "inplace"}) {
      Row row;
      row.point_id = "b1-h2-s" + std::to_string(32 + 16 * p) + "-d16-fp32-causal-cpu";
      row.backend = backend;
      row.problem.seq_len = row.problem.seq_len_kv = 32 + 16 * p;
      row.status = Status::ok;
      row.time_ms_median = 0.125 * (p + 1), row.time_ms_p10 = 0.1, row.time_ms_p90 = 0.2;
      row.time_rel_noise = 0.01;
      row.cpu_us_median = 10;
      row.expectation = "";
      row.run.device_name = "cpu";
      row.run.torch_version = "2.11.0";
      row.run.config_fingerprint = "0123456789abcdef";
      text += csv_line(row_cells(row));
    }
  return text;
}

// The report as an older attnbench wrote it: a readable schema version and some of today's
// columns missing (those that name the row stay).
std::string older_report_text(std::mt19937_64& rng) {
  const CsvTable now = parse_csv(report_text(), "now.csv");
  const std::string version = std::to_string(1 + rng() % kCsvSchemaVersion);
  std::vector<size_t> kept;
  for (size_t c = 0; c < now.header.size(); ++c) {
    const std::string& name = now.header[c];
    if (name == "schema_version" || name == "point_id" || name == "backend" || rng() % 3 != 0)
      kept.push_back(c);
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::vector<std::string> out;
    for (size_t c : kept)
      out.push_back(!header && now.header[c] == "schema_version" ? version : cells[c]);
    return csv_line(out);
  };
  std::string text = line(now.header, true);
  for (const auto& row : now.rows) text += line(row, false);
  return text;
}

TEST(Fuzz, TheReportReadersReadOrRefuseEveryMutationOfAReport) {
  const std::string seed = report_text();
  const CsvTable good = parse_csv(seed, "good.csv");
  std::mt19937_64 rng(31);
  std::map<std::string, std::pair<int, int>> counts;  // reader -> read, refused
  auto attempt = [&](const char* reader, int i, const std::string& text, auto&& body) {
    try {
      body();
      ++counts[reader].first;
    } catch (const InputError&) {
      ++counts[reader].second;
    } catch (const std::exception& e) {
      ADD_FAILURE() << reader << ", iteration " << i << ": " << typeid(e).name() << ": " << e.what()
                    << "\n--- input ---\n"
                    << text;
    }
  };
  const int n = iterations(20000);
  for (int i = 0; i < n; ++i) {
    // Every other input starts from a report of an older schema (its header their own).
    const std::string text = mutate(i % 2 ? older_report_text(rng) : seed, rng);
    attempt("resume", i, text, [&] {
      (void)resume_report({text, "", ""}, "fuzz.csv", "0123456789abcdef", "cpu", "2.11.0", 1);
    });
    attempt("compare", i, text, [&] {
      (void)compare_reports(good, parse_csv(text, "fuzz.csv"), CompareOptions{}, {}, {});
    });
    attempt("merge", i, text, [&] {
      (void)merge_reports({{"fuzz.csv", {text, "", ""}}}, std::nullopt);
    });
  }
  for (const auto& [reader, c] : counts) {
    std::cout << "[ fuzzed   ] " << reader << ": " << c.first << " read, " << c.second
              << " refused\n";
    EXPECT_GT(c.first, 0) << reader;  // the mutations are not all fatal: the readers were reached
    EXPECT_GT(c.second, 0) << reader;
  }
}

}  // namespace
}  // namespace attnbench
