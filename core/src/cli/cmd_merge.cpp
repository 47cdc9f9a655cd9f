// `attnbench merge`: shard reports into one. The sweep's config (--config, else the one the rows
// name, when it is there and is the sweep they measured) says what a complete report holds.
#include "cli/commands.hpp"
#include "config/sweep.hpp"
#include "run/merge.hpp"
#include "run/rejudge.hpp"
#include "run/resume.hpp"
#include "run/run_plan.hpp"
#include "write/csv.hpp"
#include "write/output_lock.hpp"
#include "write/report_writer.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

namespace attnbench {

namespace {

struct MergeArgs {
  std::vector<std::string> files;  // the shards' main CSVs
  std::string output;
  std::string config;  // the sweep's config: names every missing (point, backend)
  bool force = false;
};

// The sweep the reports measured: every (point, backend, repetition) of it, and its predictions.
struct SweepOfReports {
  std::vector<RecordKey> measurements;
  Expectations expect;
};

// What the reports hold: their points and backends, and as many repetitions as any has (run
// --repetitions is not in the fingerprint).
struct Seen {
  std::set<std::string> points, backends;
  int repetitions = 1;
};

Seen seen_in(const std::vector<CsvTable>& reports) {
  Seen seen;
  for (const CsvTable& t : reports)
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const auto [point, backend, repetition] = record_key(t, r);
      seen.points.insert(point);
      seen.backends.insert(backend);
      seen.repetitions = std::max(seen.repetitions, repetition + 1);
    }
  return seen;
}

// Every (point, backend, repetition) of `points` x `backends` x the repetitions seen.
std::vector<RecordKey> measurements(const std::vector<std::string>& points,
                                    const std::vector<std::string>& backends, int repetitions) {
  std::vector<RecordKey> out;
  for (int rep = 0; rep < repetitions; ++rep)
    for (const auto& p : points)
      for (const auto& b : backends) out.emplace_back(p, b, rep);
  return out;
}

// The sweep whose fingerprint the reports carry; nullopt when `config_path` is not that sweep (or
// cannot be read, and was not asked for by name).
std::optional<SweepOfReports> sweep_of_reports(const std::string& config_path, bool named,
                                               const std::vector<CsvTable>& reports,
                                               const Seen& seen) {
  const std::string fingerprint = reports.front().at(0, "config_fingerprint");
  Sweep sweep;
  try {
    sweep = load_sweep(config_path);
  } catch (const InputError&) {
    if (named) throw;
    return std::nullopt;
  }
  const SweepConfig& config = sweep.config;
  // The config's backends; a config that names none ran every plugin found: those any report has.
  std::vector<std::string> backends = config.backend_names();
  if (backends.empty()) backends.assign(seen.backends.begin(), seen.backends.end());
  for (bool cuda : {true, false}) {  // device "auto" depends on the machine that ran it
    const std::vector<Point> points = expand_sweep(config, cuda);
    if (config_fingerprint(config, points) != fingerprint) continue;
    std::vector<std::string> ids;
    for (const Point& p : points) ids.push_back(p.id);
    return SweepOfReports{measurements(ids, backends, seen.repetitions), sweep.expect};
  }
  if (named)
    throw InputError("merge: " + config_path +
                     " is not the sweep these reports measured (their "
                     "config fingerprint is " +
                     fingerprint + "; were the shards run with other --passes or --timing-modes?)");
  return std::nullopt;
}

// The sweep's config as the rows name it (relative to where the run was started): from here, else
// from a folder above the first report (a repository's results/ beside its configs/), so that a
// merge run from elsewhere still finds it.
std::string found_config(const std::string& named, const std::string& report) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::path(named).is_absolute() || fs::exists(named, ec)) return named;
  for (fs::path dir = fs::absolute(report, ec).parent_path(); !dir.empty();
       dir = dir.parent_path()) {
    if (fs::exists(dir / named, ec)) return (dir / named).string();
    if (dir == dir.root_path()) break;
  }
  return named;
}

