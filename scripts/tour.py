#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build the tutorial, run every chapter over a size sweep, print the ladder and save the results.

Each chapter binary runs as `build/bin/<chapter> --size <sizes> --format json --output <file>`,
verifying against cuBLAS and timing itself and cuBLAS in the same process. The tour merges
their JSON into docs/results/<gpu>/ (results.json, results.csv, ladder.md).

A chapter that cannot use this GPU (chapters 10 on need compute capability 9.0) says so in one
line and exits 3; the tour then shows it as "not run on this GPU" with that reason, in the
ladder and in results.json, and goes on: it is no failure of the tour.
"""

import argparse
import csv
import datetime
import json
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chapters import (CHAPTERS, EXIT_PASS, EXIT_RUNTIME, EXIT_USAGE, EXIT_WRONG, REPO,
                      ArgumentParser, binaries, build, git_commit, gpu_slug, gpu_status,
                      host_test_hint, log, parse_int_list, select_chapters, unsupported_reason)

EXAMPLES = """\
examples:
  python3 scripts/tour.py                             # build, run all chapters, save results
  python3 scripts/tour.py --sizes 1024,4096 --no-save # quick look, nothing written
  python3 scripts/tour.py --sizes 4096,8192           # the README ladder's sizes only
  python3 scripts/tour.py --chapters 02 03 --samples 50
  python3 scripts/tour.py --no-build --build-dir build-debug --results-dir /tmp/ladder

exit codes: 0 every chapter that can use this GPU passed, 1 a chapter computed a wrong result,
            2 bad usage, 3 build or CUDA/runtime failure (no GPU, out of memory, crash, or no
            chosen chapter can use this GPU)
"""


def no_gpu_line(reason, build_dir):
    """The one line a machine without a GPU gets, naming the build folder the user chose."""
    return (f"error: no CUDA GPU is present ({reason}): the tour needs one; the host tests run "
            f"without one: `{host_test_hint(build_dir)}`")


# results.csv: one row per chapter x size, the row fields then the device they ran on.
ROW_FIELDS = ["chapter", "m", "n", "k", "time_ms", "noise", "samples", "tflops",
              "cublas_time_ms", "cublas_tflops", "pct_cublas", "pct_peak", "ratio", "ideal_ratio",
              "ridge", "bound", "max_abs_err", "max_rel_err", "rel_fro_err", "mismatches", "status",
              "first_mismatch", "precision"]
DEVICE_FIELDS = ["name", "compute_capability", "sms", "sm_clock_mhz", "fp32_peak_tflops",
                 "dram_bandwidth_gbs", "ridge_flop_per_byte", "driver", "runtime", "cublas"]


# ---------------------------------------------------------------------------------------------
# Merging the chapters' JSON (pure functions: tests/scripts/test_tour.py covers them)
# ---------------------------------------------------------------------------------------------

def load_run(path):
    """One chapter's JSON report; raises ValueError when it is not schema 1."""
    with open(path, encoding="utf-8") as f:
        run = json.load(f)
    if not isinstance(run, dict) or run.get("schema") != 1 or not isinstance(run.get("rows"), list):
        raise ValueError(f"{path}: not a schema-1 chapter report")
    return run


def merge_runs(runs, not_run=()):
    """Merge chapter reports run on one GPU into {device, settings, chapters, rows, not_run}.

    Rows come out in ladder order, then by size. Reports from different GPUs are refused:
    a ladder mixes no devices. not_run: [{"chapter", "reason"}] of the chapters that could not
    use this GPU, kept in ladder order.
    """
    if not runs:
        raise ValueError("no chapter reports to merge")
    device = runs[0]["device"]
    for run in runs[1:]:
        if run["device"].get("name") != device.get("name"):
            raise ValueError(f"reports from different GPUs: {device.get('name')!r} and "
                             f"{run['device'].get('name')!r}")
    order = {name: i for i, name in enumerate(CHAPTERS)}
    rows = [row for run in runs for row in run["rows"]]
    rows.sort(key=lambda r: (order.get(r["chapter"], len(order)), r["chapter"],
                             r["m"] * r["n"] * r["k"], r["m"], r["n"], r["k"]))
    chapters = [{"chapter": run["chapter"], "title": run.get("title"),
                 "command": run.get("command"), "date": run.get("date")} for run in runs]
    skipped = sorted(not_run, key=lambda c: (order.get(c["chapter"], len(order)), c["chapter"]))
    return {"device": device, "settings": runs[0].get("settings", {}), "chapters": chapters,
            "rows": rows, "not_run": [dict(c) for c in skipped]}


