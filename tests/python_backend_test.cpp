// Python backends end to end (issue "Kernels written in Python"): a function named in the config
// measured beside the C++ plugins, its exceptions as rows that name the user's line, a missing
// function or file as a located config error. Skipped when attnbench was built without Python.
#include "base/names.hpp"
#include "cli_support.hpp"
#include "records/fields.hpp"

#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

namespace attnbench {
namespace {

using test::Cli;
using test::Result;
using test::rows_of;
using test::run;
using test::small_sweep;

const std::string kExamples = std::string(ATTNBENCH_SOURCE_DIR) + "/examples/python-backends";
const std::string kFaulty = std::string(ATTNBENCH_SOURCE_DIR) + "/tests/python_backends";

bool built_with_python() {
  return std::filesystem::exists(std::string(ATTNBENCH_BINARY_DIR) + "/libattnbench-python.so");
}

// The line of `file` that contains `text`, 1-based (so the tests follow edits of the modules).
int line_of(const std::string& file, const std::string& text) {
  std::ifstream in(file);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (++n, line.find(text) != std::string::npos) return n;
  return -1;
}

std::string python(const std::string& file, const std::string& function, const std::string& name) {
  return "{python: " + file + ":" + function + ", name: " + name + "}";
}

// Run from the repository root, where messages name the modules by their relative paths.
const std::string kAtRoot = "cd " + std::string(ATTNBENCH_SOURCE_DIR) + " &&";

class PythonBackends : public Cli {
 protected:
  void SetUp() override {
    if (!built_with_python()) GTEST_SKIP() << "skipped: attnbench was built without Python";
    Cli::SetUp();
  }
};

// The sdpa example beside the math plugin, forward and backward: correct against float64, timed,
// its host time and ATen ops and its first call measured like a plugin's.
TEST_F(PythonBackends, AFunctionRunsBesideThePlugins) {
  const std::string sweep =
      small_sweep("math, " + python(kExamples + "/sdpa.py", "attention", "sdpa-py")) +
      "  causal: [true, false]\n  direction: [fwd, bwd]\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 16u) << r.output;
  for (const auto& [key, row] : rows) {
    EXPECT_EQ(row.at("status"), "ok") << key << ": " << row.at("reason");
    EXPECT_LT(std::stod(row.at("rel_err")), std::stod(row.at("tolerance"))) << key;
    EXPECT_GT(std::stod(row.at("first_call_ms")), 0) << key;
    EXPECT_GT(std::stod(row.at("cpu_us_median")), 0) << key;
    if (row.at("backend") == "sdpa-py" && row.at("direction") == "fwd")
      EXPECT_EQ(row.at("aten_ops"), "scaled_dot_product_attention") << key;
  }
  // In this process too (--isolation none), and listed by name only where the config says.
  const Result in_process = run("run " + path("c.yaml") + " --isolation none --backends sdpa-py" +
                                    " --force -o " + path("in.csv"),
                                kAtRoot);
  EXPECT_EQ(in_process.code, 0) << in_process.output;
  EXPECT_EQ(rows_of(path("in.csv")).size(), 8u);
}

// A function that keeps a tensor between calls (its mask, per shape) runs forward then backward
// at the same shape in one worker, as a GPU sweep runs them: what it made at the forward point is
// an ordinary tensor that its backward may save (the flex example's backward failed with
// "Inference tensors cannot be saved for backward" when its block mask was made in inference mode).
TEST_F(PythonBackends, WhatAForwardPointKeepsServesTheBackwardPoint) {
  const std::string sweep = small_sweep(python(kFaulty + "/kept_mask.py", "attention", "kept")) +
                            "  causal: true\n  direction: [fwd, bwd]\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto rows = rows_of(path("out.csv"));
  size_t bwd = 0;
  for (const auto& [key, row] : rows) {
    EXPECT_EQ(row.at("status"), "ok") << key << ": " << row.at("reason");
    ASSERT_FALSE(row.at("rel_err").empty()) << key;
    EXPECT_LT(std::stod(row.at("rel_err")), std::stod(row.at("tolerance"))) << key;
    bwd += row.at("direction") == "bwd";
  }
  EXPECT_EQ(bwd, rows.size() / 2);
  EXPECT_GT(bwd, 0u);
}

// Backend code that reaches past its own calls costs only itself: a module whose import sets
// torch's threads to 1 leaves the other backends their threads, and a thread that a backend left
// behind, which ends the worker during the next backend's call, is charged to the backend that left
// it (flag ended_a_worker) while the next one is measured again, in a fresh worker, and is ok.
// A process a backend detaches from its worker (setsid, or a double fork) is ended with the
// worker: the run's output closes when the run ends (the pipe here would otherwise stay open ten
// minutes), and the processes are gone.
TEST_F(PythonBackends, AProcessABackendDetachesEndsWithTheRun) {
  const std::string pidfile = path("detached.pid");
  const std::string backends = python(kFaulty + "/fights_worker.py", "detaches", "detaches");
  const auto began = std::chrono::steady_clock::now();
  const Result r = run("run " + write("d.yaml", small_sweep(backends)) + " -o " + path("out.csv"),
                       kAtRoot + " ATTNBENCH_TEST_PIDFILE=" + pidfile + " timeout 300");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_LT(took, 250) << "the run's output stayed open after it ended";
  std::ifstream in(pidfile);
  std::vector<pid_t> pids;
  for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
  ASSERT_EQ(pids.size(), 3u) << "the backend did not start its three processes: " << r.output;
  for (const pid_t pid : pids) {  // gone, or at most a zombie of init's: not running
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (std::getline(stat, line)) EXPECT_EQ(line.substr(line.rfind(')') + 2, 1), "Z") << line;
  }
}

TEST_F(PythonBackends, WhatABackendLeavesBehindIsChargedToIt) {
  const std::string module = kFaulty + "/fights_worker.py";
  const std::string backends = python(module, "leaves_thread", "leaves") + ", " +
                               python(module, "victim", "victim") + ", " +
                               python(module, "threads_seen", "threads");
  const Result r =
      run("run " + write("c.yaml", small_sweep(backends)) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 0) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 6u) << r.output;
  int charged = 0;
  for (const auto& [key, row] : rows) {
    if (row.at("backend") == "threads") {
      EXPECT_EQ(row.at("status"), "unsupported") << key;
      if (std::thread::hardware_concurrency() > 1) {
        // torch's own default stands (2 on CI, 16 on the GPU machine), never the 1 set at import
        const std::string said = "torch.get_num_threads() is ";
        const size_t at = row.at("reason").find(said);
        ASSERT_NE(at, std::string::npos) << row.at("reason");
        EXPECT_GT(std::stoi(row.at("reason").substr(at + said.size())), 1) << row.at("reason");
      }
      continue;
    }
    EXPECT_EQ(row.at("status"), "ok") << key << ": " << row.at("reason");
    EXPECT_EQ(row.at("flags").find("ended_a_worker") != std::string::npos,
              row.at("backend") == "leaves" && row.at("seq_len") == "48")
        << key << ": " << row.at("flags");
    charged += row.at("flags").find("ended_a_worker") != std::string::npos;
  }
  EXPECT_EQ(charged, 1);
  EXPECT_NE(r.output.find("the ending is charged to leaves"), std::string::npos) << r.output;
}

// Every way a Python function fails is a row that says how and where, and the others are measured:
// an exception in the call (the innermost frame of the user's file), a result that is no tensor,
// NotImplementedError (unsupported, with its message), supports() saying no or raising, an import
// that raises.
TEST_F(PythonBackends, PythonErrorsAreRowsThatNameTheUsersLine) {
  const std::string faulty = kFaulty + "/faulty.py", broken = kFaulty + "/import_fails.py";
  const std::string backends =
      "naive, " + python(faulty, "raises", "raises") + ", " +
      python(faulty, "not_a_tensor", "not-a-tensor") + ", " + python(faulty, "refuses", "refuses") +
      ", " + python(faulty, "checked", "checked") + ", " + python(broken, "attention", "broken");
  const Result r =
      run("run " + write("c.yaml", small_sweep(backends)) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 1) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 12u) << r.output;
  const auto row = [&](int seq, const std::string& backend) {
    return rows.at("b1-h2-s" + std::to_string(seq) + "-d16-fp32-causal-cpu " + backend + " wall");
  };
  for (int seq : {32, 48}) {
    EXPECT_EQ(row(seq, "naive").at("status"), "ok");
    EXPECT_EQ(row(seq, "raises").at("status"), "error");
    EXPECT_NE(row(seq, "raises")
                  .at("reason")
                  .find("ValueError at tests/python_backends/faulty.py:" +
                        std::to_string(line_of(faulty, "planted in the call")) +
                        " (_helper): planted in the call"),
              std::string::npos)
        << row(seq, "raises").at("reason");
    EXPECT_EQ(row(seq, "not-a-tensor").at("status"), "error");
    EXPECT_NE(row(seq, "not-a-tensor")
                  .at("reason")
                  .find("not_a_tensor() returned an object of type int, not a torch.Tensor"),
              std::string::npos)
        << row(seq, "not-a-tensor").at("reason");
    EXPECT_EQ(row(seq, "broken").at("status"), "error");
    EXPECT_NE(row(seq, "broken")
                  .at("reason")
                  .find("raised while importing: ModuleNotFoundError at "
                        "tests/python_backends/import_fails.py:" +
                        std::to_string(line_of(broken, "import attnbench_no_such_module")) +
                        " (<module>): No module named 'attnbench_no_such_module'"),
              std::string::npos)
        << row(seq, "broken").at("reason");
  }
  EXPECT_EQ(row(32, "refuses").at("status"), "ok");
  EXPECT_EQ(row(48, "refuses").at("status"), "unsupported");
  EXPECT_NE(row(48, "refuses").at("reason").find("NotImplementedError at "), std::string::npos);
  EXPECT_NE(row(48, "refuses").at("reason").find(": no 48s here"), std::string::npos);
  EXPECT_EQ(row(32, "checked").at("status"), "unsupported");
  EXPECT_EQ(row(32, "checked").at("reason"), "only seq_len 48, not 32");
  EXPECT_EQ(row(48, "checked").at("status"), "error");
  EXPECT_NE(row(48, "checked")
                .at("reason")
                .find("supports: supports() raised KeyError at "
                      "tests/python_backends/faulty.py:"),
            std::string::npos)
      << row(48, "checked").at("reason");
}

