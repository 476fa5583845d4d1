#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Figures of chapters 08 (tensor cores), 09 (3xTF32) and 10 (wgmma), drawn from the chapters' own
parameters.

The 08/09 tile is read from the default `#define SGEMM_TILE a, b, ...` of each chapter source
(fields in the order of its TileShape struct); 10's from its `#define SGEMM_TILE a, b, c` (the
template parameters of the struct `using X = HopperTile<SGEMM_TILE>` names, with that struct's
literal constants, the defaults of the SGEMM_ switches it reads, and the shape of the wgmma
wrapper the kernel calls); the mma.sync m16n8k8 fragment layout is the PTX ISA's ("Matrix
fragments for mma.m16n8k8", .tf32), written once below. No GPU is needed.
Every figure carries what it was drawn from (a PNG text chunk, as figures.py's figures do): the
tile or Hopper tile, a digest of the measured CSV, or the layout, bit formats and schematic
durations written below, so the host test sees a committed figure that no longer matches its
source (out_of_date()).

  08_tensor_cores/figures/fragments.png  who holds what of one m16n8k8: A, B and C fragments
  08_tensor_cores/figures/warp_tile.png  block -> warps -> mma tiles of the default tile
  08_tensor_cores/figures/banks.png      banks of the fragment loads: ldmatrix phases of A
                                         (rows padded to BK + 4) and the b0 loads of B (BN + 8)
  08_tensor_cores/figures/pipeline.png   the main loop over time for one warp: the stages' copies,
                                         the fragments loaded a k-step ahead, round + mma, the
                                         barrier at each K tile's last k-step
  08_tensor_cores/figures/split_k.png    the launcher's plan for two shapes: the tile, the K
                                         slices on the SMs' block slots, the reduction
  08_tensor_cores/figures/prepared.png   the prepared operands (SGEMM_PREPARED_TILE): A and B^T
                                         packed in panels of K tiles, and a warp's instructions
                                         per k-step without and with them
  09_3xtf32/figures/split.png            FP32 -> TF32 big + TF32 small: which bits each keeps
  09_3xtf32/figures/promotion.png        speed and error against the promotion interval, from the
                                         measured 09_3xtf32/figures/promotion_h100.csv
  09_3xtf32/figures/rounds.png           split-K for the last round: the launcher's model of the
                                         time against the number of K slices for two shapes, with
                                         the two plans measured in tensor_cores/parts_848b91d.txt
  09_3xtf32/figures/tile_end.png         a K tile's end for the block's warps (SGEMM_TILE), with
                                         __syncthreads() and with the mbarrier
                                         (SGEMM_TILE_BARRIER), schematic durations
  10_wgmma/figures/wgmma.png             the wgmma kernel (SGEMM_TILE): block -> warpgroups ->
                                         wgmma row blocks, the 128-byte swizzle of the A tile,
                                         the lanes' B^T register operand
  10_wgmma/figures/pipeline.png          the wgmma kernel's pipeline over time: the stages, the
                                         warps' steps and the wgmma groups (kStages, kInFlight)

Usage: python3 scripts/tensor_core_figures.py [--out DIR] [--root DIR]
Exit codes: 0 written, 2 bad usage (a source whose SGEMM_TILE cannot be read, an unreadable
promotion CSV, matplotlib missing).
"""

import hashlib
import re
import sys
from pathlib import Path

from chapters import EXIT_USAGE, REPO, ArgumentParser, pyplot
from figures import (SPLIT_HEADER, UsageError, parse_parameters, stamp, stamped, strip_comments,
                     tile_struct, tile_text)
from figures import read_max_splits as max_splits_of

BANKS = 32
PROMOTION_CSV = Path("09_3xtf32") / "figures" / "promotion_h100.csv"
SOURCE09 = Path("09_3xtf32") / "3xtf32.cu"
PARTS_TXT = Path("docs") / "results" / "nvidia-h100-80gb-hbm3" / "tensor_cores" / "parts_848b91d.txt"


def default_tile(params):
    """The SGEMM_TILE fields among figures.py's parameters of a source: not its `kName`
    constants, `SGEMM_X` switches or "<Alias>::<parameter>" template aliases."""
    return {name: value for name, value in params.items()
            if not name.startswith(("k", "SGEMM_")) and "::" not in name}


def tile_of(source):
    """{field: value} of the default SGEMM_TILE of a chapter source (figures.py's reader, which
    matches the values to the fields of the struct they initialise)."""
    tile = default_tile(parse_parameters(source))
    if not tile:
        raise UsageError(f"{source}: no SGEMM_TILE default")
    return tile


HOPPER_SOURCE = Path("10_wgmma") / "wgmma.cu"
HOPPER_FIELDS = ("kBlockM", "kBlockN", "kBlockK", "kStages", "kWgmmaN", "kInFlight", "wgmma_m",
                 "wgmma_n", "wgmma_k")
WGMMA_FIGURE_FIELDS = ("kBlockM", "kBlockN", "kBlockK", "kStages", "kWgmmaN")  # wgmma.png
PIPELINE_FIELDS = ("kBlockM", "kBlockN", "kBlockK", "kStages", "kInFlight")    # pipeline.png
SWIZZLE_BYTES = 128  # wgmma's 128-byte swizzle: 16-byte chunk c of row r lands at c ^ (r % 8)


def source_text(source):
    """The source without its comments; a file it cannot read is a usage error."""
    try:
        return strip_comments(Path(source).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{source}: cannot read: {error}") from None


def define_ints(text, source, name):
    """The integers of `#define <name> a, b, ...` in a source's text."""
    found = re.search(rf"^\s*#define\s+{name}\s+(.+)$", text, flags=re.M)
    if not found:
        raise UsageError(f"{source}: no `#define {name}` default")
    try:
        return [int(v) for v in found.group(1).split(",")]
    except ValueError:
        raise UsageError(f"{source}: {name} is not a list of integers: "
                         f"{found.group(1).strip()}") from None


def hopper_tile_of(source):
    """{HOPPER_FIELDS: value} of the wgmma kernel's default tile: the `#define SGEMM_TILE` values
    matched to the template parameters of the struct `using X = HopperTile<SGEMM_TILE>` names,
    its `static constexpr int kName = <parameter, literal or SGEMM_ switch>;` lines (a switch
    takes its `#define SGEMM_X <int>` default), and the m/n/k of the wgmma the kernel issues
    (the wrapper it calls, sgemm::wgmma_m<m>n<n>k<k>_tf32, or the instruction itself)."""
    text = source_text(source)
    values = define_ints(text, source, "SGEMM_TILE")
    names, struct = tile_struct(text, source, values)
    given = dict(zip(names, values))
    switches = {name: int(value) for name, value in
                re.findall(r"^\s*#define\s+(SGEMM_\w+)\s+(\d+)\s*$", text, flags=re.M)}
    tile = {}
    for name, value in re.findall(r"static\s+constexpr\s+int\s+(k\w+)\s*=\s*(\w+)\s*;",
                                  struct.group(2)):
        if value in given:
            tile[name] = given[value]
        elif value in switches:
            tile[name] = switches[value]
        elif value.isdigit():
            tile[name] = int(value)
    shape = (re.search(r"\bwgmma_m(\d+)n(\d+)k(\d+)_tf32\s*\(", text) or
             re.search(r"wgmma\.mma_async\.sync\.aligned\.m(\d+)n(\d+)k(\d+)\.f32\.tf32", text))
    if shape:
        tile.update(zip(("wgmma_m", "wgmma_n", "wgmma_k"), map(int, shape.groups())))
    missing = [n for n in HOPPER_FIELDS if n not in tile]
    if missing:
        raise UsageError(f"{source}: cannot find {', '.join(missing)} of the wgmma tile")
    # What the figures draw must hold for the kernel too (its static_asserts say the same).
    checks = [(min(tile[n] for n in HOPPER_FIELDS if n != "kInFlight") > 0,
               "every value must be positive"),
              (tile["wgmma_n"] == tile["kWgmmaN"], "kWgmmaN is not the wgmma's n"),
              (tile.get("kWgmmaM", tile["wgmma_m"]) == tile["wgmma_m"],
               "kWgmmaM is not the wgmma's m"),
              (tile.get("kWgmmaK", tile["wgmma_k"]) == tile["wgmma_k"],
               "kWgmmaK is not the wgmma's k"),
              (tile["kBlockM"] % tile["kWgmmaN"] == 0, "kBlockM is not a multiple of kWgmmaN"),
              (tile["kBlockN"] % tile["wgmma_m"] == 0, "kBlockN is not a multiple of wgmma's m"),
              (4 * tile["kBlockK"] == SWIZZLE_BYTES, "a row of the A tile is not 128 bytes"),
              (tile["kInFlight"] in (0, 1), "kInFlight is not 0 or 1"),
              (tile["kStages"] >= 2 + tile["kInFlight"],
               "fewer than 2 + kInFlight stages")]
    for ok, why in checks:
        if not ok:
            raise UsageError(f"{source}: SGEMM_TILE {', '.join(map(str, values))}: {why}")
    return {n: tile[n] for n in HOPPER_FIELDS}


def hopper_signature(tile):
    """The parameters wgmma.png is drawn from, as one line (stamped into the PNG)."""
    return ("10_wgmma: " + ", ".join(f"{n} = {tile[n]}" for n in WGMMA_FIGURE_FIELDS) +
            f"; wgmma m{tile['wgmma_m']}n{tile['wgmma_n']}k{tile['wgmma_k']}")


def pipeline_signature(tile):
    """What pipeline.png is drawn from: the tile's pipeline parameters and a digest of the
    schematic durations below, so an edit to either asks for a redraw."""
    durations = digest(repr(sorted(PIPELINE_DURATIONS.items())).encode())
    return ("10_wgmma: " + ", ".join(f"{n} = {tile[n]}" for n in PIPELINE_FIELDS) +
            f"; wgmma m{tile['wgmma_m']}n{tile['wgmma_n']}k{tile['wgmma_k']}"
            f"; schematic durations sha256 {durations}")


def tile_signature(tile):
    """The default SGEMM_TILE warp_tile.png and banks.png are drawn from, as one line (figures.py's
    format; banks.png reads only BK and BN but, as there, the chapter's whole tile is stamped)."""
    return "08_tensor_cores: " + tile_text(tile, tile)


def digest(data):
    """16 hex digits of SHA-256: enough to tell two contents apart, short enough to read."""
    return hashlib.sha256(data).hexdigest()[:16]


def fragment_signature():
    """The lanes' elements fragments.png draws: a digest of the PTX ISA table written below, so
    an edit to a_fragment, b_fragment or c_fragment asks for a redraw."""
    table = [(a_fragment(lane), b_fragment(lane), c_fragment(lane)) for lane in range(32)]
    return ("mma.m16n8k8 .tf32 fragments (a, b, c of lanes 0-31): "
            f"sha256 {digest(repr(table).encode())}")


def table_signature(table):
    """The measured CSV promotion.png is drawn from: its name and a digest of its bytes, so a
    re-measured CSV without a redraw is seen."""
    try:
        data = Path(table).read_bytes()
    except OSError as error:
        raise UsageError(f"{table}: cannot read: {error.strerror}") from None
    return f"{Path(table).name}: sha256 {digest(data)}"


PREPARED_FIELDS = ("block_m", "block_n", "block_k", "warp_m", "warp_n", "stages")


def prepared_tile_of(source):
    """{block_m, ..., stages} of the default `#define SGEMM_PREPARED_TILE a, b, ...` (the fields
    of TileShape, in order)."""
    values = define_ints(source_text(source), source, "SGEMM_PREPARED_TILE")
    if len(values) != len(PREPARED_FIELDS):
        raise UsageError(f"{source}: SGEMM_PREPARED_TILE has {len(values)} values, not "
                         f"{len(PREPARED_FIELDS)}")
    return dict(zip(PREPARED_FIELDS, values))


def prepared_signature(main, prepared):
    """What prepared.png is drawn from: the main tile (the unprepared loop) and PreparedTile."""
    return (tile_signature(main) + "; PreparedTile: " + tile_text(prepared, PREPARED_FIELDS))


def warp_step_counts(tile, prepared):
    """A warp's instructions per k-step of 8: ldmatrix of A, loads of B, rounding, mma."""
    frags_m, frags_n = tile["warp_m"] // 16, tile["warp_n"] // 8
    if prepared:
        return {"ldmatrix (A)": frags_m, "ldmatrix (B)": frags_n // 2, "LDS (B)": 0,
                "round": 0, "mma": frags_m * frags_n}
    return {"ldmatrix (A)": frags_m, "ldmatrix (B)": 0, "LDS (B)": 2 * frags_n,
            "round": 2 * (4 * frags_m + 2 * frags_n), "mma": frags_m * frags_n}


def draw_prepared(plt, main, prep, out):
    """Left: A's panels of PreparedTile's rows, each a sequence of K tiles, and the order the
    passes write them in; the same for B^T. Right: a warp's instructions per k-step."""
    from matplotlib.patches import FancyArrowPatch, Rectangle
    bm, bn, bk = prep["block_m"], prep["block_n"], prep["block_k"]
    fig = plt.figure(figsize=(14, 6.2))
    grid = fig.add_gridspec(2, 2, width_ratios=[1.6, 1], hspace=0.6, wspace=0.3)
    cmap = plt.get_cmap("viridis")
    k_tiles = 6  # drawn; the GEMM has K / block_k
    for row, (name, rows, what) in enumerate((("A", bm, "rows of A"), ("B^T", bn, "columns of B"))):
        ax = fig.add_subplot(grid[row, 0])
        panels = 3
        ax.set_xlim(-0.5, k_tiles * bk + 0.5 + 45)
        ax.set_ylim(panels * rows + rows * 0.9, -rows * 0.15)
        for p in range(panels):
            for t in range(k_tiles):
                order = p * k_tiles + t
                ax.add_patch(Rectangle((t * bk, p * rows), bk, rows,
                                       facecolor=cmap(order / (panels * k_tiles)), alpha=0.55,
                                       edgecolor="black", lw=0.8))
                ax.text(t * bk + bk / 2, p * rows + rows / 2, f"{order}", ha="center",
                        va="center", fontsize=8)
            ax.text(k_tiles * bk + 4, p * rows + rows / 2,
                    f"panel {p}:\n{what}\n{p * rows}-{(p + 1) * rows - 1}", va="center",
                    fontsize=8)
        ax.add_patch(FancyArrowPatch((0, panels * rows + rows * 0.45),
                                     (k_tiles * bk, panels * rows + rows * 0.45),
                                     arrowstyle="-|>", mutation_scale=12, color="#57606a"))
        ax.text(0, panels * rows + rows * 0.8, "k: K tiles of " + str(bk) + " (zeros past K, up to "
                "a whole tile)", fontsize=8, color="#57606a")
        ax.set_title(f"{name} packed in panels of {rows} rows: each K tile {rows} x {bk} floats "
                     f"({rows * bk * 4 // 1024} KB) in one stretch,\nnumbered in memory order "
                     "(prepare_a / prepare_b write them; a block reads its panel's tiles in turn)",
                     fontsize=9, loc="left")
        ax.set_yticks([])
        ax.set_xticks([])
        for spine in ax.spines.values():
            spine.set_visible(False)
    ax = fig.add_subplot(grid[:, 1])
    before, after = warp_step_counts(main, False), warp_step_counts(prep, True)
    kinds = list(before)
    colours = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#dd8452"]
    for x, (label, counts) in enumerate((("loop rounds\n(unprepared)", before),
                                         ("prepared", after))):
        bottom = 0
        for kind, colour in zip(kinds, colours):
            if counts[kind]:
                ax.bar(x, counts[kind], bottom=bottom, color=colour, width=0.6,
                       label=kind if x == 0 or not before[kind] else None)
                ax.text(x, bottom + counts[kind] / 2, f"{counts[kind]} {kind}", ha="center",
                        va="center", fontsize=8, color="white")
                bottom += counts[kind]
        ax.text(x, bottom + 2, f"{bottom} a k-step", ha="center", fontsize=9)
    ax.set_xticks([0, 1], ["loop rounds\n(unprepared)", "prepared"])
    ax.set_ylabel("a warp's instructions per k-step")
    ax.set_title(f"warp {main['warp_m']} x {main['warp_n']}: {after['mma']} mma a k-step\n"
                 "(besides addresses and barriers)", fontsize=9, loc="left")
    ax.legend(fontsize=8, loc="upper right")
    fig.text(0.01, 0.01, "08_tensor_cores SGEMM_TILE (unprepared loop) and SGEMM_PREPARED_TILE, "
             "drawn by scripts/tensor_core_figures.py; the passes are prepare_a and prepare_b",
             fontsize=7, color="#57606a")
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)


