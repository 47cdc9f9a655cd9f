"""plots.py's families: rows that differ in any problem column but the batch and the lengths are
two lines, never one line medianed together; the name says what differs; derived columns and a
default scale do not lengthen it. Run by ctest (Plots.FamiliesFollowEveryProblemColumn)."""
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("plots", sys.argv[1])
plots = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plots)

HEADER = ["point_id", "backend", "batch", "heads", "kv_heads", "seq_len", "seq_len_kv", "head_dim",
          "dtype", "causal", "device", "direction", "seq_lens", "kv_layout", "page_size", "window",
          "softcap", "kind", "scale", "head_dim_v", "v_in_k", "timing_mode", "status"]


def row(**changed):
    r = dict(zip(HEADER, ["p", "naive", "1", "8", "8", "64", "64", "64", "bf16", "true", "cpu",
                          "fwd", "", "contiguous", "0", "", "0", "attention", "0.125", "64",
                          "false", "wall", "ok"]))
    r.update(changed)
    return r


def families(rows):
    columns = plots.problem_columns(rows)
    return {plots.family_key(r, columns) for r in rows}


failures = []
base = row()
for column, value in [("window", "4,0"), ("softcap", "30"), ("kv_layout", "paged"),
                      ("page_size", "16"), ("seq_lens", "uniform(1,9)"), ("kind", "mla"),
                      ("scale", "0.07"), ("heads", "16")]:
    if len(families([base, row(**{column: value})])) != 2:
        failures.append(f"rows that differ in {column} are one family")
for column, value in [("batch", "4"), ("seq_len", "128"), ("seq_len_kv", "256")]:
    if len(families([base, row(**{column: value})])) != 1:
        failures.append(f"rows that differ in {column} alone are two families")
columns = plots.problem_columns([base])
varying = [c for c in columns if c in ("window", "head_dim_v", "scale")]
name = plots.family_name(row(window="4,0", head_dim_v="64"), varying)
if "window4_0" not in name or "head_dim_v" in name or "scale" in name:
    failures.append(f"the family's name: {name}")
if "scale0.07" not in plots.family_name(row(scale="0.07"), ["scale"]):
    failures.append("a written scale is not in the family's name")
print("\n".join(failures) or "families follow every problem column")
sys.exit(1 if failures else 0)
