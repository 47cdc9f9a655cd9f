"""tools/layer_mix.py on small hand-made reports and sweeps, the answers worked out by hand below
(times chosen so that a layer's microseconds per token are round numbers): a hybrid model of 3
attention and 9 gdn layers at TP4 (prefill at three lengths, decode from a bf16 and an fp8 cache,
a 2-query decode only gdn measured), and a dense model whose sweep writes no tp:. Rows that are
not `ok` never count, whatever their time. Run by ctest (Tools.LayerMixAddsUpAModelsLayers) with
tools/ as its argument."""
import csv
import os
import subprocess
import sys
import tempfile
import types

TOOLS = os.path.abspath(sys.argv[1])
try:
    import yaml  # noqa: F401  the tool reads the sweeps with it (tools/setup.sh installs it)
except ImportError:
    print("skipped: no PyYAML")
    sys.exit(77)
sys.path.insert(0, TOOLS)
from layer_mix import Preset, crossover, prefill_series  # noqa: E402

failures = []

HEADER = ["schema_version", "point_id", "backend", "batch", "heads", "kv_heads", "seq_len",
          "seq_len_kv", "head_dim", "dtype", "kv_dtype", "causal", "device", "direction",
          "seq_lens", "seq_lens_kv", "kv_layout", "page_size", "page_order", "window", "softcap",
          "sinks", "chunk", "kind", "scale", "family", "timing_mode", "repetition", "status",
          "reason", "total_q_tokens", "time_ms_median", "config", "config_fingerprint",
          "device_name"]


def row(config, point, backend, ms, kind="attention", status="ok", batch=1, heads=4, seq_len=1,
        seq_len_kv=None, seq_lens="", seq_lens_kv="", kv_dtype="bf16", tokens=None):
    return {"schema_version": "21", "point_id": point, "backend": backend, "batch": str(batch),
            "heads": str(heads), "kv_heads": "1", "seq_len": str(seq_len),
            "seq_len_kv": str(seq_len_kv or seq_len), "head_dim": "128", "dtype": "bf16",
            "kv_dtype": kv_dtype, "causal": "true", "device": "cuda", "direction": "fwd",
            "seq_lens": seq_lens, "seq_lens_kv": seq_lens_kv, "kv_layout": "contiguous",
            "page_size": "0", "page_order": "", "window": "", "softcap": "0", "sinks": "false",
            "chunk": "0", "kind": kind, "scale": "0.088", "family": point.split("-b")[0],
            "timing_mode": "cold", "repetition": "0", "status": status,
            "reason": "" if status == "ok" else "refused", "total_q_tokens":
            str(tokens if tokens is not None else batch * seq_len), "time_ms_median": ms,
            "config": config, "config_fingerprint": "f", "device_name": "H100"}


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER)
        w.writeheader()
        w.writerows(rows)