// 0 when the merged report is complete; 1 when it has gaps (still written); 2 bad input.
int cmd_merge(const MergeArgs& args) {
  const OutputLock lock(args.output);
  if (!args.force)  // the report and its side files are one unit
    for (const std::string& file :
         {args.output, sibling(args.output, side::kernels), sibling(args.output, side::samples)})
      if (std::filesystem::exists(file))
        throw InputError(file + " exists: --force overwrites the report and its side files");
  std::vector<MergeInput> inputs;
  for (const auto& file : args.files) {
    if (!std::filesystem::exists(file)) throw InputError(file + ": cannot read the report");
    inputs.push_back({file, read_report_texts(file)});
  }
  std::vector<CsvTable> reports;
  for (const MergeInput& in : inputs)
    reports.push_back(parse_csv(complete_records(in.texts.rows), in.path));
  std::optional<SweepOfReports> sweep;
  const CsvTable& first = reports.front();
  const bool has_rows = !first.rows.empty() && first.column("config_fingerprint") >= 0;
  const Seen seen = has_rows ? seen_in(reports) : Seen{};
  if (!args.config.empty() && has_rows)
    sweep = sweep_of_reports(args.config, true, reports, seen);
  else if (has_rows && first.column("config") >= 0)
    sweep = sweep_of_reports(found_config(first.at(0, "config"), first.path), false, reports, seen);

  // Without the sweep: every point any report has with every backend any report has (a sweep
  // measures each point with each backend), so a torn shard's lost row is still named unless it
  // took a point's or a backend's last row with it.
  std::optional<std::vector<RecordKey>> expected;
  if (sweep)
    expected = sweep->measurements;
  else if (has_rows)
    expected = measurements({seen.points.begin(), seen.points.end()},
                            {seen.backends.begin(), seen.backends.end()}, seen.repetitions);
  Merged merged = merge_reports(inputs, expected);
  // A shard judged a relation without the rows other shards measured: judged again, whole.
  if (sweep) merged.texts.rows = rejudged_report(merged.texts.rows, args.output, sweep->expect);
  write_report_texts(args.output, merged.texts);
  // Traces (run --trace) are one file per measurement: the shards' go into one folder.
  size_t traces = 0;
  for (const auto& file : args.files) {
    const std::filesystem::path from(sibling(file, side::traces));
    if (!std::filesystem::is_directory(from)) continue;
    const std::filesystem::path to(sibling(args.output, side::traces));
    std::filesystem::create_directories(to);
    for (const auto& entry : std::filesystem::directory_iterator(from)) {
      std::filesystem::copy_file(entry.path(), to / entry.path().filename(),
                                 std::filesystem::copy_options::overwrite_existing);
      ++traces;
    }
  }
  if (traces > 0)
    std::cerr << "attnbench: " << traces << " trace(s) into " << sibling(args.output, side::traces)
              << '\n';
  std::cerr << "attnbench: merged " << inputs.size() << " report(s), " << merged.measurements
            << " measurement(s), into " << args.output << '\n';
  if (!sweep)
    std::cerr << "attnbench: the sweep's config was not found (--config names it): gaps are "
                 "looked for among the points and backends the reports have\n";
  if (merged.gaps.empty()) return 0;
  std::cerr << "attnbench: " << merged.gaps.size() << " gap(s):\n";
  for (const auto& gap : merged.gaps) std::cerr << "  " << gap << '\n';
  return 1;
}

}  // namespace

Subcommand add_merge(CLI::App& app) {
  auto a = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand(
      "merge", "Join shard reports (run --shard K/N) into one: main, kernel and sample CSVs");
  cmd->add_option("reports", a->files, "The shards' reports (CSV)")->required();
  cmd->add_option("-o,--output", a->output, "The merged report (CSV)")->required();
  cmd->add_option("--config", a->config,
                  "The sweep's config, to name every missing (point, backend) (default: the "
                  "one the rows name, if it is there)");
  cmd->add_flag("--force", a->force, "Overwrite an existing output");
  return {cmd, [a] { return cmd_merge(*a); }};
}

}  // namespace attnbench