// Out of memory in a Python backend, the CPU allocator's or Python's own, is `oom` as a plugin's
// is, the reason naming it; the run goes on.
TEST_F(PythonBackends, OutOfMemoryInPythonIsAnOomRow) {
  const std::string faulty = kFaulty + "/faulty.py";
  const std::string backends = "naive, " + python(faulty, "out_of_memory", "allocator") + ", " +
                               python(faulty, "memory_error", "memory-error");
  const Result r =
      run("run " + write("c.yaml", small_sweep(backends)) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 1) << r.output;
  const auto rows = rows_of(path("out.csv"));
  for (int seq : {32, 48}) {
    const std::string point = "b1-h2-s" + std::to_string(seq) + "-d16-fp32-causal-cpu ";
    EXPECT_EQ(rows.at(point + "naive wall").at("status"), "ok");
    const auto& allocator = rows.at(point + "allocator wall");
    EXPECT_EQ(allocator.at("status"), "oom") << allocator.at("reason");
    EXPECT_NE(allocator.at("reason").find("DefaultCPUAllocator: can't allocate memory"),
              std::string::npos)
        << allocator.at("reason");
    const auto& python_error = rows.at(point + "memory-error wall");
    EXPECT_EQ(python_error.at("status"), "oom") << python_error.at("reason");
    EXPECT_NE(python_error.at("reason").find("out of memory: MemoryError at "), std::string::npos)
        << python_error.at("reason");
  }
}

