#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Chapter 07's launcher model, measured: every constant of the model that the GPU does not report
(the tiles' shares of the FP32 peak, their rates with fewer blocks, as one column and with N odd,
the fill, split-K's launch and bandwidth shares, the margin that keeps chapter 06's plan) comes
from runs this script makes, on shapes it builds from each tile's size and the SM count. None of
them is a shape of the held-out suite (the twelfth draw, --suite heldout12 of
scripts/shapes.py; the second to eleventh were watched while the few-columns kernel, the padded-B
epilogue, the column shares, the few-rows kernel, the copies of B rows that are not 16-byte
aligned, the wide few-columns kernel, the kernels for N odd (4-byte copies of B in two stages,
the staged epilogue of 128 x 256, the per-tile odd share), the split kernels' moved-up bottom
row, the model's trying every split count, the padded copy of B under split-K and the
few-columns kernel's copy plan were written),
and no suite's shape is tuned on: the fitting shapes (the 07 suite and the first held-out draw)
only measure the model's error, which sets the margin.

The runs (issue 19; 07_any_shape/README.md, "The model's constants"):
  bin/split_k_bench                 the split-K reduction alone: a 4 x 4 C is the second launch's
                                    cost (kLaunchSeconds); slices in L2 and beyond it give the
                                    shares of the data-sheet DRAM bandwidth (kL2Share, kDramShare)
  07 forced to tile t, K whole      blocks filling every SM's slots twice, K = 1024 and 8192: the
    (SGEMM_PLAN=t,1,0)              time per k (the share) and the time before it (the fill, in k);
                                    N - 1 (odd) at 8192: the tile's odd-row share (its
                                    odd_rows_share); r blocks on every SM, each r below the
                                    full count: the rate table; the same blocks as one column
                                    of tiles (N = the tile's width), K = 8192 and 8193: the
                                    column shares (A streamed, its rows on 128-byte lines and
                                    not)
  07 forced to tile t, 2 slices     the same blocks in two slices, the reduction's modelled time
    (SGEMM_PLAN=t,2,0)              taken off: the split kernel's share
  07 on the fitting shapes, its own  the model's error with the constants just derived: its median
    plans (the 07 suite and the     is kKeepMargin
    first held-out draw, tiles only)
The forced runs use the calibration build's 07 (07_any_shape.variant_forced_plan, whose launcher
takes its plan from SGEMM_PLAN and prints each plan). Writes docs/results/<gpu>/calibration_07.json
and .md; any_shape.cu's constants are copied from them (a host test holds the two together).
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from chapters import (EXIT_PASS, EXIT_RUNTIME, EXIT_USAGE, EXIT_WRONG, REPO, ArgumentParser,
                      build, git_commit, gpu_slug, log)
import rounds_figure
import shapes

EXAMPLES = """\
examples:
  python3 scripts/calibrate_07.py                         # build, measure, write calibration_07.*
  python3 scripts/calibrate_07.py --no-build --build-dir build-tuning
  python3 scripts/calibrate_07.py --check                 # any_shape.cu against the committed file

exit codes: 0 measured (or --check: the source holds the derived constants), 1 a forced plan
computed a wrong result, or --check found a constant that differs, 2 bad usage or nothing built,
3 build or CUDA/runtime failure (no GPU included)
"""

DEFAULT_BUILD_DIR = REPO / "build-tuning"
FORCED = "07_any_shape.variant_forced_plan"
BENCH = "split_k_bench"
RESULTS = REPO / "docs" / "results" / "nvidia-h100-80gb-hbm3" / "calibration_07.json"
K_SHORT, K_LONG = 1024, 8192  # the two depths of the share and fill runs (whole K tiles)
WAVES = 2  # the share runs fill every slot this many times
# How the constants are written in any_shape.cu (and compared by --check): decimals kept.
DECIMALS = {"peak_share": 3, "split_peak_share": 3, "column_share": 3,
            "column_share_unaligned": 3, "odd_rows_share": 3, "occupancy_rate": 3, "kFillK": 0,
            "kLaunchSeconds": 7, "kL2Share": 2, "kDramShare": 2, "kKeepMargin": 3}


class UsageError(Exception):
    """Bad input the user can fix: one "error:" line, exit code 2."""


class RunError(Exception):
    """A run that failed for a reason of the machine: one "error:" line, exit code 3."""


