#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Figures of chapters 08 (tensor cores) and 09 (3xTF32), drawn from the chapters' own parameters.

The tile is read from the default `#define SGEMM_TILE a, b, ...` of each chapter source (fields in
the order of its TileShape struct); the mma.sync m16n8k8 fragment layout is the PTX ISA's
("Matrix fragments for mma.m16n8k8", .tf32), written once below. No GPU is needed.

  08_tensor_cores/figures/fragments.png  who holds what of one m16n8k8: A, B and C fragments
  08_tensor_cores/figures/warp_tile.png  block -> warps -> mma tiles of the default tile
  08_tensor_cores/figures/banks.png      banks of the fragment loads: ldmatrix phases of A
                                         (rows padded to BK + 4) and the b0 loads of B (BN + 8)
  09_3xtf32/figures/split.png            FP32 -> TF32 big + TF32 small: which bits each keeps
  09_3xtf32/figures/promotion.png        speed and error against the promotion interval, from the
                                         measured 09_3xtf32/figures/promotion_h100.csv

Usage: python3 scripts/tensor_core_figures.py [--out DIR]
Exit codes: 0 written, 2 bad usage (a source whose SGEMM_TILE cannot be read, matplotlib missing).
"""

import sys
from pathlib import Path

from chapters import EXIT_USAGE, REPO, ArgumentParser, pyplot
from figures import UsageError, parse_parameters

BANKS = 32


def tile_of(source):
    """{field: value} of the default SGEMM_TILE of a chapter source (figures.py's reader, which
    matches the values to the fields of the struct they initialise)."""
    tile = {name: value for name, value in parse_parameters(source).items()
            if not name.startswith(("k", "SGEMM_"))}
    if not tile:
        raise UsageError(f"{source}: no SGEMM_TILE default")
    return tile


# PTX ISA, mma.m16n8k8 with .tf32 operands; g = lane / 4, t = lane % 4.
def a_fragment(lane):
    g, t = lane // 4, lane % 4
    return [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]  # a0..a3: (row, k)


def b_fragment(lane):
    g, t = lane // 4, lane % 4
    return [(t, g), (t + 4, g)]  # b0, b1: (k, col)


def c_fragment(lane):
    g, t = lane // 4, lane % 4
    return [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]  # c0..c3: (row, col)


def grid_axes(ax, rows, cols, title, xlabel, ylabel):
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9.5, loc="left")
    ax.set_xlabel(xlabel, fontsize=8.5)
    ax.set_ylabel(ylabel, fontsize=8.5)
    ax.set_xticks([c + 0.5 for c in range(cols)], [str(c) for c in range(cols)], fontsize=7)
    ax.set_yticks([r + 0.5 for r in range(rows)], [str(r) for r in range(rows)], fontsize=7)
    ax.tick_params(length=0)


def cell(ax, plt, row, col, lane, label):
    from matplotlib.patches import Rectangle
    colour = plt.get_cmap("viridis")(0.1 + 0.8 * (lane // 4) / 7)
    ax.add_patch(Rectangle((col, row), 1, 1, facecolor=colour, edgecolor="white", lw=0.8,
                           alpha=0.35 + 0.65 * ((lane % 4) + 1) / 4))
    ax.text(col + 0.5, row + 0.5, f"{lane}\n{label}", ha="center", va="center", fontsize=5.6,
            color="black")


def draw_fragments(plt, out):
    fig, axes = plt.subplots(1, 3, figsize=(12.5, 6.2),
                             gridspec_kw={"width_ratios": [8, 8, 8]})
    a_ax, b_ax, c_ax = axes
    grid_axes(a_ax, 16, 8, "A fragment (16 x 8, row-major): lane / register", "k", "row of A")
    grid_axes(b_ax, 8, 8, "B fragment (8 x 8, k x n): lane / register", "column of B", "k")
    grid_axes(c_ax, 16, 8, "C fragment (16 x 8): lane / register", "column of C", "row of C")
    for lane in range(32):
        for r, (row, k) in enumerate(a_fragment(lane)):
            cell(a_ax, plt, row, k, lane, f"a{r}")
        for r, (k, col) in enumerate(b_fragment(lane)):
            cell(b_ax, plt, k, col, lane, f"b{r}")
        for r, (row, col) in enumerate(c_fragment(lane)):
            cell(c_ax, plt, row, col, lane, f"c{r}")
    fig.suptitle("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: lane l holds these elements "
                 "(g = l / 4 picks the row group, colour; t = l % 4 the column, shade)",
                 fontsize=10)
    fig.text(0.01, 0.01, "PTX ISA fragment layout, drawn by scripts/tensor_core_figures.py",
             fontsize=7, color="#57606a")
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def draw_warp_tile(plt, tile, out):
    from matplotlib.patches import Rectangle
    bm, bn, bk, wm, wn = (tile[k] for k in ("block_m", "block_n", "block_k", "warp_m", "warp_n"))
    warps_m, warps_n = bm // wm, bn // wn
    fig, ax = plt.subplots(figsize=(9, 9 * bm / bn + 1.2))
    ax.set_xlim(0, bn)
    ax.set_ylim(bm, 0)
    ax.set_aspect("equal")
    cmap = plt.get_cmap("tab10")
    for w in range(warps_m * warps_n):
        r0, c0 = (w // warps_n) * wm, (w % warps_n) * wn
        ax.add_patch(Rectangle((c0, r0), wn, wm, facecolor=cmap(w % 10), alpha=0.25,
                               edgecolor="black", lw=1.5))
        ax.text(c0 + wn / 2, r0 + wm / 2, f"warp {w}\n{wm} x {wn}\n{wm // 16} x {wn // 8} mma "
                "tiles", ha="center", va="center", fontsize=9)
        for i in range(wm // 16):
            for j in range(wn // 8):
                ax.add_patch(Rectangle((c0 + 8 * j, r0 + 16 * i), 8, 16, fill=False,
                                       edgecolor="grey", lw=0.4))
    ax.set_title(f"Block tile {bm} x {bn} (K tile {bk}, {tile['stages']} stages): "
                 f"{warps_m} x {warps_n} warps, each {wm // 16} x {wn // 8} m16n8 tiles, "
                 f"{bk // 8} k-steps of 8 per K tile", fontsize=9.5, loc="left")
    ax.set_xlabel("column of the block's C tile")
    ax.set_ylabel("row")
    fig.text(0.01, 0.01, "08_tensor_cores default SGEMM_TILE, drawn by "
             "scripts/tensor_core_figures.py", fontsize=7, color="#57606a")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def draw_banks(plt, tile, out):
    """Bank of every word a warp reads: ldmatrix.x4 of A (each 8-lane phase reads 8 rows of
    16 bytes) and the 4-byte loads of b0, with the chapter's padding and without it."""
    bk, bn = tile["block_k"], tile["block_n"]
    cases = [("A, ldmatrix phase 0 (rows 0-7, k 0-3)", bk + 4, bk, "a"),
             ("B, b0 loads (k = lane % 4, n = lane / 4)", bn + 8, bn, "b")]
    fig, axes = plt.subplots(2, 2, figsize=(12, 4.6))
    for col, (name, padded, plain, kind) in enumerate(cases):
        for row, stride in enumerate((plain, padded)):
            ax = axes[row][col]
            hits = [0] * BANKS
            if kind == "a":
                words = [r * stride + c for r in range(8) for c in range(4)]
            else:
                words = [(lane % 4) * stride + lane // 4 for lane in range(32)]
            for w in words:
                hits[w % BANKS] += 1
            ways = max(hits)
            ax.bar(range(BANKS), hits, color=["#2da44e" if h <= 1 else "#cf222e" for h in hits])
            ax.set_ylim(0, max(4.5, ways + 0.5))
            ax.set_xticks(range(0, BANKS, 4))
            ax.set_title(f"{name}\nrow stride {stride} floats: {ways}-way "
                         f"{'conflict' if ways > 1 else '(conflict-free)'}",
                         fontsize=9, loc="left")
            ax.set_xlabel("bank", fontsize=8)
            ax.set_ylabel("words", fontsize=8)
    fig.text(0.01, 0.01, f"BK = {bk}, BN = {bn} (08_tensor_cores default tile); drawn by "
             "scripts/tensor_core_figures.py", fontsize=7, color="#57606a")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def draw_split(plt, out):
    from matplotlib.patches import Rectangle
    fig, ax = plt.subplots(figsize=(11, 3.2))
    ax.set_xlim(-7, 34)
    ax.set_ylim(4.2, -0.6)
    ax.axis("off")
    rows = [("FP32 x", 0, 1, 8, 23, "#0969da"),
            ("TF32 big = rna(x)", 1, 1, 8, 10, "#2da44e"),
            ("TF32 small = rna(x - big)", 2, 1, 8, 10, "#bf8700"),
            ]
    for label, r, s, e, m, colour in rows:
        ax.text(-0.5, r + 0.45, label, ha="right", va="center", fontsize=9)
        ax.add_patch(Rectangle((0, r), 1, 0.9, facecolor="#8c959f"))
        ax.add_patch(Rectangle((1, r), 8, 0.9, facecolor="#d0d7de"))
        shift = 11 if r == 2 else 0
        ax.add_patch(Rectangle((9 + shift, r), m, 0.9, facecolor=colour))
        if r == 2:
            ax.add_patch(Rectangle((9 + shift + m, r), 23 - shift - m, 0.9, facecolor="#eaeef2"))
        elif m < 23:
            ax.add_patch(Rectangle((9 + m, r), 23 - m, 0.9, facecolor="#eaeef2", hatch="//"))
    for b in range(33):
        ax.plot([b, b], [-0.1, 0], color="black", lw=0.4)
    ax.text(0.5, -0.35, "sign", fontsize=7, ha="center")
    ax.text(5, -0.35, "exponent (8 bits)", fontsize=7, ha="center")
    ax.text(20.5, -0.35, "mantissa (23 bits + the implicit 1)", fontsize=7, ha="center")
    ax.text(-7, 3.5, "big keeps x's leading 11 significant bits (1 implicit + 10 stored); small, "
            "with its own exponent, the next 11 (its sign may differ from x's),\nso big + small "
            "holds about 22 of x's 24, and a*b = big*big + big*small + small*big + small*small, "
            "the last term below FP32's last bit (dropped).", fontsize=8, va="top")
    fig.text(0.01, 0.01, "drawn by scripts/tensor_core_figures.py", fontsize=7, color="#57606a")
    fig.savefig(out, dpi=110)
    plt.close(fig)


def draw_promotion(plt, table, out):
    """Error (rms and max, relative to rms(C)) and TFLOP/s against the promotion interval."""
    import csv
    with open(table, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise UsageError(f"{table}: no rows")
    order = [1, 2, 4, 8, 16, 0]  # 0 = never, drawn last
    labels = [str(p) if p else "never" for p in order]
    fig, (err_ax, speed_ax) = plt.subplots(1, 2, figsize=(11, 4))
    for dist, colour in (("uniform", "#0969da"), ("wide", "#bf8700")):
        by_p = {int(r["promote"]): r for r in rows if r["dist"] == dist}
        if not all(p in by_p for p in order):
            raise UsageError(f"{table}: {dist} lacks some of the intervals {order}")
        xs = range(len(order))
        err_ax.plot(xs, [float(by_p[p]["rms_rel_c"]) for p in order], "o-", color=colour,
                    label=f"09 rms, {dist}")
        err_ax.plot(xs, [float(by_p[p]["max_rel_c"]) for p in order], "s--", color=colour,
                    label=f"09 max, {dist}")
        err_ax.axhline(float(by_p[4]["cublas_fp32_rms_rel_c"]), color=colour, lw=0.8, ls=":",
                       label=f"cuBLAS FP32 rms, {dist}")
        speed_ax.plot(xs, [float(by_p[p]["tflops"]) for p in order], "o-", color=colour,
                      label=dist)
    for ax in (err_ax, speed_ax):
        ax.set_xticks(range(len(order)), labels)
        ax.set_xlabel("promotion interval (mma k-steps of 8)")
        ax.grid(alpha=0.3)
    err_ax.set_yscale("log")
    err_ax.set_ylabel("error vs FP64, relative to rms(C)")
    err_ax.legend(fontsize=7)
    speed_ax.set_ylabel("TFLOP/s")
    speed_ax.set_ylim(0, None)
    speed_ax.legend(fontsize=8)
    m = rows[0]["m"]
    fig.suptitle(f"09_3xtf32 at {m}^3 on the H100: promotion interval against error and speed",
                 fontsize=10)
    fig.text(0.01, 0.01, f"data: {Path(table).name}; drawn by scripts/tensor_core_figures.py",
             fontsize=7, color="#57606a")
    fig.tight_layout(rect=(0, 0.04, 1, 0.95))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv):
    parser = ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="write into OUT/<chapter>/ instead of <chapter>/figures/")
    args = parser.parse_args(argv)
    plt = pyplot("scripts/tensor_core_figures.py")
    if plt is None:
        return EXIT_USAGE
    try:
        tile08 = tile_of(REPO / "08_tensor_cores" / "tensor_cores.cu")
        dirs = {}
        for chapter in ("08_tensor_cores", "09_3xtf32"):
            d = Path(args.out) / chapter if args.out else REPO / chapter / "figures"
            d.mkdir(parents=True, exist_ok=True)
            dirs[chapter] = d
    except (UsageError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    jobs = [(dirs["08_tensor_cores"] / "fragments.png", lambda p: draw_fragments(plt, p)),
            (dirs["08_tensor_cores"] / "warp_tile.png", lambda p: draw_warp_tile(plt, tile08, p)),
            (dirs["08_tensor_cores"] / "banks.png", lambda p: draw_banks(plt, tile08, p)),
            (dirs["09_3xtf32"] / "split.png", lambda p: draw_split(plt, p)),
            (dirs["09_3xtf32"] / "promotion.png",
             lambda p: draw_promotion(plt, REPO / "09_3xtf32" / "figures" / "promotion_h100.csv", p))]
    for path, draw in jobs:
        try:
            draw(path)
        except (UsageError, OSError, KeyError, ValueError) as error:
            print(f"error: {path.name}: {error}", file=sys.stderr)
            return 2
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