// supports() answers True, None, False, a reason or (False, reason); anything else (a tensor, truthy
// as it is) is the backend's error naming the type, never a yes. False is a no, saying so.
TEST_F(PythonBackends, ASupportsAnswerOfAnotherTypeIsAnErrorNotAYes) {
  const std::string answers = kFaulty + "/answers.py";
  const std::string backends = python(answers, "tensor_answer", "tensor-answer") + ", " +
                               python(answers, "false_answer", "false-answer");
  const Result r =
      run("run " + write("c.yaml", small_sweep(backends)) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 1) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 4u) << r.output;
  for (int seq : {32, 48}) {
    const std::string point = "b1-h2-s" + std::to_string(seq) + "-d16-fp32-causal-cpu ";
    const auto& tensor = rows.at(point + "tensor-answer wall");
    EXPECT_EQ(tensor.at("status"), "error");
    EXPECT_NE(tensor.at("reason").find("supports() returned a Tensor; return True, None, False"),
              std::string::npos)
        << tensor.at("reason");
    const auto& no = rows.at(point + "false-answer wall");
    EXPECT_EQ(no.at("status"), "unsupported");
    EXPECT_EQ(no.at("reason"), "supports() returned False");
  }
}

// Text with a lone surrogate (an exception's message, what supports() says, a docstring) reaches
// the rows escaped (\udcff) and the CSV as valid UTF-8; it had segfaulted the bridge.
TEST_F(PythonBackends, TextWithALoneSurrogateReachesTheRowsEscaped) {
  const std::string faulty = kFaulty + "/faulty.py";
  const std::string backends = "naive, " + python(faulty, "surrogate", "surrogate") + ", " +
                               python(faulty, "says_no", "says-no");
  const Result r =
      run("run " + write("c.yaml", small_sweep(backends)) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 1) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 6u) << r.output;
  const auto& raised = rows.at("b1-h2-s32-d16-fp32-causal-cpu surrogate wall");
  EXPECT_EQ(raised.at("status"), "error");
  EXPECT_NE(raised.at("reason").find("gave as bytes: \\udcff.bin"), std::string::npos)
      << raised.at("reason");
  const auto& refused = rows.at("b1-h2-s48-d16-fp32-causal-cpu says-no wall");
  EXPECT_EQ(refused.at("status"), "unsupported");
  EXPECT_EQ(refused.at("reason"), "not on \\udcfe");
  EXPECT_EQ(rows.at("b1-h2-s48-d16-fp32-causal-cpu naive wall").at("status"), "ok");
}

