#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Speed against error: every chapter and both cuBLAS modes as one point at one size (issue 18).

Drawn from committed measurements, never from a run of its own:
  <results>/results.json          the tour (scripts/tour.py): every chapter it ran, and the cuBLAS
                                  runs of their processes
  <accuracy>/side_by_side_*.csv   harness CSV output (--format csv) of 09, 13 and 14 at 1024,
                                  4096, 8192: a chapter the tour holds is taken from the tour, its
                                  side-by-side row skipped (the tour row is canonical); one it
                                  lacks (a tour of some chapters only) from its CSV row
x is the rms error of C against an FP64 GEMM of the same inputs (the harness's rms_rel_c,
||C - C_FP64|| / ||C_FP64||), log scale; y is TFLOP/s, log scale (chapter 00 sits three decades
below cuBLAS TF32). Points are coloured by precision contract (FP32, TF32); the cuBLAS points are
hollow diamonds. Their speed is the median of the cuBLAS runs of the tour's chapter processes of
that precision, as the README ladder and plot.py's ladder_bar.png give it; their error is cuBLAS's
own against FP64 on the same inputs. Every point is compared on the same inputs: a side-by-side
row whose cuBLAS FP32 error differs from the tour's at that size (another seed or distribution),
or whose device differs, is refused.
The figure carries what it was drawn from (a PNG text chunk, as figures.py's do): its points and
the sha256 of each input file, so the host test sees a committed figure its inputs no longer give
(out_of_date()).
"""

import argparse
import csv
import hashlib
import math
import statistics
import sys
import textwrap
from pathlib import Path

from chapters import EXIT_PASS, EXIT_USAGE, REPO, ArgumentParser, pyplot
from figures import stamp, stamped
from plot import (INK, NOTE_INK, PEAK_INK, STYLE, UsageError, cublas_median, is_number, load,
                  number, pick_shape, shape_of, shape_text, spread_labels)

SCRIPT = "scripts/speed_error.py"
RESULTS = REPO / "docs" / "results" / "nvidia-h100-80gb-hbm3"
ACCURACY = Path("hopper") / "accuracy_14"  # under the results folder
PATTERN = "side_by_side_*.csv"
DEFAULT_SIZE = 4096
NAME = "speed_error.png"

# Okabe-Ito, as plot.py: blue and vermillion stay apart with colour-blindness.
CONTRACT_COLOURS = {"FP32": "#0072B2", "TF32": "#D55E00"}
CONTRACT_MARKERS = {"FP32": "o", "TF32": "s"}
CSV_FIELDS = ("chapter", "m", "n", "k", "tflops", "cublas_tflops", "precision", "device",
              "fp64_rms_rel_c", "cublas_fp32_rms_rel_c", "cublas_tf32_rms_rel_c")
# cuBLAS FP32's error on the same inputs is the same number in every process (its output is
# deterministic); the files print 9 significant digits.
SAME_INPUTS = 1e-6

EXAMPLES = """\
examples:
  python3 scripts/speed_error.py                  # -> <results>/figures/speed_error.png
  python3 scripts/speed_error.py --size 8192 --out /tmp/figures
                                                  # -> /tmp/figures/speed_error_8192.png
  (<results> defaults to docs/results/nvidia-h100-80gb-hbm3)

exit codes:
  0  the figure was written (the last line names it)
  2  bad usage: results.json or the side-by-side CSVs missing or broken (a missing column, a
     value that is not a number, no row at --size, another device, other inputs than the
     tour's), an --out that cannot be created or written, matplotlib not installed; one line
     starting with "error:" says which
"""


def figure_name(size):
    """The committed figure is the default size's; another size gets its own name, so that
    --size 8192 does not overwrite it."""
    return NAME if size == DEFAULT_SIZE else f"speed_error_{size}.png"


def rms_error(value, where):
    """rms_rel_c of an fp64_error-like field: the object the harness writes, or a bare number."""
    if isinstance(value, dict):
        value = value.get("rms_rel_c")
    if not is_number(value) or value < 0:
        raise UsageError(f"{where}: no rms error (rms_rel_c) >= 0")
    return float(value)


def point(name, tflops, error, precision, kind, source):
    return {"name": name, "tflops": tflops, "error": error, "precision": precision,
            "kind": kind, "source": source}


def tour_points(document, shape, path):
    """The tour's chapters at shape, then cuBLAS FP32 and TF32 (the median speed of the cuBLAS
    runs of the chapter processes of each precision), each with the chapters it came from."""
    rows = [r for r in document["rows"] if shape_of(r) == shape and r.get("tflops") is not None]
    points, origins = [], {}
    for i, row in enumerate(rows):
        precision = row.get("precision") or "FP32"
        if precision not in CONTRACT_COLOURS:
            raise UsageError(f"{path}: {row['chapter']}: precision {precision!r} is neither "
                             "FP32 nor TF32")
        where = f"{path}: {row['chapter']} at {shape[0]}"
        points.append(point(row["chapter"], row["tflops"], rms_error(row.get("fp64_error"), where),
                            precision, "chapter", path.name))
        origins.setdefault(precision, []).append(row["chapter"])
    for precision in CONTRACT_COLOURS:
        speed = cublas_median(document["rows"], shape, precision)
        field = f"cublas_{precision.lower()}_error"
        errors = [rms_error(r[field], f"{path}: {r['chapter']}.{field}") for r in rows
                  if r.get(field) is not None]
        if speed is not None and errors:
            points.append(point(f"cuBLAS {precision}", speed, statistics.median(errors),
                                precision, "cublas", path.name))
    return points, origins


def read_csv(path):
    """The rows of a harness CSV: the header may come after other lines and repeat (runs
    appended to one file)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not text ({error})") from None
    start = next((i for i, line in enumerate(lines) if line.startswith("chapter,")), None)
    if start is None:
        raise UsageError(f"{path}: no header line starting with 'chapter,': not harness CSV")
    reader = csv.DictReader(lines[start:])
    missing = [f for f in CSV_FIELDS if f not in (reader.fieldnames or [])]
    if missing:
        raise UsageError(f"{path}: no column {', '.join(missing)}")
    return [row for row in reader if row["chapter"] != "chapter"]


def csv_number(row, field, path):
    try:
        value = float(row[field])
    except (TypeError, ValueError):
        raise UsageError(f"{path}: {row['chapter']}: {field} is not a number "
                         f"({row[field]!r})") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{path}: {row['chapter']}: {field} is not a number >= 0")
    return value


def side_by_side_points(files, shape, tour, device, cublas_fp32_error):
    """One point per chapter of the CSVs that the tour does not hold at shape; the skipped
    chapters (the tour's rows are canonical)."""
    points, skipped = [], []
    for path in files:
        rows = read_csv(path)
        sizes = sorted({f"{r['m']}x{r['n']}x{r['k']}" for r in rows})
        at = [r for r in rows if (r["m"], r["n"], r["k"]) == tuple(map(str, shape))]
        if not at:
            raise UsageError(f"{path}: no row at {'x'.join(map(str, shape))} (have: "
                             f"{', '.join(sizes) or 'none'})")
        for row in at:
            if row["device"] != device:
                raise UsageError(f"{path}: {row['chapter']} ran on {row['device']!r}, the tour "
                                 f"on {device!r}")
            theirs = csv_number(row, "cublas_fp32_rms_rel_c", path)
            if abs(theirs - cublas_fp32_error) > SAME_INPUTS * cublas_fp32_error:
                raise UsageError(f"{path}: {row['chapter']}: cuBLAS FP32's error {theirs:.9g} is "
                                 f"not the tour's {cublas_fp32_error:.9g}: other inputs")
            if row["chapter"] in tour:
                skipped.append(row["chapter"])
                continue
            if row["precision"] not in CONTRACT_COLOURS:
                raise UsageError(f"{path}: {row['chapter']}: precision {row['precision']!r} is "
                                 "neither FP32 nor TF32")
            points.append(point(row["chapter"], csv_number(row, "tflops", path),
                                csv_number(row, "fp64_rms_rel_c", path), row["precision"],
                                "chapter", path.name))
    return points, skipped


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def gather(results=RESULTS, accuracy=None, size=DEFAULT_SIZE):
    """Everything the figure shows and its stamp: {"points", "origins", "skipped", "shape",
    "device", "files", "signature"}. Raises UsageError (one line) for bad input."""
    results = Path(results)
    accuracy = Path(accuracy) if accuracy is not None else results / ACCURACY
    document = load(results)
    shape = pick_shape(document["rows"], size)
    json_path = results / "results.json"
    points, origins = tour_points(document, shape, json_path)
    cublas = {p["name"]: p for p in points if p["kind"] == "cublas"}
    if "cuBLAS FP32" not in cublas:
        raise UsageError(f"{json_path}: no cuBLAS FP32 run at {'x'.join(map(str, shape))}")
    if not accuracy.is_dir():
        raise UsageError(f"{accuracy}: no such folder (the side-by-side CSVs)")
    files = sorted(accuracy.glob(PATTERN))
    if not files:
        raise UsageError(f"{accuracy}: no {PATTERN}")
    tour = {p["name"] for p in points if p["kind"] == "chapter"}
    more, skipped = side_by_side_points(files, shape, tour, document["device"]["name"],
                                        cublas["cuBLAS FP32"]["error"])
    names = [p["name"] for p in more]
    if len(set(names)) != len(names):
        raise UsageError(f"{accuracy}: a chapter has several rows at {'x'.join(map(str, shape))}")
    chapters = sorted([p for p in points if p["kind"] == "chapter"] + more,
                      key=lambda p: p["name"])
    points = chapters + list(cublas.values())
    inputs = [json_path] + files
    signature = (f"{shape_text(shape)}; points: "
                 + "; ".join(f"{p['name']} {p['tflops']:.9g} TFLOP/s rms {p['error']:.9g}"
                             for p in points)
                 + f"; skipped: {', '.join(skipped) or 'none'}; inputs sha256: "
                 + ", ".join(f"{shown(f, results)} {digest(f)}" for f in inputs))
    return {"points": points, "origins": origins, "skipped": skipped, "shape": shape,
            "device": document["device"], "files": [shown(f, results) for f in inputs],
            "signature": signature}


def shown(path, results):
    try:
        return str(Path(path).relative_to(results))
    except ValueError:
        return str(path)


def numbers(chapters):
    """'00-07, 09' for 00_naive ... 07_any_shape, 09_3xtf32."""
    values = sorted(int(number(c)) for c in chapters if number(c).isdigit())
    runs = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(f"{a:02d}" if a == b else f"{a:02d}-{b:02d}" for a, b in runs)


def draw(plt, data, path):
    points, shape, device = data["points"], data["shape"], data["device"]
    fig, ax = plt.subplots(figsize=(10.5, 7.2))
    for p in points:
        colour = CONTRACT_COLOURS[p["precision"]]
        if p["kind"] == "cublas":
            # Hollow and larger: the chapters at the same error stay visible inside.
            ax.scatter(p["error"], p["tflops"], s=230, marker="D", facecolor="none",
                       edgecolor=colour, linewidth=2.2, zorder=4)
        else:
            ax.scatter(p["error"], p["tflops"], s=55, marker=CONTRACT_MARKERS[p["precision"]],
                       color=colour, edgecolor=INK, linewidth=0.6, zorder=3)
    peak = device["fp32_peak_tflops"]
    ax.axhline(peak, color=PEAK_INK, linewidth=1.2, linestyle="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    xs, ys = [p["error"] for p in points], [p["tflops"] for p in points] + [peak]
    ax.set_xlim(min(xs) / 4, max(xs) * 12)
    ax.set_ylim(min(ys) / 1.8, max(ys) * 2.6)
    ax.annotate(f"FP32 peak {peak:.1f} TFLOP/s", (max(xs) * 10, peak), xytext=(0, 3),
                textcoords="offset points", ha="right", va="bottom", fontsize=8.5,
                color=PEAK_INK)
    # Points whose errors are equal (00-07 and cuBLAS FP32, bit for bit; the TF32 chapters and
    # cuBLAS TF32) form columns: their labels are spread apart and joined by thin lines.
    logs = [(math.log10(p["error"]), math.log10(p["tflops"])) for p in points]
    bottom, top = ax.get_ylim()
    heights = spread_labels(logs, 0.032 * math.log10(top / bottom))
    for p, (lx, ly), h in zip(points, logs, heights):
        # Left of the point when another column stands close on the right.
        left = any(0.05 < ox - lx < 0.8 for ox, _ in logs)
        cublas = p["kind"] == "cublas"
        text = p["name"] if cublas else number(p["name"])
        ax.annotate(text, (p["error"], p["tflops"]),
                    xytext=(10 ** (lx + (-0.22 if left else 0.22)), 10 ** h), textcoords="data",
                    ha="right" if left else "left", va="center", fontsize=9,
                    fontweight="bold", color=CONTRACT_COLOURS[p["precision"]] if cublas else INK,
                    zorder=5, arrowprops=dict(arrowstyle="-", color=NOTE_INK, linewidth=0.6,
                                              shrinkA=0, shrinkB=5),
                    bbox=dict(boxstyle="round,pad=0.12", facecolor="white", edgecolor="none",
                              alpha=0.85))
    for precision, colour in CONTRACT_COLOURS.items():
        ax.scatter([], [], s=55, marker=CONTRACT_MARKERS[precision], color=colour,
                   edgecolor=INK, linewidth=0.6, label=f"chapter, {precision} contract")
    for precision, colour in CONTRACT_COLOURS.items():
        ax.scatter([], [], s=120, marker="D", facecolor="none", edgecolor=colour, linewidth=2,
                   label=f"cuBLAS {precision}")
    ax.legend(loc="lower right", fontsize=8.5)
    ax.text(0.01, 0.99, "better: up and to the left", transform=ax.transAxes, ha="left",
            va="top", fontsize=8.5, color=NOTE_INK, style="italic")
    ax.set_xlabel("rms error against an FP64 GEMM of the same inputs, "
                  "||C - C_FP64|| / ||C_FP64|| (log scale)")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(f"Speed against error, {shape_text(shape)}, {device['name']}", loc="left",
                 fontweight="bold")
    origins = data["origins"]
    skipped = data["skipped"]
    caption = (
        f"Chapters {numbers(origins.get('FP32', []) + origins.get('TF32', []))}: the tour "
        f"({data['files'][0]}); the others: {', '.join(data['files'][1:])}"
        + (f" ({', '.join(number(c) for c in skipped)}'s side-by-side row skipped: the tour row "
           "is canonical)" if skipped else "")
        + ". The same seeded inputs in every process (cuBLAS FP32's error agrees across the "
        "files). cuBLAS FP32 / TF32: speed = median of the cuBLAS runs of the tour's "
        f"FP32 ({numbers(origins.get('FP32', []))}) / TF32 ({numbers(origins.get('TF32', []))}) "
        "chapter processes, as in the README ladder; error = cuBLAS's own against FP64 on the "
        "same inputs. Generated by scripts/speed_error.py.")
    fig.text(0.01, 0.01, textwrap.fill(caption, 175), fontsize=7.5, color=NOTE_INK,
             va="bottom")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=150)
    plt.close(fig)


def out_of_date(results=RESULTS, size=DEFAULT_SIZE):
    """One line when results/figures/<figure> is missing or its stamp is not what the inputs
    give now (a measurement changed without a redraw); [] when it is up to date."""
    png = Path(results) / "figures" / figure_name(size)
    want = gather(results, size=size)["signature"]
    if not png.is_file() or stamped(png) != want:
        return [f"{png} is out of date: run python3 {SCRIPT}"
                + ("" if size == DEFAULT_SIZE else f" --size {size}")]
    return []


def parse_args(argv):
    parser = ArgumentParser(description=__doc__, epilog=EXAMPLES,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, nargs="?", default=RESULTS,
                        help="folder with the tour's results.json (default: "
                        f"{shown(RESULTS, REPO)})")
    parser.add_argument("--accuracy", type=Path,
                        help=f"folder with the {PATTERN} files (default: <results>/{ACCURACY})")
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE,
                        help=f"M = N = K of the points (default {DEFAULT_SIZE}; the inputs also "
                        "hold 8192)")
    parser.add_argument("--out", type=Path,
                        help="output folder, created if needed (default: <results>/figures/); "
                        f"the figure is {NAME}, or speed_error_<size>.png at another size")
    args = parser.parse_args(argv)
    if args.size < 1:
        parser.error(f"--size {args.size}: a size is a whole number >= 1")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    plt = pyplot(SCRIPT)
    if plt is None:
        return EXIT_USAGE
    try:
        data = gather(args.results, args.accuracy, args.size)
        out = args.out or args.results / "figures"
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out} is a file, not a folder")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(f"cannot create the output folder {out}: {error.strerror}") from None
        path = out / figure_name(args.size)
        plt.rcParams.update(STYLE)
        try:
            draw(plt, data, path)
            stamp(path, data["signature"])
        except OSError as error:
            raise UsageError(f"cannot write {path}: {error.strerror}") from None
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {path}")
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
