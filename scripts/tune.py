#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measure each chapter's tuning candidates: its attribution rows and its tile shapes.

The tuning build (preset `tuning`, folder build-tuning/, -DSGEMM_TUNING=ON) compiles every chapter
once per TILES entry of its sgemm_add_chapter() line (bin/<chapter>.tile_<shape>) and once per
VARIANTS entry (bin/<chapter>.variant_<name>; tiles/<chapter>.variants lists them in order). This
script builds what the chosen chapters need, runs each binary over the sizes (TFLOP/s and % of
cuBLAS, timed in the same process as cuBLAS) and writes two tables per chapter:
  - attribution: the kernel the chapter starts from (the previous chapter's; for a TF32 chapter
    the nearest earlier TF32 chapter's: 10 continues 08, not 09's FP32 branch), each variant in
    order (one sub-step each), then this chapter's kernel: what each part of the change bought;
  - tiles: each TILES shape and the chapter's default.
They go to docs/results/<gpu>/tuning_<NN>.md (the chapters' READMEs cite them) and to stdout.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from chapters import (CHAPTERS, EXIT_PASS, EXIT_RUNTIME, EXIT_USAGE, EXIT_WRONG, REPO,
                      ArgumentParser, build, chapter_precision, configure, git_commit, gpu_slug,
                      log, parse_int_list, select_chapters, unsupported_reason)

EXAMPLES = """\
examples:
  python3 scripts/tune.py --chapters 06                    # build, measure, write tuning_06.md
  python3 scripts/tune.py --chapters 03 04 --sizes 4096,8192 --only variants
  python3 scripts/tune.py --chapters 01 --no-build --build-dir build-tuning --no-save
  python3 scripts/tune.py --chapters 10 --build-only       # build now, measure later with
  python3 scripts/tune.py --chapters 10 --no-build         # --no-build (two shorter steps)

exit codes: 0 measured, 1 a binary computed a wrong result (its rows say FAIL), 2 bad usage or
nothing built, 3 build or CUDA/runtime failure
"""

DEFAULT_BUILD_DIR = REPO / "build-tuning"


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not >= 1")
    return value


def tiles(bin_dir, chapter):
    """[(label, binary)] of the chapter's tile binaries, e.g. ('128,128,8,8,8', .tile_128_...)."""
    found = sorted(p for p in Path(bin_dir).glob(f"{chapter}.tile_*") if os.access(p, os.X_OK))
    return [(p.name.split(".tile_", 1)[1].replace("_", ","), p) for p in found]


def variants(build_dir, chapter):
    """[(name, definitions)] in the order of the chapter's VARIANTS, from the build's manifest."""
    manifest = Path(build_dir) / "tiles" / f"{chapter}.variants"
    if not manifest.is_file():
        return []
    entries = []
    for line in manifest.read_text(encoding="utf-8").splitlines():
        if line.strip():
            name, _, definitions = line.partition("\t")
            entries.append((name, definitions))
    return entries


def baseline_chapter(chapter, chapters=CHAPTERS, precision=chapter_precision):
    """The chapter whose kernel the attribution starts from: the one before, except that a TF32
    chapter continues the nearest earlier TF32 chapter (10_wgmma changes 08's mma.sync kernel;
    09, between them, adds FP32 accuracy to 08 and is no step of 10's). None for the first."""
    index = chapters.index(chapter)
    if index == 0:
        return None
    if precision(chapter) == "TF32":
        for earlier in reversed(chapters[:index]):
            if precision(earlier) == "TF32":
                return earlier
    return chapters[index - 1]


def targets_for(build_dir, chapter, what):
    """The CMake targets the chapter's tables need (names follow cmake/SgemmChapter.cmake)."""
    targets = [chapter]
    if what in ("all", "variants"):
        if variants(build_dir, chapter) and baseline_chapter(chapter):
            targets.append(baseline_chapter(chapter))
        targets += [f"{chapter}.variant_{name}" for name, _ in variants(build_dir, chapter)]
    if what in ("all", "tiles"):
        headers = sorted((Path(build_dir) / "tiles").glob(f"{chapter}.tile_*.h"))
        targets += [h.name[:-2] for h in headers]
    return targets


def build_tuning(build_dir, chapters, what):
    """Configure the tuning build once (like the `tuning` preset, in build_dir), then build only
    the chosen chapters' targets: the other chapters' candidates would only cost compile time."""
    cache_args = ["-DSGEMM_TUNING=ON", "-DBUILD_TESTING=OFF"]
    configure(build_dir, cache_args)  # the candidates' list is written at configure time
    targets = []
    for chapter in chapters:
        targets += [t for t in targets_for(build_dir, chapter, what) if t not in targets]
    build(build_dir, cache_args, targets)


