#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draw the ladder from a results folder written by scripts/tour.py.

Three PNGs go to <results>/figures/, beside the results.json they are drawn from (or to --out):
  ladder_bar.png   TFLOP/s by chapter at one size, % of cuBLAS on each bar, cuBLAS FP32, cuBLAS
                   TF32 (when a TF32 chapter ran) and the FP32 peak as lines
  size_sweep.png   TFLOP/s against size (log scale), one line per chapter plus cuBLAS in each
                   precision
  roofline.png     log-log roofline: FP32 roof, DRAM and shared-memory slopes, ridge; each
                   chapter, numbered, at its modeled FLOP/byte and measured TFLOP/s
The results folder is always named: the committed folders under docs/results/ hold tracked
figures, and a plot of a new run must not overwrite them by default.
The figures have an opaque white background with dark text, so they read the same on light and
dark pages (GitHub's themes included).
"""

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from chapters import CHAPTERS, EXIT_PASS, EXIT_USAGE, ArgumentParser, pyplot

EXAMPLES = """\
examples:
  python3 scripts/plot.py docs/results/nvidia-h100-80gb-hbm3        # -> .../figures/
  python3 scripts/plot.py docs/results/nvidia-h100-80gb-hbm3 --size 4096
  python3 scripts/plot.py tests/scripts/fixture --out /tmp/figures

exit codes:
  0  the three figures were written (the last line names the folder)
  2  bad usage: no results folder named, results.json missing or broken (not JSON, no rows,
     a row or device field of the wrong type), no results at --size, an --out that cannot be
     created or written, matplotlib not installed; one line starting with "error:" says which
"""

# Okabe-Ito colours: distinguishable with colour-blindness, readable on white. Eight chapters or
# more reuse a colour, never a (colour, marker) pair: MARKERS has one entry per chapter up to 15,
# and every point also carries its chapter number.
COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#8C6D31"]
# Chapters past the palette's length repeat a colour; their bars take a hatch as well.
HATCHES = ["", "//", "..", "xx"]
MARKERS = ["o", "s", "^", "D", "v", "P", "*", "h", "X", "<", ">", "p", "d", "H", "8"]
INK, CUBLAS_INK, PEAK_INK, GRID = "#1f2328", "#1f2328", "#b0262b", "#d0d7de"
# cuBLAS TF32, the yardstick of the TF32 chapters: the cuBLAS colour, another dash.
TF32_DASHES = (0, (6, 2, 1, 2))
SMEM_INK, NOTE_INK = "#0072B2", "#57606a"
STYLE = {
    "figure.facecolor": "white", "axes.facecolor": "white", "savefig.facecolor": "white",
    "text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK, "xtick.color": INK,
    "ytick.color": INK, "axes.grid": True, "grid.color": GRID, "grid.linewidth": 0.6,
    "axes.axisbelow": True, "font.size": 10, "axes.titlesize": 12, "legend.framealpha": 0.95,
}

# Shared memory serves one 128-byte wavefront per clock per SM: 32 banks x 4 bytes
# (docs/roofline.md, 05_bank_conflict/README.md). No device query reports it, so the roof is
# derived from the SM count and clock that results.json records.
SMEM_BYTES_PER_CLOCK_PER_SM = 32 * 4


class UsageError(Exception):
    """Bad input the user can fix: printed as one "error:" line, exit code 2."""


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load(folder):
    """results.json of a folder, checked enough that drawing cannot fail on it."""
    path = Path(folder) / "results.json"
    if Path(folder).is_file():
        raise UsageError(f"{folder} is a file: name the folder that holds results.json")
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file (scripts/tour.py writes it)") from None
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise UsageError(f"{path}: not valid JSON ({error})") from None
    rows = document.get("rows") if isinstance(document, dict) else None
    device = document.get("device") if isinstance(document, dict) else None
    if not isinstance(rows, list) or not rows or not isinstance(device, dict):
        raise UsageError(f"{path}: no rows or no device: not a results.json of scripts/tour.py")
    for field in ("fp32_peak_tflops", "dram_bandwidth_gbs"):
        if not is_number(device.get(field)) or device[field] <= 0:
            raise UsageError(f"{path}: device.{field} is missing or not a positive number")
    if not isinstance(device.get("name"), str):
        raise UsageError(f"{path}: device.name is missing")
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("chapter"), str):
            raise UsageError(f"{path}: rows[{i}] has no chapter")
        if not all(isinstance(row.get(d), int) and row[d] > 0 for d in ("m", "n", "k")):
            raise UsageError(f"{path}: rows[{i}] ({row['chapter']}) has no positive m, n, k")
        for field in ("tflops", "cublas_tflops", "pct_cublas", "ratio", "ideal_ratio"):
            if row.get(field) is not None and not (is_number(row[field]) and row[field] >= 0):
                raise UsageError(f"{path}: rows[{i}].{field} is not a number >= 0")
    return document


def colour(chapter):
    return COLOURS[CHAPTERS.index(chapter) % len(COLOURS)] if chapter in CHAPTERS else "#777777"


def marker(chapter):
    return MARKERS[CHAPTERS.index(chapter) % len(MARKERS)] if chapter in CHAPTERS else "o"


def label(chapter):
    return chapter.replace("_", " ", 1).replace("_", "-")  # "03_thread_tiling": "03 thread-tiling"


def number(chapter):
    return chapter.split("_", 1)[0]  # "03_thread_tiling": "03"


def shape_of(row):
    return row["m"], row["n"], row["k"]


def pick_shape(rows, size):
    shapes = sorted({shape_of(r) for r in rows}, key=lambda s: s[0] * s[1] * s[2])
    if size is None:
        return shapes[-1]
    if (size, size, size) not in shapes:
        raise UsageError(f"no results at size {size} (have: "
                         f"{', '.join('x'.join(map(str, s)) for s in shapes)})")
    return size, size, size


def cublas_median(rows, shape, precision="FP32"):
    """The median cuBLAS TFLOP/s of the chapter processes of one precision class: a TF32
    chapter times cuBLAS TF32, which must not shift the FP32 line."""
    values = [r["cublas_tflops"] for r in rows
              if shape_of(r) == shape and r.get("cublas_tflops") is not None
              and (r.get("precision") or "FP32") == precision]
    return statistics.median(values) if values else None


def hatch(chapter):
    return HATCHES[CHAPTERS.index(chapter) // len(COLOURS) % len(HATCHES)] if chapter in CHAPTERS else ""


def pct_of_cublas(row):
    """The harness's own ratio (chapter and cuBLAS timed in one process), else derived."""
    if row.get("pct_cublas") is not None:
        return row["pct_cublas"]
    if row.get("cublas_tflops"):
        return 100.0 * row["tflops"] / row["cublas_tflops"]
    return None


def shape_text(shape):
    m, n, k = shape
    return f"M = N = K = {m}" if m == n == k else f"M = {m}, N = {n}, K = {k}"


def finish(fig, ax, title, device, path):
    ax.set_title(title, loc="left", fontweight="bold")
    fig.text(0.01, 0.01, f"{device['name']} · cuBLAS lines: median of the cuBLAS runs of the "
             "chapter processes of each precision · generated by scripts/plot.py", fontsize=7.5,
             color=NOTE_INK)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=150)