def shapes(rows):
    """The distinct (m, n, k) in the rows, smallest first."""
    return sorted({(r["m"], r["n"], r["k"]) for r in rows}, key=lambda s: (s[0] * s[1] * s[2], s))


def precision_of(row):
    """A row's precision contract: "FP32" or "TF32" (reports before the contract existed: FP32)."""
    return row.get("precision") or "FP32"


def cublas_median(rows, shape, precision="FP32"):
    """(median cuBLAS TFLOP/s over the chapter processes that timed it at this shape, count).

    A chapter process times cuBLAS in the mode of its precision contract, so FP32 and TF32
    chapters give two cuBLAS rows, never one mixed median.
    """
    values = [r["cublas_tflops"] for r in rows
              if (r["m"], r["n"], r["k"]) == shape and r.get("cublas_tflops") is not None
              and precision_of(r) == precision]
    return (statistics.median(values) if values else None), len(values)


def error_of(row, key, field="rms_rel_c"):
    """An error against the FP64 GEMM (fp64_error, cublas_fp32_error, ...) or None."""
    errors = row.get(key)
    return errors.get(field) if isinstance(errors, dict) else None


def fmt_err(value):
    return "-" if value is None else f"{value:.2e}"


def cublas_error_median(rows, shape, key):
    values = [error_of(r, key) for r in rows if (r["m"], r["n"], r["k"]) == shape]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


LADDER_HEADER = ["chapter", "precision", "TFLOP/s", "% of cuBLAS", "% of FP32 peak",
                 "FLOP/byte (model)", "bound", "rms error vs FP64", "check"]
LEFT_COLUMNS = (0, 1, 6, 8)  # aligned left in the text and markdown tables


NOT_RUN = "not run on this GPU"


def ladder_table(rows, device, shape, not_run=()):
    """The ladder at one shape: a header and one list of cells per line.

    % of cuBLAS compares each chapter with cuBLAS in the mode of its precision contract, timed in
    its own process; the error column is the chapter's rms error against an FP64 GEMM of the same
    inputs, relative to the rms of C (docs/methodology.md, "Accuracy"). A chapter of not_run keeps
    its place in the ladder with dashes and "not run on this GPU" (the reason is below the tables).
    """
    order = {name: i for i, name in enumerate(CHAPTERS)}
    ranked = []
    for r in rows:
        if (r["m"], r["n"], r["k"]) == shape:
            ranked.append((r["chapter"], [
                r["chapter"], precision_of(r), fmt(r.get("tflops")), fmt(r.get("pct_cublas"), 1),
                fmt(r.get("pct_peak"), 1), fmt(r.get("ratio")), r.get("bound") or "-",
                fmt_err(error_of(r, "fp64_error")), r.get("status") or "-"]))
    ranked += [(c["chapter"], [c["chapter"]] + ["-"] * 7 + [NOT_RUN]) for c in not_run]
    # A stable sort: the rows keep their order (by size) within a chapter.
    ranked.sort(key=lambda item: (order.get(item[0], len(order)), item[0]))
    lines = [cells for _, cells in ranked]
    peak = device.get("fp32_peak_tflops")
    for precision, key in (("FP32", "cublas_fp32_error"), ("TF32", "cublas_tf32_error")):
        median, count = cublas_median(rows, shape, precision)
        if precision == "TF32" and not count:
            continue
        pct_peak = 100.0 * median / peak if median is not None and peak else None
        label = "cuBLAS" if precision == "FP32" else "cuBLAS TF32"
        lines.append([f"{label} (median of {count})", precision, fmt(median), "-",
                      fmt(pct_peak, 1), "-", "-", fmt_err(cublas_error_median(rows, shape, key)),
                      "ref."])
    lines.append(["FP32 peak", "-", fmt(peak), "-", "100.0", "-", "-", "-", "-"])
    return LADDER_HEADER, lines


