"""What tools/model_table.py, tools/who_wins.py, tools/harness_profile.py and
tools/triton_served_gpu_check.py do
with inputs they cannot use, and examples/python-backends/triton_served.py's gate under Triton's
interpreter. Every input is made here, in a temporary folder:

- a report that is a folder, a binary, not UTF-8, missing, empty, without schema_version (an older
  or another tool's), of a newer schema (said) or of schema 0, with a short row or a repeated key:
  exit 2, one line naming the file (and line), no traceback; a report with a UTF-8 BOM or blank
  lines reads as without, one point in two timing modes as two rows;
- model_table.py: a --reruns folder that is missing, a file, or holds no rerun; a rerun of another
  sweep (config_fingerprint), config (also one the report holds at another point) or card refused, --across-sweeps letting only the first in
  and saying so, a rerun adding points said on stderr; repetitions taken as medians (winner,
  ratio, cells and rates from the same medians; a repetition not ok leaves the pair unranked); a
  decode written as a mix labelled decode, a histogram named with '+' not mixed; a report with no
  rows, none in the mode (exit 2) or none ok (exit 1); NaN, negative or malformed cells located;
- who_wins.py: read as model_table.py reads (repetitions as medians, phases from the lengths,
  located cells, no rows exit 2, none ok exit 1), host time a median over ok rows only;
- harness_profile.py: NaN, infinite, negative or malformed seconds refused at their line (exit 2,
  nothing summed), a report of schema 18 (no pass_seconds) refused naming its schema, a header only
  exit 1, passes of 0 seconds summed without dividing by 0;
- triton_served_gpu_check.py: OUT.csv a folder, in a missing folder, an attnbench report or a
  binary refused before anything runs (and not overwritten); its CPU smoke run writes OUT.csv and
  overwrites its own; without CUDA or the interpreter it says so (exit 2);
- tools/report_reader.py's newest schema is core/src/write/schema.hpp's kCsvSchemaVersion;
- triton_served.supports: bf16 refused under TRITON_INTERPRET=1 (the interpreter computes it with
  a relative error ~1e9), fp16 taken there, bf16 taken on CUDA without the interpreter.

    python3 tests/tools_abuse_test.py [TOOLS_DIR [EXAMPLES_DIR]]

Exits 1 naming each failure, 0 when all hold; about 25 seconds (the smoke runs and the supports
part are skipped without Triton).
"""
import csv
import os
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "..", "tools")
EXAMPLES = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else \
    os.path.join(HERE, "..", "examples", "python-backends")
failures = []

COLUMNS = ["schema_version", "point_id", "backend", "batch", "heads", "kv_heads", "seq_len",
           "seq_len_kv", "head_dim", "dtype", "direction", "seq_lens", "seq_lens_kv", "timing_mode",
           "repetition", "status", "reason", "time_ms_median", "tflops", "pct_of_peak", "bound",
           "pass_seconds", "device_name", "config", "config_fingerprint"]


def row(point="p", backend="a", ms="1", **changed):
    """An ok one-query decode row of a report of schema 21, graph mode."""
    r = {"schema_version": "21", "point_id": point, "backend": backend, "batch": "4",
         "heads": "8", "kv_heads": "1", "seq_len": "1", "seq_len_kv": "8192", "head_dim": "128",
         "dtype": "bf16", "direction": "fwd", "seq_lens": "", "seq_lens_kv": "",
         "timing_mode": "graph", "repetition": "0", "status": "ok", "reason": "",
         "time_ms_median": ms, "tflops": "", "pct_of_peak": "", "bound": "",
         "pass_seconds": "first call=0.5;correctness=0.25", "device_name": "GPU X",
         "config": "configs/models/m.yaml", "config_fingerprint": "f00d"}
    r.update(changed)
    return r


def write(path, rows, columns=None, bom=False):
    columns = columns or (list(rows[0]) if rows else COLUMNS)
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return path