// What the bridge hands a Python backend: supports_<function> wins over the module's supports(),
// and the `problem` both supports() and the function see is the row's own, every field of the
// report's problem (records' problem table), however the points before it differed: one point per
// field that differs from the one before in that field alone.
TEST_F(PythonBackends, EachRowsProblemReachesPythonFieldByField) {
  const std::string module = kFaulty + "/problems.py";
  const std::string sweep =
      "backends: [" + python(module, "special", "special") + ", " +
      python(module, "plain", "plain") + ", " + python(module, "echo", "echo") +
      "]\nmeasurement: {warmup_ms: 1, max_time_s: 0.05, cpu_pass_calls: 3}\n"
      "sweep:\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 32, head_dim: 16, batch: [1, 2]}\n"
      "  - {device: cpu, dtype: fp32, heads: 4, seq_len: 32, head_dim: 16}\n"
      "  - {device: cpu, dtype: fp32, heads: 4, kv_heads: 2, seq_len: 32, head_dim: 16}\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 48, head_dim: 16}\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 32, seq_len_kv: 64, head_dim: 16}\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 32, head_dim: 32}\n"
      "  - {device: cpu, dtype: bf16, heads: 2, seq_len: 32, head_dim: 16}\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 32, head_dim: 16, causal: false}\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 32, head_dim: 16, direction: bwd}\n"
      "  - {kind: mla, device: cpu, dtype: fp32, heads: 2, seq_len: 32, qk_nope_head_dim: 16,"
      " qk_rope_head_dim: 8, v_head_dim: 8, scale: 0.125}\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  ASSERT_EQ(r.code, 0) << r.output;
  const CsvTable report = read_csv(path("out.csv"));
  ASSERT_EQ(report.rows.size(), 11u * 3) << r.output;
  for (size_t i = 0; i < report.rows.size(); ++i) {
    std::string fields;
    for (const auto& f : problem_fields())
      fields += (fields.empty() ? "" : ";") + f.name + "=" + report.at(i, f.name);
    // The attributes come sorted by name; the table's order need not be.
    std::vector<std::string> sorted = split(fields, ';');
    std::sort(sorted.begin(), sorted.end());
    fields.clear();
    for (const auto& s : sorted) fields += (fields.empty() ? "" : ";") + s;
    const std::string backend = report.at(i, "backend");
    const std::string where = report.at(i, "point_id") + " " + backend;
    EXPECT_EQ(report.at(i, "status"), "unsupported") << where;
    if (backend == "echo") {  // the call's problem: the first call raised NotImplementedError
      EXPECT_NE(report.at(i, "reason").find("(echo): call " + fields), std::string::npos)
          << where << ": " << report.at(i, "reason");
    } else {
      EXPECT_EQ(report.at(i, "reason"), (backend == "special" ? "special " : "generic ") + fields)
          << where;
    }
  }
}

// An import that crashes the interpreter takes its worker down while loading: the next worker
// starts without that module, whose rows say so, and the other backends are measured.
// A Python backend runs the kinds it declares (its function's `kinds`, a string or a list; else
// the module's KINDS; else attention): the others are refused before it is called, naming both.
TEST_F(PythonBackends, EachRunsTheKindsItDeclares) {
  const std::string module = kFaulty + "/kinds.py";
  const std::string sweep =
      "backends: [" + python(module, "mla_only", "mla-only") + ", " +
      python(module, "attention_only", "attention-only") +
      "]\nmeasurement: {warmup_ms: 1, max_time_s: 0.05, cpu_pass_calls: 3}\n"
      "sweep:\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 8, head_dim: 16}\n"
      "  - {kind: mla, device: cpu, dtype: fp32, heads: 2, seq_len: 8, qk_nope_head_dim: 16,"
      " qk_rope_head_dim: 8, v_head_dim: 8}\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 0) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 4u) << r.output;
  const std::string attention = "b1-h2-s8-d16-fp32-causal-cpu ";
  const std::string mla = "mla-b1-h2-s8-fp32-causal-cpu-nope16-rope8-v8 ";
  EXPECT_EQ(rows.at(mla + "mla-only wall").at("status"), "ok");
  EXPECT_EQ(rows.at(attention + "attention-only wall").at("status"), "ok");
  EXPECT_EQ(rows.at(attention + "mla-only wall").at("reason"),
            "mla-only does not run kind attention (it declares mla)");
  EXPECT_EQ(rows.at(mla + "attention-only wall").at("reason"),
            "attention-only does not run kind mla (it declares attention)");
}

