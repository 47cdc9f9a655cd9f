"""tests/served_reference.py checked on its own, not through the kernel it judges (a bug shared by
both would pass tests/triton_served_test.py): q = 0 makes every logit 0 (and softcap(0) = 0), v is
one-hot over the keys and scaled by its kv head + 1, so each output row reads back which keys its
query saw, through which kv head, and how much its head's sink took: (kv head + 1) / (keys seen +
e^sink) at each seen key, 0 elsewhere. The key sets are written out by hand for queries at
positions 7, 8 and 9 of 10 keys (bottom-right). Run by ctest (Examples.ServedReferenceReadsTheKeysEachQuerySees)."""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from served_reference import reference  # noqa: E402

KEYS, QUERIES, HEADS, KV_HEADS, D = 10, 3, 4, 2, 8
torch.manual_seed(0)
q = torch.zeros(QUERIES, HEADS, D)
k = torch.randn(KEYS, KV_HEADS, D)
v = torch.eye(KEYS).unsqueeze(1) * torch.tensor([1.0, 2.0]).view(1, KV_HEADS, 1)  # [keys, kv heads, keys]
SINKS = torch.tensor([0.0, math.log(2), math.log(3), math.log(4)])  # a different one per head
SEES = {  # per query at positions 7, 8, 9: the keys it sees
    "causal": (dict(), [range(0, 8), range(0, 9), range(0, 10)]),
    "window (2, 0)": (dict(left=2), [range(5, 8), range(6, 9), range(7, 10)]),
    "window (0, 0)": (dict(left=0), [range(7, 8), range(8, 9), range(9, 10)]),
    "window (1, 1)": (dict(left=1, right=1), [range(6, 9), range(7, 10), range(8, 10)]),
    "window (-1, 1)": (dict(right=1), [range(0, 9), range(0, 10), range(0, 10)]),
    "not causal": (dict(right=-1), [range(0, 10)] * 3),
    "chunk 4, causal": (dict(chunk=4), [range(4, 8), range(8, 9), range(8, 10)]),
    "chunk 4, not causal": (dict(chunk=4, right=-1), [range(4, 8), range(8, 10), range(8, 10)]),
    "softcap 5, causal": (dict(softcap=5.0), [range(0, 8), range(0, 9), range(0, 10)]),
    "sinks, causal": (dict(sinks=SINKS), [range(0, 8), range(0, 9), range(0, 10)]),
    "sinks, window (2, 0)": (dict(left=2, sinks=SINKS), [range(5, 8), range(6, 9), range(7, 10)]),
}
failures = []
for name, (kw, sees) in SEES.items():
    out = reference([q], [k], [v], 1.0, **kw)[0]
    for i, keys in enumerate(sees):
        for h in range(HEADS):
            want = torch.zeros(KEYS, dtype=torch.float64)
            sink = math.exp(kw["sinks"][h]) if "sinks" in kw else 0.0
            want[list(keys)] = (h // (HEADS // KV_HEADS) + 1) / (len(keys) + sink)
            if not torch.allclose(out[i, h], want, atol=1e-12):
                failures.append(f"{name}: query {i}, head {h}: {[round(x, 4) for x in out[i, h].tolist()]}")
# A softcap bends large logits: with q.k = 10 at one key, capped at 5 that key weighs
# e^(5 tanh 2) against 1 at every other key seen.
q1 = torch.zeros(1, 1, 2)
q1[0, 0, 0] = 10.0
k1 = torch.zeros(3, 1, 2)
k1[1, 0, 0] = 1.0
v1 = torch.eye(3).unsqueeze(1)
got = reference([q1], [k1], [v1], 1.0, softcap=5.0)[0][0, 0, 1].item()
weight = math.exp(5 * math.tanh(2))
if abs(got - weight / (weight + 2)) > 1e-12:
    failures.append(f"softcap 5 at a logit of 10: weight {got}, want {weight / (weight + 2)}")
print("\n".join(failures[:12]) or "ok")
sys.exit(1 if failures else 0)
