#include "run/resume.hpp"
#include "base/errors.hpp"
#include "write/csv.hpp"
#include "write/schema.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace attnbench {
namespace {

Row row(const std::string& point, const std::string& backend, Device device, TimingMode mode) {
  Row r;
  r.point_id = point, r.backend = backend, r.problem.device = device, r.timing_mode = mode;
  r.reason = "a reason, with a comma and\na newline";  // records that span lines
  r.run = {"NVIDIA H200", "2.11.0", "abc", "t", "c.yaml", "fp1"};
  return r;
}

// A complete report as the writer writes it: per (point, backend) kernels, samples, then rows.
ReportTexts full_report() {
  ReportTexts t{csv_line(row_header()), csv_line(kernel_row_header()), csv_line(sample_header())};
  const std::vector<std::pair<std::string, Device>> points = {{"p1-cuda", Device::cuda},
                                                              {"p2-cpu", Device::cpu}};
  for (const auto& [point, device] : points)
    for (const std::string backend : {"naive", "flash"}) {
      KernelRow k;
      k.point_id = point, k.backend = backend, k.name = "gemm, \"tiled\"";
      t.kernels += csv_line(kernel_row_cells(k));
      t.samples += csv_line(sample_fields(point, backend, TimingMode::cold, 0, 0, 0.5, 1980));
      const std::vector<TimingMode> modes =
          device == Device::cuda ? std::vector<TimingMode>{TimingMode::cold, TimingMode::batch}
                                 : std::vector<TimingMode>{TimingMode::wall};
      for (TimingMode m : modes) t.rows += csv_line(row_cells(row(point, backend, device, m)));
    }
  return t;
}

std::set<RecordKey> owners(const std::string& text) {
  std::set<RecordKey> out;
  if (text.empty()) return out;
  const CsvTable t = parse_csv(text, "x.csv");
  for (size_t r = 0; r < t.rows.size(); ++r)
    out.insert({t.at(r, "point_id"), t.at(r, "backend"), std::stoi(t.at(r, "repetition"))});
  return out;
}

// A hand-edited repetition is located (file and line), never std::stoi's bare "stoi".
TEST(Resume, AnUnreadableRepetitionIsLocated) {
  const CsvTable t = parse_csv("point_id,backend,repetition\np,b,1\np,b,two\np,b,-1\n", "r.csv");
  EXPECT_EQ(std::get<2>(record_key(t, 0)), 1);
  for (size_t row : {1u, 2u}) {
    try {
      record_key(t, row);
      FAIL() << "row " << row << " was read";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(
                    "r.csv:" + std::to_string(row + 2) + ": column 'repetition'", 0),
                0u)
          << e.what();
    }
  }
}

// The report's own rows are read typed: a negative repetition or a cell that is not its column's
// type stops the resume, located, rather than keeping a row nobody can name.
TEST(Resume, AReportRowThatDoesNotReadIsLocated) {
  ReportTexts report = full_report();
  Row bad = row("p3-cpu", "naive", Device::cpu, TimingMode::wall);
  bad.repetition = -1;
  report.rows += csv_line(row_cells(bad));
  try {
    resume_report(report, "r.csv", "fp1", "NVIDIA H200", "2.11.0", 2);
    FAIL() << "a row of repetition -1 was kept";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("r.csv:14: column 'repetition' holds '-1'", 0), 0u)
        << e.what();
  }
  report = full_report();
  Row timed = row("p3-cpu", "naive", Device::cpu, TimingMode::wall);
  timed.time_ms_median = 1.25;
  std::string cells = csv_line(row_cells(timed));
  cells.replace(cells.find(",1.25,"), 6, ",fast,");
  report.rows += cells;
  EXPECT_THROW(resume_report(report, "r.csv", "fp1", "NVIDIA H200", "2.11.0", 2), InputError);
}

// Reports before schema 5 have no repetition column: every row is repetition 0. And an integer in
// the first column reads like any other.
TEST(Resume, WithoutARepetitionColumnEveryRowIsTheFirst) {
  const CsvTable t = parse_csv("point_id,backend\np,b\n", "old.csv");
  EXPECT_EQ(std::get<2>(record_key(t, 0)), 0);
  EXPECT_EQ(t.integer(0, "repetition"), std::nullopt);
  const CsvTable first = parse_csv("repetition,point_id,backend\n3,p,b\n", "r.csv");
  EXPECT_EQ(first.integer(0, "repetition"), 3);
  EXPECT_EQ(std::get<2>(record_key(first, 0)), 3);
}

