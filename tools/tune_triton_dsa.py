"""Times examples/python-backends/triton_dsa.py's decode over its tile and split choices on a GPU,
to choose _tiles() and _splits() from numbers: the presets' decode shapes (a paged latent cache of
576 columns, pages of 64 in shuffled order, each row's own top-2048 list), bf16 and fp8 caches.
Each time is triton.testing.do_bench's median (L2 cleared before each call) and is printed with
its share of the selected tokens' memory floor at the given bandwidth (attnbench calibrate's
read_gbps). Not a test: a tool run by hand on the GPU machine.

  python3 tools/tune_triton_dsa.py [--bandwidth-gbps 3091] [--heads 16,8] [--batches 32,128]
"""
import argparse
import importlib.util
import itertools
import pathlib
import sys

import torch
import triton

HERE = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("triton_dsa",
                                              HERE / "examples/python-backends/triton_dsa.py")
dsa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dsa)

TOPK, D, DV, PAGE = 2048, 576, 512, 64


def inputs(batch, heads, context, kv_dtype, seed=0):
    """q [batch, heads, 576] packed rows, a shuffled paged cache, each row's distinct tokens."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    pages_per = context // PAGE
    pages = batch * pages_per
    k = torch.randn((pages, PAGE, 1, D), generator=g, device="cuda", dtype=torch.bfloat16)
    if kv_dtype == "fp8":
        k = (k * 0.5).to(torch.float8_e4m3fn)
    table = torch.randperm(pages, generator=g, device="cuda").to(torch.int32).view(batch, pages_per)
    idx = torch.argsort(torch.rand((batch, context), generator=g, device="cuda"), dim=1)[:, :TOPK]
    idx = idx.to(torch.int32).contiguous()
    q = torch.randn((batch, heads, D), generator=g, device="cuda", dtype=torch.bfloat16)
    lens = torch.full((batch,), context, dtype=torch.int32, device="cuda")
    return q, k, idx, table, lens


def run(q, k, idx, table, lens, tiles, splits):
    dsa._tiles = lambda heads, fp8: tiles
    dsa._splits = lambda programs, count, block_n, resident, device: splits
    scale = 1.0 / 192 ** 0.5
    return dsa.dsa_attention(q, k, k[..., :DV], idx, scale, kv_lens=lens, page_table=table,
                             k_scale=1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bandwidth-gbps", type=float, default=3091.0)
    ap.add_argument("--heads", default="16,8")
    ap.add_argument("--batches", default="32,128")
    ap.add_argument("--context", type=int, default=65536)
    ap.add_argument("--kv", default="bf16,fp8")
    a = ap.parse_args()
    torch.manual_seed(0)
    default_tiles, default_splits = dsa._tiles, dsa._splits
    for heads, batch, kv in itertools.product(map(int, a.heads.split(",")),
                                              map(int, a.batches.split(",")), a.kv.split(",")):
        q, k, idx, table, lens = inputs(batch, heads, a.context, kv)
        floor_bytes = batch * TOPK * D * k.element_size()
        floor_us = floor_bytes / (a.bandwidth_gbps * 1e3)
        fp8 = kv == "fp8"
        block_h0, _, _, _, resident0 = default_tiles(heads, fp8)
        base = default_splits(batch * triton.cdiv(heads, block_h0), TOPK, 32, resident0, "cuda")
        # The reference answer: one split, the default tiles (checked against each choice).
        want = run(q, k, idx, table, lens, default_tiles(heads, fp8), 1).float()
        results = []
        for block_n, warps, stages, splits in itertools.product(
                (16, 32, 64), (4, 8), (2, 3, 4), (1, 2, 4, 8, 16)):
            block_h = 16 if heads <= 16 else 32 if heads <= 32 else 64
            tiles = (block_h, block_n, warps, stages, 1)
            try:
                got = run(q, k, idx, table, lens, tiles, splits).float()
                err = (got - want).abs().max().item()
                ms = triton.testing.do_bench(lambda: run(q, k, idx, table, lens, tiles, splits),
                                             warmup=10, rep=50, return_mode="median")
            except Exception as e:  # a tile that does not fit: say so, go on
                print(f"  h{heads} b{batch} {kv} {tiles} splits {splits}: {type(e).__name__} "
                      f"{str(e)[:80]}", flush=True)
                continue
            results.append((ms * 1e3, tiles, splits, err))
        results.sort(key=lambda r: r[0])
        print(f"h{heads} b{batch} {kv} context {a.context}: floor {floor_us:.1f} us "
              f"({floor_bytes / 1e6:.1f} MB at {a.bandwidth_gbps:.0f} GB/s); default splits {base}")
        for us, tiles, splits, err in results[:8]:
            print(f"  {us:7.1f} us  {100 * floor_us / us:5.1f}% of floor  tiles {tiles} "
                  f"splits {splits}  max|diff| {err:.3g}")
        print(flush=True)
        dsa._tiles, dsa._splits = default_tiles, default_splits
    return 0


if __name__ == "__main__":
    sys.exit(main())
