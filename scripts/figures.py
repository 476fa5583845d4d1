#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draw each chapter's idea from the chapter's own parameters.

The parameters are read from the chapter source, never copied here: the default
`#define SGEMM_TILE a, b, c...` in the order of the fields of the struct it initialises
(TileShape, BlockShape), and chapter 00's `constexpr int kName = value;` lines. Change a chapter's
tile and the next run of this script draws the new tile. No GPU is needed.

Figures (PNG, into <chapter>/figures/, or <out>/<chapter>/ with --out):
  00  warp_sectors.png  the 32-byte sectors one warp's loads of A and B and store of C touch
  01  warp_sectors.png  the same, before (chapter 00's mapping) and after
  02  k_tiles.png       a block's tiles of A and B marching along K
  03  thread_tile.png   one thread's strided kThreadM x kThreadN sub-tile and what it reads
  04  float4_lanes.png  the float4 loads of A, sA transposed, the LDS.128 fragment reads
  05  banks.png         the banks a warp's LDS.128 fragment reads touch, 04 against 05
      hierarchy.png     block -> warp -> thread with the default tile's numbers
  06  pipeline.png      which tile each shared-memory stage holds, iteration by iteration
  07  few_columns.png   the few-columns kernel: its pipeline of chunks, what a lane reads, and
                        the butterfly that adds the lanes' sums
      few_columns_wide.png
                        its wide layout (kThinMax + 1 .. kFewColsMax columns): one stage, what two
                        lanes read in each pass, the arithmetic of a pass, and the reduce-scatter
                        of the lanes that share a row's k
      row_copies.png    a K tile of B with N odd (4-byte copies) on SmallTile, a thread per chunk
                        against a warp per row: which thread copies what, and its addresses

07's tile comes from `using SmallTile = Tile<...>;`: parse_parameters reads every such alias of a
template struct as "<Alias>::<parameter>" (the struct's template parameter names, trailing `_`
dropped).
"""

import argparse
import math
import re
import sys
from pathlib import Path

from chapters import EXIT_PASS, EXIT_USAGE, REPO, ArgumentParser, pyplot

INK = "#1f2328"

EXAMPLES = """\
examples:
  python3 scripts/figures.py                         # every chapter, into <chapter>/figures/
  python3 scripts/figures.py --chapters 05 06
  python3 scripts/figures.py --out /tmp/figures      # /tmp/figures/<chapter>/*.png

exit codes:
  0  every figure was written (one line per figure names it and the parameters it drew)
  2  bad usage: unknown chapter, a chapter source whose parameters cannot be read (the line names
     the file and what is missing), an --out that cannot be created, matplotlib not installed
"""

SECTOR_FLOATS = 8  # global memory moves 32-byte sectors
BANKS = 32         # shared memory: 32 banks of 4 bytes; word w lives in bank w % 32


class UsageError(Exception):
    """Bad input the user can fix: printed as one "error:" line, exit code 2."""


# ---- reading the parameters ----------------------------------------------------------------

# Split-K's cap on slices (sgemm::kMaxSplits), read by every script that mirrors a split-K plan.
SPLIT_HEADER = Path("common") / "split_k.h"


def read_max_splits(text):
    """sgemm::kMaxSplits from the text of common/split_k.h (`inline constexpr int kMaxSplits =
    <integer>;`)."""
    found = re.search(r"^\s*inline\s+constexpr\s+int\s+kMaxSplits\s*=\s*(\d+)\s*;", text, re.M)
    if not found:
        raise UsageError(f"{SPLIT_HEADER}: no `inline constexpr int kMaxSplits = <integer>;`")
    return int(found.group(1))


def strip_comments(text):
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def chapter_source(root, chapter):
    """The chapter's .cu: <folder>/<name without the number>.cu, <folder>/<folder>.cu, or the
    only .cu file of the folder."""
    folder = Path(root) / chapter
    for name in (chapter.split("_", 1)[-1] + ".cu", chapter + ".cu"):
        if (folder / name).is_file():
            return folder / name
    found = sorted(folder.glob("*.cu"))
    if len(found) != 1:
        raise UsageError(f"{folder}: expected one chapter .cu file, found {len(found)}")
    return found[0]


def parse_parameters(path):
    """{name: int} from a chapter source: the fields of SGEMM_TILE (block_m, ...), other
    `#define SGEMM_X <int>` defaults (as "SGEMM_X"), and `constexpr int kName = <int>;`."""
    try:
        text = strip_comments(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read: {error}") from None
    params = {name: int(value) for name, value in
              re.findall(r"^\s*constexpr\s+int\s+(k\w+)\s*=\s*(\d+)\s*;", text, flags=re.M)}
    params.update({name: int(value) for name, value in
                   re.findall(r"^\s*#define\s+(SGEMM_(?!TILE\b)\w+)\s+(\d+)\s*$", text,
                              flags=re.M)})
    for alias, struct, args in re.findall(r"\busing\s+(\w+)\s*=\s*(\w+)\s*<([\d,\s]+)>\s*;",
                                          text):
        values = [int(v) for v in args.split(",")]
        try:
            names, _ = template_struct(text, path, struct, len(values), f"{alias} gives")
        except UsageError:
            continue  # not a template struct of this source, or not all its parameters given
        params.update({f"{alias}::{n.rstrip('_')}": v for n, v in zip(names, values)})
    tile = re.search(r"^\s*#define\s+SGEMM_TILE\s+(.+)$", text, flags=re.M)
    if not tile:
        return params
    try:
        values = [int(v) for v in tile.group(1).split(",")]
    except ValueError:
        raise UsageError(f"{path}: SGEMM_TILE is not a list of integers: {tile.group(1).strip()}"
                         ) from None
    holder = re.search(r"constexpr\s+(\w+)\s+\w+\s*\{\s*SGEMM_TILE\s*\}", text)
    if not holder:
        raise UsageError(f"{path}: no `constexpr <Struct> kName{{SGEMM_TILE}}` says what the "
                         "SGEMM_TILE fields are")
    body = re.search(r"struct\s+" + holder.group(1) + r"\s*\{(.*?)\};", text, flags=re.S)
    if not body:
        raise UsageError(f"{path}: struct {holder.group(1)} (the SGEMM_TILE fields) not found")
    fields = [name.strip() for decl in re.findall(r"\bint\s+([^;]+);", body.group(1))
              for name in decl.split(",")]
    if len(fields) != len(values):
        raise UsageError(f"{path}: SGEMM_TILE has {len(values)} values but {holder.group(1)} "
                         f"has {len(fields)} fields ({', '.join(fields)})")
    params.update(zip(fields, values))
    return params


def tile_struct(text, source, values, user=r"\w+"):
    """The template struct a Hopper chapter's tile comes from: `using <user> = <Struct><SGEMM_TILE>;`
    names it, and its template parameters take the SGEMM_TILE `values` in order. Returns
    (parameter names, the struct's match: group 1 the parameter list, group 2 the body). Raises
    UsageError (one line) when the alias, the struct or the parameter count does not fit."""
    label = "<Name>" if user == r"\w+" else user
    alias = re.search(r"\busing\s+" + user + r"\s*=\s*(\w+)\s*<\s*SGEMM_TILE\s*>", text)
    if not alias:
        raise UsageError(f"{source}: no `using {label} = <Struct><SGEMM_TILE>;` says what the "
                         "SGEMM_TILE values are")
    return template_struct(text, source, alias.group(1), len(values), "SGEMM_TILE has")


def template_struct(text, source, name, count, given):
    """The template struct `name`, which `count` values fill (`given` says who gives them, for the
    error: "SGEMM_TILE has", "PairTile gives"): (parameter names, the struct's match: group 1 the
    parameter list, group 2 the body). Raises UsageError (one line) when the struct is missing or
    its parameter count is not `count`."""
    struct = re.search(r"template\s*<([^>]*)>\s*struct\s+" + re.escape(name) +
                       r"\s*\{(.*?)\n\};", text, flags=re.S)
    if not struct:
        raise UsageError(f"{source}: template struct {name} not found")
    # A parameter's name is the last word before its default, if it has one (`int kCluster_ =
    # SGEMM_CLUSTER`).
    names = [p.partition("=")[0].split()[-1] for p in struct.group(1).split(",")]
    if len(names) != count:
        raise UsageError(f"{source}: {given} {count} values but {name} has {len(names)} template "
                         "parameters")
    return names, struct


def require(params, names, path):
    missing = [n for n in names if n not in params]
    if missing:
        raise UsageError(f"{path}: cannot find {', '.join(missing)} (have: "
                         f"{', '.join(sorted(params)) or 'nothing'})")
    bad = [n for n in names if params[n] <= 0]
    if bad:
        raise UsageError(f"{path}: {', '.join(bad)} must be positive")
    return [params[n] for n in names]


# 07's figures: the few-columns kernel (narrow layout, then what the wide one adds) and SmallTile.
FEW_COLUMNS = ["kThinRows", "kThinThreads", "kFewColsChunk", "SGEMM_FEW_COLS_STAGES", "kThinMax"]
WIDE_FEW_COLUMNS = ["kFewColsMax", "kWideChunk", "kWideLanesK", "kWideRowsPerLane"]
SMALL_TILE = ["SmallTile::kBlockM", "SmallTile::kBlockN", "SmallTile::kBlockK",
              "SmallTile::kWarpM", "SmallTile::kWarpN"]

# What each chapter's figures draw from its source; tests/scripts/test_figures.py checks that the
# parser still finds all of it in the committed chapters.
REQUIRED = {
    "00_naive": ["kBlockDimX", "kBlockDimY"],
    "01_coalescing": ["x", "y"],
    "02_smem_tiling": ["block_m", "block_n", "block_k"],
    "03_thread_tiling": ["block_m", "block_n", "block_k", "thread_m", "thread_n"],
    "04_vectorized": ["block_m", "block_n", "block_k", "thread_m", "thread_n"],
    "05_bank_conflict": ["block_m", "block_n", "block_k", "warp_m", "warp_n", "thread_m",
                         "thread_n"],
    "06_double_buffer": ["block_m", "block_n", "block_k", "stages"],
    "07_any_shape": FEW_COLUMNS + WIDE_FEW_COLUMNS + SMALL_TILE,
}


def parameters(root, chapter):
    """(the REQUIRED values in order, every parameter found, the source path)."""
    path = chapter_source(root, chapter)
    params = parse_parameters(path)
    return require(params, REQUIRED[chapter], path), params, path


# The chapters whose sources each chapter's figures read (01 and 05 draw a "before" too).
READS = {"01_coalescing": ["00_naive", "01_coalescing"],
         "05_bank_conflict": ["04_vectorized", "05_bank_conflict"]}
STAMP_KEY = "sgemm-parameters"  # PNG text chunk: the parameters a figure was drawn from


def signature(root, chapter):
    """The parameters a chapter's figures are drawn from, as one line. Stamped into every PNG,
    so a test can tell a committed figure that no longer matches its chapter's source."""
    parts = []
    for source in READS.get(chapter, [chapter]):
        values, _, _ = parameters(root, source)
        parts.append(f"{source}: " + ", ".join(f"{n} = {v}" for n, v in
                                                zip(REQUIRED[source], values)))
    return "; ".join(parts)


def stamp(path, text):
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo
    info = PngInfo()
    info.add_text(STAMP_KEY, text)
    with Image.open(path) as image:
        image.load()
    image.save(path, pnginfo=info, optimize=True)


def stamped(path):
    from PIL import Image
    with Image.open(path) as image:
        return image.text.get(STAMP_KEY)


def tile_text(params, names):
    return ", ".join(f"{n} = {params[n]}" for n in names)


# ---- shared drawing helpers ------------------------------------------------------------------

def lane_colours(plt, count=32):
    cmap = plt.get_cmap("viridis")  # perceptually uniform, colour-blind safe
    return [cmap(0.08 + 0.84 * i / max(1, count - 1)) for i in range(count)]


def cell_axes(ax, rows, cols, title, xlabel="", ylabel=""):
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9.5, loc="left")
    ax.set_xlabel(xlabel, fontsize=8.5)
    ax.set_ylabel(ylabel, fontsize=8.5)
    ax.tick_params(labelsize=7.5, length=2)
    ax.grid(False)


def box(ax, x, y, w, h, **style):
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x, y), w, h, **style))