def signatures(root):
    """{(chapter, figure): the line stamped into it}: what each figure is drawn from in root."""
    source08 = root / "08_tensor_cores" / "tensor_cores.cu"
    tile = tile_signature(tile_of(source08))
    params08 = parse_parameters(source08)
    hopper = hopper_tile_of(root / HOPPER_SOURCE)
    return {("08_tensor_cores", "fragments.png"): fragment_signature(),
            ("08_tensor_cores", "warp_tile.png"): tile,
            ("08_tensor_cores", "banks.png"): tile,
            ("08_tensor_cores", "pipeline.png"): pipeline08_signature(params08),
            ("08_tensor_cores", "split_k.png"): split_signature08(params08,
                                                                  small_tile_of(source08)),
            ("08_tensor_cores", "prepared.png"): prepared_signature(tile_of(source08),
                                                                    prepared_tile_of(source08)),
            ("09_3xtf32", "split.png"): split_signature(),
            ("09_3xtf32", "promotion.png"): table_signature(root / PROMOTION_CSV),
            ("09_3xtf32", "rounds.png"): rounds_signature09(root),
            ("09_3xtf32", "tile_end.png"): tile_end_signature(tile_of(root / SOURCE09),
                                                              parse_parameters(root / SOURCE09)),
            ("10_wgmma", "wgmma.png"): hopper_signature(hopper),
            ("10_wgmma", "pipeline.png"): pipeline_signature(hopper)}


def out_of_date(root):
    """One line for each figure under root/<chapter>/figures/ whose stamp is not what root's
    sources say now (a source changed without a redraw, or a figure never stamped)."""
    stale = []
    for (chapter, name), want in signatures(root).items():
        png = root / chapter / "figures" / name
        if not png.is_file() or stamped(png) != want:
            stale.append(f"{chapter}/figures/{name} is out of date: run "
                         "python3 scripts/tensor_core_figures.py")
    return stale


def swizzled_chunk(row, chunk):
    """Where 16-byte chunk `chunk` of row `row` of the A tile lies in shared memory."""
    return chunk ^ (row % 8)


def k_step_banks(k_step, swizzled):
    """Banks hit by each of the 2 chunks (4 floats each) one k-step reads from rows 0-7 of the A
    tile (rows of 128 bytes, so chunk position p is banks 4p .. 4p + 3 in every row)."""
    out = []
    for chunk in (2 * k_step, 2 * k_step + 1):
        hits = [0] * BANKS
        for row in range(8):
            p = swizzled_chunk(row, chunk) if swizzled else chunk
            for word in range(4):
                hits[(4 * p + word) % BANKS] += 1
        out.append(hits)
    return out


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


