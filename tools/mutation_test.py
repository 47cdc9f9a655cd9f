#!/usr/bin/env python3
"""Measures how many wrong programs the test suite catches (mutation testing).

universalmutator (PyPI) writes mutants of C++ and Python sources by rule: an operator flipped, a
constant changed, a line deleted. Each sampled C++ mutant replaces its source in a configured build,
the test binaries (--target) are rebuilt and the --test commands run; a Python mutant (tools/,
examples/, the harness) replaces its file and the --py-test commands run from the tree's root. A
mutant is *killed* when it builds (compiles, for Python) and a test fails (or hangs), *survives*
when they pass, and is *stillborn* when it does not build (not counted). The report lists every survivor; those judged
equivalent (no test could tell them apart from the original) are named in --equivalent with why.

Slow (about 10 s a mutant on 2 cores) and not part of CI:

    tools/mutation_test.py --build build                 # 120 mutants, report in results/mutation/
    tools/mutation_test.py --build build --sample 20 --report /tmp/m.md
    # the lines a change touched (C++ under core/ and plugins/), tested by several binaries:
    tools/mutation_test.py --build build --since c5a5b53 --sample 40 \
        --target core_tests cli_tests attnbench \
        --test core_tests "cli_tests --gtest_filter=*BadSweep*:Cli.*:-Cli.*Python*"

With --since REF the sources are the files changed since REF (git diff REF, the working tree
included): C++ under core/ and plugins/, Python under tools/, examples/, core/ and plugins/ (tests
and this tool left out), and only mutants of the lines the change added or edited are drawn; the
report names the range. Python mutants cost seconds (no build); C++ ones a rebuild each, so a
typical issue's --sample 40 of C++ and its Python lines fit well under an hour on 2 cores. Each --test is a binary under --build with its arguments; a mutant is killed when any fails.

Needs `mutate` from universalmutator: --mutate PATH, or it is installed into a venv under
~/.cache/attnbench-mutation (pip with --target breaks it: its `typing` backport shadows Python's).
"""
import argparse
import ast
import collections
import difflib
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_SOURCES = ["core/src/config/config.cpp", "core/src/config/settings.cpp", "core/src/config/yaml_reader.cpp",
                   "core/src/config/sweep.cpp", "core/src/base/stats.cpp", "core/src/write/csv.cpp",
                   "core/src/write/schema.cpp", "core/src/analysis/compare.cpp"]


def find_mutate(explicit):
    if explicit:
        return explicit
    if shutil.which("mutate"):
        return shutil.which("mutate")
    venv = Path.home() / ".cache" / "attnbench-mutation"
    exe = venv / "bin" / "mutate"
    if not exe.exists():
        print(f"installing universalmutator into {venv}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "universalmutator"], check=True)
    return str(exe)


def prose_lines(source, text):
    """Line numbers holding only prose: comments, and in Python docstrings. A mutant there changes
    no program, so none is drawn (universalmutator edits words inside them as if they were code)."""
    lines = text.splitlines()
    comment = "#" if source.suffix == ".py" else "//"
    out = {i + 1 for i, line in enumerate(lines) if line.strip().startswith(comment)}
    if source.suffix == ".py":
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):
                out.update(range(node.lineno, node.end_lineno + 1))
    return out


