#include "write/csv.hpp"
#include "base/errors.hpp"
#include "kinds/problem.hpp"
#include "write/schema.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace attnbench {
namespace {

std::filesystem::path temp_dir() {
  return std::filesystem::temp_directory_path() / ("attnbench-csv-" + std::to_string(::getpid()));
}

// The folder goes when the test process ends (ctest runs each test in a process of its own).
struct RemoveTempDir {
  ~RemoveTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir(), ec);
  }
} remove_temp_dir;

std::string temp_path(const std::string& name) {
  std::filesystem::create_directories(temp_dir());
  return (temp_dir() / name).string();
}

TEST(Csv, EscapesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_escape("two\nlines"), "\"two\nlines\"");
}

TEST(Csv, ParsesQuotedCommasQuotesAndNewlines) {
  const CsvTable t =
      parse_csv("a,b,c\r\n1,\"x, y\",\"he said \"\"no\"\"\"\n2,\"multi\nline\",\n", "t.csv");
  ASSERT_EQ(t.header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][1], "x, y");
  EXPECT_EQ(t.rows[0][2], "he said \"no\"");
  EXPECT_EQ(t.rows[1][1], "multi\nline");
  EXPECT_EQ(t.rows[1][2], "");
}

// A report saved by a spreadsheet starts with a UTF-8 byte-order mark: its first column is still
// schema_version; the mark alone is nothing else.
TEST(Csv, AByteOrderMarkIsNoPartOfTheFirstColumn) {
  const CsvTable t = parse_csv("\xEF\xBB\xBFschema_version,b\n21,x\n", "bom.csv");
  EXPECT_EQ(t.column("schema_version"), 0);
  EXPECT_EQ(t.at(0, "b"), "x");
  EXPECT_EQ(parse_csv("a\xEF\xBB\xBF,b\n1,2\n", "mid.csv").column("a\xEF\xBB\xBF"), 0);
}

TEST(Csv, RejectsBrokenFilesWithTheirLine) {
  try {
    parse_csv("a,b\n1,2\n3\n", "short.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("short.csv:3: row has 1 fields, the header has 2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_csv("a\n\"never closed\n", "open.csv"), InputError);
  EXPECT_THROW(parse_csv("", "empty.csv"), InputError);
}

TEST(Csv, RowsWriteAndReadBackThroughTheSchema) {
  Row row;
  row.point_id = "b1-h2-s64-d32-fp32-causal-cpu";
  row.backend = "naive";
  row.problem.batch = 1, row.problem.heads = 2, row.problem.seq_len = 64, row.problem.head_dim = 32;
  row.problem.kv_heads = 2, row.problem.seq_len_kv = 64;
  row.problem.dtype = DType::f32;
  row.problem.causal = true;
  row.timing_mode = TimingMode::wall;
  row.status = Status::unsupported;
  row.reason = "flash refused: head_dim, \"512\", too large";
  row.time_ms_median = 0.125;
  row.aten_ops = "matmul mul masked_fill softmax matmul";
  row.add_flag(Flag::noise_target_missed);
  row.add_flag(Flag::above_peak);

  const std::string path = temp_path("rows.csv");
  {
    CsvWriter w(path, row_header());
    w.write(row_cells(row));
  }  // each row is flushed as it is written; closing adds nothing
  const CsvTable t = read_csv(path);
  EXPECT_EQ(t.header, row_header());
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.at(0, "schema_version"), std::to_string(kCsvSchemaVersion));
  EXPECT_EQ(t.at(0, "reason"), row.reason);
  EXPECT_EQ(t.at(0, "status"), "unsupported");
  EXPECT_EQ(t.at(0, "time_ms_median"), "0.125");
  EXPECT_EQ(t.at(0, "time_ms_p10"), "");  // not measured: empty, never a made-up number
  EXPECT_EQ(t.at(0, "causal"), "true");
  EXPECT_EQ(t.at(0, "aten_ops"), row.aten_ops);
  EXPECT_EQ(t.at(0, "flags"), "noise_target_missed;above_peak");
}

TEST(Csv, NumbersReadBackExactly) {
  for (double v :
       {0.1 + 0.2, 1.0 / 3.0, 1e-300, 123456789.123456789, 2.5e-7, 6.02214076e23, 0.125, 7.0})
    EXPECT_EQ(std::stod(format_number(v)), v) << format_number(v);
  EXPECT_EQ(format_number(0.125), "0.125");
  EXPECT_EQ(format_number(7), "7");

  Row row;
  row.time_ms_median = 1.0 / 3.0;
  row.cpu_us_p90 = 12.345678901234567;
  row.kernels_per_call = 2.0 / 3.0;
  row.samples = 9007199254740993;  // 2^53 + 1: integers are written as integers
  const std::string path = temp_path("precise.csv");
  {
    CsvWriter w(path, row_header());
    w.write(row_cells(row));
  }
  const CsvTable t = read_csv(path);
  EXPECT_EQ(std::stod(t.at(0, "time_ms_median")), 1.0 / 3.0);
  EXPECT_EQ(std::stod(t.at(0, "cpu_us_p90")), 12.345678901234567);
  EXPECT_EQ(std::stod(t.at(0, "kernels_per_call")), 2.0 / 3.0);
  EXPECT_EQ(t.at(0, "samples"), "9007199254740993");
}