def run_one(binary, sizes, samples):
    """(report, None) or (None, the binary's last error line)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        cmd = [str(binary), "--size", ",".join(map(str, sizes)), "--format", "json", "--output",
               str(out), "--samples", str(samples)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if not out.exists() or proc.returncode not in (0, 1):
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            return None, last
        return json.loads(out.read_text()), None


class NoGpu(Exception):
    pass


class Runner:
    """Runs each binary once, however many tables it appears in."""

    def __init__(self, sizes, samples):
        self.sizes, self.samples, self.cache, self.device = sizes, samples, {}, None
        self.failed = []  # binaries with a row that failed verification

    def rows(self, binary):
        """{size: row} of the binary's report, or None (missing binary, or it failed)."""
        binary = Path(binary)
        if binary not in self.cache:
            if not (binary.is_file() and os.access(binary, os.X_OK)):
                log(f"warning: {binary.name} is not built; its row is left out")
                self.cache[binary] = None
            else:
                log(f"{binary.name} ...")
                run, error = run_one(binary, self.sizes, self.samples)
                if run is None and unsupported_reason(error):
                    log(f"note: {binary.name}: not run on this GPU: {unsupported_reason(error)}")
                    self.cache[binary] = None
                elif run is None:
                    log(f"error: {binary.name}: {error}")
                    if "no CUDA GPU" in error or "no NVIDIA driver" in error:
                        raise NoGpu(error)
                    self.cache[binary] = None
                else:
                    self.device = self.device or run.get("device", {})
                    self.cache[binary] = {r["m"]: r for r in run["rows"]}
                    if any(r.get("status") != "PASS" for r in run["rows"]):
                        self.failed.append(binary.name)
        return self.cache[binary]


def size_columns(sizes):
    cols = []
    for s in sizes:
        cols += [f"{s}³ TFLOP/s", f"{s}³ % of cuBLAS"]
    return cols


def measured_cells(rows, sizes):
    """TFLOP/s and % of cuBLAS per size, then the largest noise and the verdicts."""
    cells, noise, verdicts = [], 0.0, set()
    for s in sizes:
        r = rows.get(s)
        if r is None:
            cells += ["-", "-"]
            continue
        pct = r.get("pct_cublas")
        cells += [f"{r['tflops']:.2f}", "-" if pct is None else f"{pct:.1f}%"]
        noise = max(noise, r.get("noise") or 0.0)
        verdicts.add(r.get("status", "?"))
    return cells + [f"{100 * noise:.1f}%", "/".join(sorted(verdicts)) or "-"]


def markdown(header, lines):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header) - 1)) + "|---|"]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return out


def attribution_table(runner, build_dir, chapter, sizes):
    """One row per sub-step: the previous chapter, each variant in order, this chapter."""
    bin_dir = Path(build_dir) / "bin"
    entries = variants(build_dir, chapter)
    if not entries:
        return []
    steps = []
    before = baseline_chapter(chapter)
    if before:
        adjacent = CHAPTERS.index(chapter) - CHAPTERS.index(before) == 1
        step = f"{'previous chapter' if adjacent else 'the chapter it builds on'} ({before})"
        steps.append((step, "its default", bin_dir / before))
    steps += [(f"variant `{name}`", f"`{definitions}`", bin_dir / f"{chapter}.variant_{name}")
              for name, definitions in entries]
    steps.append((f"this chapter ({chapter})", "its default", bin_dir / chapter))
    lines = []
    for step, definitions, binary in steps:
        rows = runner.rows(binary)
        if rows is not None:
            lines.append([step, definitions] + measured_cells(rows, sizes))
    header = ["step", "definitions"] + size_columns(sizes) + ["noise (max)", "result"]
    return markdown(header, lines)


def tile_table(runner, build_dir, chapter, sizes):
    bin_dir = Path(build_dir) / "bin"
    candidates = tiles(bin_dir, chapter)
    if not candidates:
        return []
    lines = []
    for label, binary in candidates + [("default (SGEMM_TILE as in the source)", bin_dir / chapter)]:
        rows = runner.rows(binary)
        if rows is not None:
            lines.append([label, binary.name] + measured_cells(rows, sizes))
    header = ["tile", "binary"] + size_columns(sizes) + ["noise (max)", "result"]
    return markdown(header, lines)


def command_line(args, chapter):
    """The command that regenerates a chapter's file, as the file states it."""
    parts = ["python3 scripts/tune.py", "--chapters", chapter[:2],
             "--sizes", ",".join(map(str, args.sizes))]
    if args.only != "all":
        parts += ["--only", args.only]
    return " ".join(parts)


