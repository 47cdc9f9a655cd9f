"""Reading an attnbench report as the binary's readers read it (core/src/analysis/check_report.cpp,
core/src/write/csv.cpp), for the tools beside this file (model_table.py, harness_profile.py): the
path a file of UTF-8 text (a UTF-8 BOM skipped), a header with `schema_version`, every row of a
version 1 to SCHEMA_VERSION with as many fields as the header, the key columns present and each
(point, backend, timing mode, repetition) once. Columns an older version lacks read as their
defaults (repetition 0, kind attention, a forward problem with kv_heads = heads and seq_len_kv =
seq_len before version 3). What is wrong is a ReportError naming the file, and the line where
there is one; a tool's main() prints it with `fail` and exits 2, as `attnbench` does on an input
error.
"""
import csv
import io
import math
import os
import sys

# core/src/write/schema.hpp's kCsvSchemaVersion: the newest version these tools read.
SCHEMA_VERSION = 22
# What every main report has (check_report.cpp's key columns).
KEY_COLUMNS = ("point_id", "backend", "timing_mode", "status")


class ReportError(Exception):
    """An input the tool cannot read: the message names the file (and line)."""


def fail(tool, message, code=2):
    """Print `tool: message` on stderr and exit with `code` (2: the input is wrong)."""
    print(f"{tool}: {message}", file=sys.stderr)
    sys.exit(code)


def file_text(path, what="report"):
    """The text of `path`, or a ReportError saying why it is none: missing, a folder, unreadable,
    binary or not UTF-8. A UTF-8 BOM is dropped."""
    if not os.path.lexists(path):
        raise ReportError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ReportError(f"{path}: a folder, not a {what} (name its .csv file)")
    if not os.path.isfile(path):
        raise ReportError(f"{path}: not a regular file, not a {what}")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ReportError(f"{path}: cannot read it: {e.strerror or e}") from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise ReportError(f"{path}: a binary file (a NUL byte at byte {nul}), not a CSV {what}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ReportError(f"{path}:{line}: not UTF-8 text (byte {e.start}): not a CSV {what}") from None


class Report:
    """A report's header and rows (dicts by column, every row with `_where`, its "path:line")."""

    def __init__(self, path, header, rows):
        self.path, self.header, self.rows = path, header, rows

    def has(self, column):
        return column in self.header


def _records(text, path):
    """(line, fields) of each CSV record, blank lines skipped, as csv.cpp's parse_csv."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    out, start = [], 1
    try:
        for fields in reader:
            if fields and fields != [""]:
                out.append((start, fields))
            start = reader.line_num + 1
    except csv.Error as e:
        raise ReportError(f"{path}:{reader.line_num}: not CSV: {e}") from None
    return out


def _version(text, where):
    if text.isdigit() and 1 <= int(text) <= SCHEMA_VERSION:
        return int(text)
    newer = text.isdigit() and int(text) > SCHEMA_VERSION
    raise ReportError(f"{where}: schema version '{text}', this tool reads versions 1 to "
                      f"{SCHEMA_VERSION}" + (" (written by a newer attnbench)" if newer else ""))


def read_report(path, needs=()):
    """The report at `path`, checked (see above). `needs`: further columns the tool reads, each a
    (column, the schema version that brought it) pair, refused by name when missing."""
    text = file_text(path)
    records = _records(text, path)
    if not records:
        raise ReportError(f"{path}: empty, expected a header line")
    (_, header), body = records[0], records[1:]
    if "schema_version" not in header:
        raise ReportError(f"{path}: no schema_version column: not an attnbench report (one "
                          "written before reports carried their schema, or by another tool)")
    missing = [c for c in KEY_COLUMNS if c not in header]
    if missing:
        side = " (a .kernels.csv or .samples.csv? the report is the .csv beside it)" \
            if path.endswith((".kernels.csv", ".samples.csv")) else ""
        raise ReportError(f"{path}: no column '{missing[0]}': not a main attnbench report{side}")
    rows, seen = [], {}
    for line, fields in body:
        where = f"{path}:{line}"
        if len(fields) != len(header):
            raise ReportError(f"{where}: row has {len(fields)} fields, the header has {len(header)}")
        r = dict(zip(header, fields))
        _version(r["schema_version"], where)
        r["_where"] = where
        rows.append(r)
    for column, since in needs:
        if column not in header:
            versions = sorted({r["schema_version"] for r in rows}, key=int)
            of = f"schema {', '.join(versions)}" if versions else "its header"
            raise ReportError(f"{path}: no column '{column}' ({of}; schema {since} and later "
                              "have it): an older report than this tool reads")
    for r in rows:
        _defaults(r)
        rep = r["repetition"]
        if not rep.isdigit():
            raise ReportError(f"{r['_where']}: column 'repetition' holds '{rep}', not a repetition")
        key = (r["point_id"], r["backend"], r["timing_mode"], int(rep))
        if key in seen:
            raise ReportError(f"{r['_where']}: the same point, backend, timing mode and repetition "
                              f"as line {seen[key]} ({' '.join(map(str, key[:3]))}): a report holds "
                              "each once (two reports joined by hand? attnbench merge joins them)")
        seen[key] = r["_where"].rsplit(":", 1)[1]
    return Report(path, header, rows)


def _defaults(r):
    """Columns an older schema lacks, as the binary reads them (schema.hpp)."""
    r.setdefault("repetition", "0")
    if r["repetition"] == "":
        r["repetition"] = "0"
    r.setdefault("kind", "attention")
    r.setdefault("direction", "fwd")
    if "heads" in r:
        r.setdefault("kv_heads", r["heads"])
    if "seq_len" in r:
        r.setdefault("seq_len_kv", r["seq_len"])
    for column, default in (("seq_lens", ""), ("seq_lens_kv", ""), ("kv_layout", "contiguous"),
                            ("window", ""), ("softcap", ""), ("chunk", "0"), ("sinks", "false"),
                            ("kv_dtype", ""), ("feed", ""), ("config", ""),
                            ("config_fingerprint", ""), ("device_name", "")):
        r.setdefault(column, default)


def number(r, column, positive=False, allow_negative=False):
    """Column `column` of row `r` as a finite float (None when empty); a ReportError at the row
    for text that is no number, a NaN, an infinity, or a value below 0 (or at 0 when positive)."""
    text = r.get(column, "")
    if text == "":
        return None
    try:
        v = float(text)
    except ValueError:
        raise ReportError(f"{r.get('_where', 'a row')}: column '{column}' holds '{text}', "
                          "not a number") from None
    if not math.isfinite(v) or (positive and v <= 0) or (not allow_negative and v < 0):
        want = "a positive finite number" if positive else "a finite number" \
            if allow_negative else "a finite number of at least 0"
        raise ReportError(f"{r.get('_where', 'a row')}: column '{column}' holds '{text}', "
                          f"not {want}")
    return v


def integer(r, column):
    """Column `column` of row `r` as an int; a ReportError at the row otherwise."""
    text = r.get(column, "")
    if not text.strip().isdigit():
        raise ReportError(f"{r.get('_where', 'a row')}: column '{column}' holds '{text}', "
                          "not a whole number")
    return int(text)