def plot_bar(plt, document, shape, path):
    device, rows = document["device"], [r for r in document["rows"] if shape_of(r) == shape]
    rows = [r for r in rows if r.get("tflops") is not None]
    fig, ax = plt.subplots(figsize=(max(9, 0.9 * len(rows) + 2), 5))
    xs = range(len(rows))
    bars = ax.bar(xs, [r["tflops"] for r in rows], color=[colour(r["chapter"]) for r in rows],
                  edgecolor=INK, linewidth=0.6)
    for bar, r in zip(bars, rows):
        failed = r.get("status") == "FAIL"
        pct = pct_of_cublas(r)
        of = " of TF32" if (r.get("precision") or "FP32") == "TF32" else ""
        text = f"{r['tflops']:.1f}" + (f"\n{pct:.0f} %{of}" if pct is not None else "")
        bar.set_hatch(hatch(r["chapter"]))
        ax.annotate(text + ("\nFAIL" if failed else ""),
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8.5,
                    linespacing=1.1, color=PEAK_INK if failed else INK,
                    bbox=dict(boxstyle="round,pad=0.1", facecolor="white", edgecolor="none",
                              alpha=0.85))
        if failed:
            bar.set_hatch("//")
    cublas, peak = cublas_median(document["rows"], shape), device.get("fp32_peak_tflops")
    cublas_tf32 = cublas_median(document["rows"], shape, "TF32")
    if cublas is not None:
        ax.axhline(cublas, color=CUBLAS_INK, linewidth=1.6,
                   label=f"cuBLAS FP32 {cublas:.1f} TFLOP/s")
    if cublas_tf32 is not None:
        ax.axhline(cublas_tf32, color=CUBLAS_INK, linewidth=1.4, linestyle=TF32_DASHES,
                   label=f"cuBLAS TF32 {cublas_tf32:.1f} TFLOP/s (the TF32 chapters' yardstick)")
    if peak:
        ax.axhline(peak, color=PEAK_INK, linewidth=1.4, linestyle="--",
                   label=f"FP32 peak {peak:.1f} TFLOP/s")
    ax.set_xticks(list(xs), [label(r["chapter"]) for r in rows], rotation=20, ha="right")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, max([peak or 0, cublas or 0, cublas_tf32 or 0]
                       + [r["tflops"] for r in rows]) * 1.15)
    ax.grid(axis="x", visible=False)
    ax.plot([], [], " ", label="on each bar: TFLOP/s and % of cuBLAS in the mode of the\n"
                               "chapter's precision (FP32, or TF32), timed in the same process")
    ax.legend(loc="upper left", fontsize=8.5)
    finish(fig, ax, f"SGEMM ladder, {shape_text(shape)}", device, path)
    plt.close(fig)