def generate(mutate, source, workdir):
    """All mutants of one source, as (mutant text, line number, original line, mutated line);
    none of a line that is only prose (prose_lines())."""
    out = Path(workdir) / hashlib.sha1(str(source).encode()).hexdigest()[:8]
    out.mkdir(parents=True, exist_ok=True)
    language = "python" if source.suffix == ".py" else "cpp"
    subprocess.run([mutate, str(source), language, "--noCheck", "--mutantDir", str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    original = source.read_text().splitlines(keepends=True)
    prose = prose_lines(source, "".join(original))
    mutants = []
    for path in sorted(out.iterdir(), key=lambda p: int(p.name.split(".mutant.")[1].split(".")[0])):
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        # The first change, described as the line it touches: replaced, deleted or inserted.
        op = next(o for o in difflib.SequenceMatcher(a=original, b=lines, autojunk=False).get_opcodes() if o[0] != "equal")
        tag, i1, i2, j1, j2 = op
        before = original[i1].strip() if i1 < len(original) and tag != "insert" else ""
        after = {"replace": lambda: lines[j1].strip(), "delete": lambda: "(line deleted)",
                 "insert": lambda: "(line inserted) " + lines[j1].strip()}[tag]()
        if i1 + 1 not in prose:
            mutants.append({"text": text, "line": i1 + 1, "before": before, "after": after})
    return mutants


def mutable(rel):
    """A source whose mutants a test can see: C++ under core/ and plugins/, Python under tools/,
    examples/, core/ and plugins/; never a test or this tool."""
    top = rel.split("/")[0]
    if rel.endswith(".cpp"):
        return top in ("core", "plugins")
    if rel.endswith(".py"):
        return top in ("tools", "examples", "core", "plugins") and rel != "tools/mutation_test.py"
    return False


def changed_lines(repo, since):
    """{relative source: the line numbers (in the working tree) that differ from `since`}, for the
    sources mutable() names."""
    diff = subprocess.run(["git", "-C", str(repo), "diff", "-U0", "--no-color", since, "--", "core",
                           "plugins", "tools", "examples"], capture_output=True, text=True, check=True).stdout
    out, rel = {}, None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            rel = name[2:] if name.startswith("b/") and mutable(name[2:]) else None
        elif line.startswith("@@") and rel:
            added = line.split(" ")[2]  # +START[,COUNT]
            start, _, count = added[1:].partition(",")
            n = int(count) if count else 1
            out.setdefault(rel, set()).update(range(int(start), int(start) + n))
    return {rel: lines for rel, lines in out.items() if lines and (repo / rel).exists()}


def mutant_id(rel, m):
    """Stable across runs of the same source: file, line and a hash of the mutated text."""
    return f"{rel}:{m['line']}:{hashlib.sha1(m['text'].encode()).hexdigest()[:10]}"


def shuffled(all_mutants, seed):
    """Every mutant of every file in one seeded random order: a file contributes in proportion to its count."""
    pool = [(rel, m) for rel, ms in all_mutants.items() for m in ms]
    random.Random(seed).shuffle(pool)
    return pool


def run(cmd, timeout, cwd=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, "timed out"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent), help="source tree (default: this one)")
    ap.add_argument("--build", required=True, help="a configured and built build folder of that tree")
    ap.add_argument("--sources", nargs="+", default=DEFAULT_SOURCES, help="sources to mutate, relative to --repo")
    ap.add_argument("--sample", type=int, default=120, help="mutants that compile to test (stillborn ones are drawn past)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--max-minutes", type=float, default=None,
                    help="draw no further mutant after this long; the report says where it stopped")
    ap.add_argument("--since", default=None,
                    help="mutate only the lines changed since this commit (C++ and Python: see mutable())")
    ap.add_argument("--target", nargs="+", default=["core_tests"], help="ninja targets that hold the tests")
    ap.add_argument("--test", nargs="+", default=["core_tests"],
                    help="test commands: a binary relative to --build and its arguments, quoted as one")
    ap.add_argument("--language", choices=["cpp", "python", "both"], default="both",
                    help="with --since: mutate only the changed C++, only the Python, or both")
    ap.add_argument("--py-test", nargs="+",
                    default=["python3 tests/tools_abuse_test.py tools examples/python-backends",
                             "python3 tests/model_table_test.py tools", "python3 tests/harness_kinds_test.py"],
                    help="commands run from the tree's root for a Python mutant, quoted as one each")
    ap.add_argument("--timeout", type=int, default=180, help="seconds a test run may take before it counts as a kill")
    ap.add_argument("--equivalent", default=None, help="file of 'mutant-id  reason' lines judged equivalent")
    ap.add_argument("--mutate", default=None, help="universalmutator's mutate executable")
    ap.add_argument("--report", default="results/mutation/report.md")
    ap.add_argument("--from-json", default=None,
                    help="rebuild the report from the .json a run left beside it (say, after judging survivors), without running")
    args = ap.parse_args()

    repo, build = Path(args.repo).resolve(), Path(args.build).resolve()
    tests = [[str(build / t.split()[0]), *t.split()[1:]] for t in args.test]
    lines_of = changed_lines(repo, args.since) if args.since else None
    if lines_of is not None:
        keep = {"cpp": (".cpp",), "python": (".py",), "both": (".cpp", ".py")}[args.language]
        lines_of = {rel: lines for rel, lines in lines_of.items() if rel.endswith(keep)}
        args.sources = sorted(lines_of)
        if not args.sources:
            sys.exit(f"no source a test can see (C++ or Python) changed since {args.since}")
    py_tests = [t.split() for t in args.py_test]

    def run_tests():
        """0 when every test command passes; else the first failure's code (None: it hung)."""
        for t in tests:
            code, log = run(t + ["--gtest_brief=1"], args.timeout, cwd=build)
            if code != 0:
                return code, log
        return 0, ""

    def run_py_tests():
        for t in py_tests:
            code, log = run(t, args.timeout, cwd=repo)
            if code != 0:
                return code, log
        return 0, ""
    equivalent = {}
    if args.equivalent and Path(args.equivalent).exists():
        for line in Path(args.equivalent).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, why = line.partition(" ")
                equivalent[key] = why.strip()

    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        write_report(args, saved["meta"], saved["results"], equivalent)
        return

    mutate = find_mutate(args.mutate)
    # Stopped (kill, a CI timeout): `finally` below still puts every source back.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    build_cmd = ["ninja", "-C", str(build), *args.target]
    cpp = any(rel.endswith(".cpp") for rel in args.sources)
    code, log = run(build_cmd, 1800) if cpp else (0, "")
    if code != 0:
        sys.exit(f"the unmutated build fails:\n{log[-3000:]}")
    code, log = run_tests() if cpp else (0, "")
    if code == 0 and any(rel.endswith(".py") for rel in args.sources):
        code, log = run_py_tests()
    if code != 0:
        sys.exit(f"the unmutated tests fail; fix them first:\n{log[-3000:]}")

    with tempfile.TemporaryDirectory() as work:
        all_mutants = {rel: generate(mutate, repo / rel, work) for rel in args.sources}
    if lines_of is not None:  # only the lines the change touched
        all_mutants = {rel: [m for m in ms if m["line"] in lines_of[rel]] for rel, ms in all_mutants.items()}
    pool = shuffled(all_mutants, args.seed)
    print(f"{len(pool)} mutants generated; testing until {args.sample} have compiled", file=sys.stderr)

    results, stopped = [], None
    originals = {rel: (repo / rel).read_text() for rel in args.sources}
    started = time.time()
    try:
        for rel, m in pool:
            if sum(r["outcome"] != "stillborn" for r in results) >= args.sample:
                break
            if args.max_minutes is not None and time.time() - started > 60 * args.max_minutes:
                stopped = f"stopped at the {args.max_minutes:g}-minute limit (--max-minutes)"
                break
            src = repo / rel
            src.write_text(m["text"])
            python = rel.endswith(".py")
            code, log = run([sys.executable, "-m", "py_compile", str(src)] if python else build_cmd, 600)
            if code != 0:
                outcome = "stillborn"
            else:
                code, log = run_py_tests() if python else run_tests()
                outcome = "survived" if code == 0 else "killed"
            src.write_text(originals[rel])
            mid = mutant_id(rel, m)
            results.append({"id": mid, "rel": rel, **m, "outcome": outcome})
            print(f"[{len(results)}] {outcome:9} {mid}  {m['before']!r} -> {m['after']!r}", file=sys.stderr)
    finally:
        for rel, text in originals.items():
            (repo / rel).write_text(text)
        if cpp:
            run(build_cmd, 1800)  # leave the build matching the sources

    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    meta = {"sha": sha or "unknown", "dirty": bool(dirty), "when": time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
            "target": " ".join(args.test) + (" / Python: " + "; ".join(args.py_test)
                                             if any(s.endswith(".py") for s in args.sources) else ""), "generated": len(pool), "seed": args.seed,
            "seconds": round(time.time() - started), "sources": args.sources, "since": args.since,
            "stopped": stopped}
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).with_suffix(".json").write_text(json.dumps(
        {"meta": meta, "results": [{k: v for k, v in r.items() if k != "text"} for r in results]}, indent=1))
    write_report(args, meta, results, equivalent)


