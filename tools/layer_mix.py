#!/usr/bin/env python3
"""A model's attention time per token, its layers added up: for each report of a model preset
(configs/models/, whose `layers:` says how many layers of each problem kind the whole model
has), per tensor-parallel degree, phase and shape, the sum over the layer kinds of (the kind's
layers x the best `ok` backend's time at the kind's point of that shape / the point's tokens),
naming the best backend of each kind; and for prefill, the prompt length from which a linear
layer (gdn, kda: docs/linear-attention.md) costs less per token than a full-attention layer of the
same model.

    tools/layer_mix.py results/h100/models/NAME.csv ... [--mode cold] [--csv FILE] [--plot DIR]
                       [--config REPORT=YAML ...] [--tp N] [--reruns DIR ...] [--across-sweeps]

Where the numbers come from. A report is read as tools/model_table.py reads it (report_reader.py:
the schema, located errors; --reruns and --across-sweeps as there; a (point, backend) run with
--repetitions is the median over them). Rows that are not `ok` never count. `layers:` is read from
the sweep YAML the rows' `config` column names (as written, else from the repository root; --config
REPORT=YAML names another): attnbench checked it when it ran (docs/config.md), and it changes no
measurement. A kind the report measures that `layers:` does not name (DeepSeek-V3.2's indexer, say)
is left out of the sum, and said.

Tensor parallelism. The rows carry the heads one GPU holds, not the degree: a row's TP is read
off the YAML block that made it, a block that writes `tp:` and its model's head count (`heads`;
for the linear kinds `linear_num_value_heads`, else `linear_num_key_heads`, which the value heads
default to: docs/linear-attention.md), the row's heads being that count over one of its degrees (--tp N: the run was made with `attnbench run --tp N`, every point at N). Where no block
says (a preset that writes the heads one GPU holds, as deepseek-v3.yaml does), the rows are grouped
by their heads instead ("h16" in the TP column) and the table says so; such a group joins no other
kind's.

Shapes. A point's phase is its queries a sequence: a decode when every sequence brings at most 4
(1 a step, 2-4 with multi-token prediction), a prefill when none does, mixed otherwise. The kinds'
points of one line share the TP, the phase, the batch and the queries (seq_lens as written, else
seq_len); a point with a context (keys beyond its queries: seq_lens_kv, or seq_len_kv above
seq_len) matches that context only, a point without one (a linear layer's decode: its state is the
same size at any context) every context of its shape. A kind with several points at one shape
(a bf16 and an fp8 cache, say) gives a line for each, its settings named (the problem columns that
differ between the kind's points). Time per token is the call's time over its query tokens
(total_q_tokens); a prefill's prompt length is its tokens over its batch.

Where linear layers start to pay: along each TP's prefill points in order of prompt length, the
first length where a linear layer's time per token falls below the full-attention layer's,
interpolated linearly between the two measured lengths around it (a full-attention layer's time
per token grows with the prompt, a linear layer's hardly: their difference is nearly linear in it),
"not within the measured lengths" where it never does.

--csv FILE: the lines as CSV, one row per line and kind. --plot DIR: per preset and TP, time per
token of one layer of each kind against prompt length (prefill), DIR/<preset>.tp<TP>.prefill.png
(matplotlib).

Exit status: 0; 2 when a report, its config or an option cannot be read (named with its line); 1
when no report gave a line with every kind `ok` (the tables are printed, stderr says why).
"""
import argparse
import csv
import itertools
import os
import sys
from collections import defaultdict

from model_table import MODES, Merged, query_runs, ranked, same_config  # tools/, beside this file
from report_reader import ReportError, fail, integer

TOOL = "layer_mix"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECODE_MAX_TOKENS = 4  # queries a sequence: 1 a decode step, 2-4 with multi-token prediction
# The kinds that are a recurrence over a state rather than attention over a cache
# (docs/linear-attention.md); every other kind of a model is a full-attention layer.
LINEAR_KINDS = ("gdn", "kda")
# The columns of a point's shape (the line it joins); a column naming heads follows the TP.
SHAPE_COLUMNS = ("batch", "seq_len", "seq_len_kv", "seq_lens", "seq_lens_kv", "kind")