def run(tool, *args):
    p = subprocess.run([sys.executable, os.path.join(TOOLS, tool), *args], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def expect(what, result, code, *in_stderr, stdout_has=(), stdout_lacks=()):
    rc, out, err = result
    problems = []
    if rc != code:
        problems.append(f"exit {rc}, want {code}")
    if "Traceback" in err:
        problems.append("a traceback")
    for text in in_stderr:
        if text not in err:
            problems.append(f"stderr lacks {text!r}")
    for text in stdout_has:
        if text not in out:
            problems.append(f"stdout lacks {text!r}")
    for text in stdout_lacks:
        if text in out:
            problems.append(f"stdout has {text!r}")
    if problems:
        failures.append(f"{what}: " + "; ".join(problems) + f"\n  stderr: {err.strip()[-600:]}"
                        f"\n  stdout: {out.strip()[-600:]}")
    return out, err


sys.path.insert(0, TOOLS)
from report_reader import SCHEMA_VERSION as NEWEST  # noqa: E402  (section 5 checks it is the binary's)

with tempfile.TemporaryDirectory() as d:
    def at(*parts):
        return os.path.join(d, *parts)

    # ---- 1. Reading a report, the same in both readers.
    os.mkdir(at("folder.csv"))
    with open(at("binary.csv"), "wb") as f:
        f.write(b"schema_version,point_id\n\x00\x01\x02\xff")
    with open(at("latin1.csv"), "wb") as f:
        f.write("schema_version,point_id,backend,timing_mode,status\n21,caf\xe9,a,graph,ok\n".encode("latin-1"))
    open(at("empty.csv"), "w").close()
    write(at("old-tool.csv"), [{k: v for k, v in row().items() if k != "schema_version"}])
    write(at("newer.csv"), [row(), row(backend="b", schema_version=str(NEWEST + 1))])
    write(at("short.csv"), [row()])
    with open(at("short.csv"), "a") as f:
        f.write("21,p,b,4\n")
    write(at("twice.csv"), [row(), row(ms="2")])
    write(at("good.csv"), [row(), row(backend="b", ms="2")])
    write(at("bom.csv"), [row(), row(backend="b", ms="2")], bom=True)
    write(at("zero.csv"), [row(), row(backend="b", schema_version="0")])
    # blank lines between and after the rows, as csv.cpp skips them (a lone "" is one)
    with open(at("good.csv")) as f:
        lines = f.read().splitlines()
    with open(at("blank.csv"), "w") as f:
        f.write("\n".join([lines[0], lines[1], "", '""', lines[2], "", ""]) + "\n")
    # the same point, backend and repetition in two timing modes: two rows, not one twice
    write(at("modes.csv"), [row(), row(backend="b", ms="2"), row(timing_mode="cold", ms="3")])
    for tool, extra in (("model_table.py", ()), ("harness_profile.py", ()),
                        ("who_wins.py", ("--mode", "graph"))):
        for name, code, words in [
                ("folder.csv", 2, ["folder.csv: a folder, not a report"]),
                ("binary.csv", 2, ["binary.csv: a binary file"]),
                ("latin1.csv", 2, ["latin1.csv:2: not UTF-8"]),
                ("missing.csv", 2, ["missing.csv: no such file"]),
                ("empty.csv", 2, ["empty.csv: empty, expected a header line"]),
                ("old-tool.csv", 2, ["old-tool.csv: no schema_version column", "another tool"]),
                ("newer.csv", 2, [f"newer.csv:3: schema version '{NEWEST + 1}', this tool reads versions 1 to {NEWEST}",
                                  "(written by a newer attnbench)"]),
                ("zero.csv", 2, [f"zero.csv:3: schema version '0', this tool reads versions 1 to {NEWEST}"]),
                ("short.csv", 2, ["short.csv:3: row has 4 fields, the header has"]),
                ("twice.csv", 2, ["twice.csv:3: the same point, backend, timing mode and repetition as line 2"])]:
            expect(f"{tool} {name}", run(tool, at(name), *extra), code, *words)
        expect(f"{tool} a report with a BOM", run(tool, at("bom.csv"), *extra), 0)
        good, bom = run(tool, at("good.csv"), *extra), run(tool, at("bom.csv"), *extra)
        if good[1].replace("good", "bom") != bom[1]:
            failures.append(f"{tool}: a BOM changes what it prints:\n{good[1]}\n{bom[1]}")
        blank = run(tool, at("blank.csv"), *extra)
        expect(f"{tool} blank lines", blank, 0)
        if good[1].replace("good", "blank") != blank[1]:
            failures.append(f"{tool}: blank lines change what it prints:\n{good[1]}\n{blank[1]}")
        expect(f"{tool} one point in two timing modes", run(tool, at("modes.csv"), *extra), 0)
        if "newer" in run(tool, at("zero.csv"), *extra)[2]:
            failures.append(f"{tool}: schema version 0 called newer")

    # ---- 2. model_table.py
    def table(*args):
        return run("model_table.py", *args)

    os.mkdir(at("re"))
    write(at("m.csv"), [row("p", "a", "2"), row("p", "b", "3"), row("q", "a", "4"), row("q", "b", "5")])
    expect("--reruns: no such folder", table(at("m.csv"), "--reruns", at("nowhere")), 2,
           f"--reruns {at('nowhere')}: no such folder")
    expect("--reruns: a file", table(at("m.csv"), "--reruns", at("good.csv")), 2, "not a folder")
    expect("--reruns: no rerun of the reports in it", table(at("m.csv"), "--reruns", at("re")), 2,
           f"--reruns {at('re')}: no rerun of the reports given")
    # the same sweep: stands in
    write(at("re", "m.b.csv"), [row("p", "b", "1")])
    expect("a rerun of the same sweep", table(at("m.csv"), "--reruns", at("re")), 0,
           stdout_has=["| **b** | 1 |"])
    # another sweep at a point the report has: refused, named; --across-sweeps lets it in, said
    os.mkdir(at("other"))
    write(at("other", "m.b.csv"), [row("p", "b", "1", config_fingerprint="beef")])
    expect("a rerun of another sweep", table(at("m.csv"), "--reruns", at("other")), 2,
           f"{at('other', 'm.b.csv')}:2: a rerun of another sweep: config_fingerprint 'beef' at p",
           "has 'f00d'", "--across-sweeps")
    expect("a rerun of another sweep, --across-sweeps",
           table(at("m.csv"), "--reruns", at("other"), "--across-sweeps"), 0,
           stdout_has=["Rows of another sweep stand in", "config_fingerprint beef", "| **b** | 1 |"])
    # another config or card: refused, --across-sweeps or not
    os.mkdir(at("preset"))
    write(at("preset", "m.b.csv"), [row("p", "b", "1", config="configs/models/other.yaml")])
    expect("a rerun of another config", table(at("m.csv"), "--reruns", at("preset"), "--across-sweeps"),
           2, f"{at('preset', 'm.b.csv')}:2: a rerun of another config")
    os.mkdir(at("card"))
    write(at("card", "m.b.csv"), [row("p", "b", "1", device_name="GPU Y")])
    expect("a rerun on another card", table(at("m.csv"), "--reruns", at("card"), "--across-sweeps"),
           2, f"{at('card', 'm.b.csv')}:2: a rerun of another card")
    # the rerun's config is one the report holds, but at another point: refused at this one
    write(at("two-configs.csv"), [row("p", "a", "2"), row("p", "b", "3"),
                                  row("q", "a", "4", config="configs/models/other.yaml")])
    os.mkdir(at("swap"))
    write(at("swap", "two-configs.b.csv"), [row("p", "b", "1", config="configs/models/other.yaml")])
    expect("a rerun of the config of another point", table(at("two-configs.csv"), "--reruns", at("swap")),
           2, f"{at('swap', 'two-configs.b.csv')}:2: a rerun of another config", "at p")
    # one repetition each: nothing said of medians; every table line as many cells as the header
    out, _ = expect("one repetition", table(at("m.csv")), 0,
                    stdout_lacks=["median over the (point, backend)'s repetitions"])
    widths = {line.count("|") for line in out.splitlines() if line.startswith("|")}
    if len(widths) != 1:
        failures.append(f"model_table: table lines of {sorted(widths)} '|'s, not one width:\n{out}")
    # the same config run from elsewhere (an absolute path) is the same config
    os.mkdir(at("abs"))
    write(at("abs", "m.b.csv"), [row("p", "b", "1", config="/home/x/attnbench/configs/models/m.yaml")])
    expect("a rerun naming the config by its absolute path", table(at("m.csv"), "--reruns", at("abs")), 0)
    # another sweep measuring only points the report lacks: added, said
    os.mkdir(at("adds"))
    write(at("adds", "m.b.csv"), [row("r", "b", "7", config_fingerprint="beef", seq_len_kv="4096")])
    expect("a rerun of another sweep adding a point", table(at("m.csv"), "--reruns", at("adds")), 0,
           "adds 1 point(s) the report lacks (another sweep: config_fingerprint beef): r",
           stdout_has=["| decode b4, 4096 | **b** | 7 |"])
    # adding two points, one of the report's sweep and one of another: the other sweep said
    os.mkdir(at("adds2"))
    write(at("adds2", "m.b.csv"), [row("r", "b", "7", seq_len_kv="4096"),
                                   row("s", "b", "8", config_fingerprint="beef", seq_len_kv="2048")])
    expect("a rerun adding a point of the sweep and one of another", table(at("m.csv"), "--reruns", at("adds2")),
           0, "adds 2 point(s) the report lacks (another sweep: config_fingerprint beef, f00d)")
    # ... and one that both replaces and adds: refused, saying what it would add
    os.mkdir(at("both"))
    write(at("both", "m.b.csv"), [row("p", "b", "1", config_fingerprint="beef"),
                                  row("r", "b", "7", config_fingerprint="beef")])
    expect("a rerun of another sweep, replacing and adding", table(at("m.csv"), "--reruns", at("both")),
           2, "a rerun of another sweep", "it would add 1 point(s) the report lacks: r")
    # A rerun without rows in the mode: nothing stands in, said.
    os.mkdir(at("cold"))
    write(at("cold", "m.b.csv"), [row("p", "b", "1", timing_mode="cold")])
    expect("a rerun without rows in the mode", table(at("m.csv"), "--reruns", at("cold")), 0,
           "no rows in this timing mode: nothing of it stands in", stdout_has=["| **a** | 2 |"])

    # Repetitions: a's times 1, 10, 2 (median 2; TFLOP/s 100 at 1 ms: 50 at the median), b's 3, 3,
    # 3: a wins at 2, b 1.50x; one ok row each in the summary. c is ok in one of its two
    # repetitions: not ranked, said.
    reps = [row("p", "a", t, repetition=str(i), tflops=str(100 / float(t)), pct_of_peak=str(10 / float(t)))
            for i, t in enumerate(["1", "10", "2"])]
    reps += [row("p", "b", "3", repetition=str(i)) for i in range(3)]
    reps += [row("p", "c", "0.5", repetition="0"),
             row("p", "c", "", repetition="1", status="crashed", reason="signal 11")]
    write(at("reps.csv"), reps)
    out, _ = expect("repetitions", table(at("reps.csv")), 0,
                    stdout_has=["| **a** | 2 | 5% of peak (50 TFLOP/s) | b (1.50x) | 2 | 3 | crashed |",
                                "median over the (point, backend)'s repetitions (2 to 3)",
                                "- c (crashed): repetition 1 of 2 (ok in 1): signal 11"])
    expect("repetitions in the summary", table(at("reps.csv"), "--summary"), 0,
           stdout_has=["| reps: decode, 1 query | 1 | a 1/1, b 0/1 |"])

    # A crashed or error row that carries a time (a hand-edited report) is never ranked.
    write(at("crashed-timed.csv"), [row("p", "a", "0.5", status="crashed", reason="signal 11"),
                                    row("p", "b", "0.7", status="error", reason="raised"),
                                    row("p", "c", "3")])
    expect("a crashed row with a time", table(at("crashed-timed.csv")), 0,
           stdout_has=["| **c** | 3 |"])

    # Phases from the lengths as the queries are.
    write(at("phases.csv"), [
        row("mixdecode", "a", "1", seq_lens="4*1", seq_lens_kv="4*8192"),
        row("hist", "a", "1", seq_len="300", seq_len_kv="300", seq_lens="histogram(x/a+b.csv)"),
        row("mixed", "a", "1", seq_len="2048", seq_len_kv="2048", batch="34",
            seq_lens="2*2048 + 32*1", seq_lens_kv="2*2048 + 32*1024")])
    expect("phases", table(at("phases.csv")), 0,
           stdout_has=["| decode b4, 4*8192 | **a**", "| prefill b4, histogram a+b | **a**",
                       "| mixed b34, 2*2048 + 32*1 over 2*2048 + 32*1024 | **a**"],
           stdout_lacks=["prefill b4, 4*1", "mixed b4, histogram"])
    expect("phases in the summary", table(at("phases.csv"), "--summary"), 0,
           stdout_has=["| phases: decode, 1 query | 1 |", "| phases: prefill | 1 |", "| phases: mixed | 1 |"])
    write(at("badspec.csv"), [row(seq_lens="3*uniform(1)", seq_lens_kv="8192")])
    expect("a length spec that is none", table(at("badspec.csv")), 2,
           f"{at('badspec.csv')}:2: '3*uniform(1)' is no length spec")

    # Nothing to show.
    write(at("header-only.csv"), [], columns=COLUMNS)
    expect("a report with no rows", table(at("header-only.csv")), 2,
           f"{at('header-only.csv')}: no rows")
    expect("a report with no rows, --summary", table(at("header-only.csv"), "--summary"), 2, "no rows")
    write(at("cold-only.csv"), [row(timing_mode="cold")])
    expect("a report with no rows in the mode", table(at("cold-only.csv")), 2,
           "no rows in graph mode (its modes: cold")
    write(at("none-ok.csv"), [row(status="unsupported", ms="", reason="no"),
                              row(backend="b", status="crashed", ms="", reason="signal 6")])
    expect("a report with no ok row", table(at("none-ok.csv")), 1,
           f"{at('none-ok.csv')}: no ok row in graph mode: nothing ranked",
           stdout_has=["| none |", "- b (crashed): signal 6"])
    expect("a report with no ok row, --summary", table(at("none-ok.csv"), "--summary"), 1,
           "no ok row", stdout_has=["none ok"])
    expect("one report with ok rows and one without", table(at("good.csv"), at("none-ok.csv")), 1,
           "none-ok.csv: no ok row", stdout_has=["| **a** | 1 |"])

    # Cells that are no measurement.
    for name, changed, words in [("nan", {"ms": "nan"}, "column 'time_ms_median' holds 'nan'"),
                                 ("negative", {"ms": "-1"}, "column 'time_ms_median' holds '-1', not a positive finite number"),
                                 ("zero", {"ms": "0"}, "column 'time_ms_median' holds '0'"),
                                 ("text", {"ms": "fast"}, "column 'time_ms_median' holds 'fast', not a number"),
                                 ("inf-rate", {"tflops": "inf"}, "column 'tflops' holds 'inf'"),
                                 ("batch", {"batch": "four"}, "column 'batch' holds 'four'"),
                                 ("repetition", {"repetition": "x"}, "column 'repetition' holds 'x'")]:
        write(at(f"{name}.csv"), [row("p", "b", "2"), row("p", "a", **changed) if "ms" not in changed
                                  else row("p", "a", changed["ms"])])
        expect(f"a {name} cell", table(at(f"{name}.csv")), 2, f"{at(name + '.csv')}:3: {words}")
    expect("an unknown --mode", table(at("good.csv"), "--mode", "fast"), 2, "invalid choice")
    # A kernels file named as the report.
    write(at("k.kernels.csv"), [{"schema_version": "21", "point_id": "p", "backend": "a", "name": "k"}])
    expect("a kernels file", table(at("k.kernels.csv")), 2,
           "no column 'timing_mode': not a main attnbench report (a .kernels.csv")

    # ---- 2b. who_wins.py reads as model_table.py does: repetitions as medians, phases from the
    # lengths, cells that are no measurement located, nothing to show not exit 0.
    def wins(*args):
        return run("who_wins.py", "--mode", "graph", *args)

    expect("who_wins: repetitions", wins(at("reps.csv")), 0,
           stdout_has=["| decode | 1 | a 1 |", "| p | **a** | 2 | 50 | b |"])
    expect("who_wins: phases", wins(at("phases.csv")), 0,
           stdout_has=["| decode | 1 | a 1 |", "| prefill bf16 | 1 | a 1 |", "| mixed | 1 | a 1 |"])
    expect("who_wins: a report with no rows", wins(at("header-only.csv")), 2,
           f"{at('header-only.csv')}: no rows")
    expect("who_wins: a report with no rows in the mode", wins(at("cold-only.csv")), 2,
           "no rows in graph mode (its modes: cold")
    expect("who_wins: a report with no ok row", wins(at("none-ok.csv")), 1,
           f"{at('none-ok.csv')}: no ok row in graph mode: nothing ranked", stdout_has=["| none |"])
    for name, words in [("nan", "column 'time_ms_median' holds 'nan'"),
                        ("inf-rate", "column 'tflops' holds 'inf'"),
                        ("repetition", "column 'repetition' holds 'x'")]:
        expect(f"who_wins: a {name} cell", wins(at(f"{name}.csv")), 2, f"{at(name + '.csv')}:3: {words}")
    # Host time per call: the median over the ok rows of each backend's points, a crashed row's
    # number left out.
    write(at("host.csv"), [row("p", "a", "1", cpu_us_median="10"), row("q", "a", "1", cpu_us_median="30"),
                           row("r", "a", "1", cpu_us_median="20"),
                           row("s", "a", "1", cpu_us_median="900", status="crashed", reason="signal 11")])
    expect("who_wins: host time", wins(at("host.csv")), 0, stdout_has=["| a | decode | 20.0 | 10.0-30.0 |"])
    expect("who_wins: an unknown --mode", run("who_wins.py", at("good.csv"), "--mode", "fast"), 2,
           "invalid choice")

    # ---- 3. harness_profile.py
    def profile(*args):
        return run("harness_profile.py", *args)

    expect("harness_profile: a good report", profile(at("good.csv"), "--wall", "3"), 0,
           stdout_has=["2 (point, backend)s, 1.50 s in passes", "first call", "outside passes"])
    for name, cell, words in [("nan", "first call=nan", "pass 'first call' took nan seconds"),
                              ("inf", "first call=0.1;cold=inf", "pass 'cold' took inf seconds"),
                              ("negative", "first call=-0.5", "pass 'first call' took -0.5 seconds"),
                              ("text", "first call=soon", "pass 'first call' took 'soon' seconds: not a number"),
                              ("no-name", "0.5", "pass_seconds part '0.5' is not NAME=SECONDS")]:
        write(at(f"hp-{name}.csv"), [row(), row(backend="b", pass_seconds=cell)])
        out, _ = expect(f"harness_profile: {name} seconds", profile(at(f"hp-{name}.csv")), 2,
                        f"{at('hp-' + name + '.csv')}:3: {words}")
        if "in passes" in out:
            failures.append(f"harness_profile: {name} seconds: summed anyway:\n{out}")
    write(at("hp-18.csv"), [row(schema_version="18")],
          columns=[c for c in COLUMNS if c != "pass_seconds"])
    expect("harness_profile: a report of schema 18", profile(at("hp-18.csv")), 2,
           f"{at('hp-18.csv')}: no column 'pass_seconds' (schema 18; schema 20 and later have it)")
    expect("harness_profile: a header only", profile(at("header-only.csv")), 1,
           "no (point, backend) with pass_seconds (no rows")
    write(at("hp-zero.csv"), [row(pass_seconds="first call=0;cold=0")])
    expect("harness_profile: passes of 0 seconds", profile(at("hp-zero.csv")), 0,
           stdout_has=["0.00 s in passes"])
    expect("harness_profile: --wall nan", profile(at("good.csv"), "--wall", "nan"), 2, "--wall")
    out, _ = expect("harness_profile: --wall -5", profile(at("good.csv"), "--wall", "-5"), 2, "--wall")
    if out:
        failures.append(f"harness_profile: --wall -5 printed a profile:\n{out}")
    expect("harness_profile: --wall 0", profile(at("good.csv"), "--wall", "0"), 0)

    # ---- 4. triton_served_gpu_check.py: OUT.csv checked before anything runs.
    report = write(at("a-report.csv"), [row()])
    before = {p: open(p, "rb").read() for p in (report, at("binary.csv"))}
    for out_path, words in [(at("folder.csv"), "folder.csv: a folder, not a file to write"),
                            (at("nowhere", "x.csv"), "no folder"),
                            (report, "a-report.csv: an attnbench report"),
                            (at("binary.csv"), "binary.csv: a binary file")]:
        expect(f"triton_served_gpu_check {out_path}", run("triton_served_gpu_check.py", out_path), 2,
               words)
    for p, data in before.items():
        if open(p, "rb").read() != data:
            failures.append(f"triton_served_gpu_check overwrote {p}")
    expect("triton_served_gpu_check: two arguments", run("triton_served_gpu_check.py", "a", "b"), 2,
           "usage")
    # Its CPU smoke run (TRITON_INTERPRET=1) writes OUT.csv, and a second run overwrites its own
    # output; without it, and without CUDA, it says so.
    import importlib.util  # noqa: E402

    def gpu_check(out_path, **env):
        p = subprocess.run([sys.executable, os.path.join(TOOLS, "triton_served_gpu_check.py"), out_path],
                           capture_output=True, text=True, timeout=600, env={**os.environ, **env})
        return p.returncode, p.stdout, p.stderr
    if importlib.util.find_spec("triton") and importlib.util.find_spec("torch"):
        smoke = at("smoke.csv")
        for attempt in ("writes", "overwrites its own output"):
            expect(f"triton_served_gpu_check: the smoke run {attempt}", gpu_check(smoke, TRITON_INTERPRET="1"), 0)
            lines = open(smoke).read().splitlines() if os.path.exists(smoke) else []
            if lines[:2] != ["# cpu smoke", "case,max_row_rel_err,ms,GB_per_s"] or len(lines) < 3:
                failures.append(f"triton_served_gpu_check: the smoke run {attempt}: {lines[:3]}")
        import torch  # noqa: E402
        if not torch.cuda.is_available():
            env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
            p = subprocess.run([sys.executable, os.path.join(TOOLS, "triton_served_gpu_check.py")],
                               capture_output=True, text=True, timeout=600, env=env)
            expect("triton_served_gpu_check: no CUDA", (p.returncode, p.stdout, p.stderr), 2,
                   "no CUDA device")

# ---- 5. The schema the readers take is the binary's (core/src/write/schema.hpp), bumped with it.
schema_hpp = os.path.join(HERE, "..", "core", "src", "write", "schema.hpp")
if os.path.exists(schema_hpp):
    import re  # noqa: E402
    sys.path.insert(0, TOOLS)
    import report_reader  # noqa: E402
    binary = re.search(r"kCsvSchemaVersion = (\d+);", open(schema_hpp).read())
    if not binary or int(binary.group(1)) != report_reader.SCHEMA_VERSION:
        failures.append(f"tools/report_reader.py reads schema versions to {report_reader.SCHEMA_VERSION}, "
                        f"core/src/write/schema.hpp writes {binary and binary.group(1)}")

# ---- 6. triton_served.supports: bf16 refused under the interpreter, the GPU's gate unchanged.
try:
    import torch  # noqa: F401
    import triton  # noqa: F401
except ImportError:
    print("no torch or triton: triton_served.supports not checked")
else:
    sys.path.insert(0, EXAMPLES)
    import triton_served  # noqa: E402
    base = dict(device="cuda", direction="fwd", dtype_name="bf16", head_dim=128, head_dim_v=0)
    was = os.environ.get("TRITON_INTERPRET")

    def gate(interpret, **changed):
        os.environ["TRITON_INTERPRET"] = interpret
        return triton_served.supports(types.SimpleNamespace(**{**base, **changed}))

    for interpret, changed, want in [("1", {"device": "cpu"}, "interpreter"),
                                     ("1", {}, "interpreter"),  # it runs CUDA tensors on the host
                                     ("1", {"device": "cpu", "dtype_name": "fp16"}, True),
                                     ("0", {}, True), ("0", {"dtype_name": "fp16"}, True),
                                     ("0", {"device": "cpu"}, "CUDA points only")]:
        got = gate(interpret, **changed)
        if got is not True if want is True else not (isinstance(got, str) and want in got):
            failures.append(f"triton_served.supports with TRITON_INTERPRET={interpret} {changed}: "
                            f"{got!r}, want {want!r}")
    if was is None:
        os.environ.pop("TRITON_INTERPRET")
    else:
        os.environ["TRITON_INTERPRET"] = was

print("\n".join(failures) or "ok")
sys.exit(1 if failures else 0)