TEST(Resume, ACompleteReportIsKeptWhole) {
  const ReportTexts full = full_report();
  const Resumed r = resume_report(full, "r.csv", "fp1", "NVIDIA H200", "2.11.0", 2);
  EXPECT_EQ(r.done.size(), 4u);
  EXPECT_EQ(r.kept.rows, full.rows);
  EXPECT_EQ(r.kept.kernels, full.kernels);
  EXPECT_EQ(r.kept.samples, full.samples);
}

// A kill at any byte of the main file: what is kept parses, holds only complete (point, backend)s,
// and the kernel and sample files hold exactly those.
TEST(Resume, AKillAtAnyByteKeepsOnlyCompleteRecords) {
  const ReportTexts full = full_report();
  size_t last_done = 0;
  for (size_t cut = 0; cut <= full.rows.size(); ++cut) {
    ReportTexts torn = full;
    torn.rows = full.rows.substr(0, cut);
    const Resumed r = resume_report(torn, "r.csv", "fp1", "NVIDIA H200", "2.11.0", 2);
    EXPECT_EQ(owners(r.kept.rows), r.done) << "cut at " << cut;
    EXPECT_EQ(owners(r.kept.kernels), r.done) << "cut at " << cut;
    EXPECT_EQ(owners(r.kept.samples), r.done) << "cut at " << cut;
    EXPECT_GE(r.done.size(), last_done) << "cut at " << cut;  // more text never means less done
    last_done = r.done.size();
    if (!r.kept.rows.empty())
      EXPECT_EQ(
          parse_csv(r.kept.rows, "r.csv").rows.size(), 0 +
                                                           [&] {
                                                             size_t n = 0;
                                                             for (const auto& k : r.done)
                                                               n += std::get<0>(k) == "p1-cuda" ? 2
                                                                                                : 1;
                                                             return n;
                                                           }())
          << "cut at " << cut;
  }
  EXPECT_EQ(last_done, 4u);
}