def plot_sizes(plt, document, path):
    device, rows = document["device"], document["rows"]
    squares = sorted({r["m"] for r in rows if r["m"] == r["n"] == r["k"]})
    fig, ax = plt.subplots(figsize=(9, 5))
    values = []
    chapters = [c for c in CHAPTERS if any(r["chapter"] == c for r in rows)]
    chapters += sorted({r["chapter"] for r in rows} - set(chapters))  # not in the list: grey
    for chapter in chapters:
        points = sorted((r["m"], r["tflops"]) for r in rows if r["chapter"] == chapter
                        and r["m"] == r["n"] == r["k"] and r.get("tflops"))
        if points:
            values += [v for _, v in points]
            ax.plot(*zip(*points), marker=marker(chapter), markersize=5, linewidth=1.6,
                    color=colour(chapter), label=label(chapter))
    for precision, style in (("FP32", "-"), ("TF32", TF32_DASHES)):
        cublas = [(s, cublas_median(rows, (s, s, s), precision)) for s in squares]
        cublas = [(s, v) for s, v in cublas if v]
        if cublas:
            values += [v for _, v in cublas]
            ax.plot(*zip(*cublas), marker="x", markersize=5, linewidth=2.2, color=CUBLAS_INK,
                    linestyle=style, label=f"cuBLAS {precision} (median)")
    peak = device["fp32_peak_tflops"]
    ax.axhline(peak, color=PEAK_INK, linewidth=1.4, linestyle="--", label="FP32 peak")
    ax.set_xscale("log", base=2)
    ax.set_xticks(squares, [str(s) for s in squares])
    ax.minorticks_off()
    # Log scale: chapter 00 sits two orders of magnitude below cuBLAS and would be a flat line
    # on the floor of a linear axis.
    ax.set_yscale("log")
    # Up to the fastest line: the tensor-core chapters and cuBLAS TF32 run far above the FP32 peak.
    ax.set_ylim(min(values + [peak]) / 1.6, max(values + [peak]) * 1.6)
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8.5)
    finish(fig, ax, "SGEMM throughput against size", device, path)
    plt.close(fig)