// Sinks and an fp8 cache reach a function through the keywords it takes (sinks; k_scale and
// v_scale); one without them is refused by name. A uniform chunk is in the mask it takes.
TEST_F(PythonBackends, SinksChunksAndAnFp8CacheReachTheFunctionsThatTakeThem) {
  const std::string module = kFaulty + "/served.py";
  const std::string sweep =
      "backends: [" + python(module, "served", "served") + ", " + python(module, "plain", "plain") +
      "]\nmeasurement: {warmup_ms: 1, max_time_s: 0.05, cpu_pass_calls: 3}\n"
      "sweep:\n"
      "  - {device: cpu, dtype: fp32, heads: 4, kv_heads: 2, seq_len: 1, seq_len_kv: 64,"
      " head_dim: 16, sinks: true}\n"
      "  - {device: cpu, dtype: fp32, heads: 4, kv_heads: 2, seq_len: 24, head_dim: 16, chunk: 8}\n"
      "  - {device: cpu, dtype: bf16, heads: 4, kv_heads: 2, seq_len: 1, seq_len_kv: 64,"
      " head_dim: 16, kv_dtype: fp8_e4m3}\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 0) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 6u) << r.output;
  const std::string sinks = "b1-h4-kv2-s1-skv64-d16-fp32-causal-cpu-sinks ";
  const std::string chunk = "b1-h4-kv2-s24-d16-fp32-causal-cpu-chunk8 ";
  const std::string fp8 = "b1-h4-kv2-s1-skv64-d16-bf16-kvfp8_e4m3-causal-cpu ";
  for (const std::string& point : {sinks, chunk, fp8})
    EXPECT_EQ(rows.at(point + "served wall").at("status"), "ok")
        << point << rows.at(point + "served wall").at("reason");
  EXPECT_EQ(rows.at(chunk + "plain wall").at("status"), "ok");
  EXPECT_EQ(rows.at(sinks + "plain wall").at("reason"),
            "plain() takes no sinks keyword, so it cannot run attention sinks (docs/backends.md "
            "lists the keywords)");
  EXPECT_NE(rows.at(fp8 + "plain wall")
                .at("reason")
                .find("plain() takes no k_scale and v_scale keywords, so it cannot run an fp8 KV "
                      "cache"),
            std::string::npos)
      << rows.at(fp8 + "plain wall").at("reason");
  EXPECT_NE(rows.at(fp8 + "served wall").at("fp8_scale_v"), "");
}

// Each keyword a variant needs, by itself: a function with k_scale but not v_scale gets no fp8
// cache; one with a mask but no chunk gets no ragged chunk (a packed batch has no mask); an fp8
// point's rows record all three scales.
TEST_F(PythonBackends, AVariantNeedsEveryKeywordItReaches) {
  const std::string module = kFaulty + "/served.py";
  const std::string sweep =
      "backends: [" + python(module, "k_only", "k-only") + ", " +
      python(module, "varlen_masked", "varlen-masked") + ", " + python(module, "fp8_full", "fp8-full") +
      "]\nmeasurement: {warmup_ms: 1, max_time_s: 0.05, cpu_pass_calls: 3}\n"
      "sweep:\n"
      "  - {device: cpu, dtype: bf16, heads: 4, kv_heads: 2, seq_len: 1, seq_len_kv: 64,"
      " head_dim: 16, kv_dtype: fp8_e4m3}\n"
      "  - {device: cpu, dtype: fp32, heads: 4, kv_heads: 2, batch: 2, seq_lens: \"24,10\","
      " head_dim: 16, chunk: 8}\n"
      "  - {device: cpu, dtype: fp8_e4m3, heads: 2, seq_len: 16, head_dim: 16}\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 9u) << r.output;
  const std::string fp8_cache = "b1-h4-kv2-s1-skv64-d16-bf16-kvfp8_e4m3-causal-cpu ";
  EXPECT_EQ(rows.at(fp8_cache + "k-only wall").at("status"), "unsupported");
  EXPECT_NE(rows.at(fp8_cache + "k-only wall")
                .at("reason")
                .find("k_only() takes no v_scale keyword, so it cannot run an fp8 KV cache"),
            std::string::npos)
      << rows.at(fp8_cache + "k-only wall").at("reason");
  const std::string chunk = "b2-h4-kv2-s24-d16-fp32-causal-cpu-qlens-24-10-chunk8 ";
  EXPECT_EQ(rows.at(chunk + "varlen-masked wall").at("reason"),
            "varlen_masked() takes no chunk (or mask) keyword, so it cannot run chunked local "
            "attention (docs/backends.md lists the keywords)");
  const auto& fp8 = rows.at("b1-h2-s16-d16-fp8_e4m3-causal-cpu fp8-full wall");
  EXPECT_EQ(fp8.at("status"), "ok") << fp8.at("reason");
  for (const char* column : {"fp8_scale_q", "fp8_scale_k", "fp8_scale_v"})
    EXPECT_NE(fp8.at(column), "") << column;
}

TEST_F(PythonBackends, AnImportThatCrashesCostsOnlyItsOwnRows) {
  const std::string backends =
      "naive, " + python(kFaulty + "/import_crashes.py", "attention", "crasher");
  const Result r =
      run("run " + write("c.yaml", small_sweep(backends)) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 1) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 4u) << r.output;
  for (const auto& [key, row] : rows) {
    if (row.at("backend") == "naive") {
      EXPECT_EQ(row.at("status"), "ok") << key;
      continue;
    }
    EXPECT_EQ(row.at("status"), "error") << key;
    EXPECT_NE(row.at("reason").find("import_crashes.py:attention the worker was killed by signal "
                                    "11 (SIGSEGV"),
              std::string::npos)
        << row.at("reason");
  }
}

