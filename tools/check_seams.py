#!/usr/bin/env python3
"""Checks that the harness core names no problem kind and no variant outside their own files:
core/src, comments aside, holds none of their names as a string and none of the Problem members
that are a kind's or a variant's, except in core/src/kinds/<kind>.cpp and kinds/variants/. The
names are read off core/src/kinds/list.hpp. Ragged lengths and paged caches are the layout every
kind has (common fields): their variant files name them, the core's layout code reads them.
Exit 1 naming each place (ctest runs this: tests/CMakeLists.txt)."""
import argparse
import re
import sys
from pathlib import Path

LAYOUT = {"ragged", "paged"}
# Problem's members (core/include/attnbench/backend.hpp) that belong to one kind or variant.
MEMBERS = [r"\.sinks\b", r"\.chunk\b", r"\.softcap\b", r"\bwindow_(left|right)\b", r"\bwindowed\(",
           r"\bright_edge\(", r"\.mla\b", r"\bfp8_kv\(", r"\bMlaShape\b"]


def listed(list_hpp):
    text = list_hpp.read_text()
    names = {}
    for macro in ("ATTNBENCH_PROBLEM_KINDS", "ATTNBENCH_PROBLEM_VARIANTS"):
        body = re.search(r"#define " + macro + r"\(X\)((?:.*\\\n)*.*)", text).group(1)
        names[macro] = re.findall(r"X\((\w+)\)", body)
    return names["ATTNBENCH_PROBLEM_KINDS"], names["ATTNBENCH_PROBLEM_VARIANTS"]


def code_of(path):
    """The file's lines with comments blanked (C++ // and /* */, Python #), strings kept."""
    text = path.read_text(errors="replace")
    if path.suffix == ".py":  # docstrings and # comments
        text = re.sub(r'"""(.*?)"""', lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        return [re.sub(r"(^|\s)#.*$", "", line) for line in text.splitlines()]
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    for line in text.splitlines():
        # a // outside a string literal starts a comment
        in_string, cut = False, len(line)
        for i, c in enumerate(line):
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            elif c == "/" and not in_string and line[i:i + 2] == "//":
                cut = i
                break
        out.append(line[:cut])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--src", default=str(Path(__file__).resolve().parent.parent / "core" / "src"))
    args = ap.parse_args()
    src = Path(args.src)
    kinds, variants = listed(src / "kinds" / "list.hpp")
    own = {src / "kinds" / f"{k}.cpp" for k in kinds}
    names = [n for n in kinds + variants if n not in LAYOUT]
    patterns = [(f'"{n}"', re.compile(r'"' + re.escape(n) + r'"')) for n in names]
    patterns += [(m, re.compile(m)) for m in MEMBERS]
    bad = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".py") or not path.is_file():
            continue
        if path in own or (src / "kinds" / "variants") in path.parents:
            continue
        for number, line in enumerate(code_of(path), 1):
            for shown, pattern in patterns:
                if pattern.search(line):
                    bad.append(f"{path.relative_to(src.parent.parent)}:{number}: {shown}: {line.strip()}")
    for b in bad:
        print(b)
    if not bad:
        print(f"no kind or variant named outside their files ({len(kinds)} kinds, {len(variants)} variants)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