def is_setting(column):
    return column not in SHAPE_COLUMNS and "heads" not in column


# ---- the sweep YAML: layers and tensor-parallel degrees

def load_yaml(path):
    try:
        import yaml
    except ImportError:
        raise ReportError(f"{path}: reading a sweep's layers needs PyYAML (pip install pyyaml)") from None
    if not os.path.isfile(path):
        raise ReportError(f"{path}: no such config file")
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: cannot read it: {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        raise ReportError(f"{where}: not valid YAML ({getattr(e, 'problem', e)})") from None


def read_layers(path, doc):
    """`layers:` of the sweep at `path` as {kind: count} in file order, or None without one."""
    if not isinstance(doc, dict):
        raise ReportError(f"{path}: not a sweep config (no mapping at the top)")
    layers = doc.get("layers")
    if layers is None:
        return None
    if not isinstance(layers, dict) or not layers:
        raise ReportError(f"{path}: layers: expected a mapping of problem kinds to counts, "
                          f"not {layers!r}")
    for kind, count in layers.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ReportError(f"{path}: layers.{kind}: a count of layers is a whole number of at "
                              f"least 1, not {count!r}")
    return {str(k): v for k, v in layers.items()}


def _values(v):
    """A sweep key's values as written: one, a list, or a range {from, to, step | mul}."""
    if v is None:
        return []
    if isinstance(v, dict) and "from" in v and "to" in v:
        lo, hi, out = int(v["from"]), int(v["to"]), []
        step, mul = v.get("step"), v.get("mul")
        x = lo
        while x <= hi and len(out) <= 10000:
            out.append(x)
            x = x + int(step) if step else x * int(mul)  # attnbench's range has one of them
        return out
    return list(v) if isinstance(v, list) else [v]


def block_values(block, name):
    """The values a sweep block gives `name`: its own key, or a zip group's."""
    if name in block:
        return _values(block[name])
    for group in block.get("zip") or []:
        if isinstance(group, dict) and name in group:
            return _values(group[name])
    return []


def tp_table(doc):
    """{(kind, a GPU's heads): {degree, or None where a block does not say}} over the sweep's
    blocks (see the module's doc)."""
    sweep = doc.get("sweep") if isinstance(doc, dict) else None
    blocks = sweep if isinstance(sweep, list) else [sweep] if isinstance(sweep, dict) else []
    table = defaultdict(set)
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kinds = [str(k) for k in block_values(block, "kind")] or ["attention"]
        heads = (block_values(block, "heads") or block_values(block, "linear_num_value_heads")
                 or block_values(block, "linear_num_key_heads"))  # value heads: the key heads unset
        degrees = [int(t) for t in _values(block.get("tp"))]
        for kind, h in itertools.product(kinds, heads):
            if not degrees:
                table[(kind, int(h))].add(None)
            for t in degrees:
                if int(h) % t == 0:
                    table[(kind, int(h) // t)].add(t)
    return table


def config_of(path, rows, overrides):
    """The sweep YAML behind report `path`: --config's, else the one its rows name."""
    if path in overrides:
        return overrides[path]
    named = sorted({r["config"] for r in rows if r.get("config")})
    if not named:
        raise ReportError(f"{path}: its rows name no config (the `config` column is empty): "
                          f"--config {path}=YAML names the sweep")
    if any(not same_config(named[0], other) for other in named[1:]):
        raise ReportError(f"{path}: rows of two configs ({', '.join(named)}): one report, one "
                          "sweep")
    cell = named[0]
    for candidate in (cell, os.path.join(ROOT, cell)):
        if os.path.isfile(candidate):
            return candidate
    raise ReportError(f"{path}: its config '{cell}' is not found here nor under {ROOT}: "
                      f"--config {path}=YAML names it")


# ---- points, shapes and lines

def phase(r):
    """decode (every sequence at most 4 queries), prefill (none) or mixed."""
    decodes = {hi <= DECODE_MAX_TOKENS for _, _, hi in query_runs(r)}
    return "mixed" if len(decodes) > 1 else "decode" if decodes == {True} else "prefill"


def context(r):
    """The keys a point attends beyond its queries, as written; None without any."""
    if r.get("seq_lens_kv"):
        return r["seq_lens_kv"]
    return r["seq_len_kv"] if integer(r, "seq_len_kv") > integer(r, "seq_len") else None


def tokens(r):
    """The call's query tokens: total_q_tokens, else batch x seq_len of a uniform batch."""
    if r.get("total_q_tokens"):
        return integer(r, "total_q_tokens")
    if not r.get("seq_lens"):
        return integer(r, "batch") * integer(r, "seq_len")
    raise ReportError(f"{r['_where']}: no total_q_tokens (an older report) for drawn lengths "
                      f"'{r['seq_lens']}': its tokens are not known")


class Point:
    """A point of one kind: its shape and its fastest ok row (None when none is ok)."""

    def __init__(self, rows, tp):
        r = rows[0]
        self.id, self.kind, self.tp, self.row = r["point_id"], r["kind"], tp, r
        self.phase = phase(r)
        self.batch = integer(r, "batch")
        self.queries = r["seq_lens"] or r["seq_len"]
        self.context = context(r)
        ok = ranked(rows)
        self.best = ok[0] if ok else None
        self.statuses = sorted({x["status"] for x in rows})
        if self.best:
            self.tokens = tokens(self.best)
            self.us_per_token = float(self.best["time_ms_median"]) * 1000 / self.tokens
            self.prompt = self.tokens / self.batch

    def shape(self):
        return (self.tp, self.phase, self.batch, self.queries)


def tp_of(r, table, forced):
    """A row's TP, or ('h', heads) where no block of its kind says (see the module's doc)."""
    heads = integer(r, "heads")
    if forced:
        return forced
    degrees = table.get((r["kind"], heads), {None})
    return next(iter(degrees)) if len(degrees) == 1 and None not in degrees else ("h", heads)


def tp_text(tp):
    return f"h{tp[1]} (TP unknown)" if isinstance(tp, tuple) else str(tp)


class Preset:
    """One report, its layers and its lines."""

    def __init__(self, path, args, overrides):
        self.path, self.name = path, os.path.basename(path).removesuffix(".csv")
        self.merged = Merged(path, args.mode, args.reruns, args.across_sweeps)
        self.config = config_of(path, self.merged.rows, overrides)
        doc = load_yaml(self.config)
        self.layers = read_layers(self.config, doc)
        self.notes = []
        if self.layers is None:
            return
        try:
            table = tp_table(doc)
        except (TypeError, ValueError) as e:  # attnbench checked the sweep when it ran; an edit since
            raise ReportError(f"{self.config}: sweep: its heads or tp: are not whole numbers ({e})") from None
        self.points = []
        for p in self.merged.points:
            rows = self.merged.by_point[p]
            self.points.append(Point(rows, tp_of(rows[0], table, args.tp)))
        measured = list(dict.fromkeys(pt.kind for pt in self.points))
        left = [k for k in measured if k not in self.layers]
        if left:
            self.notes.append(f"{', '.join(left)} measured, not in layers: (left out of the sum)")
        unknown = [k for k in self.layers
                   if any(isinstance(pt.tp, tuple) for pt in self.points if pt.kind == k)]
        if unknown:
            self.notes.append(f"TP unknown for {', '.join(unknown)}: no block of the sweep writes "
                              "tp: for their heads, so their points are grouped by heads")
        self.labels = self._labels()
        self.lines = self._lines()

    def _labels(self):
        """Per point, its settings in words: the columns that differ between its kind's points
        of one TP and phase."""
        groups = defaultdict(list)
        for pt in self.points:
            groups[(pt.kind, pt.tp, pt.phase)].append(pt)
        labels = {}
        for pts in groups.values():
            problem = problem_columns(pts[0].row)
            columns = [c for c in problem if is_setting(c) and len({p.row.get(c, "") for p in pts}) > 1]
            for p in pts:
                labels[p.id] = ", ".join(f"{c} {p.row.get(c, '') or '-'}" for c in columns)
        return labels

    def _lines(self):
        """[(shape, context, {kind: Point or None})], in the report's order of points."""
        by_shape = defaultdict(list)
        for pt in self.points:
            if pt.kind in self.layers:
                by_shape[pt.shape()].append(pt)
        lines = []
        for shape, pts in by_shape.items():
            contexts = list(dict.fromkeys(pt.context for pt in pts if pt.context is not None)) or [None]
            for ctx in contexts:
                choices = []
                for kind in self.layers:
                    mine = [pt for pt in pts if pt.kind == kind and pt.context in (ctx, None)]
                    choices.append(mine or [None])
                for combo in itertools.product(*choices):
                    lines.append((shape, ctx, dict(zip(self.layers, combo))))
        return lines


def problem_columns(r):
    """The problem's columns of a report row, in order: from `batch` up to `family`, as the
    writer lays them out (docs/columns.md; both are columns every report has)."""
    keys = [k for k in r if not k.startswith("_")]
    end = "family" if "family" in keys else "timing_mode"  # an older report: up to the mode
    return keys[keys.index("batch"):keys.index(end)]


def total(line, layers):
    """(the model's microseconds per token, {kind: (one layer's, all its layers')}), or None when
    a kind has no ok point."""
    _, _, kinds = line
    if any(pt is None or pt.best is None for pt in kinds.values()):
        return None
    per_kind = {k: (pt.us_per_token, pt.us_per_token * layers[k]) for k, pt in kinds.items()}
    return sum(all_layers for _, all_layers in per_kind.values()), per_kind


def crossover(series):
    """Where the linear layer's time per token first falls below the full-attention layer's:
    series [(prompt length, full's us/token, linear's us/token)] sorted by length. Returns
    (length or None, words)."""
    if not series:
        return None, "no prefill with both kinds ok"
    lengths = f"{series[0][0]:.0f}-{series[-1][0]:.0f}" if len(series) > 1 else f"{series[0][0]:.0f}"
    d = [lin - full for _, full, lin in series]
    if d[0] < 0:
        return series[0][0], f"from the shortest measured length on ({series[0][0]:.0f} tokens)"
    for i in range(len(series) - 1):
        if d[i] >= 0 > d[i + 1]:
            x0, x1 = series[i][0], series[i + 1][0]
            at = x0 + (x1 - x0) * d[i] / (d[i] - d[i + 1])
            again = next((series[j][0] for j in range(i + 2, len(series)) if d[j] >= 0), None)
            tail = f"; above it again at {again:.0f}" if again is not None else ""
            return at, f"{at:.0f} tokens (between {x0:.0f} and {x1:.0f}){tail}"
    return None, f"not within the measured lengths ({lengths} tokens)"


# ---- output

def cell(pt, layers_k, label, share):
    if pt is None:
        return "no point"
    words = f"[{label}] " if label else ""
    if pt.best is None:
        return words + f"none ok ({'/'.join(pt.statuses)})"
    return (words + f"{pt.best['backend']} {pt.us_per_token:.4g} x{layers_k} = "
            f"{pt.us_per_token * layers_k:.4g}" + (f" ({share:.0%})" if share is not None else ""))


def preset_tables(preset, csv_rows):
    """The markdown of one preset; whether any of its lines has every kind ok."""
    layers = preset.layers
    out = [f"### {preset.name}: " + ", ".join(f"{k} {n}" for k, n in layers.items()) + " layers",
           ""]
    for note in preset.notes:
        out.append(f"- {note}")
    if preset.notes:
        out.append("")
    out.append("Microseconds per token: one layer's (the best `ok` backend's time over the "
               "point's tokens) x the model's layers of its kind, and its share of the model's.")
    out.append("")
    out.append("| TP | phase | batch | queries | context | " + " | ".join(layers) +
               " | model µs/token |")
    out.append("| --- " * (6 + len(layers)) + "|")
    complete = False
    series = defaultdict(list)  # prefill: (tp, full, its label, linear, its label) -> points
    for line in preset.lines:
        (tp, ph, batch, queries), ctx, kinds = line
        summed = total(line, layers)
        model = summed[0] if summed else None
        complete |= summed is not None
        cells = []
        for k, pt in kinds.items():
            share = summed[1][k][1] / model if summed and model else None
            cells.append(cell(pt, layers[k], preset.labels.get(pt.id, "") if pt else "", share))
            csv_rows.append({
                "preset": preset.name, "tp": tp_text(tp), "phase": ph, "batch": batch,
                "queries": queries, "context": ctx or "", "kind": k, "layers": layers[k],
                "settings": preset.labels.get(pt.id, "") if pt else "",
                "point_id": pt.id if pt else "", "backend": pt.best["backend"] if pt and pt.best else "",
                "us_per_token_one_layer": f"{pt.us_per_token:.6g}" if pt and pt.best else "",
                "us_per_token_all_layers": f"{pt.us_per_token * layers[k]:.6g}" if pt and pt.best else "",
                "model_us_per_token": f"{model:.6g}" if model is not None else "",
                "status": "ok" if pt and pt.best else "/".join(pt.statuses) if pt else "no point"})
        out.append(f"| {tp_text(tp)} | {ph} | {batch} | {queries} | {ctx or ''} | "
                   + " | ".join(cells) + f" | {'**%.4g**' % model if model is not None else 'incomplete'} |")
        if ph == "prefill":
            for full, lin in itertools.product(layers, layers):
                if full in LINEAR_KINDS or lin not in LINEAR_KINDS:
                    continue
                f, l = kinds[full], kinds[lin]
                if f and l and f.best and l.best:
                    key = (tp, full, preset.labels.get(f.id, ""), lin, preset.labels.get(l.id, ""))
                    series[key].append((f.prompt, f.us_per_token, l.us_per_token, batch))
    out.append("")
    if series:
        out.append("Where a linear layer costs less per token than a full-attention layer (prefill, "
                   "one layer each, µs per token at each measured prompt length):")
        out.append("")
        out.append("| TP | full-attention layer | linear layer | linear pays from | measured (length: full / linear) |")
        out.append("| --- | --- | --- | --- | --- |")
        for (tp, full, flabel, lin, llabel), pts in series.items():
            # One prompt length measured at two batches: a series per batch.
            per = [pts] if len({p[0] for p in pts}) == len(pts) else \
                [[p for p in pts if p[3] == b] for b in dict.fromkeys(p[3] for p in pts)]
            for part in per:
                part = sorted(part)
                _, words = crossover([(x, yf, yl) for x, yf, yl, _ in part])
                batches = "" if len(per) == 1 else f" (batch {part[0][3]})"
                measured = ", ".join(f"{x:.0f}: {yf:.3g} / {yl:.3g}" for x, yf, yl, _ in part)
                out.append(f"| {tp_text(tp)}{batches} | {full}{f' [{flabel}]' if flabel else ''} | "
                           f"{lin}{f' [{llabel}]' if llabel else ''} | {words} | {measured} |")
        out.append("")
    return out, complete


def prefill_series(preset):
    """What --plot draws: per TP, per layer kind (and its settings), [(prompt length, one layer's
    µs per token, the best backend)] of its ok prefill points by length; a kind measured at one
    length at two batches, a series per batch."""
    by_tp = defaultdict(lambda: defaultdict(list))
    for pt in preset.points:
        if pt.phase == "prefill" and pt.best and pt.kind in preset.layers:
            label = pt.kind + (f" [{preset.labels[pt.id]}]" if preset.labels.get(pt.id) else "")
            by_tp[pt.tp][label].append((pt.prompt, pt.us_per_token, pt.best["backend"], pt.batch))
    out = {}
    for tp, lines in by_tp.items():
        out[tp] = {}
        for label, pts in lines.items():
            if len({p[0] for p in pts}) == len(pts):
                out[tp][label] = sorted(p[:3] for p in pts)
                continue
            for b in dict.fromkeys(p[3] for p in pts):
                out[tp][f"{label} (batch {b})"] = sorted(p[:3] for p in pts if p[3] == b)
    return out


def plot(preset, folder):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReportError("--plot needs matplotlib (pip install matplotlib)") from None
    os.makedirs(folder, exist_ok=True)
    written = []
    for tp, lines in prefill_series(preset).items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, pts in lines.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
            for x, y, backend in pts:
                ax.annotate(backend, (x, y), fontsize=7, textcoords="offset points", xytext=(3, 3))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("prompt length (tokens a sequence)")
        ax.set_ylabel("µs per token, one layer (best ok backend)")
        ax.set_title(f"{preset.name}, TP {tp_text(tp)}: prefill")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        name = os.path.join(folder, f"{preset.name}.tp{tp_text(tp).split()[0]}.prefill.png")
        fig.tight_layout()
        fig.savefig(name, dpi=120)
        plt.close(fig)
        written.append(name)
    return written


CSV_COLUMNS = ("preset", "tp", "phase", "batch", "queries", "context", "kind", "layers", "settings",
               "point_id", "backend", "us_per_token_one_layer", "us_per_token_all_layers",
               "model_us_per_token", "status")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--mode", default="cold", choices=MODES)
    ap.add_argument("--csv", help="write the lines as CSV here too")
    ap.add_argument("--plot", metavar="DIR", help="draw time per token against prompt length here")
    ap.add_argument("--config", action="append", default=[], metavar="REPORT=YAML",
                    help="the sweep a report was run from, where its config column does not do")
    ap.add_argument("--tp", type=int, help="the run's `attnbench run --tp N`: every point at N")
    ap.add_argument("--reruns", action="append", default=[],
                    help="folder of later runs of some backends (tools/model_table.py's); repeatable")
    ap.add_argument("--across-sweeps", action="store_true",
                    help="let reruns of another config_fingerprint stand in (as model_table.py)")
    args = ap.parse_args(argv)
    if args.tp is not None and args.tp < 1:
        fail(TOOL, f"--tp {args.tp}: a tensor-parallel degree is 1 or more")
    overrides = {}
    for item in args.config:
        report, sep, config = item.partition("=")
        if not sep or not report or not config:
            fail(TOOL, f"--config {item}: expected REPORT=YAML")
        if report not in args.reports:
            fail(TOOL, f"--config {item}: {report} is not one of the reports given")
        overrides[report] = config
    for folder in args.reruns:
        if not os.path.isdir(folder):
            fail(TOOL, f"--reruns {folder}: no such folder")
    try:
        presets = [Preset(path, args, overrides) for path in args.reports]  # all read first
        lines, csv_rows, complete, plots = [], [], [], []
        for preset in presets:
            if preset.layers is None:
                print(f"{TOOL}: {preset.path}: its config {preset.config} has no layers: "
                      "(nothing to add up)", file=sys.stderr)
                continue
            text, done = preset_tables(preset, csv_rows)
            lines += text
            if done:
                complete.append(preset)
            if args.plot:
                plots += plot(preset, args.plot)
    except ReportError as e:
        fail(TOOL, str(e))
    print("\n".join(lines))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
            w.writeheader()
            w.writerows(csv_rows)
    for name in plots:
        print(f"{TOOL}: wrote {name}", file=sys.stderr)
    if not complete:
        print(f"{TOOL}: no line has every layer kind ok: no model's time per token", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