TEST(Csv, WriterRefusesARowOfTheWrongWidth) {
  CsvWriter w(temp_path("width.csv"), {"a", "b"});
  EXPECT_THROW(w.write({"1"}), std::logic_error);
  EXPECT_THROW(CsvWriter("/proc/no/such/dir/x.csv", {"a"}), InputError);
}

TEST(Csv, WriterCreatesMissingFolders) {
  const std::string path = temp_path("a/b/c/new.csv");
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  { CsvWriter w(path, {"x"}); }
  EXPECT_EQ(read_csv(path).header, std::vector<std::string>{"x"});
}

TEST(Csv, AMissingFileSaysSo) {
  try {
    read_csv("/nonexistent/report.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/report.csv: cannot read the CSV file");
  }
}

TEST(Csv, BlankLinesAreSkipped) {
  const CsvTable t = parse_csv("a,b\n1,2\n\n3,4\n\n", "blank.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1][0], "3");
  const CsvTable one = parse_csv("a\n\n5\n", "one.csv");  // one column: an empty line is no row
  EXPECT_EQ(one.rows, (std::vector<std::vector<std::string>>{{"5"}}));
}

TEST(Csv, RowsWiderThanTheHeaderAreRefusedToo) {
  try {
    parse_csv("a,b\n1,2,3\n", "wide.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "wide.csv:2: row has 3 fields, the header has 2");
  }
}

TEST(Csv, CompleteRecordsCountsOnlyQuotes) {
  EXPECT_EQ(complete_records("a b,c!d\n1 2,x\n3 4,y"), "a b,c!d\n1 2,x\n");
  EXPECT_EQ(complete_records("q\n\"a \"\"b\"\" c\"\n\"torn"), "q\n\"a \"\"b\"\" c\"\n");
}

TEST(Csv, SamplesFileHeader) {
  EXPECT_EQ(sample_header(),
            (std::vector<std::string>{"point_id", "backend", "timing_mode", "repetition", "sample",
                                      "time_ms", "sm_clock_mhz"}));
  EXPECT_EQ(sample_fields("p", "b", TimingMode::graph, 2, 3, 0.1, 1972.5),
            (std::vector<std::string>{"p", "b", "graph", "2", "3", "0.1", "1972.5"}));
  EXPECT_EQ(sample_fields("p", "b", TimingMode::wall, 0, 0, 0.1, std::nullopt).back(), "");
  EXPECT_TRUE(readable_schema_version("1"));
  EXPECT_TRUE(readable_schema_version("2"));
  EXPECT_TRUE(readable_schema_version("3"));
  EXPECT_TRUE(readable_schema_version("4"));
  EXPECT_TRUE(readable_schema_version("5"));
  EXPECT_TRUE(readable_schema_version("6"));
  EXPECT_TRUE(readable_schema_version("7"));
  EXPECT_TRUE(readable_schema_version("8"));
  EXPECT_TRUE(readable_schema_version("9"));
  EXPECT_TRUE(readable_schema_version("10"));
  EXPECT_TRUE(readable_schema_version("11"));
  EXPECT_TRUE(readable_schema_version(std::to_string(kCsvSchemaVersion)));
  const std::string next = std::to_string(kCsvSchemaVersion + 1);
  for (const std::string& other : {std::string("0"), next, next + "0", std::string(""),
                                   std::string("3.0"), std::string("09")})
    EXPECT_FALSE(readable_schema_version(other)) << other;
}

TEST(Csv, HeaderHasTheDocumentedColumns) {
  const auto header = row_header();
  for (const char* column : {"backend",          "batch",           "heads",
                             "seq_len",          "head_dim",        "dtype",
                             "causal",           "device",          "status",
                             "reason",           "time_ms_median",  "time_ms_p10",
                             "time_ms_p90",      "time_rel_spread", "samples",
                             "timing_mode",      "cpu_us_median",   "aten_ops_per_call",
                             "kernels_per_call", "memcpy_per_call", "memset_per_call",
                             "peak_mem_mib",     "rel_err",         "tflops",
                             "device_name",      "torch_version",   "git_sha",
                             "started_at",       "occupancy_pct",   "expectation"})
    EXPECT_NE(std::find(header.begin(), header.end(), column), header.end()) << column;
  const auto kernels = kernel_row_header();
  for (const char* column :
       {"point_id", "backend", "kind", "name", "launches_per_call", "duration_us_mean", "grid",
        "block", "registers_per_thread", "static_smem_bytes", "dynamic_smem_bytes",
        "theoretical_occupancy_pct"})
    EXPECT_NE(std::find(kernels.begin(), kernels.end(), column), kernels.end()) << column;
}

// docs/columns.md is generated (Fields.TheColumnsPageIsTheTables); this checks the generated page
// as a reader sees it.
TEST(Csv, TheColumnsPageDocumentsEveryColumn) {
  std::ifstream in(std::string(ATTNBENCH_SOURCE_DIR) + "/docs/columns.md");
  ASSERT_TRUE(in) << "docs/columns.md is missing";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& column : row_header())
    EXPECT_NE(text.find("`" + column + "`"), std::string::npos) << column;
  for (const auto& column : kernel_row_header())
    EXPECT_NE(text.find("`" + column + "`"), std::string::npos) << column;
}

}  // namespace
}  // namespace attnbench