TEST(Resume, RefusesAnotherSweepAnotherMachineAndOldReports) {
  const ReportTexts full = full_report();
  auto message = [&](const ReportTexts& t, const std::string& fp,
                     const std::string& device) -> std::string {
    try {
      resume_report(t, "r.csv", fp, device, "2.11.0", 2);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message(full, "fp2", "NVIDIA H200"),
            "r.csv: cannot resume: it was written by another sweep (config fingerprint fp1, this "
            "run fp2); "
            "--force starts it over, or give another -o");
  EXPECT_NE(message(full, "fp1", "NVIDIA H100")
                .find("it was measured on NVIDIA H200 with torch 2.11.0, this is NVIDIA H100"),
            std::string::npos);
  ReportTexts old = full;
  old.rows = "schema_version,point_id,backend\n1,p,b\n";
  EXPECT_NE(message(old, "fp1", "NVIDIA H200").find("no config_fingerprint column"),
            std::string::npos);
}

// One version of each backend's code in a report: a backend whose rows carry another build than
// the one loaded now is refused at its first such row; the same build, a backend with no build
// now (it did not load) or rows without one (it did not load then) are kept.
TEST(Resume, ABackendWhoseCodeChangedIsRefusedAtItsRow) {
  ReportTexts t{csv_line(row_header()), "", ""};
  for (const std::string backend : {"naive", "mine"}) {
    Row r = row("p1-cpu", backend, Device::cpu, TimingMode::wall);
    r.backend_build = backend == "mine" ? "so:aaaa" : "so:1111";
    t.rows += csv_line(row_cells(r));
  }
  auto message = [&](const std::map<std::string, std::string>& builds) -> std::string {
    try {
      return std::to_string(resume_report(t, "r.csv", "fp1", "NVIDIA H200", "2.11.0", 2, builds)
                                .done.size());
    } catch (const InputError& e) {
      return e.what();
    }
  };
  EXPECT_EQ(message({{"naive", "so:1111"}, {"mine", "so:aaaa"}}), "2");
  EXPECT_EQ(message({{"naive", "so:1111"}, {"mine", ""}}), "2");
  EXPECT_EQ(message({}), "2");
  const std::string changed = message({{"naive", "so:1111"}, {"mine", "so:bbbb"}});
  EXPECT_NE(changed.find("r.csv:4: cannot resume: backend 'mine' was measured there with build "
                         "so:aaaa, and its code is now build so:bbbb"),
            std::string::npos)
      << changed;
  EXPECT_NE(message({{"naive", "so:2222"}}).find("backend 'naive'"), std::string::npos);
  Row unloaded = row("p2-cpu", "mine", Device::cpu, TimingMode::wall);  // no build: never loaded
  t.rows += csv_line(row_cells(unloaded));
  EXPECT_EQ(message({{"naive", "so:1111"}, {"mine", "so:aaaa"}}), "3");
}

// Rows appended to a report must line up with its columns: a header that is not this
// attnbench's (a column moved, dropped or added by hand, in the report or a side file) is refused
// before anything is measured, naming where it first differs.
TEST(Resume, AReportWhoseColumnsAreNotThisAttnbenchsIsRefused) {
  const ReportTexts full = full_report();
  auto message = [](const ReportTexts& t) -> std::string {
    try {
      resume_report(t, "r.csv", "fp1", "NVIDIA H200", "2.11.0", 2);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message(full), "accepted");
  auto swapped = [](std::string text, const std::string& a, const std::string& b) {
    const size_t i = text.find("," + a + ","), j = text.find("," + b + ",");
    text.replace(j + 1, b.size(), a);
    text.replace(i + 1, a.size(), b);
    return text;
  };
  ReportTexts moved = full;
  moved.rows = swapped(full.rows, "backend", "batch");
  EXPECT_EQ(message(moved),
            "r.csv: cannot resume: its columns are not the ones this attnbench writes (column 3 "
            "is 'batch' where this attnbench writes 'backend'), so appended rows would not line "
            "up; --force starts it over, or give another -o");
  ReportTexts side = full;
  side.samples = swapped(full.samples, "backend", "timing_mode");
  EXPECT_NE(message(side).find("r.samples.csv: cannot resume: its columns are not"),
            std::string::npos)
      << message(side);
  ReportTexts dropped = full;
  dropped.kernels = full.kernels.substr(0, full.kernels.find('\n'));
  dropped.kernels = dropped.kernels.substr(0, dropped.kernels.rfind(',')) + "\n";
  EXPECT_NE(message(dropped).find("r.kernels.csv: cannot resume: its columns are not the ones "
                                  "this attnbench writes (column "),
            std::string::npos)
      << message(dropped);
}

TEST(Resume, NothingLeftStartsOver) {
  ReportTexts empty;
  EXPECT_TRUE(resume_report(empty, "r.csv", "fp1", "x", "y", 2).done.empty());
  ReportTexts torn_header;
  torn_header.rows = "schema_version,poi";
  EXPECT_TRUE(resume_report(torn_header, "r.csv", "fp1", "x", "y", 2).kept.rows.empty());
}

TEST(Csv, CompleteRecordsDropsATornLastRecord) {
  EXPECT_EQ(complete_records("a,b\n1,2\n3,"), "a,b\n1,2\n");
  EXPECT_EQ(complete_records("a,b\n1,\"x\ny\"\n2,\"torn\n"), "a,b\n1,\"x\ny\"\n");
  EXPECT_EQ(complete_records("a,b\n"), "a,b\n");
  EXPECT_EQ(complete_records("a,b"), "");
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// A report measured with another torch, on the same device and by the same sweep, is not resumed:
// its numbers are another library's (docs/using.md: "a report to resume is of another sweep or
// machine"). Either way round, naming both versions; the same version resumes.
TEST(Resume, AnotherTorchVersionIsRefusedOnTheSameDevice) {
  const ReportTexts full = full_report();  // NVIDIA H200, torch 2.11.0, fp1
  auto message = [&](const ReportTexts& t, const std::string& torch) -> std::string {
    try {
      return std::to_string(resume_report(t, "r.csv", "fp1", "NVIDIA H200", torch, 2).done.size());
    } catch (const InputError& e) {
      return e.what();
    }
  };
  EXPECT_EQ(message(full, "2.11.0"), "4");
  for (const std::string torch : {"2.12.0", "2.10.0", "2.11.0+cu130", ""}) {
    const std::string said = message(full, torch);
    EXPECT_NE(said.find("r.csv: cannot resume: it was measured on NVIDIA H200 with torch 2.11.0, "
                        "this is NVIDIA H200 with torch " + torch),
              std::string::npos)
        << torch << ": " << said;
  }
  // Only the report's last row of another torch: refused all the same.
  ReportTexts mixed{csv_line(row_header()), "", ""};
  Row first = row("p1-cpu", "naive", Device::cpu, TimingMode::wall);
  Row last = row("p2-cpu", "naive", Device::cpu, TimingMode::wall);
  last.run.torch_version = "2.10.0";
  mixed.rows += csv_line(row_cells(first)) + csv_line(row_cells(last));
  EXPECT_NE(message(mixed, "2.11.0").find("with torch 2.10.0, this is NVIDIA H200 with torch 2.11.0"),
            std::string::npos)
      << message(mixed, "2.11.0");
}

}  // namespace
}  // namespace attnbench