def main(argv=None):
    parser = ArgumentParser(prog="tune.py", description=__doc__, epilog=EXAMPLES,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapters", nargs="+", metavar="NN",
                        help="chapters to measure: numbers (03), names or folder names (default: "
                             "all; chapters without variants or tiles are skipped)")
    parser.add_argument("--sizes", type=parse_int_list, default=[4096, 8192],
                        help="square sizes, comma-separated (default 4096,8192)")
    parser.add_argument("--samples", type=positive_int, default=20,
                        help="timed samples per kernel and size (default 20)")
    parser.add_argument("--only", choices=("all", "variants", "tiles"), default="all",
                        help="which tables: attribution (variants), tiles, or both (default)")
    parser.add_argument("--build-dir", default=str(DEFAULT_BUILD_DIR),
                        help="the tuning build folder (default build-tuning/, the `tuning` "
                             "preset's); configured with -DSGEMM_TUNING=ON when it does not exist")
    parser.add_argument("--no-build", action="store_true",
                        help="measure the binaries already in --build-dir, build nothing")
    parser.add_argument("--build-only", action="store_true",
                        help="build what the chosen chapters' tables need, measure nothing")
    parser.add_argument("--out-dir",
                        help="folder for tuning_<NN>.md (default docs/results/<gpu>/)")
    parser.add_argument("--no-save", action="store_true", help="print the tables only")
    args = parser.parse_args(argv)
    try:
        chapters = select_chapters(args.chapters)
    except ValueError as e:
        log(f"error: {e}")
        return EXIT_USAGE

    build_dir = Path(args.build_dir)
    if args.no_build and args.build_only:
        log("error: --no-build and --build-only exclude each other")
        return EXIT_USAGE
    if args.no_build:
        if not any(variants(build_dir, c) or tiles(build_dir / "bin", c) for c in chapters):
            log(f"error: no tuning binaries of {', '.join(chapters)} in {build_dir}: build them "
                f"first (cmake --preset tuning && cmake --build --preset tuning, which builds "
                f"build-tuning/), or drop --no-build")
            return EXIT_USAGE
    else:
        build_tuning(build_dir, chapters, args.only)
        if args.build_only:
            log(f"built in {build_dir}; measure with the same options and --no-build")
            return EXIT_PASS

    runner = Runner(args.sizes, args.samples)
    tables = {}
    try:
        for chapter in chapters:
            parts = []
            if args.only in ("all", "variants"):
                table = attribution_table(runner, build_dir, chapter, args.sizes)
                if table:
                    parts += ["## Attribution: one sub-step per row, in order", ""] + table + [""]
            if args.only in ("all", "tiles"):
                table = tile_table(runner, build_dir, chapter, args.sizes)
                if table:
                    parts += ["## Tiles", ""] + table + [""]
            if parts:
                tables[chapter] = parts
            else:
                log(f"note: {chapter} has no tuning variants or tiles to measure")
    except NoGpu:
        return EXIT_RUNTIME
    if not tables:
        log("error: nothing was measured (no tuning binaries ran)")
        return EXIT_RUNTIME

    device = runner.device or {}
    commit, dirty = git_commit()
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    source = f"commit {commit[:7]}{' + local changes' if dirty else ''}" if commit else "no git"
    out_dir = Path(args.out_dir) if args.out_dir else (
        REPO / "docs" / "results" / gpu_slug(device.get("name", "unknown GPU")))
    for chapter, parts in tables.items():
        text = [f"# {chapter}: tuning candidates", "",
                f"Measured on {device.get('name', '?')} ({date}, {source}) by `{command_line(args, chapter)}`"
                f" from the tuning build (`-DSGEMM_TUNING=ON`); at most {args.samples} timed "
                f"samples per kernel and size, median; % of cuBLAS against the cuBLAS mode of each "
                f"binary's precision contract (FP32, or TF32 for a TF32 chapter) timed in the same "
                f"process. Variants and tiles are the `VARIANTS` and `TILES` of the chapter's "
                f"`sgemm_add_chapter` line in CMakeLists.txt.", ""] + parts
        print("\n".join(text))
        if not args.no_save:
            path = out_dir / f"tuning_{chapter[:2]}.md"
            try:
                out_dir.mkdir(parents=True, exist_ok=True)
                path.write_text("\n".join(text), encoding="utf-8")
            except OSError as e:
                log(f"error: cannot write {path}: {e.strerror or e}")
                return EXIT_USAGE
            log(f"wrote {path}")
    if runner.failed:
        log(f"error: wrong results from {', '.join(runner.failed)} (rows marked FAIL)")
        return EXIT_WRONG
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
