// attnbench merge: shard reports joined, other sweeps and splits refused, duplicates and gaps
// named.
#include "run/merge.hpp"
#include "run/resume.hpp"
#include "write/report_writer.hpp"
#include "base/errors.hpp"
#include "write/csv.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnbench {
namespace {

const std::string kHeader =
    "schema_version,point_id,backend,repetition,timing_mode,status,config_fingerprint,shard\n";
const std::string kKernelHeader = "schema_version,point_id,backend,repetition,kind,name\n";

std::string row(const std::string& point, const std::string& backend, const std::string& shard,
                const std::string& fingerprint = "f1", const std::string& mode = "cold") {
  return "6," + point + "," + backend + ",0," + mode + ",ok," + fingerprint + "," + shard + "\n";
}

MergeInput input(const std::string& path, const std::string& rows,
                 const std::string& kernels = "") {
  return {path, {kHeader + rows, kernels.empty() ? "" : kKernelHeader + kernels, ""}};
}

std::string message_of(const std::vector<MergeInput>& inputs) {
  try {
    merge_reports(inputs, std::nullopt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Merge, ShardsJoinInTheSweepsOrderWithTheirKernelRows) {
  const std::vector<RecordKey> sweep = {
      {"p1", "naive", 0}, {"p1", "flash", 0}, {"p2", "naive", 0}, {"p2", "flash", 0}};
  const Merged m =
      merge_reports({input("b.csv", row("p2", "naive", "2/2") + row("p1", "flash", "2/2"),
                           "6,p2,naive,0,kernel,k2\n6,p1,flash,0,kernel,k3\n"),
                     input("a.csv", row("p2", "flash", "1/2") + row("p1", "naive", "1/2"),
                           "6,p1,naive,0,kernel,k1\n6,p9,naive,0,kernel,orphan\n")},
                    sweep);
  EXPECT_TRUE(m.gaps.empty());
  EXPECT_EQ(m.measurements, 4u);
  const CsvTable t = parse_csv(m.texts.rows, "m.csv");
  ASSERT_EQ(t.rows.size(), 4u);
  for (size_t i = 0; i < sweep.size(); ++i) {
    EXPECT_EQ(t.at(i, "point_id"), std::get<0>(sweep[i]));
    EXPECT_EQ(t.at(i, "backend"), std::get<1>(sweep[i]));
  }
  const CsvTable k = parse_csv(m.texts.kernels, "m.kernels.csv");
  ASSERT_EQ(k.rows.size(), 3u) << "a kernel row of no merged measurement is left out";
  EXPECT_EQ(k.at(0, "name"), "k1");
  EXPECT_EQ(k.at(1, "name"), "k3");
  EXPECT_EQ(k.at(2, "name"), "k2");
  EXPECT_TRUE(m.texts.samples.empty()) << "no input had samples";
}

TEST(Merge, GapsNameMissingShardsAndMeasurements) {
  const std::vector<RecordKey> sweep = {{"p1", "naive", 0}, {"p1", "flash", 0}, {"p2", "naive", 1}};
  Merged m = merge_reports({input("a.csv", row("p1", "naive", "1/3"))}, sweep);
  EXPECT_EQ(m.gaps, (std::vector<std::string>{
                        "shard 2/3: no report given", "shard 3/3: no report given",
                        "flash @ p1: not measured", "naive @ p2 (repetition 2): not measured"}));
  m = merge_reports({input("a.csv", row("p1", "naive", "1/3"))}, std::nullopt);
  EXPECT_EQ(m.gaps.size(), 2u) << "without the sweep, only whole shards";
}

TEST(Merge, RefusesOtherSweepsOtherSplitsDuplicatesAndSchemas) {
  EXPECT_EQ(message_of({input("a.csv", row("p1", "naive", "1/2")),
                        input("b.csv", row("p2", "naive", "2/2", "f2"))}),
            "merge: b.csv is of another sweep than a.csv (config fingerprint f2, not f1)");
  EXPECT_EQ(message_of({input("a.csv", row("p1", "naive", "1/2")),
                        input("b.csv", row("p2", "naive", "2/3"))}),
            "merge: b.csv is a shard of 3 parts, a.csv of 2: shards of different splits overlap");
  EXPECT_EQ(message_of({input("a.csv", row("p1", "naive", "1/2")),
                        input("b.csv", row("p2", "naive", "2/2") + row("p1", "naive", "2/2"))}),
            "merge: naive @ p1 [cold] is in both a.csv and b.csv: the same measurement twice (a "
            "shard given twice, or run unsharded)");
  // Other timing modes of the same measurement are not duplicates.
  EXPECT_EQ(message_of({input("a.csv", row("p1", "naive", "", "f1", "cold") +
                                           row("p1", "naive", "", "f1", "graph"))}),
            "");
  MergeInput other{"c.csv",
                   {"schema_version,point_id,backend,timing_mode,status,"
                    "config_fingerprint\n6,p,naive,cold,ok,f1\n",
                    "", ""}};
  EXPECT_NE(message_of({input("a.csv", row("p1", "naive", "")), other})
                .find("c.csv: its columns differ from a.csv's"),
            std::string::npos);
  EXPECT_NE(message_of({{"x.csv", {"a,b\n1,2\n", "", ""}}}).find("not an attnbench report"),
            std::string::npos);
}

// Shards of two versions of one backend's code are not one report: refused, naming both rows; the
// same build, other backends' builds, and a row without one (the backend never loaded) merge.
TEST(Merge, ShardsOfTwoBuildsOfABackendAreRefused) {
  const std::string header =
      "schema_version,point_id,backend,repetition,timing_mode,status,config_fingerprint,shard,"
      "backend_build\n";
  auto shard = [&](const std::string& path, const std::string& point, const std::string& backend,
                   const std::string& k, const std::string& build) {
    return MergeInput{path, {header + "19," + point + "," + backend + ",0,cold,ok,f1," + k +
                                 "/2," + build + "\n",
                             "", ""}};
  };
  EXPECT_EQ(message_of({shard("a.csv", "p1", "mine", "1", "so:aa"),
                        shard("b.csv", "p2", "mine", "2", "so:bb")}),
            "b.csv:2: backend 'mine' was measured with build so:bb, at a.csv:2 with build so:aa: "
            "two versions of its code (a plugin rebuilt, a source or a header it includes "
            "edited, a Python file changed) in one report");
  EXPECT_EQ(message_of({shard("a.csv", "p1", "mine", "1", "so:aa"),
                        shard("b.csv", "p2", "mine", "2", "so:aa")}),
            "");
  EXPECT_EQ(message_of({shard("a.csv", "p1", "mine", "1", "so:aa"),
                        shard("b.csv", "p2", "naive", "2", "so:bb")}),
            "");
  EXPECT_EQ(message_of({shard("a.csv", "p1", "mine", "1", "so:aa"),
                        shard("b.csv", "p2", "mine", "2", "")}),
            "");
}

// A shard whose writer was killed mid-row: its torn last line is not a measurement, so the merged
// report leaves it out and names it as a gap; the side files' torn lines likewise.
TEST(Merge, ATornShardsLastLineIsAGapNotARow) {
  const std::vector<RecordKey> sweep = {
      {"p1", "naive", 0}, {"p1", "flash", 0}, {"p2", "naive", 0}, {"p2", "flash", 0}};
  std::string torn = row("p2", "flash", "2/2");
  torn.resize(torn.size() / 2);  // "6,p2,flash,0,c": no newline, half its fields
  const Merged m = merge_reports(
      {input("a.csv", row("p1", "naive", "1/2") + row("p2", "naive", "1/2"),
             "6,p1,naive,0,kernel,k1\n"),
       input("b.csv", row("p1", "flash", "2/2") + torn, "6,p1,flash,0,kernel,k2\n6,p2,fl")},
      sweep);
  EXPECT_EQ(m.measurements, 3u);
  EXPECT_EQ(m.gaps, (std::vector<std::string>{"flash @ p2: not measured"}));
  const CsvTable t = parse_csv(m.texts.rows, "m.csv");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.at(2, "point_id"), "p2");
  EXPECT_EQ(t.at(2, "backend"), "naive");
  const CsvTable k = parse_csv(m.texts.kernels, "m.kernels.csv");
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(k.at(1, "name"), "k2");
  // Torn inside a quoted field that spans lines: the record is incomplete however many lines.
  const std::string open_quote = "6,p2,flash,0,cold,ok,f1,\"2/2\nstill inside";
  EXPECT_EQ(merge_reports({input("a.csv", row("p1", "naive", "1/2") + row("p2", "naive", "1/2")),
                           input("b.csv", row("p1", "flash", "2/2") + open_quote)},
                          sweep)
                .measurements,
            3u);
}

// A side file's bad row is named where it stands: in that side file, beside its report.
TEST(Merge, ASideFilesBadRowIsNamedInItsOwnFile) {
  const std::string message =
      message_of({input("runs/a.csv", row("p1", "naive", ""), "6,p1,naive,-1,kernel,k1\n")});
  EXPECT_NE(message.find("runs/a.kernels.csv:2: column 'repetition' holds -1"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

const std::string kSampleHeader =
    "point_id,backend,timing_mode,repetition,sample,time_ms,sm_clock_mhz\n";

// A shard's side files may hold rows of measurements its report does not (kept from an earlier run
// of the sweep, or of a shard not given): only the side rows of the merged main rows are merged,
// each (point, backend, repetition) alone: not another point of the sweep, not another backend at
// a merged point, not another repetition of a merged measurement; kernels and samples alike.
TEST(Merge, SideRowsOfMeasurementsNotMergedStayOut) {
  const std::vector<RecordKey> sweep = {
      {"p1", "naive", 0}, {"p1", "flash", 0}, {"p2", "naive", 0}, {"p2", "flash", 0}};
  const std::string a_kernels = "6,p1,naive,0,kernel,kept-a\n"
                                "6,p2,naive,0,kernel,stale-point\n"
                                "6,p1,naive,1,kernel,stale-repetition\n"
                                "6,p1,cudnn,0,kernel,stale-backend\n";
  const std::string b_kernels = "6,p1,flash,0,kernel,kept-b\n6,p2,flash,0,kernel,stale-b\n";
  const std::string a_samples = "p1,naive,cold,0,0,1.5,\np2,naive,cold,0,0,9,\np1,naive,cold,1,0,9,\n";
  const std::string b_samples = "p1,flash,cold,0,0,2.5,\np2,flash,cold,0,0,9,\n";
  const Merged m = merge_reports(
      {MergeInput{"a.csv", {kHeader + row("p1", "naive", "1/2"), kKernelHeader + a_kernels,
                            kSampleHeader + a_samples}},
       MergeInput{"b.csv", {kHeader + row("p1", "flash", "2/2"), kKernelHeader + b_kernels,
                            kSampleHeader + b_samples}}},
      sweep);
  EXPECT_EQ(m.measurements, 2u);
  const CsvTable k = parse_csv(m.texts.kernels, "m.kernels.csv");
  ASSERT_EQ(k.rows.size(), 2u) << m.texts.kernels;
  EXPECT_EQ(k.at(0, "name"), "kept-a");
  EXPECT_EQ(k.at(1, "name"), "kept-b");
  const CsvTable samples = parse_csv(m.texts.samples, "m.samples.csv");
  ASSERT_EQ(samples.rows.size(), 2u) << m.texts.samples;
  EXPECT_EQ(samples.at(0, "time_ms"), "1.5");
  EXPECT_EQ(samples.at(1, "time_ms"), "2.5");
  // Without the sweep (no order known beforehand) the same rows stay out.
  const Merged blind = merge_reports(
      {MergeInput{"a.csv", {kHeader + row("p1", "naive", "1/2"), kKernelHeader + a_kernels,
                            kSampleHeader + a_samples}},
       MergeInput{"b.csv", {kHeader + row("p1", "flash", "2/2"), kKernelHeader + b_kernels,
                            kSampleHeader + b_samples}}},
      std::nullopt);
  EXPECT_EQ(parse_csv(blind.texts.kernels, "m.kernels.csv").rows.size(), 2u) << blind.texts.kernels;
  EXPECT_EQ(parse_csv(blind.texts.samples, "m.samples.csv").rows.size(), 2u) << blind.texts.samples;
}

// One input without a samples file: the merge has none (part of them would mislead), whichever
// input lacks it, while the kernels, which every input has, are merged.
TEST(Merge, ASideFileOneShardLacksIsLeftOutWhicheverShardLacksIt) {
  const std::string a_samples = kSampleHeader + "p1,naive,cold,0,0,1.5,\n";
  for (bool first_lacks : {true, false}) {
    const Merged m = merge_reports(
        {MergeInput{"a.csv", {kHeader + row("p1", "naive", "1/2"),
                              kKernelHeader + "6,p1,naive,0,kernel,k1\n",
                              first_lacks ? "" : a_samples}},
         MergeInput{"b.csv", {kHeader + row("p1", "flash", "2/2"),
                              kKernelHeader + "6,p1,flash,0,kernel,k2\n",
                              first_lacks ? a_samples : ""}}},
        std::nullopt);
    EXPECT_EQ(m.texts.samples, "") << first_lacks;
    EXPECT_EQ(parse_csv(m.texts.kernels, "m.kernels.csv").rows.size(), 2u) << first_lacks;
  }
}

// Writing a merged (or resumed) report over an old one: a side file the new report has none of
// is removed, not left beside it to be read as the new report's; one it has is replaced whole.
TEST(Merge, AnOldSideFileTheNewReportHasNoneOfIsRemoved) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("attnbench-merge-side-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "m.csv").string();
  auto text_of = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  for (const char* suffix : {side::kernels, side::samples})
    std::ofstream(sibling(out, suffix)) << "stale\n";
  std::ofstream(out) << "stale\n";
  write_report_texts(out, {"new rows\n", "", "new samples\n"});
  EXPECT_EQ(text_of(out), "new rows\n");
  EXPECT_FALSE(std::filesystem::exists(sibling(out, side::kernels)));
  EXPECT_EQ(text_of(sibling(out, side::samples)), "new samples\n");
  write_report_texts(out, {"newer rows\n", "new kernels\n", ""});
  EXPECT_EQ(text_of(sibling(out, side::kernels)), "new kernels\n");
  EXPECT_FALSE(std::filesystem::exists(sibling(out, side::samples)));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attnbench