def write_report(args, meta, results, equivalent):
    counted = [r for r in results if r["outcome"] != "stillborn"]
    killed = sum(r["outcome"] == "killed" for r in counted)
    survivors = [r for r in counted if r["outcome"] == "survived"]
    judged = [r for r in survivors if r["id"] in equivalent]
    score = 100.0 * killed / len(counted) if counted else 0.0
    score_eq = 100.0 * killed / (len(counted) - len(judged)) if len(counted) > len(judged) else 0.0
    per_file = collections.defaultdict(collections.Counter)
    for r in results:
        per_file[r["rel"]][r["outcome"]] += 1
    lines = [
        "# Mutation testing report",
        "",
        f"Sources at commit `{meta['sha']}`{' with uncommitted changes' if meta['dirty'] else ''}; {meta['when']}; "
        + (f"only the lines changed since `{meta['since']}`; " if meta.get("since") else "") +
        f"tests: `{meta['target']}`; {meta['generated']} mutants generated by universalmutator, drawn in a seeded "
        f"random order (seed {meta['seed']}) until {len(counted)} compiled"
        + (f", {meta['stopped']}" if meta.get("stopped") else "") + f"; {meta['seconds']} s.",
        "",
        f"**Mutation score: {killed}/{len(counted)} killed = {score:.1f}%** "
        f"({len(results) - len(counted)} stillborn, not counted); "
        f"{len(judged)} survivors judged equivalent, so {score_eq:.1f}% of the non-equivalent mutants are killed.",
        "",
        "| source | killed | survived | stillborn |",
        "| --- | --- | --- | --- |",
    ]
    for rel in meta["sources"]:
        c = per_file[rel]
        lines.append(f"| {rel} | {c['killed']} | {c['survived']} | {c['stillborn']} |")
    lines += ["", "## Survivors", "", "| mutant | line | original | mutant | judged |", "| --- | --- | --- | --- | --- |"]
    for r in survivors:
        cell = lambda s: s.replace("|", "\\|")[:120]
        lines.append(f"| `{r['id']}` | {r['line']} | `{cell(r['before'])}` | `{cell(r['after'])}` | "
                     f"{('equivalent: ' + equivalent[r['id']]) if r['id'] in equivalent else 'not judged'} |")
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:8]))


if __name__ == "__main__":
    main()