def fmt(value, digits=None):
    """A number for the tables: '-' when not measured, fewer decimals as it grows."""
    if value is None:
        return "-"
    if digits is None:
        digits = 3 if abs(value) < 1 else 2 if abs(value) < 100 else 1
    return f"{value:.{digits}f}"


def shape_title(shape):
    m, n, k = shape
    return f"M = N = K = {m}" if m == n == k else f"M = {m}, N = {n}, K = {k}"


def device_lines(device, settings):
    """What a reader needs to reproduce or compare: GPU, clocks, versions, reference, peaks."""
    d = device
    peak_formula = ""
    if all(d.get(f) for f in ("sms", "fp32_lanes_per_sm", "sm_clock_mhz")):
        peak_formula = (f" = {d['sms']} SMs x {d['fp32_lanes_per_sm']} FP32 lanes x 2 FLOP x "
                        f"{d['sm_clock_mhz']} MHz")
    return [
        f"GPU: {d.get('name')} (compute capability {d.get('compute_capability')}), "
        f"SM clock {d.get('sm_clock_mhz')} MHz; driver {d.get('driver')}, "
        f"CUDA runtime {d.get('runtime')}, cuBLAS {d.get('cublas')}",
        f"FP32 peak {fmt(d.get('fp32_peak_tflops'))} TFLOP/s{peak_formula}; "
        f"DRAM {fmt(d.get('dram_bandwidth_gbs'), 1)} GB/s; "
        f"ridge {fmt(d.get('ridge_flop_per_byte'))} FLOP/byte",
        f"Reference: {settings.get('reference', 'cuBLAS')}; seed {settings.get('seed')}; "
        f"{settings.get('warmup')} warm-up, then up to {settings.get('samples')} timed runs"
        + (f" or {settings['time_budget_s']} s of kernel time" if settings.get("time_budget_s")
           else "") + " per shape; median",
    ]


CUBLAS_NOTE = ("cuBLAS rows: the median of the cuBLAS TFLOP/s measured by the chapter processes "
               "of one precision contract at this size (cuBLAS FP32 in the FP32 chapters', cuBLAS "
               "TF32 in the TF32 chapters'); a chapter's % of cuBLAS compares it with the cuBLAS "
               "run in its own process.")


def not_run_lines(merged):
    """One line per chapter that could not use this GPU, with the chapter's own reason."""
    return [f"{c['chapter']}: {NOT_RUN}: {c['reason']}" for c in merged.get("not_run", [])]