# ---- the shapes -----------------------------------------------------------------------------

def grid_for(blocks, block_m, block_n):
    """(M, N) of a C cut into exactly `blocks` tiles, as square as the divisors allow."""
    target = math.sqrt(blocks * block_n / block_m)
    rows = min((d for d in range(1, blocks + 1) if blocks % d == 0),
               key=lambda d: (abs(math.log(d / target)), d))
    return rows * block_m, blocks // rows * block_n


def occupancies(full):
    """The blocks per SM below the full count that the rate table holds: every one."""
    return list(range(1, full))


def recipes(tiles, sms):
    """[(tile index, SGEMM_PLAN, [(role, (M, N, K))])]: the forced runs, one process each."""
    runs = []
    for i, t in enumerate(tiles):
        bm, bn, full = t["block_m"], t["block_n"], t["blocks_per_sm"]
        m, n = grid_for(WAVES * full * sms, bm, bn)
        roles = [("short", (m, n, K_SHORT)), ("long", (m, n, K_LONG)), ("odd", (m, n - 1, K_LONG)),
                 ("column", (m * n // bn, bn, K_LONG)),
                 ("column unaligned", (m * n // bn, bn, K_LONG + 1))]
        for r in occupancies(full):
            rm, rn = grid_for(r * sms, bm, bn)
            roles.append((f"occupancy {r}", (rm, rn, K_LONG)))
        runs.append((i, f"{i},1,0", roles))
        sm_, sn = grid_for(full * sms, bm, bn)
        runs.append((i, f"{i},2,0", [("split", (sm_, sn, 2 * K_LONG))]))
    return runs


# ---- running ----------------------------------------------------------------------------------

PLAN_LINE = re.compile(r"^plan (.*)$", re.M)


def run_chapter(binary, shape_list, samples, time_budget, plan=None):
    """(report, {(m, n, k): the plan line's fields}) of one process of the forced-plan build."""
    env = dict(os.environ)
    env.pop("SGEMM_PLAN", None)
    if plan:
        env["SGEMM_PLAN"] = plan
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        cmd = [str(binary), "--m", ",".join(str(s[0]) for s in shape_list),
               "--n", ",".join(str(s[1]) for s in shape_list),
               "--k", ",".join(str(s[2]) for s in shape_list), "--no-cublas", "--no-accuracy",
               "--samples", str(samples), "--time-budget", str(time_budget), "--format", "json",
               "--output", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode not in (0, 1) or not out.exists():
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise RunError(f"{binary.name} (SGEMM_PLAN={plan or 'unset'}): {last}")
        report = json.loads(out.read_text())
    plans = {}
    for line in PLAN_LINE.findall(proc.stderr):
        fields = dict(item.split("=", 1) for item in line.split())
        values = {key: float(value) for key, value in fields.items()}
        plans[(int(values["m"]), int(values["n"]), int(values["k"]))] = values
    return report, plans


def run_bench(binary):
    """{"cases": [{m, n, splits, bytes, footprint, us}], "dram_gbs", "l2_bytes"}."""
    proc = subprocess.run([str(binary)], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RunError(f"{binary.name}: {last}")
    return parse_bench(proc.stdout)


def parse_bench(text):
    cases, device = [], None
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        fields = {k: float(v) for k, v in (item.split("=", 1) for item in rest.split())}
        if kind == "case":
            cases.append(fields)
        elif kind == "device":
            device = fields
    if not cases or device is None:
        raise RunError(f"{BENCH} printed no cases or no device line")
    return {"cases": cases, "dram_gbs": device["dram_gbs"], "l2_bytes": device["l2_bytes"]}


# ---- deriving ---------------------------------------------------------------------------------

def rounded(name, value):
    places = DECIMALS[name]
    return int(round(value)) if places == 0 else round(value, places)


def derive_split_k(bench):
    """kLaunchSeconds, kL2Share, kDramShare from the bench: the launch is the 4 x 4 case's time;
    the time after it grows with the bytes moved at a share of the data-sheet bandwidth, fitted
    (least squares through the origin) over the cases whose slices fit in L2 (the model's own
    test, slices' bytes <= L2), then over those that do not."""
    dram = bench["dram_gbs"] * 1e9
    l2 = bench["l2_bytes"]
    tiny = min(bench["cases"], key=lambda c: c["bytes"])
    launch = tiny["us"] * 1e-6

    def share(cases):
        seconds_per_byte = (sum(c["bytes"] * (c["us"] * 1e-6 - launch) for c in cases)
                            / sum(c["bytes"] ** 2 for c in cases))
        return 1.0 / (seconds_per_byte * dram)

    rest = [c for c in bench["cases"] if c is not tiny]
    inside = [c for c in rest if c["footprint"] <= l2]
    outside = [c for c in rest if c["footprint"] > l2]
    if not inside or not outside:
        raise RunError(f"{BENCH}: no case in L2 or none beyond it ({l2:.0f} bytes of L2)")
    return {"kLaunchSeconds": launch, "kL2Share": share(inside), "kDramShare": share(outside)}


def derive_tiles(tiles, times, shapes_of, device, split_k):
    """The tiles' shares (odd-row shares included), rate tables and split shares, and kFillK, from
    the forced runs' medians: times[(tile, role)] = seconds of the shape shapes_of[(tile, role)].
    Returns (constants, one row per tile)."""
    fma = device["fma_per_s_per_sm"]
    fills = []
    for i in range(len(tiles)):
        short, long_ = times[(i, "short")], times[(i, "long")]
        # time = blocks per SM * area * (K + fill) / rate is linear in K: the fill is the
        # intercept over the slope.
        fills.append((K_LONG * short - K_SHORT * long_) / (long_ - short))
    fill = rounded("kFillK", statistics.median(fills))
    rows = []
    for i, t in enumerate(tiles):
        full = t["blocks_per_sm"]
        area = t["block_m"] * t["block_n"]
        rate = WAVES * full * area * (K_LONG + fill) / times[(i, "long")]
        share = rate / fma
        table = [r * area * (K_LONG + fill) / times[(i, f"occupancy {r}")] / rate
                 for r in occupancies(full)]
        # The same blocks as one column of tiles: its rate over the share run's.
        column = {role: WAVES * full * area * (shapes_of[(i, role)][2] + fill) / times[(i, role)]
                  / rate for role in ("column", "column unaligned")}
        m, n, _ = shapes_of[(i, "split")]
        kernel = times[(i, "split")] - rounds_figure.split_k_seconds(split_k, device, m, n, 2, 0.0)
        split_share = full * 2 * area * (K_LONG + fill) / kernel / fma
        rows.append({"block_m": t["block_m"], "block_n": t["block_n"], "blocks_per_sm": full,
                     "peak_share": share, "split_peak_share": split_share,
                     "column_share": column["column"],
                     "column_share_unaligned": column["column unaligned"],
                     "occupancy_rate": table, "measured_fill": fills[i],
                     "odd_rows_share": times[(i, "long")] / times[(i, "odd")]})
    return {"kFillK": fill}, rows


def model_with(model, constants, rows):
    """rounds_figure's model of the source with the derived constants in place."""
    derived = json.loads(json.dumps(model))
    for name in ("kFillK", "kLaunchSeconds", "kL2Share", "kDramShare"):
        derived["constants"][name] = constants[name]
    for tile, row in zip(derived["tiles"], rows):
        for field in TILE_FIELDS + ("occupancy_rate",):
            tile[field] = row[field]
    return derived


def derive_margin(model, device, suite_rows):
    """kKeepMargin: the median of |measured / predicted - 1| over the model's own plans on the
    07 suite, predicted with the derived constants (rows: [{shape, plan fields, seconds}])."""
    errors = []
    for row in suite_rows:
        plan = row["plan"]
        predicted = rounds_figure.predict(model, device, row["shape"], int(plan["tile"]),
                                          int(plan["splits"]), int(plan["k_slice"]),
                                          bool(plan["pad"]))["seconds"]
        row["predicted_seconds"] = predicted
        row["error"] = row["seconds"] / predicted - 1.0
        errors.append(abs(row["error"]))
    return statistics.median(errors)


# ---- the source and the results ---------------------------------------------------------------

def source_values(model):
    """{name: value} of the source's measured constants, tiles as "<field>[<i>]"."""
    values = {name: model["constants"][name] for name in CONSTANT_NAMES}
    for i, tile in enumerate(model["tiles"]):
        for field in TILE_FIELDS:
            values[f"{field}[{i}]"] = tile[field]
        for r, rate in enumerate(tile["occupancy_rate"], 1):
            values[f"occupancy_rate[{i}][{r}]"] = rate
    return values


CONSTANT_NAMES = ("kFillK", "kLaunchSeconds", "kL2Share", "kDramShare", "kKeepMargin")
TILE_FIELDS = ("peak_share", "split_peak_share", "column_share", "column_share_unaligned",
               "odd_rows_share")


def derived_values(document):
    values = dict(document["constants"])
    for i, tile in enumerate(document["tiles"]):
        for field in TILE_FIELDS:
            values[f"{field}[{i}]"] = rounded(field, tile[field])
        for r, rate in enumerate(tile["occupancy_rate"], 1):
            values[f"occupancy_rate[{i}][{r}]"] = rounded("occupancy_rate", rate)
    return values


def differences(model, document):
    """["name: source x, derived y"] for each constant the source does not hold as derived."""
    ours, theirs = source_values(model), derived_values(document)
    out = [f"{name}: any_shape.cu {value}, derived none" for name, value in ours.items()
           if name not in theirs]
    for name, want in theirs.items():
        got = ours.get(name)
        field = name.split("[", 1)[0]
        tolerance = 0.5 * 10 ** -DECIMALS[field] + 1e-12
        if got is None or abs(got - want) > tolerance:
            out.append(f"{name}: any_shape.cu {got}, derived {want}")
    return out


def render(document):
    """The markdown of a calibration document."""
    d, env = document["device"], document["environment"]
    c = document["constants"]
    lines = [
        "# Chapter 07's launcher model: the measured constants", "",
        "Generated by `scripts/calibrate_07.py`; do not edit by hand.", "",
        f"- GPU: {d['name']}, {d['sms']} SMs, SM clock {d['sm_clock_mhz']:.0f} MHz, "
        f"data-sheet DRAM bandwidth {d['dram_bandwidth_gbs']:.1f} GB/s, L2 {d['l2_bytes']} bytes",
        f"- Date: {env['date']}; command: `{env['command']}`; commit: {env['git_commit']}"
        + (" (with local changes)" if env.get("git_dirty") else ""),
        "- Forced plans: `07_any_shape.variant_forced_plan` with `SGEMM_PLAN=tile,splits,pad`, "
        "`--no-cublas --no-accuracy`, median of the timed samples; the bench is "
        "`bin/split_k_bench` (tests/bench/split_k_bench.cu).", "",
        "## The constants", "",
        "| constant | value | measured by |", "|:---|---:|:---|",
        f"| `kLaunchSeconds` | {c['kLaunchSeconds']:.7f} | the bench's 4 × 4 reduction: what a "
        "kernel with nothing to do adds in a busy stream |",
        f"| `kL2Share` | {c['kL2Share']:.2f} | the bench's reductions whose slices fit in L2: "
        "bytes moved per second after the launch, over the data-sheet DRAM bandwidth (least "
        "squares) |",
        f"| `kDramShare` | {c['kDramShare']:.2f} | the same, slices larger than L2 |",
        f"| `kFillK` | {c['kFillK']} | each tile's time at K = {K_SHORT} and {K_LONG}: intercept "
        "over slope, in k (median over the tiles) |",
        f"| `kKeepMargin` | {c['kKeepMargin']:.3f} | the model's median error, \\|measured / "
        "predicted − 1\\|, over the fitting shapes' tile plans |", "",
        "## The tiles", "",
        f"Every run fills each SM's slots {WAVES} times (blocks = {WAVES} × blocks per SM × SMs) "
        "except the occupancy runs (r blocks on every SM) and the split run (one fill, two "
        "slices). Share: multiply-adds per second per SM over the FP32 lanes × clock, at "
        f"K = {K_LONG} with the fill above. Column shares: the share run's blocks as one column "
        f"of tiles (N = the tile's width, each block streaming its own rows of A), K = {K_LONG} "
        f"and {K_LONG + 1} (A's rows off 128-byte lines), rate over the share run's. Odd-row "
        f"share: the share run's blocks at N − 1 (odd, 4-byte copies of B) against N, "
        f"K = {K_LONG}, rate over the share run's.", "",
        "| tile | blocks per SM | `peak_share` | `split_peak_share` | `column_share` | "
        "`column_share_unaligned` | `kOccupancyRate` (r blocks: rate over the full count's) | "
        "fill (k) | `odd_rows_share` |",
        "|:---|---:|---:|---:|---:|---:|:---|---:|---:|"]
    for t in document["tiles"]:
        points = ", ".join(f"{r}: {q:.3f}" for r, q in enumerate(t["occupancy_rate"], 1))
        lines.append(f"| {t['block_m']} × {t['block_n']} | {t['blocks_per_sm']} | "
                     f"{t['peak_share']:.3f} | {t['split_peak_share']:.3f} | "
                     f"{t['column_share']:.3f} | {t['column_share_unaligned']:.3f} | "
                     f"{points or 'none (one block per SM)'} | {t['measured_fill']:.1f} | "
                     f"{t['odd_rows_share']:.3f} |")
    lines += ["", "## The runs", "", "| tile | SGEMM_PLAN | role | M × N × K | ms |",
              "|:---|:---|:---|:---|---:|"]
    for r in document["runs"]:
        m, n, k = r["shape"]
        lines.append(f"| {r['tile']} | {r['plan']} | {r['role']} | {m}×{n}×{k} | "
                     f"{1e3 * r['seconds']:.4f} |")
    lines += ["", "## The split-K bench", "", "| C | slices | bytes moved | slices' bytes | µs |",
              "|:---|---:|---:|---:|---:|"]
    for b in document["bench"]["cases"]:
        lines.append(f"| {b['m']:.0f}×{b['n']:.0f} | {b['splits']:.0f} | {b['bytes']:.0f} | "
                     f"{b['footprint']:.0f} | {b['us']:.3f} |")
    lines += ["", "## The model on the fitting shapes (the 07 suite, the first held-out draw)", "",
              "Each shape on the plan the launcher took, predicted with the constants above.", "",
              "| shape | plan (tile, slices, pad) | measured ms | predicted ms | error |",
              "|:---|:---|---:|---:|---:|"]
    for r in document["suite"]:
        m, n, k = r["shape"]
        p = r["plan"]
        lines.append(f"| {m}×{n}×{k} | {int(p['tile'])}, {int(p['splits'])}, {int(p['pad'])} | "
                     f"{1e3 * r['seconds']:.4f} | {1e3 * r['predicted_seconds']:.4f} | "
                     f"{100 * r['error']:+.1f} % |")
    return "\n".join(lines) + "\n"


# ---- main -------------------------------------------------------------------------------------

def device_of(report):
    d = report["device"]
    return {"name": d["name"], "sms": d["sms"],
            "fma_per_s_per_sm": d["fp32_lanes_per_sm"] * d["sm_clock_mhz"] * 1e6,
            "dram_bytes_per_s": d["dram_bandwidth_gbs"] * 1e9, "l2_bytes": float(d["l2_bytes"]),
            "record": {k: d[k] for k in ("name", "sms", "sm_clock_mhz", "fp32_lanes_per_sm",
                                         "dram_bandwidth_gbs", "l2_bytes")}}


def median_seconds(report):
    """{(m, n, k): seconds}; a row that failed verification raises."""
    out = {}
    for row in report["rows"]:
        if row.get("status") != "PASS":
            raise ValueError(f"{row['m']} x {row['n']} x {row['k']}: {row.get('status')}")
        out[(row["m"], row["n"], row["k"])] = row["time_ms"] * 1e-3
    return out


def measure(bin_dir, model, samples, time_budget):
    """Every run; returns the calibration document (without its environment)."""
    bench = run_bench(bin_dir / BENCH)
    split_k = derive_split_k(bench)
    forced = bin_dir / FORCED
    times, shapes_of, runs = {}, {}, []
    # The shapes need the SM count, which a report gives: a small run asks first.
    report, _ = run_chapter(forced, [(64, 64, 64)], 1, 0.01, plan="4,1,0")
    device = device_of(report)
    for tile, plan, roles in recipes(model["tiles"], device["sms"]):
        report, plans = run_chapter(forced, [s for _, s in roles], samples, time_budget, plan)
        seconds = median_seconds(report)
        for role, shape in roles:
            line = plans.get(shape)
            want = model["tiles"][tile]["blocks_per_sm"]
            if line is None or int(line["blocks_per_sm"]) != want:
                raise RunError(f"{FORCED}: {shape} ran with blocks_per_sm "
                               f"{line and int(line['blocks_per_sm'])}, the source says {want}")
            times[(tile, role)] = seconds[shape]
            shapes_of[(tile, role)] = shape
            runs.append({"tile": tile, "plan": plan, "role": role, "shape": list(shape),
                         "seconds": seconds[shape]})
    constants, rows = derive_tiles(model["tiles"], times, shapes_of, device, split_k)
    constants.update(split_k)
    suite = [s[:3] for s in shapes.SUITE + shapes.HELDOUT_SUITE
             if not rounds_figure.is_thin(model, s[0], s[1])]
    report, plans = run_chapter(forced, suite, samples, time_budget)
    seconds = median_seconds(report)
    suite_rows = [{"shape": list(s), "plan": plans[s], "seconds": seconds[s]} for s in suite]
    derived = model_with(model, {k: rounded(k, v) for k, v in constants.items()},
                         [dict({f: rounded(f, r[f]) for f in TILE_FIELDS},
                               occupancy_rate=[rounded("occupancy_rate", q)
                                               for q in r["occupancy_rate"]]) for r in rows])
    constants["kKeepMargin"] = derive_margin(derived, device, suite_rows)
    return {"device": device["record"],
            "constants": {k: rounded(k, v) for k, v in constants.items()},
            "unrounded": constants, "tiles": rows, "runs": runs, "bench": bench,
            "suite": suite_rows}


def main(argv=None):
    parser = ArgumentParser(prog="calibrate_07.py", description=__doc__, epilog=EXAMPLES,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=str(DEFAULT_BUILD_DIR),
                        help="the tuning build folder (default build-tuning/); configured with "
                             "-DSGEMM_TUNING=ON when it does not exist")
    parser.add_argument("--no-build", action="store_true",
                        help="use the binaries already in --build-dir, build nothing")
    parser.add_argument("--samples", type=int, default=15, help="timed samples per shape")
    parser.add_argument("--time-budget", type=float, default=0.5,
                        help="seconds of timing per shape at most (default 0.5)")
    parser.add_argument("--out", default=str(RESULTS),
                        help="the JSON to write (the .md beside it; default %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="measure nothing: exit 1 unless any_shape.cu holds the constants "
                             "of --out")
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        model = rounds_figure.read_model(REPO)
    except rounds_figure.UsageError as error:
        log(f"error: {error}")
        return EXIT_USAGE
    if args.check:
        try:
            document = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            log(f"error: {out}: cannot read: {error}")
            return EXIT_USAGE
        wrong = differences(model, document)
        for line in wrong:
            log(f"differs: {line}")
        if not wrong:
            log(f"any_shape.cu holds the constants of {out.name}")
        return EXIT_WRONG if wrong else EXIT_PASS
    if args.samples < 1 or not args.time_budget > 0:
        log("error: --samples must be >= 1 and --time-budget > 0")
        return EXIT_USAGE
    build_dir = Path(args.build_dir)
    if not args.no_build:
        build(build_dir, ["-DSGEMM_TUNING=ON", "-DBUILD_TESTING=ON"], [FORCED, BENCH])
    bin_dir = build_dir / "bin"
    missing = [name for name in (FORCED, BENCH) if not (bin_dir / name).is_file()]
    if missing:
        log(f"error: {missing[0]} is not built in {bin_dir}: build it (cmake -DSGEMM_TUNING=ON, "
            f"target {missing[0]}) or drop --no-build")
        return EXIT_USAGE
    try:
        document = measure(bin_dir, model, args.samples, args.time_budget)
    except RunError as error:
        log(f"error: {error}")
        return EXIT_RUNTIME
    except ValueError as error:
        log(f"error: a forced plan computed a wrong result: {error}")
        return EXIT_WRONG
    commit, dirty = git_commit()
    document["environment"] = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python3 scripts/calibrate_07.py " + " ".join(argv if argv is not None
                                                                 else sys.argv[1:]),
        "git_commit": commit, "git_dirty": dirty}
    if args.out == str(RESULTS):
        out = REPO / "docs" / "results" / gpu_slug(document["device"]["name"]) / RESULTS.name
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        out.with_suffix(".md").write_text(render(document), encoding="utf-8")
    except OSError as error:
        log(f"error: cannot write {out}: {error.strerror or error}")
        return EXIT_USAGE
    sys.stdout.write(render(document))
    log(f"wrote {out} and {out.with_suffix('.md').name}")
    for line in differences(model, document):
        log(f"any_shape.cu differs: {line}")
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