def draw_wgmma(plt, tile, out):
    """The Hopper kernel: the block tile by warpgroup and wgmma row block, the A tile's 128-byte
    swizzle against none for one k-step, and the B^T fragments the lanes load from sB."""
    from matplotlib.patches import Rectangle
    bm, bn, bk, stages, wn = (tile[k] for k in WGMMA_FIGURE_FIELDS)
    mm, mk = tile["wgmma_m"], tile["wgmma_k"]
    groups, blocks = bn // mm, bm // wn
    fig = plt.figure(figsize=(14, 10))
    outer = fig.add_gridspec(1, 2, width_ratios=[1, 2.3], wspace=0.12)
    grid = outer[0, 1].subgridspec(2, 2, height_ratios=[1, 1], hspace=0.5, wspace=0.25)
    # (1) The block tile: a warpgroup per mm columns, a wgmma row block per wn rows.
    ax = fig.add_subplot(outer[0, 0])
    ax.set_xlim(0, bn)
    ax.set_ylim(bm, 0)
    ax.set_aspect("equal")
    cmap = plt.get_cmap("tab10")
    for wg in range(groups):
        for i in range(blocks):
            ax.add_patch(Rectangle((mm * wg, wn * i), mm, wn, facecolor=cmap(wg % 10),
                                   alpha=0.18 + 0.12 * (i % 2), edgecolor="black", lw=1.5))
            ax.text(mm * (wg + 0.5), wn * (i + 0.5),
                    f"warpgroup {wg}\nwgmma row\nblock {i}\n\n{wn} x {mm} of C\n"
                    f"= {mm} x {wn} of C^T:\none m{mm}n{wn}k{mk}\nper k-step",
                    ha="center", va="center", fontsize=8)
        for w in range(1, mm // 16):  # the warps of a warpgroup: 16 columns each
            ax.axvline(mm * wg + 16 * w, color="#57606a", lw=0.6, ls=":")
        for w in range(mm // 16):
            ax.text(mm * wg + 16 * w + 8, -3, f"w{w}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(0, bn + 1, mm))
    ax.set_yticks(range(0, bm + 1, wn))
    ax.set_xlabel("column of the block's C tile", fontsize=8.5)
    ax.set_ylabel("row", fontsize=8.5)
    ax.set_title(f"(1) Block tile {bm} x {bn}, K tile {bk}, {stages} stages:\n"
                 f"{groups} warpgroups ({128 * groups} threads) x {blocks} row blocks;\n"
                 f"{blocks * bk // mk} wgmma per warpgroup per K tile\n", fontsize=9.5, loc="left")
    # (2) One k-step reads 2 chunks (8 floats) of 8 rows; where do they lie?
    for col, swizzled in ((0, False), (1, True)):
        ax = fig.add_subplot(grid[0, col])
        chunks = 4 * bk // 16
        grid_axes(ax, 8, chunks, "", "", "row r of the A tile")
        ax.set_xticks([p + 0.5 for p in range(chunks)],
                      [f"{p}\n{4 * p}-{4 * p + 3}" for p in range(chunks)], fontsize=7)
        ax.set_xlabel(f"16-byte chunk position p in a row of {bk} floats, its banks",
                      fontsize=8.5)
        for r in range(8):
            for p in range(chunks):
                c = swizzled_chunk(r, p) if swizzled else p  # c ^ r ^ r = c: its own inverse
                read = c < 2
                ax.add_patch(Rectangle((p, r), 1, 1, edgecolor="white", lw=1,
                                       facecolor=("#0969da", "#bf8700")[c] if read else "#eaeef2"))
                ax.text(p + 0.5, r + 0.5, f"c{c}", ha="center", va="center", fontsize=7.5,
                        color="white" if read else "#57606a")
        ways = max(max(h) for h in k_step_banks(0, swizzled))
        how = ("128-byte swizzle (the kernel's):\nchunk c of row r at p = c ^ (r % 8)"
               if swizzled else "without a swizzle:\nchunk c of row r at p = c")
        verdict = ("8 rows in 8 chunk columns, all 32 banks:\nconflict-free" if ways == 1 else
                   f"8 rows in one chunk column, 4 banks:\n{ways}-way conflict")
        ax.set_title(f"(2{'b' if swizzled else 'a'}) A tile, {how}.\n"
                     f"k-step 0 reads c0, c1 (k 0-7) of rows 0-7:\n{verdict}",
                     fontsize=9.5, loc="left")
    # (3) The register operand: which lane loads which float of sB for one k-step.
    ax = fig.add_subplot(grid[1, :])
    grid_axes(ax, mk, 16, "", "column n of C in the warp's 16 = n of sB[k][64 wg + 16 w + n]",
              "k of the k-step")
    for lane in range(32):
        for reg, (row, k) in enumerate(a_fragment(lane)):
            cell(ax, plt, k, 2 * (row % 8) + row // 8, lane, f"a{reg}")
    for g in range(8):
        for k in range(mk):
            ax.add_patch(Rectangle((2 * g + 0.06, k + 0.06), 1.88, 0.88, fill=False,
                                   edgecolor="#cf222e", lw=1.1))
    ax.set_title("(3) B^T, the register operand, one k-step of warp w in warpgroup wg (cells: "
                 "lane, register).\nLane l = 4g + t holds rows g and g + 8 of the warp's 16 x 8 "
                 "fragment at k = t and t + 4;\nthose rows stand for columns 2g and 2g + 1 of C, "
                 "neighbours in sB[k][n]: each red pair is one 8-byte load.", fontsize=9.5,
                 loc="left")
    fig.suptitle(f"10_wgmma, SGEMM_TILE {bm}, {bn}, {stages}: C^T = B^T A^T with "
                 f"wgmma.mma_async.m{mm}n{wn}k{mk} (TF32),\nA from swizzled shared memory, B^T "
                 "from registers", fontsize=11.5, x=0.01, ha="left", fontweight="bold")
    fig.text(0.01, 0.04, f"Accumulators: each thread holds {blocks} x {mm * wn // 128} floats; "
             f"d[4j + e] of row block i, lane (g, t), warp w of warpgroup wg is C at row {wn} i + "
             f"8j + 2t + e % 2, column {mm} wg + 16 w + 2g + e / 2.", fontsize=8.5)
    fig.text(0.01, 0.012, "10_wgmma default SGEMM_TILE, drawn by "
             "scripts/tensor_core_figures.py", fontsize=7, color="#57606a")
    fig.subplots_adjust(left=0.05, right=0.97, top=0.84, bottom=0.1)
    save_palette(plt, fig, out)


def save_palette(plt, fig, out):
    """A 256-colour palette, as figures.py's figures: a third of the size for a flat diagram."""
    import io
    from PIL import Image
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=110, format="png")
    plt.close(fig)
    buffer.seek(0)
    Image.open(buffer).convert("RGB").quantize(256).save(out, optimize=True)


# Durations of pipeline.png, in arbitrary units: schematic, chosen to be legible, not measured
# (10_wgmma/README.md gives the measured effect of each part). Only their order and overlap are
# the kernel's. A group of wgmma takes less than half of the warps' work on a tile: the profiler
# sees the tensor cores wait for the warps, not the other way round (README, "What the profiler
# shows").
PIPELINE_DURATIONS = {
    "issue": 0.6,        # the cp.async of one tile (the warps' share)
    "latency": 8.0,      # from issue until the copies have landed
    "round": 2.4,        # rounding this thread's A chunks in place, fence.proxy.async
    "barrier": 0.4,      # __syncthreads
    "fragments": 2.0,    # B^T fragment loads and their rounding, the descriptors
    "wgmma_issue": 0.8,  # wgmma.fence, kKSteps x kRowBlocks wgmma, commit_group
    "group": 2.8,        # the tensor cores on one committed group (one K tile)
}
# The warps' phases of one K tile, in the kernel's order, and how pipeline.png colours them.
# Labels are formatted with ahead, in_flight, k_steps and row_blocks.
PIPELINE_PHASES = [("copy_wait", "cp.async.wait_group: wait until tile t has landed", "#d0d7de"),
                   ("round", "round A in shared memory, fence.proxy.async", "#E69F00"),
                   ("wgmma_wait", "wgmma.wait_group {in_flight}: wait for group t - "
                    "{oldest}", "#cf222e"),
                   ("barrier", "__syncthreads", "#1f2328"),
                   ("issue", "issue the cp.async of tile t + {ahead}", "#0072B2"),
                   ("fragments", "B^T fragments (LDS.64, rounding), descriptors", "#009E73"),
                   ("wgmma_issue", "wgmma.fence, {k_steps} k-steps x {row_blocks} wgmma, "
                    "commit_group", "#CC79A7")]


def pipeline_schedule(stages, in_flight, tiles, d=None):
    """The kernel's main loop, played out with the schematic durations d: copies run
    kAhead = stages - 1 - in_flight tiles ahead, a tile's step waits for its copies, rounds A,
    waits until at most in_flight groups of wgmma run, meets the barrier, issues the copies of
    tile + kAhead, loads its fragments and issues its group; the tensor cores run the groups one
    after another. Returns {"ahead", "copies": {tile: (stage, issued, landed)}, "steps":
    [{phase: (start, end)}], "groups": {tile: (start, end)}, "end"}."""
    d = dict(PIPELINE_DURATIONS, **(d or {}))
    ahead = stages - 1 - in_flight
    copies, steps, groups = {}, [], {}
    now = 0.0

    def issue(tile, at):
        if tile < tiles:
            copies[tile] = (tile % stages, at, at + d["issue"] + d["latency"])
        return at + d["issue"]

    for tile in range(ahead):  # the prologue
        now = issue(tile, now)
    for tile in range(tiles):
        phases = {}
        landed = copies[tile][2]
        phases["copy_wait"] = (now, max(now, landed))
        now = phases["copy_wait"][1]
        phases["round"] = (now, now + d["round"])
        now += d["round"]
        oldest = tile - 1 - in_flight  # the group that must be done before its stage is refilled
        done = groups[oldest][1] if oldest >= 0 else now
        phases["wgmma_wait"] = (now, max(now, done))
        now = phases["wgmma_wait"][1]
        phases["barrier"] = (now, now + d["barrier"])
        now += d["barrier"]
        phases["issue"] = (now, issue(tile + ahead, now))
        now = phases["issue"][1]
        phases["fragments"] = (now, now + d["fragments"])
        now += d["fragments"]
        phases["wgmma_issue"] = (now, now + d["wgmma_issue"])
        now += d["wgmma_issue"]
        start = max(now, groups[tile - 1][1] if tile > 0 else now)
        groups[tile] = (start, start + d["group"])
        steps.append(phases)
    end = max(now, groups[tiles - 1][1])  # wgmma.wait_group 0, then the epilogue
    return {"ahead": ahead, "copies": copies, "steps": steps, "groups": groups, "end": end}


def draw_pipeline(plt, tile, out):
    """The wgmma kernel's main loop over time: which tile each shared-memory stage holds and in
    which state, what the warps do on each tile, and which group of wgmma the tensor cores run."""
    from matplotlib.patches import Patch, Rectangle
    from plot import COLOURS
    stages, in_flight, bk = tile["kStages"], tile["kInFlight"], tile["kBlockK"]
    k_steps, row_blocks = bk // tile["wgmma_k"], tile["kBlockM"] // tile["kWgmmaN"]
    tiles = stages + 3  # the prologue, the steady state and the tail
    plan = pipeline_schedule(stages, in_flight, tiles)
    ahead, steps, groups = plan["ahead"], plan["steps"], plan["groups"]
    height = 4.4 + 0.6 * stages  # inches; the legend and the caption take the bottom 1.6
    fig, (ax, ax_w) = plt.subplots(2, 1, figsize=(14, height), sharex=True,
                                   gridspec_kw=dict(height_ratios=[stages, 2.2]))

    units_per_inch = (plan["end"] + 0.6) / (14 * 0.92)

    def bar(axis, x0, x1, row, labels, **style):
        """A bar with the longest of labels that fits inside it (7.5-point text)."""
        axis.add_patch(Rectangle((x0, row + 0.18), x1 - x0, 0.64, **style))
        for label in labels:
            if (len(label) + 1) * 0.058 * units_per_inch < x1 - x0:
                axis.text((x0 + x1) / 2, row + 0.5, label, ha="center", va="center",
                          fontsize=7.5, bbox=dict(facecolor="white", edgecolor="none", pad=0.4,
                                                  alpha=0.8))
                break

    # (1) The stages: tile t lives in stage t % kStages from its copies' issue until its group
    # of wgmma is done; only then may the barrier of a later step hand the stage to a new copy.
    for t, (stage, issued, landed) in plan["copies"].items():
        c = COLOURS[t % len(COLOURS)]
        bar(ax, issued, landed, stage, [f"copy {t}", str(t)], facecolor="white", edgecolor=c,
            hatch="////", lw=1.1)
        r0, r1 = steps[t]["round"]
        bar(ax, r0, r1, stage, [f"round {t}", "round"], facecolor=c, alpha=0.45, edgecolor=c,
            lw=0.8)
        bar(ax, r1, groups[t][1], stage, [f"read: fragments, wgmma {t}", f"read {t}"],
            facecolor=c, edgecolor="#1f2328", lw=0.8)
    ax.set_ylim(stages, 0)
    ax.set_yticks([s + 0.5 for s in range(stages)], [f"stage {s}" for s in range(stages)])
    ax.grid(False)
    ax.set_title(f"10_wgmma pipeline: {stages} stages of BK = {bk}, {in_flight} group"
                 f"{'s' if in_flight != 1 else ''} of wgmma in flight, so copies run "
                 f"kAhead = kStages - 1 - kInFlight = {ahead} tile"
                 f"{'s' if ahead != 1 else ''} ahead", loc="left", fontsize=10.5,
                 fontweight="bold")
    # (2) The warps (all of the block's, in step) and the tensor cores.
    colour = {key: c for key, _, c in PIPELINE_PHASES}
    for t, phases in enumerate(steps):
        for key, (x0, x1) in phases.items():
            if x1 > x0:
                ax_w.add_patch(Rectangle((x0, 0.18), x1 - x0, 0.64, facecolor=colour[key],
                                         edgecolor="white", lw=0.4))
        x0, x1 = phases["copy_wait"][0], phases["wgmma_issue"][1]
        ax_w.text((x0 + x1) / 2, 0.08, f"tile {t}", ha="center", va="bottom", fontsize=7.5)
        g0, g1 = groups[t]
        bar(ax_w, g0, g1, 1, [f"wgmma group {t}", f"group {t}", str(t)],
            facecolor=COLOURS[t % len(COLOURS)], edgecolor="#1f2328", lw=0.8)
    for phases in steps:
        for axis in (ax, ax_w):
            axis.axvline(phases["barrier"][1], color="#57606a", lw=0.7, ls=":")
    ax_w.set_ylim(2, 0)
    ax_w.set_yticks([0.5, 1.5], ["warps", "tensor cores"])
    ax_w.set_xticks([])
    ax_w.set_xlabel("time (schematic)", fontsize=8.5)
    ax_w.grid(False)
    ax.set_xlim(-0.3, plan["end"] + 0.3)
    names = dict(ahead=ahead, in_flight=in_flight, oldest=1 + in_flight, k_steps=k_steps,
                 row_blocks=row_blocks)
    fig.legend(handles=[Patch(facecolor=c, label=label.format(**names))
                        for _, label, c in PIPELINE_PHASES],
               loc="upper left", bbox_to_anchor=(0.06, 1.3 / height), ncol=3, fontsize=7.5,
               frameon=False)
    fig.text(0.01, 0.3 / height,
             f"Tile t is copied into stage t % {stages}, its copies issued {ahead} tile"
             f"{'s' if ahead != 1 else ''} ahead (hatched: in flight). Its step waits for them, "
             "rounds A in place and fences it for the async proxy, then waits until at most "
             f"{in_flight} group{'s' if in_flight != 1 else ''} of wgmma run\n(wgmma.wait_group "
             f"{in_flight}); the barrier (dotted) then hands the stage of tile t - {1 + in_flight} "
             f"to the copies of tile t + {ahead}. A group is {k_steps} k-steps x {row_blocks} "
             "row blocks of wgmma; "
             + ("the tensor cores run group t - 1 while the warps prepare tile t.\n"
                if in_flight else "the warps wait for each group before the next barrier.\n")
             + "Durations are schematic, chosen to be legible; the order and the overlap are "
             "the kernel's.",
             fontsize=8)
    fig.text(0.01, 0.012, "10_wgmma default SGEMM_TILE and switches, drawn by "
             "scripts/tensor_core_figures.py", fontsize=7, color="#57606a")
    fig.subplots_adjust(left=0.07, right=0.99, top=1 - 0.35 / height, bottom=1.6 / height,
                        hspace=0.12)
    save_palette(plt, fig, out)


# ---- 08's main loop over time (pipeline.png) and its launch plan (split_k.png) ----------------

# Durations of 08's pipeline.png, in arbitrary units: schematic, chosen to be legible, not
# measured (08_tensor_cores/README.md, "The pipeline", gives the measured effect of the
# prefetch). Only the order and the overlap are the kernel's.
PIPELINE08_DURATIONS = {
    "issue": 0.8,          # the cp.async of one K tile (this warp's share), commit
    "copy_latency": 14.0,  # from issue until the tile has landed in shared memory
    "barrier": 0.5,        # cp.async.wait_group + __syncthreads, once the tile has landed
    "load": 0.9,           # issuing one k-step's raw fragments (ldmatrix of A, loads of B)
    "load_latency": 2.6,   # from issue until they are in registers
    "mma": 3.0,            # rounding one k-step's fragments to TF32 and issuing its mma
}


def tile08_pipeline(stages, k_steps, tiles, d=None):
    """08's prefetched main loop for one warp (all warps run in step), played out with the
    schematic durations d over `tiles` K tiles of a longer K (copies keep being issued). The
    prologue issues tiles 0 .. stages - 2, waits for tile 0, meets the barrier and loads the
    fragments of (tile 0, step 0). Iteration t issues the copies of tile t + stages - 1 into
    stage (t + stages - 1) % stages, then per k-step s: at the last one, waits for tile t + 1
    and meets the barrier; loads the raw fragments of the next step (t, s + 1), or (t + 1, 0)
    after the barrier; rounds and multiplies (t, s) once its fragments are in registers.
    Returns {"copies": {tile: (stage, issued, landed, freed)}, "issues": {tile: (start, end)},
    "barriers": {t: (start, end)} (t = -1: the prologue's), "loads": {(t, s): (start, end,
    arrived)}, "mmas": {(t, s): (start, end)}, "end"}; a stage is freed by the barrier after
    which every warp holds its tile's fragments."""
    d = dict(PIPELINE08_DURATIONS, **(d or {}))
    copies, issues, barriers, loads, mmas = {}, {}, {}, {}, {}
    now = 0.0

    def issue(tile):
        nonlocal now
        issues[tile] = (now, now + d["issue"])
        copies[tile] = [tile % stages, now, now + d["issue"] + d["copy_latency"], None]
        now += d["issue"]

    def barrier(t, wait_for):
        nonlocal now
        start = max(now, copies[wait_for][2])  # cp.async.wait_group: the tile has landed
        barriers[t] = (start, start + d["barrier"])
        now = start + d["barrier"]

    def load(t, s):
        nonlocal now
        loads[(t, s)] = (now, now + d["load"], now + d["load_latency"])
        now += d["load"]

    for tile in range(stages - 1):
        issue(tile)
    barrier(-1, 0)
    load(0, 0)
    for t in range(tiles):
        issue(t + stages - 1)
        for s in range(k_steps):
            if s == k_steps - 1:
                barrier(t, t + 1)
                copies[t][3] = barriers[t][1]
                load(t + 1, 0)
            else:
                load(t, s + 1)
            start = max(now, loads[(t, s)][2])
            mmas[(t, s)] = (start, start + d["mma"])
            now = start + d["mma"]
    return {"copies": {t: tuple(c) for t, c in copies.items()}, "issues": issues,
            "barriers": barriers, "loads": loads, "mmas": mmas, "end": now}


def pipeline08_signature(params):
    """What 08's pipeline.png is drawn from: the default tile, the prefetch switch and a digest
    of the schematic durations."""
    durations = digest(repr(sorted(PIPELINE08_DURATIONS.items())).encode())
    tile = default_tile(params)
    return (tile_signature(tile) + f"; SGEMM_PREFETCH = {params.get('SGEMM_PREFETCH', 1)}"
            f"; schematic durations sha256 {durations}")


def draw_pipeline08(plt, tile, out):
    """08's main loop over time: which tile each stage holds (copies in flight, then read), and
    one warp's cp.async issue and barriers, fragment loads and round + mma, per k-step."""
    from matplotlib.patches import Patch, Rectangle
    from plot import COLOURS
    stages, bk = tile["stages"], tile["block_k"]
    k_steps = bk // 8
    frags_m, frags_n = tile["warp_m"] // 16, tile["warp_n"] // 8
    tiles = stages + 2
    plan = tile08_pipeline(stages, k_steps, tiles)
    end = plan["mmas"][(tiles - 1, k_steps - 1)][1]
    width, height = 14, 4.9 + 0.5 * stages
    fig, (ax, ax_w) = plt.subplots(2, 1, figsize=(width, height), sharex=True,
                                   gridspec_kw=dict(height_ratios=[stages, 3]))
    units_per_inch = (end + 0.6) / (width * 0.9)

    def bar(axis, x0, x1, row, labels, **style):
        """A bar with the longest of labels that fits inside it (7.5-point text)."""
        x1 = min(x1, end + 0.3)
        axis.add_patch(Rectangle((x0, row + 0.18), x1 - x0, 0.64, **style))
        for label in labels:
            if (len(label) + 1) * 0.058 * units_per_inch < x1 - x0:
                axis.text((x0 + x1) / 2, row + 0.5, label, ha="center", va="center",
                          fontsize=7.5, bbox=dict(facecolor="white", edgecolor="none", pad=0.4,
                                                  alpha=0.8))
                break

    # (1) The stages: tile t in stage t % kStages from its copies' issue until the barrier
    # after which every warp holds its fragments.
    for t, (stage, issued, landed, freed) in plan["copies"].items():
        c = COLOURS[t % len(COLOURS)]
        bar(ax, issued, landed, stage, [f"copy of tile {t} in flight", f"copy {t}", str(t)],
            facecolor="white", edgecolor=c, hatch="////", lw=1.1)
        bar(ax, landed, freed if freed is not None else end + 0.3, stage,
            [f"tile {t}: fragments read", f"tile {t}", str(t)], facecolor=c, edgecolor="#1f2328",
            lw=0.8)
    ax.set_ylim(stages, 0)
    ax.set_yticks([s + 0.5 for s in range(stages)], [f"stage {s}" for s in range(stages)])
    ax.grid(False)
    ax.set_title(f"08_tensor_cores pipeline: {stages} stages of BK = {bk}, {k_steps} mma k-steps "
                 f"per K tile, fragments loaded one k-step ahead (copies of tile t + {stages - 1} "
                 "issued on tile t)", loc="left", fontsize=10.5, fontweight="bold")
    # (2) One warp: its cp.async issue and barriers, its fragment loads, its round + mma.
    for t, (x0, x1) in plan["issues"].items():
        if x0 < end:
            bar(ax_w, x0, x1, 0, [str(t)], facecolor=COLOURS[t % len(COLOURS)],
                edgecolor="#1f2328", lw=0.6)
    for t, (x0, x1) in plan["barriers"].items():
        ax_w.add_patch(Rectangle((x0, 0.18), x1 - x0, 0.64, facecolor="#1f2328"))
        for axis in (ax, ax_w):
            axis.axvline(x1, color="#57606a", lw=0.7, ls=":")
    for (t, s), (x0, x1, arrived) in plan["loads"].items():
        if x0 < end:
            c = COLOURS[t % len(COLOURS)]
            ax_w.add_patch(Rectangle((x1, 1.42), min(arrived, end + 0.3) - x1, 0.16,
                                     facecolor=c, alpha=0.35))
            bar(ax_w, x0, x1, 1, [f"{t}.{s}"], facecolor=c, edgecolor="#1f2328", lw=0.6)
    for (t, s), (x0, x1) in plan["mmas"].items():
        bar(ax_w, x0, x1, 2, [f"round + mma {t}.{s}", f"{t}.{s}"],
            facecolor=COLOURS[t % len(COLOURS)], edgecolor="#1f2328", lw=0.8)
    ax_w.set_ylim(3, 0)
    ax_w.set_yticks([0.5, 1.5, 2.5], ["cp.async issue,\nwait + barrier", "fragment loads",
                                      "round + mma"])
    ax_w.set_xticks([])
    ax_w.set_xlabel("time (schematic)", fontsize=8.5)
    ax_w.grid(False)
    ax.set_xlim(-0.3, end + 0.3)
    fig.legend(handles=[Patch(facecolor="white", edgecolor="#57606a", hatch="////",
                              label="copies of a K tile in flight (cp.async)"),
                        Patch(facecolor=COLOURS[0], edgecolor="#1f2328",
                              label="tile landed, its fragments being read"),
                        Patch(facecolor="#1f2328",
                              label="cp.async.wait_group + __syncthreads (dotted line)"),
                        Patch(facecolor=COLOURS[0], alpha=0.35,
                              label="fragment loads in flight")],
               loc="upper left", bbox_to_anchor=(0.08, 1.3 / height), ncol=4, fontsize=7.5,
               frameon=False)
    fig.text(0.01, 0.3 / height,
             f"Box t.s: tile t, k-step s. At k-step s the warp issues the raw fragment loads of "
             f"step s + 1 ({frags_m} ldmatrix.x4 + {2 * frags_n} B loads), then rounds and "
             f"multiplies step s ({4 * frags_m + 2 * frags_n} values to TF32, {frags_m * frags_n} "
             "mma), "
             "whose fragments arrived a step ago.\nAt the last k-step of tile t it waits for tile "
             "t + 1 and meets the barrier, which also proves every warp holds tile t's fragments: "
             f"its stage is refilled with tile t + {stages} at the top of the next iteration.\n"
             "The loads of tile t + 1's first fragments go before the last mma of tile t, so the "
             "tensor pipe does not drain at the barrier. Durations are schematic, chosen to be "
             "legible; the order and the overlap are the kernel's.", fontsize=8)
    fig.text(0.01, 0.012, "08_tensor_cores default SGEMM_TILE, drawn by "
             "scripts/tensor_core_figures.py", fontsize=7, color="#57606a")
    fig.subplots_adjust(left=0.1, right=0.99, top=1 - 0.35 / height, bottom=1.6 / height,
                        hspace=0.12)
    save_palette(plt, fig, out)


# Split-K and the tile plan, as common/split_k.h makes them (tests/host/split_k_test.cpp checks
# the C++; tests/scripts/test_tensor_core_figures.py checks these against its cases).
def read_max_splits(root):
    """sgemm::kMaxSplits, the most slices plan_split_k makes, from root's common/split_k.h."""
    return max_splits_of((root / SPLIT_HEADER).read_text(encoding="utf-8"))


# Read from the header, never copied: main() reads the --root tree's; the plan functions below
# read this repository's when called without main() (the host tests).
MAX_SPLITS = None


def max_splits():
    global MAX_SPLITS
    if MAX_SPLITS is None:
        MAX_SPLITS = read_max_splits(REPO)
    return MAX_SPLITS


H100_SMS = 132
SPLIT_SHAPES = ((96, 96, 1048576), (8192, 128, 8192))  # (m, n, k) split_k.png draws


def ceil_div(a, b):
    return -(-a // b)


def plan_split_k(tiles, slots, k, block_k, min_slice_tiles):
    """sgemm::plan_split_k: (splits, k_slice)."""
    if tiles <= 0 or tiles >= slots:
        return 1, k
    k_tiles = ceil_div(k, block_k)
    splits = min(slots // tiles, k_tiles // min_slice_tiles, max_splits())
    if splits < 2:
        return 1, k
    k_slice = ceil_div(k_tiles, splits) * block_k
    return ceil_div(k, k_slice), k_slice


def plan_cost(tiles, sms, block_m, block_n, split):
    """sgemm::plan_cost: multiply-adds on the busiest SM."""
    return ceil_div(tiles * split[0], sms) * block_m * block_n * split[1]


def tiles_of(m, n, spec):
    return ceil_div(m, spec["block_m"]) * ceil_div(n, spec["block_n"])


def plan_tiles(m, n, k, big, small, sms, split_k=True):
    """sgemm::plan_tiles: (small_tile, (splits, k_slice)); big and small are {block_m, block_n,
    block_k, stages, slots}."""
    def split_for(spec):
        return (plan_split_k(tiles_of(m, n, spec), spec["slots"], k, spec["block_k"],
                             spec["stages"]) if split_k else (1, k))
    big_split = split_for(big)
    if tiles_of(m, n, big) >= sms:
        return False, big_split
    small_split = split_for(small)
    big_cost = plan_cost(tiles_of(m, n, big), sms, big["block_m"], big["block_n"], big_split)
    small_cost = plan_cost(tiles_of(m, n, small), sms, small["block_m"], small["block_n"],
                           small_split)
    return (True, small_split) if small_cost < big_cost else (False, big_split)


def small_tile_of(source):
    """{block_m, block_n, block_k, warp_m, warp_n, stages} of `using SmallTile = Tile<...>;`,
    matched to the names of Tile's template parameters (kBlockM_ -> block_m)."""
    text = source_text(source)
    small = re.search(r"\busing\s+SmallTile\s*=\s*(\w+)\s*<([\d\s,]+)>\s*;", text)
    if not small:
        raise UsageError(f"{source}: no `using SmallTile = Tile<...>;` with integer values")
    struct = re.search(r"template\s*<([^>]*)>\s*struct\s+" + re.escape(small.group(1)) + r"\b",
                       text)
    if not struct:
        raise UsageError(f"{source}: template struct {small.group(1)} not found")
    names = [re.sub(r"(?<!^)([A-Z])", r"_\1", p.split()[-1][1:].rstrip("_")).lower()
             for p in struct.group(1).split(",")]
    values = [int(v) for v in small.group(2).split(",")]
    if len(names) != len(values) or sorted(names) != sorted(TILE_FIELDS):
        raise UsageError(f"{source}: SmallTile's values do not match {small.group(1)}'s "
                         f"parameters ({', '.join(names)})")
    return dict(zip(names, values))


TILE_FIELDS = ("block_m", "block_n", "block_k", "warp_m", "warp_n", "stages")


def blocks_per_sm(tile):
    """The kernel's kMinBlocksPerSm (SGEMM_VECTOR_B = 0): 2 for a block of at most 128 threads
    whose shared memory fits twice in 228 KB, else 1; what the H100 gives the two tiles."""
    threads = 32 * (tile["block_m"] // tile["warp_m"]) * (tile["block_n"] // tile["warp_n"])
    smem = 4 * tile["stages"] * (tile["block_m"] * (tile["block_k"] + 4) +
                                 tile["block_k"] * (tile["block_n"] + 8))
    return 2 if threads <= 128 and 2 * (smem + 1024) <= 228 * 1024 else 1


def tile_specs(big, small, sms=H100_SMS):
    """The launcher's TileSpecs of 08's two tiles on `sms` SMs."""
    return tuple(dict({n: t[n] for n in ("block_m", "block_n", "block_k", "stages")},
                      slots=sms * blocks_per_sm(t)) for t in (big, small))


def split_signature08(params, small):
    """What split_k.png is drawn from: both tiles, the split-K switch, the shapes, the SMs."""
    tile = default_tile(params)
    return (tile_signature(tile) + "; SmallTile: " + tile_text(small, TILE_FIELDS) +
            f"; SGEMM_SPLIT_K = {params.get('SGEMM_SPLIT_K', 1)}; shapes " +
            ", ".join("x".join(map(str, s)) for s in SPLIT_SHAPES) + f"; {H100_SMS} SMs")


def draw_split_k(plt, params, small, out):
    """For each of SPLIT_SHAPES: both tiles' plans and the one the launcher takes, its blocks on
    the SMs' slots coloured by K slice, K cut into the slices, and the reduction."""
    from matplotlib.patches import FancyArrowPatch, Rectangle
    big = {n: params[n] for n in TILE_FIELDS}
    specs = tile_specs(big, small)
    split_on = bool(params.get("SGEMM_SPLIT_K", 1))
    cols = 12
    rows = ceil_div(H100_SMS, cols)
    fig, axes = plt.subplots(1, len(SPLIT_SHAPES), figsize=(6.5 * len(SPLIT_SHAPES), 8.6))
    cmap = plt.get_cmap("viridis")
    for ax, (m, n, k) in zip(axes, SPLIT_SHAPES):
        use_small, (splits, k_slice) = plan_tiles(m, n, k, *specs, H100_SMS, split_on)
        spec, name = (specs[1], "SmallTile") if use_small else (specs[0], "the big tile")
        tiles = tiles_of(m, n, spec)
        per_sm = spec["slots"] // H100_SMS
        costs = []
        for label, s in (("big", specs[0]), ("small", specs[1])):
            t = tiles_of(m, n, s)
            sp = (plan_split_k(t, s["slots"], k, s["block_k"], s["stages"]) if split_on
                  else (1, k))
            costs.append(f"{label} {s['block_m']} x {s['block_n']}: {t} block"
                         f"{'s' if t != 1 else ''} x {sp[0]} slice{'s' if sp[0] != 1 else ''}"
                         f" of {sp[1]}, busiest SM "
                         f"{plan_cost(t, H100_SMS, s['block_m'], s['block_n'], sp) / 1e6:.1f} M")
        ax.set_xlim(-0.2, cols + 0.2)
        ax.set_ylim(rows + 6.2, -3.6)
        ax.axis("off")
        ax.set_title(f"{m} x {n} x {k}: {name} ({spec['block_m']} x {spec['block_n']}),\n"
                     f"{tiles} block{'s' if tiles != 1 else ''} per pass over K x {splits} K "
                     f"slice{'s' if splits != 1 else ''}", loc="left", fontsize=10.5,
                     fontweight="bold")
        ax.text(0, -3.1, "each tile's plan (multiply-adds on the busiest SM; the launcher takes "
                "the big tile\nif its blocks fill every SM, else the lighter busiest SM):\n" +
                "\n".join(costs) + "\nbelow: the SMs, each block coloured by its K slice",
                fontsize=8, va="top")
        # The SMs, each with its block slots; block b (x, y fastest, then the slice z) drawn in
        # slot b // SMs of SM b % SMs.
        blocks = tiles * splits
        for sm in range(H100_SMS):
            r, c = divmod(sm, cols)
            ax.add_patch(Rectangle((c + 0.04, r + 0.04), 0.92, 0.92, facecolor="none",
                                   edgecolor="#57606a", lw=0.6))
            for slot in range(per_sm):
                b = slot * H100_SMS + sm
                h = 0.84 / per_sm
                y = r + 0.08 + slot * h
                if b < blocks:
                    z = b // tiles
                    colour = cmap(0.1 + 0.8 * z / max(1, splits - 1))
                else:
                    colour = "#eaeef2"
                ax.add_patch(Rectangle((c + 0.08, y), 0.84, h - 0.04, facecolor=colour,
                                       edgecolor="none"))
        idle = spec["slots"] - blocks if blocks < spec["slots"] else 0
        ax.text(0, rows + 0.6, f"{H100_SMS} SMs x {per_sm} block slot{'s' if per_sm != 1 else ''}"
                f" = {spec['slots']} slots; {blocks} blocks"
                + (f", {idle} slots idle (grey)" if idle else
                   (", every slot busy" if blocks <= spec["slots"] else
                    f", {ceil_div(blocks, spec['slots'])} waves")), fontsize=8.5, va="top")
        # K cut into the slices (colour: slice, as on the SMs), then the reduction into C.
        ky = rows + 2.0
        for z in range(splits):
            x0 = cols * z * k_slice / k
            x1 = cols * min(k, (z + 1) * k_slice) / k
            ax.add_patch(Rectangle((x0, ky), x1 - x0, 0.8,
                                   facecolor=cmap(0.1 + 0.8 * z / max(1, splits - 1)),
                                   edgecolor="white" if splits <= 32 else "none", lw=0.5))
        ax.text(0, ky - 0.15, f"K = {k} in {splits} slice{'s' if splits != 1 else ''} of "
                f"{k_slice} ({k_slice // spec['block_k']} K tiles of {spec['block_k']}, at least "
                f"{spec['stages']} stages' worth)", fontsize=8.5, va="bottom")
        if splits > 1:
            mib = splits * ceil_div(m * n, 4) * 4 * 4 / 2 ** 20
            ax.add_artist(FancyArrowPatch((cols / 2, ky + 0.9), (cols / 2, ky + 2.0),
                                          arrowstyle="-|>", mutation_scale=12, color="#1f2328"))
            ax.text(cols / 2 + 0.3, ky + 1.45, f"slice z writes its partial {m} x {n} tile\nto the "
                    f"workspace ({mib:.2f} MiB in all)", fontsize=8, va="center")
            ax.text(0, ky + 2.2, f"reduce_split_k: every element adds its {splits} slices in a "
                    "fixed order, then alpha, beta -> C\n(no atomics: C is the same, bit for bit, "
                    "on every run)", fontsize=8.5, va="top")
        else:
            ax.text(0, ky + 1.2, "one slice: the blocks write C directly, no reduction",
                    fontsize=8.5, va="top")
    fig.text(0.01, 0.035,
             f"Plans by common/split_k.h (plan_tiles, plan_split_k, plan_cost), mirrored in "
             f"Python, for {H100_SMS} SMs (the H100). Block slots per SM assumed from the "
             "kernel's kMinBlocksPerSm:\n"
             f"{blocks_per_sm(big)} for the big tile {big['block_m']} x {big['block_n']} x "
             f"{big['block_k']}, {blocks_per_sm(small)} for SmallTile {small['block_m']} x "
             f"{small['block_n']} x {small['block_k']} (the launcher asks "
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor at run time).\nWhich SM runs which "
             "block is the hardware's choice: the slots are filled in launch order here.",
             fontsize=8)
    fig.text(0.01, 0.012, "08_tensor_cores default SGEMM_TILE and SmallTile, drawn by "
             "scripts/tensor_core_figures.py", fontsize=7, color="#57606a")
    fig.subplots_adjust(left=0.02, right=0.98, top=0.92, bottom=0.12, wspace=0.1)
    save_palette(plt, fig, out)


# ---- 09's split-K for the last round (rounds.png) ---------------------------------------------
# common/split_k.h's plan_split_k_rounds, mirrored (tests/host/split_k_test.cpp checks the C++,
# tests/scripts/test_tensor_core_figures.py this mirror against its cases), with 09's constants
# read from its source and the H100's FP32 peak and DRAM bandwidth as the harness computes them
# (docs/results/nvidia-h100-80gb-hbm3/ladder.md). The shapes: one the rule helps, one it misses.
ROUNDS_SHAPES = ((1536, 1536, 1536), (2049, 2051, 1023))
ROUNDS_CONSTANTS = ("kFp32PeakShare", "kDramShare", "kLaunchSeconds", "kFourByteLoss")
H100_FP32_PEAK = 66.91e12  # FLOP/s: 132 SMs x 128 lanes x 2 x 1980 MHz
H100_DRAM = 3352.3e9       # bytes/s: 2619 MHz x 5120 bit x 2
ROUNDS_SHOWN = 8           # slices drawn: 1 .. ROUNDS_SHOWN


def plan_split_k_rounds(m, n, k, tiles, slots, block_m, block_n, block_k, min_slice_tiles,
                        flops_per_s, bytes_per_s, launch_seconds):
    """sgemm::plan_split_k_rounds: ((splits, k_slice), {s: (k_slice, rounds, compute seconds,
    partial-sum seconds)} for every s it weighs)."""
    k_tiles = ceil_div(k, block_k)

    def seconds(splits, k_slice):
        rounds = ceil_div(tiles * splits, slots)
        compute = rounds * slots * 2.0 * block_m * block_n * k_slice / flops_per_s
        partials = 0.0 if splits == 1 else launch_seconds + 2.0 * splits * m * n * 4 / bytes_per_s
        return k_slice, rounds, compute, partials
    weighed = {1: seconds(1, k)}
    best = (1, k)
    for s in range(2, min(k_tiles // min_slice_tiles, max_splits()) + 1):
        k_slice = ceil_div(k_tiles, s) * block_k
        if ceil_div(k, k_slice) != s:
            continue
        weighed[s] = seconds(s, k_slice)
        if sum(weighed[s][2:]) < sum(weighed[best[0]][2:]):
            best = (s, k_slice)
    return best, weighed


def rounds_constants(source):
    """{name: value} of ROUNDS_CONSTANTS, `constexpr double kName = <number>;` in 09's source."""
    text = source_text(source)
    found = {name: float(value) for name, value in
             re.findall(r"constexpr\s+double\s+(k\w+)\s*=\s*([0-9.eE+-]+)\s*;", text)}
    missing = [name for name in ROUNDS_CONSTANTS if name not in found]
    if missing:
        raise UsageError(f"{source}: no `constexpr double` {', '.join(missing)}")
    return {name: found[name] for name in ROUNDS_CONSTANTS}


def measured_plans(parts):
    """{(m, n, k): {"default": ms, "no_split_rounds": ms}} from the parts file's two sections."""
    try:
        text = Path(parts).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{parts}: cannot read: {error}") from None
    times = {}
    section = None
    for line in text.splitlines():
        head = re.match(r"== pairs_(\w+)", line)
        if head:
            section = head.group(1)
            continue
        row = re.match(r"09_3xtf32\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s", line)
        if row and section in ("default", "no_split_rounds"):
            shape = tuple(int(v) for v in row.groups()[:3])
            times.setdefault(shape, {})[section] = float(row.group(4))
    return times


def rounds_signature09(root):
    """What rounds.png is drawn from: 09's tile and constants, the shapes, the H100's figures,
    and the measured file."""
    tile = tile_of(root / SOURCE09)
    consts = rounds_constants(root / SOURCE09)
    return (tile_signature(tile) + "; " + ", ".join(f"{n} = {v:g}" for n, v in consts.items()) +
            "; shapes " + ", ".join("x".join(map(str, s)) for s in ROUNDS_SHAPES) +
            f"; {H100_SMS} SMs, FP32 peak {H100_FP32_PEAK:g}, DRAM {H100_DRAM:g}; " +
            table_signature(root / PARTS_TXT))


def kernel_k(m, n, k, four_byte_loss):
    """The K the kernel runs: 09's padding_for on the H100, which copies A and B into padded rows
    (K rounded up to 4) where K % 4 != 0 and ridge x bytes / flops < kFourByteLoss (README, "Every
    shape"); the copies' 1 GiB cap is left out (the figure's shapes are far below it)."""
    if k % 4 == 0:
        return k
    k4, n4 = ceil_div(k, 4) * 4, ceil_div(n, 4) * 4
    bytes_ = 4.0 * (m * k + m * k4 + k * n + k4 * n4)
    ridge = H100_FP32_PEAK / H100_DRAM
    return k4 if ridge * bytes_ / (2.0 * m * n * k) < four_byte_loss else k


def draw_rounds(plt, root, out):
    """For each of ROUNDS_SHAPES: the model's time against the number of K slices (rounds of the
    big tile at 09's rate, then the partial sums and the reduction's launch), the slices it takes,
    and the two plans measured (the default and variant no_split_rounds)."""
    tile = tile_of(root / SOURCE09)
    consts = rounds_constants(root / SOURCE09)
    measured = measured_plans(root / PARTS_TXT)
    flops = consts["kFp32PeakShare"] * H100_FP32_PEAK
    bandwidth = consts["kDramShare"] * H100_DRAM
    fig, axes = plt.subplots(1, len(ROUNDS_SHAPES), figsize=(6.2 * len(ROUNDS_SHAPES), 4.9))
    for ax, (m, n, k) in zip(axes, ROUNDS_SHAPES):
        kk = kernel_k(m, n, k, consts["kFourByteLoss"])
        tiles = ceil_div(m, tile["block_m"]) * ceil_div(n, tile["block_n"])
        best, weighed = plan_split_k_rounds(m, n, kk, tiles, H100_SMS, tile["block_m"],
                                            tile["block_n"], tile["block_k"], tile["stages"],
                                            flops, bandwidth, consts["kLaunchSeconds"])
        shown = [s for s in sorted(weighed) if s <= ROUNDS_SHOWN]
        xs = range(len(shown))
        compute = [weighed[s][2] * 1e6 for s in shown]
        partials = [weighed[s][3] * 1e6 for s in shown]
        ax.bar(xs, compute, color=["#0969da" if s == best[0] else "#8c959f" for s in shown],
               label="rounds at 09's rate")
        ax.bar(xs, partials, bottom=compute, color="#bf8700",
               label="partial sums + the reduction's launch")
        for x, s in zip(xs, shown):
            ax.text(x, compute[x] + partials[x] + 2, f"{weighed[s][1]} round"
                    f"{'s' if weighed[s][1] != 1 else ''}\nof {weighed[s][0]}", ha="center",
                    fontsize=7)
        times = measured.get((m, n, k), {})
        for key, s, marker in (("no_split_rounds", 1, "s"), ("default", best[0], "o")):
            if key in times and s in shown:
                ax.plot([shown.index(s)], [times[key] * 1e3], marker, color="#cf222e",
                        markersize=8, label=f"measured: {key.replace('_', ' ')}")
        ax.set_xticks(list(xs), [str(s) for s in shown])
        ax.set_xlabel("K slices")
        ax.set_ylabel("microseconds")
        top = max([c + p for c, p in zip(compute, partials)] + [t * 1e3 for t in times.values()])
        ax.set_ylim(0, top * 1.55)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"{m} x {n} x {k}" + (f", A and B padded to K = {kk}" if kk != k else "") +
                     f":\n{tiles} tiles of {tile['block_m']} x {tile['block_n']} on {H100_SMS} "
                     f"SMs; the model takes {best[0]} slice{'s' if best[0] != 1 else ''}",
                     loc="left", fontsize=9.5)
        ax.legend(fontsize=7, loc="upper center", ncol=2)
    fig.text(0.01, 0.045,
             "Model: common/split_k.h plan_split_k_rounds (mirrored in Python): a round is "
             f"{H100_SMS} blocks of 2 x BM x BN x k_slice FLOP at {consts['kFp32PeakShare']:g} of "
             "the FP32 peak; s slices add 2 s M N floats at "
             f"{consts['kDramShare']:g} of the DRAM bandwidth and a launch of "
             f"{consts['kLaunchSeconds'] * 1e6:g} us.\nMeasured: the time the harness reports "
             "(the launcher's kernels, padded copies included) for the default and variant "
             "no_split_rounds (H100, "
             f"{PARTS_TXT.name}). At 2049 x 2051 x 1023 the model misses (README, \"Every shape\"): "
             "the half-K blocks took 59 % of a whole block's round, not 50 %.", fontsize=7.5)
    fig.text(0.01, 0.012, "09_3xtf32 default SGEMM_TILE and constants, drawn by "
             "scripts/tensor_core_figures.py", fontsize=7, color="#57606a")
    fig.subplots_adjust(left=0.06, right=0.98, top=0.88, bottom=0.2, wspace=0.2)
    save_palette(plt, fig, out)


# (label, row, sign, exponent, mantissa bits, colour) of split.png; small starts SPLIT_SHIFT bits
# into x's stored mantissa, below big's 10.
SPLIT_ROWS = [("FP32 x", 0, 1, 8, 23, "#0969da"),
              ("TF32 big = rna(x)", 1, 1, 8, 10, "#2da44e"),
              ("TF32 small = rna(x - big)", 2, 1, 8, 10, "#bf8700")]
SPLIT_SHIFT = 11


def split_signature():
    """The bit formats split.png draws, as one line."""
    return ("; ".join(f"{label}: {s} + {e} + {m} bits" for label, _, s, e, m, _ in SPLIT_ROWS) +
            f"; small from bit {SPLIT_SHIFT} of x's mantissa")


def draw_split(plt, out):
    from matplotlib.patches import Rectangle
    fig, ax = plt.subplots(figsize=(11, 3.2))
    ax.set_xlim(-7, 34)
    ax.set_ylim(4.2, -0.6)
    ax.axis("off")
    for label, r, s, e, m, colour in SPLIT_ROWS:
        ax.text(-0.5, r + 0.45, label, ha="right", va="center", fontsize=9)
        ax.add_patch(Rectangle((0, r), 1, 0.9, facecolor="#8c959f"))
        ax.add_patch(Rectangle((1, r), 8, 0.9, facecolor="#d0d7de"))
        shift = SPLIT_SHIFT if r == 2 else 0
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


# tile_end.png: a K tile's end for the warps of 09's block, schematic. Each warp's k-steps take
# one unit; the split of the next tile takes 0.6 to 1.1 units, different for each warp (as the
# copies land at different times), and the warps start the tile up to 0.15 units apart.
TILE_END_MMA = 1.0


def tile_end_timings(warps, steps, barrier):
    """Per warp: [(start, end, kind)] for the tile's k-steps, the split, the waits and the next
    tile's first k-step; kind is "mma", "split", "wait" or "next". barrier 0: __syncthreads()
    before the last k-step's mma; 1: the mbarrier, arrive after the split, wait after that mma."""
    offset = [0.15 * ((3 * w) % warps) / max(1, warps - 1) for w in range(warps)]
    split = [0.6 + 0.5 * ((5 * w) % warps) / max(1, warps - 1) for w in range(warps)]
    split_end = [offset[w] + (steps - 1) * TILE_END_MMA + split[w] for w in range(warps)]
    everyone = max(split_end)
    lanes = []
    for w in range(warps):
        bars = [(offset[w] + i * TILE_END_MMA, offset[w] + (i + 1) * TILE_END_MMA, "mma")
                for i in range(steps - 1)]
        bars.append((split_end[w] - split[w], split_end[w], "split"))
        if barrier == 0:
            if split_end[w] < everyone:
                bars.append((split_end[w], everyone, "wait"))
            last = everyone
        else:
            last = split_end[w]
        bars.append((last, last + TILE_END_MMA, "mma"))
        start_next = last + TILE_END_MMA
        if barrier == 1 and start_next < everyone:
            bars.append((start_next, everyone, "wait"))
            start_next = everyone
        bars.append((start_next, start_next + TILE_END_MMA, "next"))
        lanes.append(bars)
    return lanes


def tile_end_signature(tile, params):
    """What tile_end.png is drawn from: 09's tile (warps, k-steps) and its barrier switch."""
    return (tile_signature(tile) + f"; SGEMM_TILE_BARRIER = {params.get('SGEMM_TILE_BARRIER', 0)}"
            "; schematic durations: mma 1, split 0.6-1.1, start offsets 0-0.15")


def tile_end_idle(lanes):
    """[(start, end)] of the times, from the first warp's start to the last warp's end, at which
    no warp issues mma: the tensor cores idle."""
    busy = sorted((start, end) for bars in lanes for start, end, kind in bars
                  if kind in ("mma", "next"))
    idle, reached = [], busy[0][0]
    for start, end in busy:
        if start > reached:
            idle.append((reached, start))
        reached = max(reached, end)
    return idle


def draw_tile_end(plt, tile, params, out):
    """09's K tile's end, __syncthreads() above, the mbarrier below, for the warps of the block,
    with a lane for the SM's tensor cores: idle where no warp issues mma."""
    from matplotlib.patches import Rectangle
    warps = (tile["block_m"] // tile["warp_m"]) * (tile["block_n"] // tile["warp_n"])
    steps = tile["block_k"] // 8
    default = params.get("SGEMM_TILE_BARRIER", 0)
    colours = {"mma": "#0969da", "split": "#fb8500", "wait": "#d0d7de", "next": "#54aeff"}
    fig, axes = plt.subplots(2, 1, figsize=(11, 2.8 + 0.55 * warps), sharex=True)
    idle_total, end = {}, 0.0
    for ax, barrier in zip(axes, (0, 1)):
        lanes = tile_end_timings(warps, steps, barrier)
        for w, bars in enumerate(lanes):
            for start, stop, kind in bars:
                ax.add_patch(Rectangle((start, w + 1.1), stop - start, 0.8,
                                       facecolor=colours[kind], edgecolor="white", lw=0.5))
            if barrier == 1:
                arrive = [bar for bar in bars if bar[2] == "split"][0][1]
                ax.plot([arrive], [w + 1.5], marker="v", color="black", ms=5)
        idle = tile_end_idle(lanes)
        idle_total[barrier] = sum(stop - start for start, stop in idle)
        ax.add_patch(Rectangle((0, 0.1), max(b[1] for bars in lanes for b in bars), 0.8,
                               facecolor="#57606a"))
        for start, stop in idle:
            ax.add_patch(Rectangle((start, 0.1), stop - start, 0.8, facecolor="white",
                                   edgecolor="#cf222e", hatch="///", lw=0.8))
            ax.text((start + stop) / 2, 0.5, f"idle {stop - start:.2f}", ha="center",
                    va="center", fontsize=7, color="#cf222e")
        end = max(end, max(b[1] for bars in lanes for b in bars))
        ax.set_ylim(warps + 1, 0)
        ax.set_yticks([0.5] + [w + 1.5 for w in range(warps)])
        ax.set_yticklabels(["tensor cores"] + [f"warp {w}" for w in range(warps)], fontsize=7)
        name = ("__syncthreads() before the last k-step's mma" if barrier == 0 else
                "mbarrier: arrive after the split (v), wait after the last k-step's mma")
        ax.set_title(name + ("  (the default)" if barrier == default else ""), fontsize=9,
                     loc="left")
    axes[1].set_xlim(0, end + 0.3)
    axes[1].set_xlabel("time (schematic: one warp's mma of a k-step = 1; the warps share the "
                       "SM's tensor cores, which idle where no warp issues mma)")
    per_step = 3 * (tile["warp_m"] // 16) * (tile["warp_n"] // 8)  # mma.sync per warp, 3xTF32
    handles = [Rectangle((0, 0), 1, 1, facecolor=c) for c in colours.values()]
    fig.legend(handles, [f"mma of a k-step ({per_step} per warp)",
                         "split of the next tile's chunks", "waiting for the other warps",
                         "the next tile's first k-step"],
               fontsize=7, loc="upper right", ncol=4, bbox_to_anchor=(0.99, 0.955))
    fig.suptitle(f"09_3xtf32: the end of a K tile of {tile['block_k']} ({steps} k-steps), "
                 f"{warps} warps of {tile['warp_m']} x {tile['warp_n']}, {tile['stages']} stages: "
                 f"tensor cores idle {idle_total[0]:.2f} with __syncthreads(), "
                 f"{idle_total[1]:.2f} with the mbarrier", fontsize=9, x=0.01, ha="left")
    fig.text(0.01, 0.005, "drawn by scripts/tensor_core_figures.py from 09_3xtf32/3xtf32.cu's "
             "SGEMM_TILE and SGEMM_TILE_BARRIER; durations schematic, the measured effect is in "
             "the README", fontsize=7, color="#57606a")
    fig.tight_layout(rect=(0, 0.02, 1, 0.93))
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
    parser.add_argument("--root", type=Path, default=REPO,
                        help="the tree whose chapter sources are read (default: this repository)")
    args = parser.parse_args(argv)
    plt = pyplot("scripts/tensor_core_figures.py")
    if plt is None:
        return EXIT_USAGE
    root = args.root
    global MAX_SPLITS
    try:
        MAX_SPLITS = read_max_splits(root)
        tile08 = tile_of(root / "08_tensor_cores" / "tensor_cores.cu")
        params08 = parse_parameters(root / "08_tensor_cores" / "tensor_cores.cu")
        small08 = small_tile_of(root / "08_tensor_cores" / "tensor_cores.cu")
        prepared08 = prepared_tile_of(root / "08_tensor_cores" / "tensor_cores.cu")
        hopper = hopper_tile_of(root / HOPPER_SOURCE)
        signs = signatures(root)
        dirs = {}
        for chapter in ("08_tensor_cores", "09_3xtf32", "10_wgmma"):
            d = Path(args.out) / chapter if args.out else root / chapter / "figures"
            d.mkdir(parents=True, exist_ok=True)
            dirs[chapter] = d
    except (UsageError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    jobs = {("08_tensor_cores", "fragments.png"): lambda p: draw_fragments(plt, p),
            ("08_tensor_cores", "warp_tile.png"): lambda p: draw_warp_tile(plt, tile08, p),
            ("08_tensor_cores", "banks.png"): lambda p: draw_banks(plt, tile08, p),
            ("08_tensor_cores", "pipeline.png"): lambda p: draw_pipeline08(plt, tile08, p),
            ("08_tensor_cores", "split_k.png"): lambda p: draw_split_k(plt, params08, small08, p),
            ("08_tensor_cores", "prepared.png"): lambda p: draw_prepared(plt, tile08, prepared08,
                                                                         p),
            ("09_3xtf32", "split.png"): lambda p: draw_split(plt, p),
            ("09_3xtf32", "promotion.png"): lambda p: draw_promotion(plt, root / PROMOTION_CSV, p),
            ("09_3xtf32", "rounds.png"): lambda p: draw_rounds(plt, root, p),
            ("09_3xtf32", "tile_end.png"): lambda p: draw_tile_end(
                plt, tile_of(root / SOURCE09), parse_parameters(root / SOURCE09), p),
            ("10_wgmma", "wgmma.png"): lambda p: draw_wgmma(plt, hopper, p),
            ("10_wgmma", "pipeline.png"): lambda p: draw_pipeline(plt, hopper, p)}
    for (chapter, name), draw in jobs.items():
        path = dirs[chapter] / name
        try:
            draw(path)
            stamp(path, signs[(chapter, name)])
        except (UsageError, OSError, KeyError, ValueError) as error:
            print(f"error: {path.name}: {error}", file=sys.stderr)
            return 2
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
