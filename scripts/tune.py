#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare each chapter's candidate tile shapes by measurement.

Builds the tuning preset (build-tuning/, -DSGEMM_TUNING=ON), which compiles every chapter once per
TILES entry of its sgemm_add_chapter() line as bin/<chapter>.tile_<shape>, then runs each of them
(and the chapter's default build) over the sizes and prints TFLOP/s and % of cuBLAS, measured in
the same process as cuBLAS. The chapters' "Choosing the tile" tables come from this script.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from chapters import (EXIT_PASS, EXIT_RUNTIME, EXIT_USAGE, REPO, build, log, parse_int_list,
                      select_chapters)

EXAMPLES = """\
examples:
  python3 scripts/tune.py --chapters 03 --sizes 4096,8192
  python3 scripts/tune.py --chapters 02 03 --markdown tiles.md
"""


def candidates(bin_dir, chapter):
    """The chapter's tile binaries, e.g. 03_thread_tiling.tile_128_128_8_8_8, by name."""
    return sorted(p for p in Path(bin_dir).glob(f"{chapter}.tile_*") if os.access(p, os.X_OK))


def run_one(binary, sizes, samples):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        cmd = [str(binary), "--size", ",".join(map(str, sizes)), "--format", "json", "--output",
               str(out), "--samples", str(samples)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if not out.exists() or proc.returncode not in (0, 1):
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            return None, last
        return json.loads(out.read_text()), None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapters", nargs="+", help="chapters to tune (default: all with tiles)")
    parser.add_argument("--sizes", type=parse_int_list, default=[4096, 8192],
                        help="square sizes (default 4096,8192)")
    parser.add_argument("--samples", type=int, default=20, help="timed samples per kernel")
    parser.add_argument("--build-dir", default=str(REPO / "build-tuning"))
    parser.add_argument("--no-build", action="store_true", help="use the binaries as they are")
    parser.add_argument("--markdown", help="also write the table as markdown to this file")
    args = parser.parse_args(argv)
    try:
        chapters = select_chapters(args.chapters)
    except ValueError as e:
        log(f"error: {e}")
        return EXIT_USAGE

    build_dir = Path(args.build_dir)
    if not args.no_build:
        build(build_dir, ["-DSGEMM_TUNING=ON", "-DBUILD_TESTING=OFF"])

    rows = []
    for chapter in chapters:
        tiles = candidates(build_dir / "bin", chapter)
        for binary in tiles:
            tile = binary.name.split(".tile_", 1)[1].replace("_", ",")
            log(f"{binary.name} ...")
            run, error = run_one(binary, args.sizes, args.samples)
            if run is None:
                log(f"error: {binary.name}: {error}")
                if "no CUDA GPU" in error:
                    return EXIT_RUNTIME
                continue
            for r in run["rows"]:
                rows.append((chapter, tile, r))

    if not rows:
        log("error: no tile binaries found (chapters without TILES, or nothing built)")
        return EXIT_RUNTIME
    header = "| chapter | tile | size | TFLOP/s | cuBLAS TFLOP/s | % of cuBLAS | noise | result |"
    lines = [header, "|---|---|---|---:|---:|---:|---:|---|"]
    for chapter, tile, r in rows:
        lines.append(f"| {chapter} | {tile} | {r['m']} | {r['tflops']:.2f} | {r['cublas_tflops']:.2f}"
                     f" | {r['pct_cublas']:.1f}% | {100 * r['noise']:.1f}% | {r['status']} |")
    print("\n".join(lines))
    if args.markdown:
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