def render_text(merged):
    out = device_lines(merged["device"], merged["settings"])
    for shape in shapes(merged["rows"]):
        header, lines = ladder_table(merged["rows"], merged["device"], shape,
                                     merged.get("not_run", []))
        widths = [max(len(cells[i]) for cells in [header] + lines) for i in range(len(header))]
        out += ["", shape_title(shape)]
        for cells in [header] + lines:
            out.append("  ".join(c.ljust(w) if i in LEFT_COLUMNS else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
    out += ["", CUBLAS_NOTE] + not_run_lines(merged)
    return "\n".join(out)


def render_markdown(merged, environment):
    out = ["# SGEMM ladder", "",
           "Generated by `scripts/tour.py`; do not edit by hand.", ""]
    out += [f"- {line}" for line in device_lines(merged["device"], merged["settings"])]
    out += [f"- Date: {environment['date']}; command: `{environment['command']}`; "
            f"commit: {environment['git_commit'] or 'unknown'}"
            f"{' (uncommitted changes)' if environment['git_dirty'] else ''}"]
    for shape in shapes(merged["rows"]):
        header, lines = ladder_table(merged["rows"], merged["device"], shape,
                                     merged.get("not_run", []))
        out += ["", f"## {shape_title(shape)}", "",
                "| " + " | ".join(header) + " |",
                "|" + "|".join(":---" if i in LEFT_COLUMNS else "---:"
                               for i in range(len(header))) + "|"]
        out += ["| " + " | ".join(cells) + " |" for cells in lines]
    out += ["", CUBLAS_NOTE, ""]
    if merged.get("not_run"):
        out += [f"- {line}" for line in not_run_lines(merged)] + [""]
    return "\n".join(out)


def csv_rows(merged, environment):
    """Flat rows for results.csv: the row fields, then device_* and run columns."""
    device = merged["device"]
    for r in merged["rows"]:
        row = {f: r.get(f) for f in ROW_FIELDS}
        row["precision"] = precision_of(r)
        mismatch = r.get("first_mismatch")
        if mismatch:
            row["first_mismatch"] = (f"row {mismatch.get('row')} col {mismatch.get('col')}: "
                                     f"got {mismatch.get('got')} want {mismatch.get('want')}")
        row.update({f"device_{f}": device.get(f) for f in DEVICE_FIELDS})
        row.update(date=environment["date"], git_commit=environment["git_commit"])
        yield row


def write_results(folder, merged, environment):
    folder.mkdir(parents=True, exist_ok=True)
    document = {"schema": 1, "generator": "scripts/tour.py", "environment": environment, **merged}
    (folder / "results.json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    fields = ROW_FIELDS + [f"device_{f}" for f in DEVICE_FIELDS] + ["date", "git_commit"]
    with open(folder / "results.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(csv_rows(merged, environment))
    (folder / "ladder.md").write_text(render_markdown(merged, environment), encoding="utf-8")


def environment_of(merged, command):
    device = merged["device"]
    commit, dirty = git_commit()
    return {
        "gpu": device.get("name"), "sm_clock_mhz": device.get("sm_clock_mhz"),
        "driver": device.get("driver"), "cuda_runtime": device.get("runtime"),
        "cublas": device.get("cublas"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command, "git_commit": commit, "git_dirty": dirty,
        "python": platform.python_version(),
    }


# ---------------------------------------------------------------------------------------------
# Running the chapters
# ---------------------------------------------------------------------------------------------

def is_no_gpu(stderr):
    text = stderr.lower()
    return "no cuda gpu" in text or "no cuda-capable device" in text


def last_error_line(stderr):
    """The binary's last `error:` line without its prefix (or its last line)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return (errors or lines or ["(no message)"])[-1].removeprefix("error:").strip()


def run_chapters(bins, args):
    """Run each chapter; returns (reports, not_run, exit code). not_run lists the chapters that
    cannot use this GPU, {"chapter", "reason"}: they change no exit code."""
    reports, not_run, code, start = [], [], EXIT_PASS, time.monotonic()
    extra = []
    for option in ("samples", "warmup", "time_budget", "device"):
        if getattr(args, option) is not None:
            extra += ["--" + option.replace("_", "-"), str(getattr(args, option))]
    with tempfile.TemporaryDirectory(prefix="sgemm-tour-") as tmp:
        for i, (name, path) in enumerate(bins.items(), 1):
            output = Path(tmp) / f"{name}.json"
            command = [str(path), "--size", ",".join(map(str, args.sizes)), "--format", "json",
                       "--output", str(output)] + extra
            log(f"[{i}/{len(bins)}] {name}: running sizes {','.join(map(str, args.sizes))} "
                f"(elapsed {time.monotonic() - start:.0f} s)")
            began = time.monotonic()
            proc = subprocess.run(command, capture_output=True, text=True)
            took = time.monotonic() - began
            rc = proc.returncode
            if rc == EXIT_RUNTIME and i == 1 and is_no_gpu(proc.stderr):
                # The driver's words when it has some; else the chapter's (a driver too old).
                log(no_gpu_line(gpu_status() or last_error_line(proc.stderr), args.build_dir))
                return [], [], EXIT_RUNTIME
            if rc == EXIT_USAGE:
                log(f"error: {name} refused the options: {last_error_line(proc.stderr)}")
                return reports, not_run, EXIT_USAGE
            reason = unsupported_reason(proc.stderr) if rc == EXIT_RUNTIME else None
            if reason:
                log(f"[{i}/{len(bins)}] {name}: {NOT_RUN}: {reason}")
                not_run.append({"chapter": name, "reason": reason})
                continue
            if rc not in (EXIT_PASS, EXIT_WRONG):
                why = last_error_line(proc.stderr) if rc > 0 else f"killed by signal {-rc}"
                log(f"[{i}/{len(bins)}] {name}: runtime failure (exit {rc}): {why}")
                code = EXIT_RUNTIME
                continue
            try:
                reports.append(load_run(output))
            except (OSError, ValueError) as error:
                log(f"[{i}/{len(bins)}] {name}: no usable report ({error})")
                code = EXIT_RUNTIME
                continue
            verdict = "PASS" if rc == EXIT_PASS else "FAIL (wrong result)"
            if rc == EXIT_WRONG and code == EXIT_PASS:
                code = EXIT_WRONG
            log(f"[{i}/{len(bins)}] {name}: {verdict} in {took:.1f} s "
                f"(elapsed {time.monotonic() - start:.0f} s)")
    return reports, not_run, code


def parse_args(argv):
    parser = ArgumentParser(
        description=__doc__, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=parse_int_list, default="1024,2048,4096,8192",
                        help="square sizes M = N = K: whole numbers >= 1, comma-separated "
                             "(default: %(default)s)")
    parser.add_argument("--chapters", nargs="+", metavar="CHAPTER",
                        help="chapters to run: names, numbers or short names "
                             "(03, 03_thread_tiling, thread_tiling); default: all that are built")
    parser.add_argument("--samples", type=int, help="timed runs per shape (chapter default)")
    parser.add_argument("--warmup", type=int, help="warm-up runs per shape (chapter default)")
    parser.add_argument("--time-budget", type=float, metavar="SECONDS",
                        help="kernel time per shape after which sampling stops (chapter default)")
    parser.add_argument("--device", type=int, help="CUDA device index (chapter default: 0)")
    parser.add_argument("--build-dir", type=Path, default=REPO / "build",
                        help="CMake build folder (default: build/ in the repository)")
    parser.add_argument("--no-build", action="store_true",
                        help="run the binaries already in the build folder, do not build")
    parser.add_argument("--results-dir", type=Path,
                        help="where to write results (default: docs/results/<gpu-slug>/)")
    parser.add_argument("--no-save", action="store_true", help="print the ladder, write nothing")
    args = parser.parse_args(argv)
    # The build runs in the repository and the binaries are looked up from here: one absolute
    # folder keeps the two the same whatever the working folder.
    args.build_dir = args.build_dir.resolve()
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    try:
        names = select_chapters(args.chapters)
    except ValueError as error:
        log(f"error: {error}")
        return EXIT_USAGE
    if not args.no_build:
        # Before the build: compiling for a minute only to learn there is no GPU helps nobody.
        # (With --no-build the first chapter binary says so within a second.)
        reason = gpu_status()
        if reason:
            log(no_gpu_line(reason, args.build_dir))
            return EXIT_RUNTIME
        build(args.build_dir)
    bins = binaries(args.build_dir, names)
    if not bins:
        log(f"error: no chapter binary found in {args.build_dir / 'bin'} "
            f"(looked for {', '.join(names)})")
        return EXIT_USAGE
    missing = [n for n in names if n not in bins]
    if missing:
        log(f"not built, skipped: {', '.join(missing)}")

    reports, not_run, code = run_chapters(bins, args)
    if not reports:
        if not_run and code == EXIT_PASS:
            log("error: no chosen chapter can use this GPU: "
                + "; ".join(f"{c['chapter']} {c['reason']}" for c in not_run))
        return code if code != EXIT_PASS else EXIT_RUNTIME
    try:
        merged = merge_runs(reports, not_run)
    except ValueError as error:
        log(f"error: {error}")
        return EXIT_RUNTIME
    print(render_text(merged))

    if not args.no_save:
        environment = environment_of(merged, shlex.join(["python3", sys.argv[0], *argv]))
        folder = args.results_dir or REPO / "docs" / "results" / gpu_slug(merged["device"]["name"])
        write_results(folder, merged, environment)
        log(f"results written to {folder}/ (results.json, results.csv, ladder.md)")
    if code == EXIT_WRONG:
        failed = sorted({r["chapter"] for r in merged["rows"] if r.get("status") == "FAIL"})
        log(f"FAIL: wrong result in {', '.join(failed) or 'a chapter'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
