#!/usr/bin/env python3
"""Checks that core/src's folders include one another one way: the include graph between folders
has no cycle, and base/ includes no other folder. Prints the graph with --graph. Exit 1 on a
cycle, naming one include of each arrow in it (ctest runs this: tests/CMakeLists.txt)."""
import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def edges(src):
    """{(from folder, to folder): first 'file: include' seen}, folders being src's children."""
    folders = {p.name for p in src.iterdir() if p.is_dir()}
    out = {}
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h", ".cu", ".cuh") or not path.is_file():
            continue
        here = path.relative_to(src).parts[0]
        for m in INCLUDE.finditer(path.read_text(errors="replace")):
            there = m.group(1)
            if there in folders and there != here:
                out.setdefault((here, there), f"{path.relative_to(src.parent.parent)}: {m.group(0).strip()}")
    return out


def cycle(graph):
    """One cycle of folders, or None."""
    state = {}

    def visit(n, stack):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if state.get(m) is None:
                found = visit(m, stack)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if state.get(n) is None:
            found = visit(n, [])
            if found:
                return found
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--src", default=str(Path(__file__).resolve().parent.parent / "core" / "src"))
    ap.add_argument("--graph", action="store_true", help="print every folder's includes")
    args = ap.parse_args()
    e = edges(Path(args.src))
    graph = {}
    for a, b in e:
        graph.setdefault(a, set()).add(b)
    if args.graph:
        for a in sorted(graph):
            print(f"{a} -> {', '.join(sorted(graph[a]))}")
    bad = False
    for (a, b), where in sorted(e.items()):
        if a == "base":
            print(f"base/ includes {b}/: {where}")
            bad = True
    c = cycle(graph)
    if c:
        print("folders that include each other: " + " -> ".join(c))
        for a, b in zip(c, c[1:]):
            print(f"  {a} -> {b}: {e[(a, b)]}")
        bad = True
    if not bad:
        print(f"one way: {len(e)} arrows between {len({x for pair in e for x in pair})} folders, no cycle")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