def spread_labels(points, min_gap):
    """Label heights (log10 TFLOP/s) for points [(log x, log y)]: points within 0.3 decades of
    each other along x form a column whose labels are pushed apart to min_gap decades, centred
    on the points they name."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    heights, column = [None] * len(points), []

    def settle(column):
        column.sort(key=lambda i: points[i][1])
        ys = [points[i][1] for i in column]
        for j in range(1, len(ys)):
            ys[j] = max(ys[j], ys[j - 1] + min_gap)
        shift = (sum(points[i][1] for i in column) - sum(ys)) / len(ys)
        for i, y in zip(column, ys):
            heights[i] = y + shift

    for i in order:
        if column and points[i][0] - points[column[0]][0] > 0.3:
            settle(column)
            column = []
        column.append(i)
    if column:
        settle(column)
    return heights


def plot_roofline(plt, document, shape, path):
    device = document["device"]
    rows = [r for r in document["rows"] if shape_of(r) == shape
            and r.get("tflops") and r.get("ratio")]
    peak, bandwidth = device["fp32_peak_tflops"], device["dram_bandwidth_gbs"]
    # FLOP/byte where the DRAM slope meets the FP32 roof (the harness reports it; derive if not)
    ridge = device.get("ridge_flop_per_byte") or peak * 1000.0 / bandwidth
    smem = None
    if is_number(device.get("sms")) and is_number(device.get("sm_clock_mhz")):
        smem = SMEM_BYTES_PER_CLOCK_PER_SM * device["sms"] * device["sm_clock_mhz"] / 1000.0  # GB/s

    def roof(x, gbs):  # attainable TFLOP/s at x FLOP/byte with gbs GB/s
        return min(peak, gbs * x / 1000.0)

    ideal = max((r.get("ideal_ratio") or 0) for r in rows) if rows else 0
    lo = min([r["ratio"] for r in rows] + [ridge, peak * 1000.0 / (smem or bandwidth)]) / 4
    hi = max([r["ratio"] for r in rows] + [ridge, ideal]) * 4
    bottom = min([r["tflops"] for r in rows] + [roof(lo, bandwidth)]) / 2
    fig, ax = plt.subplots(figsize=(10, 6))
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [roof(x, bandwidth) for x in xs], color=INK, linewidth=2,
            label=f"DRAM roof: {bandwidth:.0f} GB/s, FP32 {peak:.1f} TFLOP/s")
    if smem:
        # Only its slope: past its ridge it is the FP32 roof again.
        slope = [x for x in xs if smem * x / 1000.0 <= peak] + [peak * 1000.0 / smem]
        ax.plot(slope, [roof(x, smem) for x in slope], color=SMEM_INK, linewidth=1.6,
                linestyle="--", label=f"shared-memory roof: {smem / 1000:.1f} TB/s\n"
                f"(32 banks x 4 B x {device['sms']} SMs x {device['sm_clock_mhz'] / 1000:.2f} GHz;"
                "\nx = FLOP per byte read from shared memory)")
    ax.axvline(ridge, color=NOTE_INK, linestyle=":", linewidth=1.2)
    ax.annotate(f"DRAM ridge {ridge:.1f} FLOP/byte", (ridge, bottom), xytext=(-3, 6),
                textcoords="offset points", rotation=90, ha="right", va="bottom", fontsize=8.5,
                color=NOTE_INK)
    if ideal:
        ax.axvline(ideal, color="#8c959f", linestyle="-.", linewidth=1)
        ax.annotate("ideal GEMM ratio (A, B, C moved once)", (ideal, bottom), xytext=(-3, 6),
                    textcoords="offset points", rotation=90, ha="right", va="bottom",
                    fontsize=8, color=NOTE_INK)
    cublas = cublas_median(document["rows"], shape)
    if cublas is not None:
        ax.axhline(cublas, color=CUBLAS_INK, linewidth=1, linestyle=(0, (4, 3)),
                   label=f"cuBLAS FP32 {cublas:.1f} TFLOP/s (measured)")
    for r in rows:
        failed = r.get("status") == "FAIL"
        ax.scatter(r["ratio"], r["tflops"], s=60, color=colour(r["chapter"]), edgecolor=INK,
                   linewidth=0.6, marker="X" if failed else marker(r["chapter"]), zorder=3,
                   label=f"{label(r['chapter'])}: {r['ratio']:.3g} FLOP/byte, "
                         f"{r['tflops']:.1f} TFLOP/s" + (" (FAIL)" if failed else ""))
    top = max([peak * 2] + [r["tflops"] * 2 for r in rows])  # the TF32 chapters pass the FP32 roof
    # Chapters 03-05 share one tile, so one ratio, and differ by a few TFLOP/s: their numbers go
    # in a column to the right of the points, each joined to its point by a thin line.
    logs = [(math.log10(r["ratio"]), math.log10(r["tflops"])) for r in rows]
    heights = spread_labels(logs, 0.05 * math.log10(top / bottom))
    for r, (lx, ly), h in zip(rows, logs, heights):
        moved = abs(h - ly) > 1e-9
        ax.annotate(number(r["chapter"]), (r["ratio"], r["tflops"]),
                    xytext=(10 ** (lx + 0.28), 10 ** h), textcoords="data", ha="left",
                    va="center", fontsize=9, fontweight="bold", color=INK, zorder=4,
                    arrowprops=dict(arrowstyle="-", color=NOTE_INK, linewidth=0.6,
                                    shrinkA=0, shrinkB=4) if moved else None,
                    bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none",
                              alpha=0.8))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom, top)
    ax.set_xlabel("modeled compute-to-memory ratio (FLOP per byte of global traffic, tile model)")
    ax.set_ylabel("measured TFLOP/s (TF32 chapters can pass the FP32 roof)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    if any(r["tflops"] > roof(r["ratio"], bandwidth) * 1.05 for r in rows):
        ax.text(1.01, 0.02, "Points above the DRAM slope:\nL1/L2 serve part of the\n"
                "traffic the tile model counts.", transform=ax.transAxes, fontsize=8,
                color=NOTE_INK, va="bottom")
    finish(fig, ax, f"Roofline, {shape_text(shape)}", device, path)
    plt.close(fig)


def parse_args(argv):
    parser = ArgumentParser(description=__doc__, epilog=EXAMPLES,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path,
                        help="folder with the results.json of a tour, e.g. docs/results/<your-gpu>")
    parser.add_argument("--size", type=int,
                        help="M = N = K for the bar chart and the roofline (default: the largest)")
    parser.add_argument("--out", type=Path,
                        help="output folder, created if needed (default: <results>/figures/)")
    return parser.parse_args(argv)


def output_folder(out):
    """Create the output folder; an unusable one is the user's to fix (exit 2)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"cannot create the output folder {out}: {error.strerror}") from None
    return out


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    plt = pyplot("scripts/plot.py")
    if plt is None:
        return EXIT_USAGE
    try:
        document = load(args.results)
        shape = pick_shape(document["rows"], args.size)
        out = output_folder(args.out or args.results / "figures")
        plt.rcParams.update(STYLE)
        names = []
        for name, draw in (("ladder_bar.png", lambda p: plot_bar(plt, document, shape, p)),
                           ("size_sweep.png", lambda p: plot_sizes(plt, document, p)),
                           ("roofline.png", lambda p: plot_roofline(plt, document, shape, p))):
            try:
                draw(out / name)
            except OSError as error:
                raise UsageError(f"cannot write {out / name}: {error.strerror}") from None
            names.append(name)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {', '.join(names)} to {out}/")
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