// A function the module lacks and a file that is not there: exit 2, located at the config's entry,
// before anything is written.
TEST_F(PythonBackends, AMissingFunctionOrFileIsALocatedConfigError) {
  const std::string faulty = kFaulty + "/faulty.py";
  const std::string no_function =
      write("f.yaml", small_sweep("naive, " + python(faulty, "nope", "nope")));
  Result r = run("run " + no_function + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("f.yaml:1:19: key 'backends': tests/python_backends/faulty.py defines no "
                          "function 'nope' (it defines: checked, memory_error, not_a_tensor, "
                          "out_of_memory, raises, refuses, says_no, supports_checked, "
                          "supports_says_no, surrogate)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("out.csv")));

  const std::string no_file =
      write("g.yaml", small_sweep("naive, " + python(kFaulty + "/absent.py", "f", "absent")));
  r = run("run " + no_file + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(
      r.output.find("g.yaml:1:28: key 'backends.python': " + kFaulty + "/absent.py: no such file"),
      std::string::npos)
      << r.output;
  // A Python backend named like a plugin would be two backends with one name.
  const std::string twin =
      write("h.yaml", small_sweep("naive, " + python(faulty, "checked", "math")));
  r = run("run " + twin + " -o " + path("out.csv"), kAtRoot);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("h.yaml:1:19: key 'backends': the plugin "), std::string::npos)
      << r.output;
}

// Built without Python (no bridge library): a config that names a Python backend is refused at that
// entry, saying why, and the plugins alone still run. $ATTNBENCH_PYTHON_BRIDGE naming no file is
// such a build.
TEST_F(Cli, WithoutPythonAPythonBackendIsRefusedAtItsLine) {
  const std::string no_bridge = "ATTNBENCH_PYTHON_BRIDGE=/nonexistent/libattnbench-python.so";
  const std::string config = write(
      "c.yaml", small_sweep("naive, " + python(kExamples + "/sdpa.py", "attention", "sdpa-py")));
  Result r = run("run " + config + " -o " + path("out.csv"), no_bridge);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("c.yaml:1:19: key 'backends': '" + kExamples +
                          "/sdpa.py:attention' is a Python backend, and this attnbench was built "
                          "without Python"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("out.csv")));
  r = run("run " + config + " --backends naive -o " + path("out.csv"), no_bridge);
  EXPECT_EQ(r.code, 0) << r.output;
}

// $ATTNBENCH_PYTHON naming no program is said, on the Python backend's rows; the plugins run.
TEST_F(PythonBackends, AnAttnbenchPythonThatIsNoProgramIsSaid) {
  const std::string config = write(
      "c.yaml", small_sweep("naive, " + python(kExamples + "/sdpa.py", "attention", "sdpa-py")));
  const Result r =
      run("run " + config + " -o " + path("out.csv"), "ATTNBENCH_PYTHON=/nonexistent/python3");
  EXPECT_EQ(r.code, 1) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 4u) << r.output;
  for (int seq : {32, 48}) {
    const std::string point = "b1-h2-s" + std::to_string(seq) + "-d16-fp32-causal-cpu ";
    EXPECT_EQ(rows.at(point + "naive wall").at("status"), "ok");
    EXPECT_NE(rows.at(point + "sdpa-py wall")
                  .at("reason")
                  .find("$ATTNBENCH_PYTHON names /nonexistent/python3, which is no executable file"),
              std::string::npos)
        << rows.at(point + "sdpa-py wall").at("reason");
  }
  // An executable that is no Python 3 (it would start the interpreter astray, quietly) likewise.
  const Result other =
      run("run " + config + " --force -o " + path("out.csv"), "ATTNBENCH_PYTHON=/bin/true");
  EXPECT_EQ(other.code, 1) << other.output;
  EXPECT_NE(rows_of(path("out.csv"))
                .at("b1-h2-s32-d16-fp32-causal-cpu sdpa-py wall")
                .at("reason")
                .find("$ATTNBENCH_PYTHON names /bin/true, which is no Python 3 interpreter"),
            std::string::npos);
}