def save(fig, path, note):
    """PNG with a 256-colour palette: a third of the size of matplotlib's RGBA for flat
    diagrams, so the READMEs stay light (Pillow ships with matplotlib)."""
    import io
    from PIL import Image
    fig.text(0.01, 0.012, note + " · generated by scripts/figures.py", fontsize=7,
             color="#57606a")
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=130, format="png")
    buffer.seek(0)
    Image.open(buffer).convert("RGB").quantize(256).save(path, optimize=True)


def fmt_lanes(lanes):
    """[0, 1, 2, 3] -> '0-3', [4, 6] -> '4,6'."""
    lanes = sorted(lanes)
    if len(lanes) > 2 and lanes[-1] - lanes[0] == len(lanes) - 1:
        return f"{lanes[0]}-{lanes[-1]}"
    return ",".join(map(str, lanes))


# ---- 00 and 01: a warp's addresses ---------------------------------------------------------

def warp_elements(block_x, rows_on_x):
    """(row, col) of C for the 32 lanes of warp 0 in block (0, 0): lane t is thread
    (t % block_x, t // block_x); threadIdx.x walks the rows (chapter 00) or the columns (01)."""
    out = []
    for lane in range(32):
        x, y = lane % block_x, lane // block_x
        out.append((x, y) if rows_on_x else (y, x))
    return out


def warp_requests(elements):
    """The (row, col) each lane touches in A, B and C at step k = 0, lanes at elements of C."""
    return {
        "A (M x K)": [(r, 0) for r, _ in elements],   # a_row[0]: row r, k = 0
        "B (K x N)": [(0, c) for _, c in elements],   # b_col[0]: k = 0, column c
        "C (M x N)": list(elements),                  # the store of the result
    }