def run(*args, cwd=None):
    p = subprocess.run([sys.executable, os.path.join(TOOLS, "layer_mix.py"), *args],
                       capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


HYBRID_YAML = """name: hybrid
layers: {attention: 3, gdn: 9}
sweep:
  - heads: 16
    kv_heads: 2
    tp: 4
    seq_len: [1024, 4096, 16384]
  - kind: gdn
    linear_num_value_heads: 32
    tp: 4
    seq_len: [1024, 4096, 16384]
  - heads: {from: 8, to: 32, mul: 2}
    kv_heads: 2
    tp: 4
    seq_len: 1
    kv_dtype: [bf16, fp8_e4m3]
    zip:
      - batch: [1, 8]
        seq_lens_kv: ["4096", "uniform(1024,8192)"]
  - kind: gdn
    linear_num_value_heads: 32
    tp: 4
    seq_len: [1, 2]
    batch: [1, 8]
"""

DENSE_YAML = """name: dense
layers:
  attention: 32
sweep:
  heads: 32
  kv_heads: 8
  seq_len: 2048
"""

with tempfile.TemporaryDirectory() as d:
    def at(*parts):
        return os.path.join(d, *parts)
    os.mkdir(at("configs"))
    with open(at("configs", "hybrid.yaml"), "w") as f:
        f.write(HYBRID_YAML)
    with open(at("configs", "dense.yaml"), "w") as f:
        f.write(DENSE_YAML)
    with open(at("configs", "nolayers.yaml"), "w") as f:
        f.write("sweep:\n  seq_len: 8\n")
    hy = "configs/hybrid.yaml"  # as a run from d writes it: relative to where it ran
    G = dict(kind="gdn", heads=8)
    hybrid = [
        # Prefill, batch 1: one layer's µs per token = ms * 1000 / tokens.
        # attention: 1024 -> a 0.1; 4096 -> a 0.2 (b an error); 16384 -> b 0.3 (a 0.4).
        row(hy, "p1k", "a", "0.1024", seq_len=1024), row(hy, "p1k", "b", "0.2048", seq_len=1024),
        row(hy, "p4k", "a", "0.8192", seq_len=4096), row(hy, "p4k", "b", "", status="error", seq_len=4096),
        row(hy, "p16k", "a", "6.5536", seq_len=16384), row(hy, "p16k", "b", "4.9152", seq_len=16384),
        # gdn: 1024 -> fla 0.2; 4096 -> fla 0.3; 16384 -> fla 0.2, ref `wrong` with a tiny time.
        row(hy, "gdn-p1k", "fla", "0.2048", seq_len=1024, **G),
        row(hy, "gdn-p1k", "ref", "10", seq_len=1024, **G),
        row(hy, "gdn-p4k", "fla", "1.2288", seq_len=4096, **G),
        row(hy, "gdn-p16k", "fla", "3.2768", seq_len=16384, **G),
        row(hy, "gdn-p16k", "ref", "0.0001", status="wrong", seq_len=16384, **G),
        # 1024 again at batch 4: attention a 0.05, gdn fla 0.15 (a series of its own).
        row(hy, "p1k-b4", "a", "0.2048", batch=4, seq_len=1024),
        row(hy, "gdn-p1k-b4", "fla", "0.6144", batch=4, seq_len=1024, **G),
        # A kind the model's layers do not name, of no block's heads: left out, said; its unknown
        # TP is no layer kind's.
        row(hy, "idx", "a", "1", kind="dsa_indexer", heads=3, seq_len=1024),
        # Decode, attention from a cache (a context), a bf16 and an fp8 one, 8 heads a GPU (32 of
        # the decode block's range over TP4):
        # b1 4096: bf16 a 20, fp8 a 15; b8 uniform: bf16 a 10, fp8 b 8 (a oom).
        row(hy, "d1", "a", "0.02", heads=8, seq_len_kv=4096, seq_lens_kv="4096"),
        row(hy, "d1", "b", "0.03", heads=8, seq_len_kv=4096, seq_lens_kv="4096"),
        row(hy, "d1f", "a", "0.015", heads=8, seq_len_kv=4096, seq_lens_kv="4096", kv_dtype="fp8_e4m3"),
        row(hy, "d8", "a", "0.08", heads=8, batch=8, seq_len_kv=8192, seq_lens_kv="uniform(1024,8192)"),
        row(hy, "d8f", "a", "", heads=8, status="oom", batch=8, seq_len_kv=8192,
            seq_lens_kv="uniform(1024,8192)", kv_dtype="fp8_e4m3"),
        row(hy, "d8f", "b", "0.064", heads=8, batch=8, seq_len_kv=8192, seq_lens_kv="uniform(1024,8192)",
            kv_dtype="fp8_e4m3"),
        # gdn decode (no context: any cache's): b1 fla 10 (ref 50), b8 fla 2; b8 2 queries fla 1.
        row(hy, "gdn-d1", "fla", "0.01", **G), row(hy, "gdn-d1", "ref", "0.05", **G),
        row(hy, "gdn-d8", "fla", "0.016", batch=8, **G),
        row(hy, "gdn-d8q2", "fla", "0.016", batch=8, seq_len=2, **G),
    ]
    write_csv(at("hybrid.csv"), hybrid)
    dn = os.path.join(d, "configs", "dense.yaml")  # absolute, as a run elsewhere writes it
    write_csv(at("dense.csv"), [
        # No total_q_tokens (an older report): batch x seq_len tokens, 0.1 x 32 = 3.2.
        row(dn, "x2k", "a", "0.2048", batch=1, heads=32, seq_len=2048, tokens=""),
        row(dn, "x2k", "b", "0.1", status="unsupported", batch=1, heads=32, seq_len=2048),
        # Ragged: 1000 and 3000 tokens, 4000 in all: 0.8 ms is 0.2 a token, x 32 = 6.4.
        row(dn, "r", "a", "0.8", batch=2, heads=32, seq_len=3000, seq_lens="1000,3000", tokens=4000),
        row(dn, "idx", "a", "1", kind="dsa_indexer", heads=32, seq_len=2048)])
    # Drawn lengths without total_q_tokens: the tokens are not known.
    write_csv(at("old.csv"), [row(dn, "r", "a", "0.8", batch=2, heads=32, seq_len=3000,
                                  seq_lens="uniform(1000,3000)", tokens="")])
    write_csv(at("nolayers.csv"), [row("configs/nolayers.yaml", "y", "a", "1", seq_len=8)])

    code, out, err = run("hybrid.csv", "dense.csv", "nolayers.csv", "--csv", at("mix.csv"), cwd=d)
    if code != 0:
        failures.append(f"exit {code}:\n{err}")
    lines = out.splitlines()

    def line_of(*cells):
        """The table line that starts with these cells."""
        start = "| " + " | ".join(cells) + " |"
        found = [l for l in lines if l.startswith(start)]
        if len(found) != 1:
            failures.append(f"{len(found)} lines start with {start!r}:\n{out}")
            return ""
        return found[0]

    # Prefill: 3 x 0.1 + 9 x 0.2 = 2.1; 3 x 0.2 + 9 x 0.3 = 3.3; 3 x 0.3 (b) + 9 x 0.2 = 2.7.
    for length, want in [("1024", ["a 0.1 x3 = 0.3 (14%)", "fla 0.2 x9 = 1.8 (86%)", "**2.1**"]),
                         ("4096", ["a 0.2 x3 = 0.6 (18%)", "fla 0.3 x9 = 2.7 (82%)", "**3.3**"]),
                         ("16384", ["b 0.3 x3 = 0.9 (33%)", "fla 0.2 x9 = 1.8 (67%)", "**2.7**"])]:
        got = line_of("4", "prefill", "1", length, "")
        if got and got.split(" | ")[5:] != [want[0], want[1], want[2] + " |"]:
            failures.append(f"prefill {length}: {got!r}, want {want}")
    got = line_of("4", "prefill", "4", "1024", "")  # 3 x 0.05 + 9 x 0.15 = 1.5
    if got and got.split(" | ")[5:] != ["a 0.05 x3 = 0.15 (10%)", "fla 0.15 x9 = 1.35 (90%)", "**1.5** |"]:
        failures.append(f"prefill 1024 at batch 4: {got!r}")
    header = [i for i, l in enumerate(lines) if l.startswith("| TP | phase |")]
    if not header or lines[header[0] + 1] != "| --- " * 8 + "|" or lines[header[0] - 1] != "":
        failures.append(f"the hybrid table's header:\n{out}")
    # Decode: the gdn point (no context) joins both caches of its batch.
    # b1: bf16 3 x 20 + 9 x 10 = 150 (40% / 60%); fp8 3 x 15 + 90 = 135 (33% / 67%).
    # b8: bf16 3 x 10 + 9 x 2 = 48 (62% / 38%); fp8 3 x 8 (b: a was oom) + 18 = 42 (57% / 43%).
    for batch, ctx, cache, want in [
            ("1", "4096", "bf16", ["a 20 x3 = 60 (40%)", "fla 10 x9 = 90 (60%)", "**150**"]),
            ("1", "4096", "fp8_e4m3", ["a 15 x3 = 45 (33%)", "fla 10 x9 = 90 (67%)", "**135**"]),
            ("8", "uniform(1024,8192)", "bf16", ["a 10 x3 = 30 (62%)", "fla 2 x9 = 18 (38%)", "**48**"]),
            ("8", "uniform(1024,8192)", "fp8_e4m3", ["b 8 x3 = 24 (57%)", "fla 2 x9 = 18 (43%)", "**42**"])]:
        found = [l for l in lines if l.startswith(f"| 4 | decode | {batch} | 1 | {ctx} |")
                 and f"[kv_dtype {cache}]" in l]
        want_cells = [f"[kv_dtype {cache}] {want[0]}", want[1], want[2] + " |"]
        if len(found) != 1 or found[0].split(" | ")[5:] != want_cells:
            failures.append(f"decode b{batch} {cache}: {found}, want {want_cells}")
    # A shape only one kind measured: no total, the missing kind named.
    got = line_of("4", "decode", "8", "2", "")
    if got and ("no point" not in got or "incomplete" not in got or "fla 1 x9 = 9" not in got):
        failures.append(f"a decode of 2 queries without attention: {got!r}")
    # Where gdn pays: d = gdn - attention = 0.1, 0.1, -0.1 at 1024, 4096, 16384: it falls below
    # between 4096 and 16384, at 4096 + 12288 x 0.1 / 0.2 = 10240.
    # 1024 measured at batch 1 and 4: a series per batch, the second of one length.
    cross = [l for l in lines if l.startswith("| 4 (batch 1) | attention | gdn |")]
    if len(cross) != 1 or "10240 tokens (between 4096 and 16384)" not in cross[0] \
            or "1024: 0.1 / 0.2, 4096: 0.2 / 0.3, 16384: 0.3 / 0.2 |" not in cross[0]:
        failures.append(f"where gdn pays: {cross}\n{out}")
    if "| 4 (batch 4) | attention | gdn | not within the measured lengths (1024 tokens) | " \
            "1024: 0.05 / 0.15 |" not in lines:
        failures.append(f"where gdn pays at batch 4:\n{out}")
    notes = [i for i, l in enumerate(lines) if l.startswith("- ")]
    if not notes or lines[notes[-1] + 1] != "":  # a list, then a paragraph
        failures.append(f"the notes' list is not ended:\n{out}")
    hybrid_part = out.split("### dense")[0]
    if "TP unknown" in hybrid_part or "dsa_indexer measured, not in layers:" not in hybrid_part:
        failures.append(f"hybrid's notes:\n{hybrid_part}")
    # The dense preset: its sweep writes no tp: the rows grouped by their heads, and said so; the
    # indexer it measured is no layer kind of it; 32 x 0.1 = 3.2.
    got = line_of("h32 (TP unknown)", "prefill", "1", "2048", "")
    if got and "a 0.1 x32 = 3.2 (100%)" not in got:
        failures.append(f"dense: {got!r}")
    got = line_of("h32 (TP unknown)", "prefill", "2", "1000,3000", "")
    if got and "a 0.2 x32 = 6.4 (100%)" not in got:
        failures.append(f"dense, ragged: {got!r}")
    if "TP unknown for attention: no block of the sweep writes tp: for their heads, so their " \
            "points are grouped by heads" not in out or "dsa_indexer measured, not in layers:" not in out:
        failures.append(f"dense preset's notes:\n{out}")
    if "nolayers.yaml has no layers:" not in err:
        failures.append(f"a config without layers: not said: {err!r}")
    # The CSV: a row per line and kind, the same numbers.
    with open(at("mix.csv")) as f:
        header = next(csv.reader(f))
        f.seek(0)
        rows = list(csv.DictReader(f))
    if header != ["preset", "tp", "phase", "batch", "queries", "context", "kind", "layers",
                  "settings", "point_id", "backend", "us_per_token_one_layer",
                  "us_per_token_all_layers", "model_us_per_token", "status"]:
        failures.append(f"csv header {header}")
    q2 = {r["kind"]: r["status"] for r in rows if r["queries"] == "2"}
    if q2 != {"attention": "no point", "gdn": "ok"}:
        failures.append(f"csv statuses of the 2-query line: {q2}")
    want = {("prefill", "1", "4096", "", "attention"): ("a", "0.2", "0.6", "3.3"),
            ("prefill", "1", "4096", "", "gdn"): ("fla", "0.3", "2.7", "3.3"),
            ("decode", "8", "1", "uniform(1024,8192)", "gdn"): ("fla", "2", "18", None)}
    seen = set()
    for r in rows:
        k = (r["phase"], r["batch"], r["queries"], r["context"], r["kind"])
        seen.add(k)
        if k in want:
            b, one, all_, model = want[k]
            got = (r["backend"], f"{float(r['us_per_token_one_layer']):g}",
                   f"{float(r['us_per_token_all_layers']):g}")
            if got != (b, one, all_) or (model and f"{float(r['model_us_per_token']):g}" != model):
                failures.append(f"csv {k}: {r}")
    if set(want) - seen:
        failures.append(f"csv lacks {set(want) - seen}")
    if len([r for r in rows if r["preset"] == "hybrid"]) != 2 * (4 + 4 + 1):  # lines x kinds
        failures.append(f"csv: {len(rows)} rows")
    # What --plot draws: the prefill points of each kind by length, a series per batch where a
    # length was measured at two.
    was = os.getcwd()
    os.chdir(d)
    args = types.SimpleNamespace(mode="cold", reruns=[], across_sweeps=False, tp=None)
    series = {tp: {label: [(x, round(y, 9), b) for x, y, b in pts] for label, pts in lines_.items()}
              for tp, lines_ in prefill_series(Preset("hybrid.csv", args, {})).items()}
    os.chdir(was)
    want = {4: {"attention (batch 1)": [(1024, 0.1, "a"), (4096, 0.2, "a"), (16384, 0.3, "b")],
                "attention (batch 4)": [(1024, 0.05, "a")],
                "gdn (batch 1)": [(1024, 0.2, "fla"), (4096, 0.3, "fla"), (16384, 0.2, "fla")],
                "gdn (batch 4)": [(1024, 0.15, "fla")]}}
    if series != want:
        failures.append(f"the plot's series: {series}")
    # --plot draws one figure per preset and TP (matplotlib there).
    code, _, err = run("hybrid.csv", "--plot", at("plots"), cwd=d)
    try:
        import matplotlib  # noqa: F401
        png = at("plots", "hybrid.tp4.prefill.png")
        if code != 0 or not os.path.isfile(png) or f"wrote {png}" not in err:
            failures.append(f"--plot: exit {code}, {os.listdir(d)}:\n{err}")
        else:
            with open(png, "rb") as f:
                head = f.read(24)
            size = (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big"))
            if size != (840, 540):  # 7 x 4.5 inches at 120 dpi
                failures.append(f"the plot is {size} pixels")
    except ImportError:
        pass
    # Without matplotlib, --plot says so (exit 2).
    os.makedirs(at("nompl", "matplotlib"))
    with open(at("nompl", "matplotlib", "__init__.py"), "w") as f:
        f.write("raise ImportError('no matplotlib here')\n")
    p = subprocess.run([sys.executable, os.path.join(TOOLS, "layer_mix.py"), "hybrid.csv",
                        "--plot", at("plots2")], capture_output=True, text=True, cwd=d,
                       env=dict(os.environ, PYTHONPATH=at("nompl")))
    if p.returncode != 2 or "--plot needs matplotlib" not in p.stderr:
        failures.append(f"--plot without matplotlib: exit {p.returncode}: {p.stderr!r}")
    # Drawn lengths without total_q_tokens: refused, named.
    code, _, err = run("old.csv", cwd=d)
    if code != 2 or "no total_q_tokens" not in err or "uniform(1000,3000)" not in err:
        failures.append(f"drawn lengths without total_q_tokens: exit {code}: {err!r}")
    # A sweep entry that is no block (attnbench refuses it; an edit since the run) is passed over.
    with open(at("configs", "odd.yaml"), "w") as f:
        f.write("layers: {attention: 32}\nsweep:\n  - 7\n  - {heads: 64, tp: 2, seq_len: 2048}\n")
    code, out4, err = run("dense.csv", "--config", "dense.csv=configs/odd.yaml", cwd=d)
    if code != 0 or "| 2 | prefill | 1 | 2048 |" not in out4:
        failures.append(f"a sweep entry that is no block: exit {code}: {err!r}\n{out4}")
    # Refused, exit 2: a config not found (the report read from elsewhere), and named with --config
    # it is read; layers: that are no counts; a --config of a report not given.
    code, _, err = run(at("hybrid.csv"), cwd=at("configs"))
    if code != 2 or "configs/hybrid.yaml' is not found" not in err or "--config" not in err:
        failures.append(f"a config not found: exit {code}: {err!r}")
    code, out2, err = run(at("hybrid.csv"), "--config", f"{at('hybrid.csv')}={at('configs', 'hybrid.yaml')}",
                          cwd=at("configs"))
    if code != 0 or "**150**" not in out2:
        failures.append(f"--config: exit {code}: {err!r}")
    with open(at("configs", "bad.yaml"), "w") as f:
        f.write("layers: {attention: 0}\nsweep:\n  seq_len: 8\n")
    code, _, err = run("nolayers.csv", "--config", "nolayers.csv=configs/bad.yaml", cwd=d)
    if code != 2 or "layers.attention: a count of layers is a whole number of at least 1, not 0" not in err:
        failures.append(f"layers of 0: exit {code}: {err!r}")
    code, _, err = run("nolayers.csv", "--config", "nolayers.csv=configs/bad.yaml", "--config",
                       "other.csv=configs/hybrid.yaml", cwd=d)  # the second of two refused
    if code != 2 or "other.csv is not one of the reports given" not in err:
        failures.append(f"--config of another report: exit {code}: {err!r}")
    # A KDA block writes its key heads alone (as many value heads): its TP read off them. MLA
    # 0.1 x 1 + KDA 0.2 x 3 = 0.7.
    with open(at("configs", "kimi.yaml"), "w") as f:
        f.write("layers: {mla: 1, kda: 3}\nsweep:\n  - {kind: mla, heads: 32, tp: [1, 4], seq_len: 1024}\n"
                "  - {kind: kda, linear_num_key_heads: 32, tp: 4, seq_len: 1024}\n")
    # At 2048 MLA's only row is an error: that line has no total, and no crossover point.
    km = "configs/kimi.yaml"
    write_csv(at("kimi.csv"), [row(km, "m", "a", "0.1024", kind="mla", heads=8, seq_len=1024),
                               row(km, "k", "fla", "0.2048", kind="kda", heads=8, seq_len=1024),
                               row(km, "m2", "a", "", status="error", kind="mla", heads=8, seq_len=2048),
                               row(km, "k2", "fla", "0.4096", kind="kda", heads=8, seq_len=2048)])
    code, out5, err = run("kimi.csv", cwd=d)
    if code != 0 or "| 4 | prefill | 1 | 1024 |  | a 0.1 x1 = 0.1 (14%) | fla 0.2 x3 = 0.6 (86%) | **0.7** |" \
            not in out5.splitlines() or "| 4 | prefill | 1 | 2048 |  | none ok (error) | fla 0.2 x3 = 0.6 | " \
            "incomplete |" not in out5.splitlines() or "| 4 | mla | kda | not within the measured " \
            "lengths (1024 tokens) | 1024: 0.1 / 0.2 |" not in out5.splitlines():
        failures.append(f"kda's key heads: exit {code}: {err}\n{out5}")
    was = os.getcwd()
    os.chdir(d)
    args = types.SimpleNamespace(mode="cold", reruns=[], across_sweeps=False, tp=None)
    labels = {tp: sorted(lines_) for tp, lines_ in prefill_series(Preset("kimi.csv", args, {})).items()}
    os.chdir(was)
    if labels != {4: ["kda", "mla"]}:  # one batch a length: no series per batch
        failures.append(f"the Kimi-like plot's series: {labels}")
    # A sweep's tp: that is no number (edited since the run), a report of two configs, a --reruns
    # folder that is not there (the second of two): exit 2, named.
    with open(at("configs", "badtp.yaml"), "w") as f:
        f.write("layers: {attention: 32}\nsweep:\n  heads: 32\n  tp: many\n  seq_len: 8\n")
    code, _, err = run("dense.csv", "--config", "dense.csv=configs/badtp.yaml", cwd=d)
    if code != 2 or "configs/badtp.yaml: sweep: its heads or tp: are not whole numbers" not in err:
        failures.append(f"tp: many: exit {code}: {err!r}")
    write_csv(at("two.csv"), [row(hy, "p", "a", "1", seq_len=8), row(dn, "q", "a", "1", seq_len=8)])
    code, _, err = run("two.csv", cwd=d)
    if code != 2 or "two.csv: rows of two configs" not in err:
        failures.append(f"two configs: exit {code}: {err!r}")
    os.mkdir(at("re"))
    code, _, err = run("dense.csv", "--reruns", at("re"), "--reruns", at("nowhere"), cwd=d)
    if code != 2 or f"--reruns {at('nowhere')}: no such folder" not in err:
        failures.append(f"a second --reruns missing: exit {code}: {err!r}")
    # Nothing complete: exit 1, said.
    code, _, err = run("nolayers.csv", cwd=d)
    if code != 1 or "no line has every layer kind ok" not in err:
        failures.append(f"nothing to add up: exit {code}: {err!r}")
    # --tp and --config say what they take.
    for bad, says in ((["--tp", "0"], "--tp 0: a tensor-parallel degree is 1 or more"),
                      (["--config", "x"], "--config x: expected REPORT=YAML")):
        code, _, err = run("dense.csv", *bad, cwd=d)
        if code != 2 or f"layer_mix: {says}" not in err:
            failures.append(f"{bad}: exit {code}: {err!r}")
    code, out6, _ = run("dense.csv", "--tp", "1", cwd=d)
    if code != 0 or "| 1 | prefill | 1 | 2048 |" not in out6:
        failures.append(f"--tp 1:\n{out6}")
    # --tp: the run's own degree stands for every point, the sweep's tp: aside.
    code, out3, _ = run("dense.csv", "--tp", "2", cwd=d)
    if "| 2 | prefill | 1 | 2048 |" not in out3:
        failures.append(f"--tp 2:\n{out3}")

# The crossover's other answers, by hand: equal at the first length, below after it (from that
# length, interpolated to it); cheaper from the first length; never; above again; no series.
if crossover([(1000, 1, 1), (2000, 2, 1)])[1] != "1000 tokens (between 1000 and 2000)":
    failures.append(f"equal at first: {crossover([(1000, 1, 1), (2000, 2, 1)])}")
if crossover([(1000, 2, 1), (2000, 3, 1)])[0] != 1000 or crossover([(500, 1, 1), (2000, 3, 1)])[0] != 500:
    failures.append("the crossover's length is not the first one's where it is cheaper there")
if crossover([(1000, 1, 2), (2000, 2, 2), (3000, 3, 2)])[1] != "2000 tokens (between 2000 and 3000)":
    failures.append(f"equal, then below: {crossover([(1000, 1, 2), (2000, 2, 2), (3000, 3, 2)])}")
if crossover([]) != (None, "no prefill with both kinds ok"):
    failures.append(f"no series: {crossover([])}")
if crossover([(1000, 2, 1), (2000, 3, 1)])[1] != "from the shortest measured length on (1000 tokens)":
    failures.append(f"cheaper at once: {crossover([(1000, 2, 1), (2000, 3, 1)])}")
if crossover([(1000, 1, 2), (2000, 2, 3)])[1] != "not within the measured lengths (1000-2000 tokens)":
    failures.append(f"never: {crossover([(1000, 1, 2), (2000, 2, 3)])}")
at_, words = crossover([(1000, 1, 2), (3000, 3, 2), (5000, 1, 2)])  # d = 1, -1, 1: at 2000
if at_ != 2000 or "above it again at 5000" not in words:
    failures.append(f"above again: {at_}, {words}")

print("\n".join(failures) or "ok")
sys.exit(1 if failures else 0)