// FlexAttention compiled by torch.compile on the CPU (the first call compiles: first_call_ms is
// seconds, later calls are not).
// Whatever a backend starts ends with the run: a process it forks (here one that would sleep for
// two minutes) is killed with its worker's process group.
TEST_F(PythonBackends, AProcessABackendForksDoesNotOutliveTheRun) {
  const std::string pid_file = path("child.pid");
  write("forks.py",
        "import os, time\nimport torch.nn.functional as F\n"
        "def attention(q, k, v, causal, scale):\n"
        "    if not os.path.exists(" + std::string("'") + pid_file + "'):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            for fd in (0, 1, 2):\n"  // nothing ties it to the run but its process group
        "                os.dup2(os.open(os.devnull, os.O_RDWR), fd)\n"
        "            time.sleep(120)\n"
        "            os._exit(0)\n"
        "        open('" + pid_file + "', 'w').write(str(pid))\n"
        "    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)\n");
  const Result r = run("run " + write("c.yaml", small_sweep(python(path("forks.py"), "attention",
                                                                   "forks"))) +
                       " -o " + path("out.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(pid_file);
  pid_t child = 0;
  ASSERT_TRUE(in >> child) << "the backend did not fork";
  auto alive = [](pid_t pid) {  // a zombie waiting for init to reap it is dead
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
  };
  for (int i = 0; i < 50 && alive(child); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(alive(child)) << "pid " << child << " outlived the run";
}

// A module in a folder whose name is not UTF-8 is found, run, and its rows say which file's code
// they measured (`py:` and its hash).
TEST_F(PythonBackends, AFolderNameThatIsNotUtf8IsNoObstacle) {
  const std::filesystem::path odd = path("caf\xe9");
  std::filesystem::create_directory(odd);
  std::filesystem::copy(kExamples + "/sdpa.py", odd / "sdpa.py");
  const Result r = run("run " +
                       write("c.yaml", small_sweep(python((odd / "sdpa.py").string(), "attention",
                                                          "sdpa-py"))) +
                       " -o " + path("out.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  const auto rows = rows_of(path("out.csv"));
  const auto& row = rows.at("b1-h2-s32-d16-fp32-causal-cpu sdpa-py wall");
  EXPECT_EQ(row.at("status"), "ok") << row.at("reason");
  EXPECT_EQ(row.at("backend_build").rfind("py:", 0), 0u) << row.at("backend_build");
}

TEST_F(PythonBackends, FlexAttentionCompilesAndRunsOnTheCpu) {
  const std::string sweep = "backends: [" + python(kExamples + "/flex.py", "attention", "flex") +
                            "]\nmeasurement:\n  warmup_ms: 1\n  max_time_s: 0.05\n"
                            "  cpu_pass_calls: 3\n  timeout_s: 600\n"
                            "sweep:\n  - {heads: 2, seq_len: 64, head_dim: 16, dtype: fp32, device: "
                            "cpu, causal: true}\n"
                            "  - {heads: 2, seq_len: 64, head_dim: 16, dtype: fp32, device: cpu, "
                            "causal: true, chunk: 16}\n"
                            "  - {heads: 2, seq_len: 64, head_dim: 16, dtype: fp32, device: cpu, "
                            "causal: true, sinks: true}\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 3u);
  // gpt-oss's sinks need the log-sum-exp the CPU lowering does not return: refused, saying so.
  const std::string sinks = "b1-h2-s64-d16-fp32-causal-cpu-sinks flex wall";
  EXPECT_EQ(rows.at(sinks).at("status"), "unsupported");
  EXPECT_NE(rows.at(sinks).at("reason").find("log-sum-exp"), std::string::npos);
  for (auto& [key, row] : rows) {  // plain, and with Llama 4's chunks
    if (key == sinks) continue;
    EXPECT_EQ(row.at("status"), "ok") << key << row.at("reason");
    EXPECT_LT(std::stod(row.at("rel_err")), std::stod(row.at("tolerance"))) << key;
    EXPECT_GT(std::stod(row.at("first_call_ms")), 10 * std::stod(row.at("time_ms_median")));
  }
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// The problem a Python backend sees is made once per problem and kept while the next is the same:
// a forward and a backward point of one shape are two problems. Points that differ in their
// direction alone, forward then backward and backward then forward: supports() and the function
// each see the row's own direction.
TEST_F(PythonBackends, AForwardAndABackwardPointOfOneShapeAreTwoProblems) {
  const std::string module = kFaulty + "/problems.py";
  const std::string sweep =
      "backends: [" + python(module, "plain", "plain") + ", " + python(module, "echo", "echo") +
      "]\nmeasurement: {warmup_ms: 1, max_time_s: 0.05, cpu_pass_calls: 3}\n"
      "sweep:\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 32, head_dim: 16, direction: fwd}\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 32, head_dim: 16, direction: bwd}\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 48, head_dim: 16, direction: bwd}\n"
      "  - {device: cpu, dtype: fp32, heads: 2, seq_len: 48, head_dim: 16, direction: fwd}\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  ASSERT_EQ(r.code, 0) << r.output;
  const CsvTable report = read_csv(path("out.csv"));
  ASSERT_EQ(report.rows.size(), 4u * 2) << r.output;
  std::set<std::string> directions;
  for (size_t i = 0; i < report.rows.size(); ++i) {
    const std::string direction = report.at(i, "direction");
    directions.insert(direction);
    const std::string where = report.at(i, "point_id") + " " + report.at(i, "backend");
    EXPECT_EQ(report.at(i, "status"), "unsupported") << where;
    const std::string reason = report.at(i, "reason");
    EXPECT_NE(reason.find(";direction=" + direction + ";"), std::string::npos)
        << where << ": " << reason;
  }
  EXPECT_EQ(directions, (std::set<std::string>{"fwd", "bwd"}));
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// The linear-attention kinds end to end (docs/linear-attention.md): the PyTorch recurrent
// reference ok at a ragged prefill and an MTP decode of both kinds, its state pool written in
// place and never taken for an input it destroyed; the planted gate-dropping backend wrong, the
// reason naming the gate.
TEST_F(PythonBackends, LinearKindsRunEndToEndAndADroppedGateIsNamed) {
  const std::string sweep =
      "backends: [" + python(kExamples + "/torch_linear.py", "gdn_recurrent", "torch-gdn") + ", " +
      python(kExamples + "/torch_linear.py", "kda_recurrent", "torch-kda") + ", " +
      python(kFaulty + "/gdn_no_gate.py", "gdn_recurrent", "no-gate") +
      "]\nmeasurement: {warmup_ms: 1, min_samples: 2, max_time_s: 0.05, cpu_pass_calls: 2}\n"
      "sweep:\n"
      "  - {kind: [gdn, kda], device: cpu, dtype: bf16, linear_num_key_heads: 2,"
      " linear_key_head_dim: 16, linear_value_head_dim: 16, batch: 3, seq_lens: \"9,70,1\"}\n"
      "  - {kind: gdn, device: cpu, dtype: fp32, linear_num_key_heads: 1,"
      " linear_num_value_heads: 2, linear_key_head_dim: 16, linear_value_head_dim: 8, batch: 4,"
      " seq_len: 2}\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  EXPECT_NE(r.code, 0) << r.output;  // the planted backend's rows are wrong
  const auto rows = rows_of(path("out.csv"));
  const std::string gdn = "gdn-b3-s70-bf16-cpu-qlens-9-70-1-hk2-hv2-dk16-dv16 ";
  const std::string kda = "kda-b3-s70-bf16-cpu-qlens-9-70-1-hk2-dk16-dv16 ";
  const std::string decode = "gdn-b4-s2-fp32-cpu-hk1-hv2-dk16-dv8 ";
  for (const std::string& key :
       {gdn + "torch-gdn wall", kda + "torch-kda wall", decode + "torch-gdn wall"}) {
    ASSERT_EQ(rows.count(key), 1u) << key << "\n" << r.output;
    EXPECT_EQ(rows.at(key).at("status"), "ok") << key << ": " << rows.at(key).at("reason");
    EXPECT_NE(rows.at(key).at("variant_moves").find("gate:"), std::string::npos) << key;
  }
  for (const std::string& key : {gdn + "no-gate wall", decode + "no-gate wall"}) {
    ASSERT_EQ(rows.count(key), 1u) << key;
    EXPECT_EQ(rows.at(key).at("status"), "wrong") << key;
    EXPECT_NE(rows.at(key).at("reason").find("gate ignored"), std::string::npos)
        << key << ": " << rows.at(key).at("reason");
  }
  // Each backend runs the kinds it declares.
  EXPECT_EQ(rows.at(kda + "no-gate wall").at("reason"),
            "no-gate does not run kind kda (it declares gdn)");
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// On a GPU: a kind whose calls update an input in place (the linear kinds' state pool) is timed
// one call a sample, each sample from the pool as drawn, so the output the timing pass checks last
// follows its inputs (runner.cpp). Several calls a sample would advance the state past what the
// reference starts from. CPU points are timed `wall`, which has no calls a sample: GPU only.
TEST_F(PythonBackends, AStatePoolUpdatedInPlaceIsTimedOneCallASample) {
  const std::string sweep =
      "backends: [" + python(kExamples + "/torch_linear.py", "gdn_recurrent", "torch-gdn") +
      "]\nmeasurement: {warmup_ms: 1, min_samples: 3, max_time_s: 0.05, timing_modes: [batch]}\n"
      "sweep:\n"
      "  - {kind: gdn, device: cuda, dtype: bf16, linear_num_key_heads: 2, linear_key_head_dim: 16,"
      " linear_value_head_dim: 16, batch: 4, seq_len: 1}\n";
  const Result r = run("run " + write("c.yaml", sweep) + " -o " + path("out.csv"), kAtRoot);
  const auto rows = rows_of(path("out.csv"));
  const std::string key = "gdn-b4-s1-bf16-cuda-hk2-hv2-dk16-dv16 torch-gdn batch";
  ASSERT_EQ(rows.count(key), 1u) << r.output;
  if (rows.at(key).at("reason") == "no CUDA device on this machine")
    GTEST_SKIP() << "skipped: no CUDA device on this machine";
  EXPECT_EQ(rows.at(key).at("status"), "ok") << rows.at(key).at("reason");
  EXPECT_EQ(rows.at(key).at("calls_per_sample"), "1");
}

}  // namespace
}  // namespace attnbench