def sectors(cells):
    """The 32-byte sectors (row, sector of the row) a request touches; rows are longer than the
    window, so a sector never spans two rows."""
    return {(r, c // SECTOR_FLOATS) for r, c in cells}


def draw_warp_row(plt, axes, elements, colours, caption):
    """Three 32 x 32 windows of A, B and C (row-major), the cells warp 0 touches at step k = 0,
    and the 32-byte sectors (8 floats of a row) they fall in."""
    accesses = warp_requests(elements)
    axis_names = {"A (M x K)": ("k", "row of A = row of C"), "B (K x N)": ("column of B", "k"),
                  "C (M x N)": ("column of C", "row of C")}
    counts = {}
    for ax, (name, cells) in zip(axes, accesses.items()):
        size = 32
        touched = sectors(cells)
        counts[name] = len(touched)
        verb = "read" if name[0] != "C" else "write"
        cell_axes(ax, size, size, f"{name}: one {verb} = {len(touched)} sector"
                  f"{'s' if len(touched) > 1 else ''}\n{32 * len(touched)} B fetched for "
                  f"{4 * len(set(cells))} B of distinct floats", *axis_names[name])
        for r in range(size):  # every sector of the window, faint
            for s in range(size // SECTOR_FLOATS):
                box(ax, s * SECTOR_FLOATS, r, SECTOR_FLOATS, 1, facecolor="none",
                    edgecolor="#d0d7de", linewidth=0.4)
        for r, s in touched:  # the sectors the request touches
            box(ax, s * SECTOR_FLOATS, r, SECTOR_FLOATS, 1, facecolor="#f3d9b1",
                edgecolor="none")
        for lane, (r, c) in enumerate(cells):
            box(ax, c, r, 1, 1, facecolor=colours[lane], edgecolor="none")
        for r, s in touched:  # outlines on top, so neighbouring sectors stay apart
            box(ax, s * SECTOR_FLOATS + 0.1, r + 0.08, SECTOR_FLOATS - 0.2, 0.84,
                facecolor="none", edgecolor="#b0262b", linewidth=1.0)
        if len(set(cells)) == 1:
            r, c = cells[0]
            ax.annotate("all 32 lanes: one address\n(broadcast)", (c + 1, r + 0.5),
                        xytext=(c + 10, r + 8), fontsize=8, arrowprops=dict(arrowstyle="->"))
        ax.set_xticks([0, 8, 16, 24, 32])
        ax.set_yticks([0, 8, 16, 24, 32])
    axes[0].annotate(caption, (0, 1.22), xycoords="axes fraction", fontsize=10, fontweight="bold")
    return counts


def lane_bar(fig, plt, colours, rect):
    from matplotlib.colors import ListedColormap
    from matplotlib.cm import ScalarMappable
    cax = fig.add_axes(rect)
    mappable = ScalarMappable(cmap=ListedColormap(colours), norm=plt.Normalize(-0.5, 31.5))
    bar = fig.colorbar(mappable, cax=cax, orientation="vertical", ticks=[0, 8, 16, 24, 31])
    bar.set_label("lane of the warp", fontsize=8)
    cax.tick_params(labelsize=7)


def figure_warp_sectors(plt, root, chapter, out):
    (x0, y0), _, _ = parameters(root, "00_naive")
    rows = [(warp_elements(x0, True), f"00 naive: threadIdx.x -> rows, block {x0} x {y0}")]
    used = f"00_naive: kBlockDimX = {x0}, kBlockDimY = {y0}"
    if chapter == "01_coalescing":
        (x1, y1), _, _ = parameters(root, chapter)
        rows.append((warp_elements(x1, False),
                     f"01 coalescing: threadIdx.x -> columns, block {x1} x {y1}"))
        used += f"; 01_coalescing: SGEMM_TILE x = {x1}, y = {y1}"
    colours = lane_colours(plt)
    fig, axes = plt.subplots(len(rows), 3, figsize=(10.5, 3.9 * len(rows) + 0.3), squeeze=False)
    for ax_row, (elements, caption) in zip(axes, rows):
        draw_warp_row(plt, ax_row, elements, colours, caption)
    fig.subplots_adjust(left=0.06, right=0.88, top=0.8 if len(rows) == 1 else 0.9,
                        bottom=0.16 if len(rows) == 1 else 0.09, wspace=0.38,
                        hspace=0.6)
    lane_bar(fig, plt, colours, (0.925, 0.25, 0.013, 0.5))
    fig.text(0.06, 0.04 if len(rows) == 1 else 0.028,
             "Warp 0 at step k = 0; each coloured cell is one lane's float, each outlined strip "
             "one 32-byte sector (8 floats of a row) that the load path must fetch.",
             fontsize=8)
    path = out / "warp_sectors.png"
    save(fig, path, used)
    plt.close(fig)
    return path, used


# ---- 02: the tiles marching along K ------------------------------------------------------

def figure_k_tiles(plt, root, chapter, out, colours):
    (bm, bn, bk), params, path = parameters(root, chapter)
    steps = 4
    m = n = 3 * max(bm, bn)  # a 3 x 3 grid of blocks (3 x 3 or more for non-square tiles)
    k = steps * bk
    br, bc = 1, 1  # the block drawn: row 1, column 1 of the grid
    fig, ax = plt.subplots(figsize=(9, 8.6))
    gap = 0.06 * (k + n)
    # Layout: B above C, A to the left of C, so that row strips and column strips line up.
    ax0, ay0 = 0, k + gap            # A: x in [0, k), y in [k + gap, k + gap + m)
    bx0, by0 = k + gap, 0            # B: x in [k + gap, ...), y in [0, k)
    cx0, cy0 = k + gap, k + gap      # C
    frame = dict(facecolor="#f6f8fa", edgecolor="#1f2328", linewidth=1)
    box(ax, ax0, ay0, k, m, **frame)
    box(ax, bx0, by0, n, k, **frame)
    box(ax, cx0, cy0, n, m, **frame)
    for t in range(steps):
        c = colours[t % len(colours)]
        box(ax, ax0 + t * bk, ay0 + br * bm, bk, bm, facecolor=c, edgecolor="#1f2328",
            linewidth=0.8)
        box(ax, bx0 + bc * bn, by0 + t * bk, bn, bk, facecolor=c, edgecolor="#1f2328",
            linewidth=0.8)
        ax.text(ax0 + (t + 0.5) * bk, ay0 + (br + 0.5) * bm, f"step {t}", ha="center",
                va="center", fontsize=8, rotation=90 if bk < bm else 0)
        ax.text(bx0 + (bc + 0.5) * bn, by0 + (t + 0.5) * bk, f"step {t}", ha="center",
                va="center", fontsize=8, rotation=90 if bn < bk / 2 else 0)
    box(ax, cx0 + bc * bn, cy0 + br * bm, bn, bm, facecolor="#1f2328", edgecolor="#1f2328")
    ax.text(cx0 + n + 0.02 * (k + n), cy0 + m / 2, f"C ({m} x {n})\nblack: this\nblock's "
            f"{bm} x {bn}\ntile", ha="left", va="center", fontsize=8.5)
    for i in range(1, m // bm):
        ax.plot([cx0, cx0 + n], [cy0 + i * bm] * 2, color="#8c959f", linewidth=0.5)
    for j in range(1, n // bn):
        ax.plot([cx0 + j * bn] * 2, [cy0, cy0 + m], color="#8c959f", linewidth=0.5)
    ax.text(ax0, ay0 + m + 0.02 * (k + n), f"A ({m} x K), K = {steps} x BK = {k}: "
            "the block's rows, one BK-wide slice per step", ha="left", va="top", fontsize=8.5)
    ax.text(bx0 + n + 0.02 * (k + n), by0 + k / 2, f"B (K x {n}): the block's columns, one "
            "BK-deep slice per step", ha="left", va="center", fontsize=8.5, rotation=90)
    # Shared memory at step 1, to the same scale, where the corner above A is free.
    sx, sy = 0.04 * k, 0.35 * k
    if bk + 0.1 * k + bn <= 0.95 * k and max(bm, bk) <= 0.6 * k:
        c = colours[1]
        box(ax, sx, sy, bk, bm, facecolor=c, edgecolor="#1f2328", linewidth=0.8)
        box(ax, sx + bk + 0.1 * k, sy, bn, bk, facecolor=c, edgecolor="#1f2328", linewidth=0.8)
        ax.text(sx, sy - 0.12 * k, "shared memory during step 1:", ha="left",
                va="bottom", fontsize=8.5)
        ax.text(sx, sy - 0.02 * k, f"sA[{bm}][{bk}]", ha="left", va="bottom", fontsize=8.5)
        ax.text(sx + bk + 0.1 * k, sy - 0.02 * k, f"sB[{bk}][{bn}]", ha="left", va="bottom",
                fontsize=8.5)
    smem_kb = (bm * bk + bk * bn) * 4 / 1024
    fig.text(0.02, 0.97, f"Block tiling through shared memory, BM x BN x BK = {bm} x {bn} x {bk}",
             fontsize=10.5, fontweight="bold", va="top")
    fig.text(0.02, 0.92, f"Each step, the block's {bm * bn} threads copy a {bm} x {bk} tile "
             f"of A and a {bk} x {bn} tile of B into shared memory ({smem_kb:g} KB), wait at a "
             f"barrier,\nand each thread does {bk} multiply-adds out of it. Every float of A "
             f"the block loads is then read by {bn} threads, every float of B by {bm}.",
             fontsize=8.5, va="top")
    ax.set_xlim(-0.02 * (k + n), k + gap + n + 0.12 * (k + n))
    ax.set_ylim(k + gap + m + 0.06 * (k + n), -0.02 * (k + n))
    ax.set_aspect("equal")
    ax.axis("off")
    used = tile_text(params, ["block_m", "block_n", "block_k"])
    out_path = out / "k_tiles.png"
    fig.tight_layout(rect=(0, 0.03, 1, 0.86))
    save(fig, out_path, f"{chapter}: SGEMM_TILE {used}")
    plt.close(fig)
    return out_path, used


# ---- 03: one thread's sub-tile ------------------------------------------------------------

def paint(shape, cells, rgb):
    import numpy as np
    image = np.ones(shape + (3,))
    for (r, c), colour in cells:
        image[r, c] = rgb(colour)
    return image


def figure_thread_tile(plt, root, chapter, out, colours):
    from matplotlib.colors import to_rgb
    (bm, bn, bk, tm, tn), params, path = parameters(root, chapter)
    names = REQUIRED[chapter]
    rows_t, cols_t = bm // tm, bn // tn  # kThreadRows, kThreadCols
    light, t0, t1 = "#d9d9d9", colours[0], colours[4]
    warp = [(t // cols_t, t % cols_t) for t in range(32)]

    def owned(tr, tc):
        return [(tr + i * rows_t, tc + j * cols_t) for i in range(tm) for j in range(tn)]

    c_cells = [(cell, light) for tr, tc in warp for cell in owned(tr, tc)]
    c_cells += [(cell, t1) for cell in owned(*warp[1])] + [(cell, t0) for cell in owned(*warp[0])]
    a_cells = [((tr + i * rows_t, 0), light) for tr, _ in warp for i in range(tm)]
    a_cells += [((warp[0][0] + i * rows_t, 0), t0) for i in range(tm)]
    b_cells = [((0, tc + j * cols_t), light) for _, tc in warp for j in range(tn)]
    b_cells += [((0, warp[1][1] + j * cols_t), t1) for j in range(tn)]
    b_cells += [((0, warp[0][1] + j * cols_t), t0) for j in range(tn)]

    fig = plt.figure(figsize=(13, 6.6))
    grid = fig.add_gridspec(2, 2, width_ratios=[max(bk, 6), bn], height_ratios=[max(bk, 6), bm],
                            left=0.06, right=0.52, top=0.88, bottom=0.09, wspace=0.06, hspace=0.06)
    ax_c = fig.add_subplot(grid[1, 1])
    ax_a = fig.add_subplot(grid[1, 0])
    ax_b = fig.add_subplot(grid[0, 1])
    for ax, shape, cells, title in (
            (ax_c, (bm, bn), c_cells, f"C tile {bm} x {bn}"),
            (ax_a, (bm, bk), a_cells, ""),
            (ax_b, (bk, bn), b_cells, f"sB {bk} x {bn}: row kk = 0 read")):
        ax.imshow(paint(shape, cells, to_rgb), interpolation="nearest", aspect="auto",
                  extent=(0, shape[1], shape[0], 0))
        ax.set_title(title, fontsize=9, loc="left", pad=3)
        ax.tick_params(labelsize=7, length=2)
        ax.grid(False)
    ax_a.set_ylabel("row m of the tile", fontsize=8)
    ax_a.set_xlabel("k", fontsize=8)
    ax_a.set_title(f"sA {bm} x {bk}", fontsize=9, loc="left", pad=3)
    ax_c.set_yticklabels([])
    ax_b.set_xticklabels([])
    ax_c.set_xlabel("column n of the tile", fontsize=8)
    # Two bands of the C tile enlarged, rows 0-3 and kThreadRows.. + 3, columns up to
    # 2 * kThreadCols: which thread of warp 0 owns each element.
    band = min(4, rows_t)
    shown = [r for r in list(range(band)) + list(range(rows_t, rows_t + band)) if r < bm]
    zc = min(bn, 2 * cols_t)
    for r0 in (0, rows_t):
        box(ax_c, 0, r0, zc, band, facecolor="none", edgecolor="#D55E00", linewidth=1.2)
    owner = {cell: t for t, (tr, tc) in enumerate(warp) for cell in owned(tr, tc)}
    colour_of = dict(c_cells)
    ax_z = fig.add_axes((0.56, 0.62, 0.42, 0.24))
    ax_z.imshow(paint((len(shown), zc), [((i, c), colour_of[(r, c)]) for i, r in enumerate(shown)
                                          for c in range(zc) if (r, c) in colour_of], to_rgb),
                interpolation="nearest", aspect="auto", extent=(0, zc, len(shown), 0))
    for i, r in enumerate(shown):
        for c in range(zc):
            if (r, c) in owner:
                t = owner[(r, c)]
                ax_z.text(c + 0.5, i + 0.5, str(t), ha="center", va="center", fontsize=6.5,
                          color="white" if t in (0, 1) else INK)
    for edge in range(zc + 1):
        ax_z.axvline(edge, color="white", linewidth=0.5)
    ax_z.axhline(band, color="#D55E00", linewidth=1.5, linestyle="--")
    ax_z.set_yticks([i + 0.5 for i in range(len(shown))], [str(r) for r in shown], fontsize=7)
    ax_z.set_xticks([c + 0.5 for c in range(0, zc, 4)], [str(c) for c in range(0, zc, 4)],
                    fontsize=7)
    ax_z.set_ylabel("row", fontsize=8)
    ax_z.set_title(f"the outlined bands enlarged: rows 0-{band - 1} and {rows_t}-"
                   f"{rows_t + band - 1}, thread numbers of warp 0\n(blank rows belong to the "
                   "next warps)", fontsize=9, loc="left", pad=3)
    threads = rows_t * cols_t
    fig.suptitle(f"Thread tiling, BM x BN x BK = {bm} x {bn} x {bk}, TM x TN = {tm} x {tn}: "
                 "who computes what", x=0.06, ha="left", fontsize=10.5, fontweight="bold")
    text = (f"{threads} threads in a {rows_t} x {cols_t} grid. Thread (tr, tc) owns rows tr, "
            f"tr + {rows_t}, ...\nand columns tc, tc + {cols_t}, ... ({tm} x {tn} = {tm * tn} "
            "elements of C in registers).\n"
            f"At each k it loads {tm} values of sA and {tn} of sB into registers\nand does "
            f"{tm * tn} FMAs: each A value is used {tn} times, each B value {tm}\n"
            f"times ({tm + tn} shared loads per {tm * tn} FMAs; chapter 02: 2 per FMA).")
    fig.text(0.56, 0.5, text, fontsize=8.8, va="top", linespacing=1.4)
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(color=t0, label="thread 0 (tr = 0, tc = 0)"),
                        Patch(color=t1, label="thread 1 (tr = 0, tc = 1): same rows of sA"),
                        Patch(color=light, label="the rest of warp 0 (threads 0-31)")],
               loc="upper left", bbox_to_anchor=(0.555, 0.3), fontsize=8.5, frameon=False)
    used = tile_text(params, names)
    out_path = out / "thread_tile.png"
    save(fig, out_path, f"{chapter}: SGEMM_TILE {used}")
    plt.close(fig)
    return out_path, used


# ---- 04: float4 lanes and the transposed sA ----------------------------------------------

def figure_float4_lanes(plt, root, chapter, out, colours):
    (bm, bn, bk, tm, tn), params, path = parameters(root, chapter)
    names = REQUIRED[chapter]
    threads_n = bn // tn
    threads = (bm // tm) * threads_n
    per_row_a = threads // bm  # kThreadsPerRowA
    if per_row_a < 1 or bk % (4 * per_row_a):
        raise UsageError(f"{path}: the A load plan needs kThreads ({threads}) to be a multiple "
                         f"of BM ({bm}) and BK ({bk}) a multiple of 4 x {max(per_row_a, 1)}")
    chunks_a = bk // (4 * per_row_a)
    lanes = lane_colours(plt)
    # Warp 0's float4 loads of the A tile: lane t reads row t / kThreadsPerRowA, k = a_kc + c *
    # 4 * kThreadsPerRowA .. + 3, and stores the 4 values into 4 rows of sA[k][m].
    loads = []
    for lane in range(32):
        row, kc = lane // per_row_a, (lane % per_row_a) * 4
        for c in range(chunks_a):
            loads.append((lane, row, kc + c * 4 * per_row_a))
    rows_shown = min(bm, max(r for _, r, _ in loads) + 1)
    fig = plt.figure(figsize=(11, 6.4))
    grid = fig.add_gridspec(3, 2, width_ratios=[bk, rows_shown], height_ratios=[rows_shown, 2, 2],
                            left=0.06, right=0.92, top=0.85, bottom=0.08, wspace=0.12,
                            hspace=0.75)
    ax_g, ax_s = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    cell_axes(ax_g, rows_shown, bk, f"A tile in global memory\n(rows 0-{rows_shown - 1} of "
              f"{bm}): LDG.128", "k", "row m")
    cell_axes(ax_s, bk, rows_shown, f"sA[k][m] = A transposed (m = 0-{rows_shown - 1} of "
              f"{bm}):\neach float4 becomes 4 scalar stores down a column", "m", "k")
    for lane, row, k0 in loads:
        box(ax_g, k0, row, 4, 1, facecolor=lanes[lane], edgecolor="white", linewidth=0.6)
        ax_g.text(k0 + 2, row + 0.5, str(lane), ha="center", va="center", fontsize=5.5,
                  color="white" if lane < 20 else "black")
        for j in range(4):
            box(ax_s, row, k0 + j, 1, 1, facecolor=lanes[lane], edgecolor="white", linewidth=0.3)
            if rows_shown <= 32 and bk <= 32:
                ax_s.text(row + 0.5, k0 + j + 0.5, str(lane), ha="center", va="center",
                          fontsize=5, color="white" if lane < 20 else "black")
    # The fragment reads at kk = 0: lane -> (ty, tx) = (lane / kThreadsN, lane % kThreadsN);
    # sA[0][ty * TM ..] and sB[0][tx * TN ..] as TM / 4 and TN / 4 float4s.
    for gi, (name, width, per, index) in enumerate(
            (("sA", bm, tm, lambda lane: lane // threads_n),
             ("sB", bn, tn, lambda lane: lane % threads_n))):
        ax = fig.add_subplot(grid[1 + gi, :])
        cell_axes(ax, 1, width, "")
        ax.set_aspect("auto")
        ax.set_yticks([])
        readers = {}
        for lane in range(32):
            for q in range(per // 4):
                readers.setdefault(index(lane) * per + 4 * q, []).append(lane)
        for start, who in readers.items():
            box(ax, start, 0, 4, 1, facecolor=lanes[who[0]], edgecolor="white", linewidth=0.8)
            ax.text(start + 2, 0.5, fmt_lanes(who), ha="center", va="center", fontsize=5.5,
                    color="white" if who[0] < 20 else "black", rotation=90 if width > 64 else 0)
        ax.set_title(f"row kk = 0 of {name}: the LDS.128 reads of warp 0 (lane numbers); "
                     f"each lane reads {per // 4} float4 ({per} floats) = its "
                     f"{'kThreadM values of A' if name == 'sA' else 'kThreadN values of B'}",
                     fontsize=9, loc="left")
        ax.set_xticks(range(0, width + 1, 16))
    used = tile_text(params, names)
    fig.suptitle(f"Vectorized, BM x BN x BK = {bm} x {bn} x {bk}, thread {tm} x {tn}: "
                 "float4 loads, A transposed so a thread's A values are consecutive",
                 x=0.06, ha="left", fontsize=10.5, fontweight="bold")
    lane_bar(fig, plt, lanes, (0.94, 0.45, 0.012, 0.4))
    out_path = out / "float4_lanes.png"
    save(fig, out_path, f"{chapter}: SGEMM_TILE {used}")
    plt.close(fig)
    return out_path, used


# ---- 05: banks and the hierarchy -----------------------------------------------------------

def lds128_wavefronts(starts):
    """Schedule one warp-wide LDS.128 as 05_bank_conflict/README.md ("Wide accesses") describes:
    starts[lane] is the word address of the lane's float4. Lanes are served 8 at a time (128
    bytes), or 16 at a time when every lane i shares its address with lane i ^ 1 (or every lane
    with lane i ^ 2), the hardware returning each value once per pair. Inside a group, distinct
    words in one bank take one wavefront each (a bank conflict); equal addresses are broadcast.
    Returns [(group lanes, [{start word: [lanes]} per wavefront])]."""
    paired = any(all(starts[i] == starts[i ^ d] for i in range(32)) for d in (1, 2))
    size = 16 if paired else 8
    groups = []
    for g0 in range(0, 32, size):
        vectors = {}
        for lane in range(g0, g0 + size):
            vectors.setdefault(starts[lane], []).append(lane)
        waves = []
        for start, who in vectors.items():  # first come, first served, as lanes are ordered
            banks = {(start + j) % BANKS for j in range(4)}
            for wave in waves:
                taken = {(s + j) % BANKS for s in wave for j in range(4)}
                if not banks & taken:
                    wave[start] = who
                    break
            else:
                waves.append({start: who})
        groups.append((list(range(g0, g0 + size)), waves))
    return groups


def fragment_starts(layout, p):
    """Word addresses (within row kk = 0) of warp 0's first LDS.128 of A and of B."""
    if layout == "04":  # chapter 04: lane -> (ty, tx) = (lane / kThreadsN, lane % kThreadsN)
        threads_n = p["block_n"] // p["thread_n"]
        return ([(lane // threads_n) * p["thread_m"] for lane in range(32)],
                [(lane % threads_n) * p["thread_n"] for lane in range(32)])
    lanes_n = p["warp_n"] // p["thread_n"]  # kLanesN
    log2 = int(math.log2(lanes_n))
    if layout == "plain":  # warp tiling without the interleave (README.md's middle row)
        lane_m = [lane // lanes_n for lane in range(32)]
        lane_n = [lane % lanes_n for lane in range(32)]
    else:
        lane_m = [(lane & 1) | ((lane >> (1 + log2)) << 1) for lane in range(32)]
        lane_n = [(lane >> 1) & (lanes_n - 1) for lane in range(32)]
    return [4 * m for m in lane_m], [4 * n for n in lane_n]


def draw_banks(ax, groups, colours, title, height):
    rows = sum(len(waves) for _, waves in groups)
    cell_axes(ax, height, BANKS, "", "bank", "")
    ax.set_aspect("auto")
    y, labels = 0, []
    for lanes, waves in groups:
        for w, wave in enumerate(waves):
            for start, who in wave.items():
                bank = start % BANKS
                box(ax, bank, y + 0.08, 4, 0.84, facecolor=colours[who[0]], edgecolor="white",
                    linewidth=1, hatch="///" if w else None)
                text = fmt_lanes(who)
                if len(text) > 9:  # e.g. 0,2,4,6,8,...: the first three say the pattern
                    text = fmt_lanes(who[:3]) + ",.."
                ax.text(bank + 2, y + 0.5, text, ha="center", va="center",
                        fontsize=6.5, color="white" if who[0] < 20 else "black")
            labels.append(f"lanes {lanes[0]}-{lanes[-1]}" + (f" (conflict {w + 1})" if w else ""))
            y += 1
    ax.set_yticks([i + 0.5 for i in range(rows)], labels, fontsize=7)
    ax.set_xticks(range(0, BANKS + 1, 4))
    ax.set_title(f"{title}: {rows} wavefront{'s' if rows > 1 else ''}", fontsize=9, loc="left")
    return rows


def figure_banks(plt, root, chapter, out, colours):
    _, params, path = parameters(root, chapter)
    names = REQUIRED[chapter]
    lanes_n = params["warp_n"] // params["thread_n"]
    if lanes_n < 1 or lanes_n & (lanes_n - 1):
        raise UsageError(f"{path}: warp_n / thread_n = kLanesN must be a power of two")
    _, p04, _ = parameters(root, "04_vectorized")
    lanes = lane_colours(plt)
    a04, b04 = fragment_starts("04", p04)
    a05, b05 = fragment_starts("05", params)
    panels = [("04: A fragment", a04), ("05: A fragment", a05),
              ("04: B fragment", b04), ("05: B fragment", b05)]
    schedules = [lds128_wavefronts(s) for _, s in panels]
    heights = [sum(len(w) for _, w in g) for g in schedules]
    fig = plt.figure(figsize=(12, 2.2 + 0.42 * (max(heights[0], heights[1]) +
                                                max(heights[2], heights[3]))))
    grid = fig.add_gridspec(2, 2, height_ratios=[max(heights[:2]), max(heights[2:])],
                            left=0.11, right=0.93, top=0.83, bottom=0.13, wspace=0.3, hspace=0.9)
    for i, ((title, _), groups) in enumerate(zip(panels, schedules)):
        draw_banks(fig.add_subplot(grid[i // 2, i % 2]), groups, lanes, title,
                   max(heights[2 * (i // 2):2 * (i // 2) + 2]))
    fig.suptitle("One LDS.128 of warp 0 at kk = 0: which banks each lane's float4 occupies, "
                 "wavefront by wavefront", x=0.02, ha="left", fontsize=10.5, fontweight="bold")
    fig.text(0.02, 0.9, "Bank = word address % 32; a float4 spans 4 banks. Lanes are served 8 "
             "at a time (16 when lanes i and i^1, or i and i^2, share every address); distinct "
             "words in one bank\nwithin a group take one extra wavefront each (hatched). "
             f"04's lanes: (ty, tx) = (lane / {p04['block_n'] // p04['thread_n']}, lane % "
             f"{p04['block_n'] // p04['thread_n']}). 05's: lane_m = (lane & 1) | "
             f"((lane >> {1 + int(math.log2(lanes_n))}) << 1), lane_n = (lane >> 1) & "
             f"{lanes_n - 1}.", fontsize=8)
    lane_bar(fig, plt, lanes, (0.95, 0.25, 0.01, 0.5))
    used = tile_text(params, names)
    out_path = out / "banks.png"
    save(fig, out_path, f"{chapter}: SGEMM_TILE {used}; 04_vectorized: "
         f"{tile_text(p04, ['block_n', 'thread_m', 'thread_n'])}")
    plt.close(fig)
    return out_path, used


def figure_hierarchy(plt, root, chapter, out, colours):
    (bm, bn, bk, wm, wn, tm, tn), params, path = parameters(root, chapter)
    names = REQUIRED[chapter]
    lanes_m, lanes_n = wm // tm, wn // tn
    if lanes_m * lanes_n != 32 or lanes_n & (lanes_n - 1):
        raise UsageError(f"{path}: the warp tile must hold 32 lanes, a power of two along N")
    log2 = int(math.log2(lanes_n))
    lane_of = {}
    for lane in range(32):
        lane_of[((lane & 1) | ((lane >> (1 + log2)) << 1), (lane >> 1) & (lanes_n - 1))] = lane
    lanes = lane_colours(plt)
    warps_m, warps_n = bm // wm, bn // wn
    fig, (ax_b, ax_w, ax_t) = plt.subplots(
        1, 3, figsize=(13, 5.4), gridspec_kw=dict(width_ratios=[bn / bm, wn / wm, tn / tm * 0.8]))
    # Block: the warps.
    cell_axes(ax_b, bm, bn, f"block tile {bm} x {bn}: {warps_m * warps_n} warps "
              f"of {wm} x {wn}", "column n", "row m")
    for w in range(warps_m * warps_n):
        r, c = (w // warps_n) * wm, (w % warps_n) * wn
        box(ax_b, c, r, wn, wm, facecolor="#56B4E9" if w == 0 else "#f6f8fa",
            edgecolor="#1f2328", linewidth=1)
        ax_b.text(c + wn / 2, r + wm / 2, f"warp {w}", ha="center", va="center", fontsize=8)
    # Warp: 4 x 4 blocks, each owned by one lane; a lane owns TM / 4 x TN / 4 of them.
    cell_axes(ax_w, wm, wn, f"warp 0's {wm} x {wn}: lanes in a {lanes_m} x {lanes_n} grid,\n"
              f"each 4 x 4 block labelled with its lane", "column n", "row m")
    for bi in range(wm // 4):
        for bj in range(wn // 4):
            lane = lane_of[(bi % lanes_m, bj % lanes_n)]
            box(ax_w, 4 * bj, 4 * bi, 4, 4, facecolor=lanes[lane], edgecolor="white",
                linewidth=0.8 if lane else 0.8)
            ax_w.text(4 * bj + 2, 4 * bi + 2, str(lane), ha="center", va="center", fontsize=7,
                      color="white" if lane < 20 else "black",
                      fontweight="bold" if lane == 0 else "normal")
            if lane == 0:
                box(ax_w, 4 * bj, 4 * bi, 4, 4, facecolor="none", edgecolor="#D55E00",
                    linewidth=2)
    # Thread: its TM x TN accumulators, in 4 x 4 blocks spread kLanesM * 4 rows and
    # kLanesN * 4 columns apart.
    cell_axes(ax_t, tm, tn, f"lane 0: {tm} x {tn} = {tm * tn} accumulators,\n"
              f"{tm // 4} x {tn // 4} blocks of 4 x 4", "", "")
    for i in range(tm):
        for j in range(tn):
            box(ax_t, j, i, 1, 1, facecolor=lanes[0] if (i // 4 + j // 4) % 2 == 0 else
                "#3b528b", edgecolor="white", linewidth=0.6)
    ax_t.set_xticks([4 * h + 2 for h in range(tn // 4)],
                    [f"cols {4 * lanes_n * h}-{4 * lanes_n * h + 3}" for h in range(tn // 4)],
                    fontsize=7)
    ax_t.set_yticks([4 * g + 2 for g in range(tm // 4)],
                    [f"rows\n{4 * lanes_m * g}-{4 * lanes_m * g + 3}" for g in range(tm // 4)],
                    fontsize=7)
    fig.suptitle(f"Warp tiling, BM x BN x BK = {bm} x {bn} x {bk}, warp {wm} x {wn}, "
                 f"thread {tm} x {tn}: block -> warp -> thread", x=0.02, ha="left",
                 fontsize=10.5, fontweight="bold")
    fig.text(0.02, 0.035, f"lane_m = (lane & 1) | ((lane >> {1 + log2}) << 1), lane_n = "
             f"(lane >> 1) & {lanes_n - 1}: lanes 2i and 2i+1 share columns (one B float4), "
             "lanes i and i^2 share rows (one A float4). Lane 0's blocks are outlined.",
             fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 1, 0.94))
    used = tile_text(params, names)
    out_path = out / "hierarchy.png"
    save(fig, out_path, f"{chapter}: SGEMM_TILE {used}")
    plt.close(fig)
    return out_path, used


# ---- 06 and 07: a cp.async pipeline ---------------------------------------------------------

def draw_pipeline(plt, ax, ax_n, stages, tiles, colours):
    """Which tile (or chunk) each shared-memory stage holds, iteration by iteration: tile j is
    copied into stage j % stages, issued stages - 1 iterations before it is computed; below it,
    the cp.async groups one thread has in flight."""
    issue = {j: -0.9 + 0.25 * j if j < stages - 1 else j - stages + 1 for j in range(tiles)}
    for j in range(tiles):
        s, c = j % stages, colours[j % len(colours)]
        landed = j - 0.12  # the wait before the barrier that ends iteration j - 1
        ax.add_patch(plt.Rectangle((issue[j], s + 0.2), landed - issue[j], 0.6, facecolor="white",
                                   edgecolor=c, hatch="////", linewidth=1.2))
        ax.text((issue[j] + landed) / 2, s + 0.5, f"copy {j}", ha="center", va="center",
                fontsize=7.5, bbox=dict(facecolor="white", edgecolor="none", pad=0.5))
        ax.add_patch(plt.Rectangle((j, s + 0.2), 1, 0.6, facecolor=c, edgecolor="#1f2328",
                                   linewidth=0.8))
        ax.text(j + 0.5, s + 0.5, f"compute {j}", ha="center", va="center", fontsize=7.5)
    for t in range(tiles + 1):
        ax.axvline(t - 0.06, color="#57606a", linewidth=0.8, linestyle=":")
    ax.set_ylim(stages, 0)
    ax.set_yticks([s + 0.5 for s in range(stages)], [f"stage {s}" for s in range(stages)])
    ax.grid(False)
    # cp.async groups pending per thread: the prologue commits kStages - 1 groups; the wait
    # before the loop and the one that ends every iteration but the last leave kStages - 2;
    # every iteration commits one more (empty past the last tile).
    xs, ys = [-1.05], [0]
    for j in range(stages - 1):
        xs.append(issue[j])
        ys.append(j + 1)
    xs.append(-0.12)
    ys.append(stages - 2)
    for t in range(tiles):
        xs.append(t)
        ys.append(ys[-1] + 1)
        if t + 1 < tiles:
            xs.append(t + 1 - 0.12)
            ys.append(stages - 2)
    xs.append(tiles + 0.05)
    ys.append(ys[-1])
    ax_n.step(xs, ys, where="post", color="#0072B2", linewidth=1.6)
    ax_n.set_ylim(-0.3, stages - 0.7)
    ax_n.set_yticks(range(stages))
    ax_n.set_ylabel("groups in\nflight", fontsize=8)
    ax_n.set_xticks([-0.5] + [t + 0.5 for t in range(tiles)],
                    ["prologue"] + [f"iteration {t}" for t in range(tiles)], fontsize=7.5)
    ax_n.grid(axis="x", visible=False)
    ax.set_xlim(-1.05, tiles + 0.05)


def figure_pipeline(plt, root, chapter, out, colours):
    (bm, bn, bk, stages), params, path = parameters(root, chapter)
    names = REQUIRED[chapter]
    if stages < 2:
        raise UsageError(f"{path}: stages = {stages}: a pipeline needs at least 2")
    tiles = 2 * stages + 1  # enough iterations to show the steady state and the tail
    fig, (ax, ax_n) = plt.subplots(2, 1, figsize=(11.5, 2.9 + 0.55 * stages), sharex=True,
                                   gridspec_kw=dict(height_ratios=[stages, 1.3]))
    draw_pipeline(plt, ax, ax_n, stages, tiles, colours)
    ax.set_title(f"Double buffering, BM x BN x BK = {bm} x {bn} x {bk}, {stages} stages "
                 f"({stages} x {(bk * (bm + 4) + bk * bn) * 4 / 1024:.1f} KB of shared memory): "
                 f"K = {tiles} x BK = {tiles * bk}", loc="left", fontsize=10, fontweight="bold")
    fig.text(0.01, 0.075, f"Tile j is copied into stage j % {stages} with cp.async, issued "
             f"{stages - 1} iteration{'s' if stages > 2 else ''} before tile j is computed, while "
             "the block computes an earlier tile (hatched: in flight; it may land any time before "
             "the dotted line,\nthe wait + barrier that ends the previous iteration). Each "
             "iteration commits one group, empty past the last tile, so 'tile t + 1 has landed' "
             f"is always 'at most {stages - 2} group{'s' if stages - 2 != 1 else ''} pending'. "
             "Durations are schematic.", fontsize=8)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    used = tile_text(params, names)
    out_path = out / "pipeline.png"
    save(fig, out_path, f"{chapter}: SGEMM_TILE {used}")
    plt.close(fig)
    return out_path, used


def figure_few_columns(plt, root, chapter, out, colours):
    """07's few-columns kernel: its pipeline of chunks, what one lane reads of a chunk, and the
    butterfly reduce-scatter that adds the 32 lanes' sums."""
    _, params, path = parameters(root, chapter)
    names = FEW_COLUMNS
    rows, threads, chunk, stages, thin = (params[n] for n in names)
    if stages < 2:
        raise UsageError(f"{path}: SGEMM_FEW_COLS_STAGES = {stages}: a pipeline needs at least 2")
    warps = threads // 32
    if threads % 32 or rows % warps or chunk != 4 * 32:
        raise UsageError(f"{path}: kThinThreads = {threads}, kThinRows = {rows}, kFewColsChunk = "
                         f"{chunk}: the figure draws whole warps of rows and a float4 per lane")
    per_warp = rows // warps
    values = per_warp * thin  # sums a lane holds at the end, R = kThinMax columns
    steps = [16, 8, 4, 2, 1]
    if values % 32:
        raise UsageError(f"{path}: {per_warp} rows x {thin} columns do not split over 32 lanes")
    chunks = 2 * stages + 1
    fig = plt.figure(figsize=(11.5, 4.6 + 0.55 * stages))
    grid = fig.add_gridspec(3, 2, height_ratios=[stages, 1.3, 5.2], width_ratios=[1.35, 1])
    ax = fig.add_subplot(grid[0, :])
    ax_n = fig.add_subplot(grid[1, :], sharex=ax)
    draw_pipeline(plt, ax, ax_n, stages, chunks, colours)
    kb = rows * chunk * 4 / 1024
    ax.set_title(f"Few columns (N <= {thin}): A streamed in chunks of {chunk} k ({rows} rows, "
                 f"{kb:.0f} KB) through {stages} stages:\n{stages - 1} chunks "
                 f"({(stages - 1) * kb:.0f} KB) in flight per block, whatever the registers hold",
                 loc="left", fontsize=10, fontweight="bold")
    ax.tick_params(labelbottom=False)

    # One stage: A's chunk (rows x chunk) and B's chunk transposed (sB[j][k], thin x chunk).
    left = fig.add_subplot(grid[2, 0])
    gap = 3
    height = rows + gap + thin
    left.set_xlim(0, chunk)
    left.set_ylim(height, 0)
    left.grid(False)
    for w in range(warps):
        box(left, 0, w * per_warp, chunk, per_warp, facecolor=colours[w % len(colours)],
            alpha=0.25, edgecolor=INK, linewidth=0.6)
        left.text(chunk + 1, (w + 0.5) * per_warp, f"warp {w}", va="center", fontsize=7.5)
    box(left, 0, rows + gap, chunk, thin, facecolor="#d0d7de", edgecolor=INK, linewidth=0.6)
    left.text(chunk + 1, rows + gap + thin / 2, f"sB: {thin} columns\nof B", va="center",
              fontsize=7.5)
    for lane, colour in ((0, "#D55E00"), (31, "#0072B2")):
        for y, h in ((0, per_warp), (rows + gap, thin)):
            box(left, 4 * lane, y, 4, h, facecolor=colour, edgecolor=colour, linewidth=0.8)
        left.text(4 * lane + 2, rows + gap / 2, f"lane {lane} of warp 0", ha="left" if lane == 0
                  else "right", va="center", fontsize=7, color=colour)
    left.set_xticks([0, 32, 64, 96, chunk])
    left.set_yticks([0, rows, rows + gap, height], [0, rows, 0, thin])
    left.tick_params(labelsize=7.5, length=2)
    left.set_xlabel(f"k within the chunk (lane l reads k = 4l .. 4l + 3: one float4 per row)",
                    fontsize=8.5)
    left.set_title(f"One stage: A's chunk ({rows} rows, {per_warp} a warp) and B's, transposed",
                   fontsize=9.5, loc="left")

    # The lanes' sums: at each step a lane keeps half its values (the half its bit names).
    right = fig.add_subplot(grid[2, 1])
    right.set_xlim(0, 32)
    right.set_ylim(len(steps) + 0.2, -0.2)
    right.grid(False)
    for i, offset in enumerate(steps):
        held_before = values >> i
        for lane in range(32):
            upper = bool(lane & offset)
            box(right, lane + 0.08, i + 0.15, 0.84, 0.7,
                facecolor="#0072B2" if upper else "#cde3f5", edgecolor="none")
        right.text(32.6, i + 0.5, f"lane ^ {offset}: {held_before} -> {held_before // 2} sums, "
                   f"{held_before // 2} shuffles", va="center", fontsize=7.5)
    right.set_xticks([0, 8, 16, 24, 31.5], [0, 8, 16, 24, 31])
    right.set_yticks([i + 0.5 for i in range(len(steps))], [f"step {i + 1}" for i in
                                                          range(len(steps))])
    right.tick_params(labelsize=7.5, length=2)
    right.set_xlabel("lane (dark: keeps the upper half)", fontsize=8.5)
    right.set_title(f"The 32 lanes' sums: {values} per lane, {values * 31 // 32} shuffles",
                    fontsize=9.5, loc="left")
    fig.text(0.01, 0.045, f"Each lane ends with {values // 32} sums of its warp: row l / 4, "
             f"columns (l % 4) x {values // 32} ..; five shuffles a sum would be {5 * values}. "
             "Durations in the pipeline are schematic.", fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 0.93, 1))
    used = tile_text(params, names)
    out_path = out / "few_columns.png"
    save(fig, out_path, f"{chapter}: {used}")
    plt.close(fig)
    return out_path, used


def wide_layout(path, threads, thin, cols, chunk, lanes_k, rows_per_lane):
    """07's wide few-columns layout (C of thin + 1 .. cols columns) from the source's constants,
    derived as sgemm_few_cols derives it: rows of C a block, a warp's, passes a chunk, sums a lane
    before and after the reduce-scatter, its steps. Raises UsageError (one line) for constants the
    kernel's static_asserts would refuse, or that leave no wide layout to draw."""
    if cols <= thin:
        raise UsageError(f"{path}: kFewColsMax = {cols} <= kThinMax = {thin}: no wide few-columns "
                         "layout to draw")
    if threads % 32:
        raise UsageError(f"{path}: kThinThreads = {threads}: the figure draws whole warps")
    if lanes_k < 2 or 32 % lanes_k:
        raise UsageError(f"{path}: kWideLanesK = {lanes_k}: the lanes that share a row's k must be "
                         "2, 4, 8, 16 or 32 (a butterfly over a power of two that divides 32)")
    if chunk % (4 * lanes_k):
        raise UsageError(f"{path}: kWideChunk = {chunk}, kWideLanesK = {lanes_k}: {lanes_k} lanes "
                         f"of 4 k do not cover a chunk's k ({chunk} is not a multiple of "
                         f"{4 * lanes_k})")
    warps = threads // 32
    groups = 32 // lanes_k
    values = rows_per_lane * cols
    if values % lanes_k or cols % (values // lanes_k):
        raise UsageError(f"{path}: kWideRowsPerLane = {rows_per_lane}, kFewColsMax = {cols}, "
                         f"kWideLanesK = {lanes_k}: {rows_per_lane} x {cols} sums do not split "
                         f"into whole columns of one row for each of {lanes_k} lanes")
    per_lane = values // lanes_k
    return dict(warps=warps, groups=groups, rows=warps * groups * rows_per_lane,
                per_warp=groups * rows_per_lane, passes=chunk // (4 * lanes_k), values=values,
                per_lane=per_lane, lanes_per_row=cols // per_lane,
                steps=[lanes_k >> s for s in range(1, lanes_k.bit_length())])


def scatter_ranges(values, lanes):
    """The butterfly reduce-scatter of `lanes` lanes (sgemm_few_cols' reduce_scatter): for each
    step, [(first, last) of the values each lane keeps], the lanes with the step's offset bit set
    keeping the upper half of what they held."""
    held = [(0, values)] * lanes
    ranges = []
    offset = lanes // 2
    while offset:
        held = [(lo + (hi - lo) // 2, hi) if lane & offset else (lo, lo + (hi - lo) // 2)
                for lane, (lo, hi) in enumerate(held)]
        ranges.append([(lo, hi - 1) for lo, hi in held])
        offset //= 2
    return ranges


def k_ranges(starts):
    """"0-3 and 32-35" for float4s starting at k = 0, 32."""
    parts = [f"{k}-{k + 3}" for k in starts]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def figure_few_columns_wide(plt, root, chapter, out, colours):
    """07's few-columns kernel, wide layout (C of kThinMax + 1 .. kFewColsMax columns): one stage,
    which rows and k two lanes read in each pass, the arithmetic of a pass, and the reduce-scatter
    of the lanes that share a row's k."""
    _, params, path = parameters(root, chapter)
    names = ["kThinRows", "kThinThreads", "SGEMM_FEW_COLS_STAGES", "kThinMax"] + WIDE_FEW_COLUMNS
    narrow_rows, threads, stages, thin, cols, chunk, lanes_k, rpl = (params[n] for n in names)
    w = wide_layout(path, threads, thin, cols, chunk, lanes_k, rpl)
    rows, per_warp, passes, values, per_lane = (w[n] for n in ("rows", "per_warp", "passes",
                                                               "values", "per_lane"))
    warps, groups, steps = w["warps"], w["groups"], w["steps"]
    if narrow_rows % warps:
        raise UsageError(f"{path}: kThinRows = {narrow_rows} rows do not split over {warps} warps")
    narrow_rpl = narrow_rows // warps  # the narrow layout's rows a lane (all 32 lanes along k)
    orange, blue = "#D55E00", "#0072B2"
    other = (lanes_k + 1) % 32  # lane 1 of the next row group: lane 9 when 8 lanes share k
    lanes = [(0, orange), (other, blue)]

    stage_kb = (rows * chunk + cols * (chunk + 4)) * 4 / 1024
    fig = plt.figure(figsize=(11.5, 7.9))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.3, 1], width_ratios=[1.2, 1])
    fig.suptitle(f"Wide few columns (N = {thin + 1} .. {cols}): {rows} rows of C a block, chunks "
                 f"of {chunk} k (A {rows * chunk * 4 / 1024:.0f} KB + sB "
                 f"{cols * (chunk + 4) * 4 / 1024:.1f} KB a stage, {stages} stages: "
                 f"{stages * stage_kb:.1f} KB)\n{lanes_k} lanes share a row's k, {groups} row "
                 f"groups a warp, {rpl} rows a lane: {rpl} x {cols} = {values} sums a lane",
                 x=0.01, ha="left", fontsize=10, fontweight="bold")

    # One stage: A's chunk (rows x chunk) and B's chunk transposed (sB[j][k], cols x chunk + 4).
    left = fig.add_subplot(grid[:, 0])
    gap = 6
    height = rows + gap + cols
    left.set_xlim(0, chunk + 4)
    left.set_ylim(height, 0)
    left.grid(False)
    for wp in range(warps):
        box(left, 0, wp * per_warp, chunk, per_warp, facecolor=colours[wp % len(colours)],
            alpha=0.25, edgecolor=INK, linewidth=0.6)
        for g in range(1, groups):
            y = wp * per_warp + g * rpl
            left.plot([0, chunk], [y, y], color=INK, linewidth=0.4, linestyle=":")
        if wp:
            left.text(chunk + 5, (wp + 0.5) * per_warp, f"warp {wp}", va="center", fontsize=7.5)
    for g in range(groups):
        first = g * lanes_k
        left.text(chunk + 5, (g + 0.5) * rpl, f"warp 0, lanes {first}-{first + lanes_k - 1}: "
                  f"rows {g * rpl}-{(g + 1) * rpl - 1}", va="center", fontsize=7)
    box(left, 0, rows + gap, chunk, cols, facecolor="#d0d7de", edgecolor=INK, linewidth=0.6)
    box(left, chunk, rows + gap, 4, cols, facecolor="white", edgecolor=INK, linewidth=0.6,
        hatch="////")
    left.text(chunk + 5, rows + gap + cols / 2, f"sB: {cols} columns of B,\n{chunk} + 4 floats "
              "a row\n(hatched: padding)", va="center", fontsize=7.5)
    for p in range(1, passes):
        left.plot([4 * lanes_k * p] * 2, [0, height], color=INK, linewidth=0.8, linestyle="--")
    for p in range(passes):
        left.text(4 * lanes_k * (p + 0.5), rows + gap / 2, f"pass {p}: k {4 * lanes_k * p}-"
                  f"{4 * lanes_k * (p + 1) - 1}", ha="center", va="center", fontsize=7.5)
    for n, (lane, colour) in enumerate(lanes):
        lane_k, first_row = lane % lanes_k, lane // lanes_k * rpl
        starts = [4 * (lane_k + lanes_k * p) for p in range(passes)]
        for k in starts:
            box(left, k, first_row, 4, rpl, facecolor=colour, edgecolor=colour, linewidth=0.8)
            box(left, k, rows + gap, 4, cols, facecolor=colour, edgecolor=colour, linewidth=0.8)
        label = (f"lane {lane}: rows {first_row}-{first_row + rpl - 1}, k {k_ranges(starts)}"
                 if passes <= 4 else f"lane {lane}: rows {first_row}-{first_row + rpl - 1}, "
                 f"k = {4 * lane_k} + {4 * lanes_k} p .. + 3")
        # In warp 1's rows (or below the chunk, with one warp), an arrow to the last pass's k.
        y = per_warp + (n + 1) * per_warp / 3 if warps > 1 else rows + gap / 2
        left.annotate(label, xy=(starts[-1] + 2, first_row + rpl / 2), xytext=(4, y),
                      va="center", fontsize=7.5, color=colour,
                      bbox=dict(facecolor="white", edgecolor=colour, pad=1.5, linewidth=0.6),
                      arrowprops=dict(arrowstyle="->", color=colour, linewidth=1))
    ticks = list(range(0, rows + 1, per_warp))
    left.set_xticks(list(range(0, chunk + 1, 4 * lanes_k if 4 * lanes_k >= 16 else 16)))
    left.set_yticks(ticks + [rows + gap, height], ticks + [0, cols])
    left.tick_params(labelsize=7.5, length=2)
    left.set_xlabel(f"k within the chunk: lane l reads k = 4 (l % {lanes_k}) + {4 * lanes_k} p "
                    f".. + 3 in pass p{' = 0, 1' if passes == 2 else ''},\none float4 for each "
                    f"of its {rpl} rows and one for each of the {cols} columns of B", fontsize=8.5)
    left.set_title(f"One stage: A's chunk ({rows} rows x {chunk} k, {per_warp} a warp, {groups} "
                   f"row groups of {rpl}) and B's, transposed", fontsize=9.5, loc="left")

    # The lanes of a row group add their sums: at each step a lane keeps half (its bit's half).
    ranges = scatter_ranges(values, lanes_k)
    right = fig.add_subplot(grid[0, 1])
    right.set_xlim(0, lanes_k)
    right.set_ylim(len(steps) + 0.2, -0.2)
    right.grid(False)
    for i, offset in enumerate(steps):
        held_before = values >> i
        for lane in range(lanes_k):
            upper = bool(lane & offset)
            box(right, lane + 0.06, i + 0.15, 0.88, 0.7,
                facecolor=blue if upper else "#cde3f5", edgecolor="none")
            if lanes_k <= 8:
                lo, hi = ranges[i][lane]
                right.text(lane + 0.5, i + 0.5, f"{lo}-{hi}", ha="center", va="center",
                           fontsize=7, color="white" if upper else INK)
        right.text(lanes_k + 0.15, i + 0.5, f"lane ^ {offset}: {held_before} -> "
                   f"{held_before // 2} sums,\n{held_before // 2} shuffles", va="center",
                   fontsize=7.5)
    right.set_xticks([lane + 0.5 for lane in range(lanes_k)], range(lanes_k))
    right.set_yticks([i + 0.5 for i in range(len(steps))], [f"step {i + 1}" for i in
                                                          range(len(steps))])
    right.tick_params(labelsize=7.5, length=2)
    right.set_xlabel(f"lane % {lanes_k} (dark: keeps the upper half; the numbers: the sums it "
                     "keeps)", fontsize=8.5)
    right.set_title(f"The {lanes_k} lanes of a row group: {values} sums each, "
                    f"{values * (lanes_k - 1) // lanes_k} shuffles", fontsize=9.5, loc="left")

    # Who ends with what: the row group's rpl x cols sums, lane by lane.
    owner = fig.add_subplot(grid[1, 1])
    owner.set_xlim(0, cols)
    owner.set_ylim(rpl, 0)
    owner.grid(False)
    marked = {lane % lanes_k: (lane, colour) for lane, colour in reversed(lanes)}
    for lane_k in range(lanes_k):
        r, c = lane_k * per_lane // cols, lane_k * per_lane % cols
        lane, colour = marked.get(lane_k, (None, "#cde3f5"))
        box(owner, c, r, per_lane, 1, facecolor=colour, edgecolor="white", linewidth=1.5)
        text = (f"lane % {lanes_k} = {lane_k}" + (f" (lane {lane})" if lane is not None else "")
                if per_lane >= 10 else str(lane_k) if per_lane >= 2 else "")
        owner.text(c + per_lane / 2, r + 0.5, text, ha="center", va="center", fontsize=7.5,
                   color=INK if lane is None else "white")
    owner.set_xticks(list(range(0, cols + 1, per_lane if per_lane >= 4 else 4)))
    owner.set_yticks([r + 0.5 for r in range(rpl)], range(rpl))
    owner.tick_params(labelsize=7.5, length=2)
    ends = []
    for lane, _ in lanes:
        lane_k = lane % lanes_k
        row = lane // lanes_k * rpl + lane_k * per_lane // cols
        first = lane_k * per_lane % cols
        ends.append(f"lane {lane} ends with row {row}, columns {first}-{first + per_lane - 1}")
    ends = "; ".join(ends)
    owner.set_xlabel(f"column of C ({ends})", fontsize=8.5)
    owner.set_ylabel("row of the group", fontsize=8.5)
    owner.set_title(f"After step {len(steps)}: {per_lane} sums a lane, row (l % {lanes_k}) / "
                    f"{w['lanes_per_row']} of its group,\ncolumns ((l % {lanes_k}) % "
                    f"{w['lanes_per_row']}) x {per_lane} .. + {per_lane - 1}",
                    fontsize=9.5, loc="left")

    narrow_fmas = narrow_rpl * thin * 4
    wide_fmas = rpl * cols * 4
    fig.text(0.01, 0.045, f"A pass: a lane reads {rpl} float4s of A (4 k of each of its rows) "
             f"and {cols} of B (4 k of each column). Each float4 of B serves its {rpl} rows "
             f"({rpl} x 4 = {4 * rpl} FMAs), each of A\nthe {cols} columns ({4 * cols} FMAs): "
             f"{wide_fmas} FMAs for {rpl + cols} float4 reads. The narrow layout (N <= {thin}, all "
             f"32 lanes along k) holds {narrow_rpl} rows a lane: a float4 of B serves {narrow_rpl} "
             f"rows\n({4 * narrow_rpl} FMAs), {narrow_fmas} FMAs for {narrow_rpl + thin} reads, "
             f"{narrow_rpl * thin} sums a lane; {narrow_rpl} rows x {cols} columns would be "
             f"{narrow_rpl * cols} sums, more than fit in 255 registers beside the rest.\nAdding "
             f"the sums takes {values * (lanes_k - 1) // lanes_k} shuffles a lane ({len(steps)} a "
             f"sum would be {len(steps) * values}). The stages go through the narrow layout's "
             "pipeline (few_columns.png).", fontsize=8)
    fig.tight_layout(rect=(0, 0.11, 0.97, 0.95))
    used = tile_text(params, names)
    out_path = out / "few_columns_wide.png"
    save(fig, out_path, f"{chapter}: {used}")
    plt.close(fig)
    return out_path, used


def copy_plans(block_n, block_k, threads):
    """The two copy plans of a K tile of B in 4-byte chunks (07's Tile::CopyB<1>), as
    {plan: [[thread of each column] for each row]}: a thread per chunk (consecutive threads on
    consecutive columns, threads / block_n rows a pass) and, where a row holds more than 32
    chunks, a warp per row (lane l copies columns l, l + 32, ...; threads / 32 rows a pass)."""
    plans = {}
    for plan, per_row in (("thread", block_n), ("row", 32)):
        rows_per_pass = threads // per_row
        owner = [[0] * block_n for _ in range(block_k)]
        for t in range(threads):
            for c in range(block_k // rows_per_pass):
                row = t // per_row + c * rows_per_pass
                for col in range(t % per_row, block_n, per_row):
                    owner[row][col] = t
        plans[plan] = owner
    return plans


def figure_row_copies(plt, root, chapter, out, colours):
    """07's copies of B rows that are not 16-byte aligned (N odd), on SmallTile: one K tile of B,
    a thread per chunk against a warp per row, thread 0's copies outlined."""
    _, params, path = parameters(root, chapter)
    names = SMALL_TILE
    bm, bn, bk, wm, wn = (params[n] for n in names)
    if bm % wm or bn % wn:
        raise UsageError(f"{path}: SmallTile's warps ({wm} x {wn}) do not tile its block "
                         f"({bm} x {bn})")
    threads = 32 * (bm // wm) * (bn // wn)
    if bn <= 32 or threads % bn or bn % 32 or bk % (threads // 32) or bk % (threads // bn):
        raise UsageError(f"{path}: SmallTile {bm} x {bn} x {bk} with {threads} threads: the figure "
                         "draws rows of more than 32 chunks, whole rows a pass")
    plans = copy_plans(bn, bk, threads)
    fig, axes = plt.subplots(2, 1, figsize=(11.5, 1.9 + 0.19 * bk))
    red = "#D55E00"
    for ax, (plan, owner) in zip(axes, plans.items()):
        mine = [(r, c) for r in range(bk) for c in range(bn) if owner[r][c] == 0]
        rows = sorted({r for r, _ in mine})
        for r in range(bk):
            for c in range(bn):
                box(ax, c, r, 1, 1, facecolor=colours[(owner[r][c] // 32) % len(colours)],
                    alpha=0.45, edgecolor="white", linewidth=0.3)
        for r, c in mine:
            box(ax, c, r, 1, 1, facecolor=red, edgecolor=red, linewidth=0.8)
        if plan == "thread":
            title = (f"A thread per chunk: thread t copies column t of {bk // (threads // bn)} "
                     f"rows.\nThread 0's {len(mine)} copies (red) sit on {len(rows)} rows: "
                     f"{len(rows)} 64-bit addresses to compute")
        else:
            gaps = ", ".join(f"+{4 * 32 * j}" for j in range(bn // 32))
            title = (f"A warp per row (row copies): warp w copies rows w, w + {threads // 32}, ..; "
                     f"lane l columns l, l + 32, ..\nThread 0's {len(mine)} copies sit on "
                     f"{len(rows)} rows: {len(rows)} addresses, each copy at a byte offset "
                     f"{gaps} from its row's")
        cell_axes(ax, bk, bn, title, ylabel="k (row of B)")
        ax.set_xticks(list(range(0, bn + 1, 32)))
        ax.set_yticks(list(range(0, bk + 1, 4)))
    axes[-1].set_xlabel(f"column within the tile ({bn} floats, 4 bytes each: N odd); colour: "
                        "warp 0, 1, ..; in both plans each copy instruction of a warp reads 32 "
                        "consecutive columns of a row", fontsize=8.5)
    fig.suptitle(f"One K tile of B ({bk} x {bn}) on the {bm} x {bn} tile ({threads} threads), "
                 "4-byte copies", x=0.01, ha="left", fontsize=10, fontweight="bold")
    fig.tight_layout(rect=(0, 0.04, 1, 0.96))
    used = tile_text(params, names)
    out_path = out / "row_copies.png"
    save(fig, out_path, f"{chapter}: {used}")
    plt.close(fig)
    return out_path, used


# ---- driver ----------------------------------------------------------------------------------

def figure_list():
    """{chapter: [draw functions]}, in ladder order. Each returns (path, parameters used)."""
    return {
        "00_naive": [lambda plt, root, ch, out, col: figure_warp_sectors(plt, root, ch, out)],
        "01_coalescing": [lambda plt, root, ch, out, col: figure_warp_sectors(plt, root, ch, out)],
        "02_smem_tiling": [figure_k_tiles],
        "03_thread_tiling": [figure_thread_tile],
        "04_vectorized": [figure_float4_lanes],
        "05_bank_conflict": [figure_banks, figure_hierarchy],
        "06_double_buffer": [figure_pipeline],
        "07_any_shape": [figure_few_columns, figure_few_columns_wide, figure_row_copies],
    }


def select(wanted):
    known = list(figure_list())
    if not wanted:
        return known
    chosen = []
    for item in wanted:
        matches = [c for c in known if item in (c, c[:2], c[3:])]
        if not matches:
            raise UsageError(f"no figures for chapter {item!r} (chapters with figures: "
                             f"{', '.join(known)})")
        chosen += [c for c in matches if c not in chosen]
    return [c for c in known if c in chosen]


def parse_args(argv):
    parser = ArgumentParser(description=__doc__, epilog=EXAMPLES,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapters", nargs="+", metavar="CH",
                        help="chapters by number or name (default: every chapter with figures)")
    parser.add_argument("--out", type=Path,
                        help="write to OUT/<chapter>/ instead of each chapter's figures/ folder")
    parser.add_argument("--root", type=Path, default=REPO,
                        help="the tree whose chapter sources are read (default: this repository)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    plt = pyplot("scripts/figures.py")
    if plt is None:
        return EXIT_USAGE
    from plot import COLOURS, STYLE  # the ladder's palette and style, so the figures match
    plt.rcParams.update(STYLE)
    plt.rcParams.update({"axes.grid": False, "hatch.linewidth": 0.6})
    try:
        for chapter in select(args.chapters):
            out = (args.out / chapter) if args.out else args.root / chapter / "figures"
            if out.exists() and not out.is_dir():
                raise UsageError(f"{out} is a file, not a folder")
            try:
                out.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise UsageError(f"cannot create {out}: {error.strerror}") from None
            for draw in figure_list()[chapter]:
                try:
                    path, used = draw(plt, args.root, chapter, out, COLOURS)
                    stamp(path, signature(args.root, chapter))
                except OSError as error:
                    raise UsageError(f"cannot write into {out}: {error.strerror}") from None
                print(f"wrote {path} ({used})")
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
