#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Profile the chapters' kernels with Nsight Compute and compare their counters side by side.

Each chapter runs once under ncu, verification only, on one shape:
  ncu --csv --print-units base --clock-control none --kernel-name 'regex:(^|::)sgemm_'
      --launch-count 1 --metrics <set> build/bin/<chapter> --verify-only --size 4096
so the one profiled launch is the chapter's verification run (the harness times nothing).
The table has one column per chapter and one row per counter, plus derived rows
(sectors per request, FFMA per shared load, ...). Stall rows, in warp cycles per issued
instruction: the printed and markdown tables show the reasons that are among the three largest
of any chapter; the CSV (--csv) keeps every reason collected, so a claim that a reason is small
can be checked there.

The tensor-core chapters show in the tensor-pipe rows: how busy the pipe is (mma.sync and wgmma
alike) and how many mma.sync instructions ran; on a GPU of compute capability 9.0 the default,
compute and stalls sets add the wgmma instructions and the warps' wait for them (the gmma stall),
counters ncu refuses on other GPUs. A chapter that cannot use this GPU (10 on needs compute
capability 9.0) says so in one line and exits 3; it is left out of the table, named with its
reason, and is no failure.

cuBLAS's kernel is not profiled: its kernels have no stable names to select, and the harness
launches other helper kernels around it. Profile cuBLAS by hand with ncu if you need it.
"""

import argparse
import csv
import datetime
import io
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from chapters import (EXIT_RUNTIME, EXIT_USAGE, REPO, ArgumentParser, binaries, build,
                      compute_capability, gpu_status, log, select_chapters, unsupported_reason)

EXAMPLES = """\
examples:
  python3 scripts/profile.py                          # all chapters, 4096^3, default set
  python3 scripts/profile.py --chapters 04 05 --set memory --markdown /tmp/p.md
  python3 scripts/profile.py --m 4096 --n 4096 --k 1024 --csv /tmp/counters.csv
  python3 scripts/profile.py --metrics dram__bytes_read.sum,smsp__inst_executed.sum
  python3 scripts/profile.py --list-sets

Profiling needs access to the GPU performance counters (root, or the driver's
NVreg_RestrictProfilingToAdminUsers=0).
exit codes: 0 done, 2 bad usage, 3 ncu missing or failed, or the build failed
"""

# Metric names: Nsight Compute's own section files and rules (WarpStateStats, Occupancy,
# InstructionStats, SharedMemoryConflicts, SpeedOfLight_RooflineChart). Confirm on a new GPU
# with `ncu --query-metrics`.
LABELS = {
    "gpu__time_duration.sum": "Kernel duration (profiled run)",
    "dram__bytes_read.sum": "DRAM bytes read",
    "dram__bytes_write.sum": "DRAM bytes written",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "Global load requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "Global load sectors",
    "smsp__sass_inst_executed_op_shared_ld.sum": "Shared load instructions (warp)",
    "smsp__sass_inst_executed_op_shared_st.sum": "Shared store instructions (warp)",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "Shared load wavefronts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "Shared load bank conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "Shared store bank conflicts",
    "launch__registers_per_thread": "Registers per thread",
    "sm__maximum_warps_per_active_cycle_pct": "Theoretical occupancy",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "Achieved occupancy",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "Issue slots busy",
    "smsp__inst_executed.sum": "Executed instructions (warp)",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "FFMA executed (thread)",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active":
        "Tensor pipe busy (mma.sync and wgmma)",
    "sm__inst_executed_pipe_tensor_op_hmma.sum": "mma.sync instructions (HMMA, warp)",
    "sm__inst_executed_pipe_tensor_op_gmma.sum": "wgmma instructions (HGMMA, warp)",
}
# Stall reasons of the WarpStateStats section present on every architecture it supports
# (imc_miss is left out: it exists on some architectures only; gmma, Hopper's, is added there).
STALL_REASONS = ["long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle",
                 "math_pipe_throttle", "barrier", "wait", "not_selected", "dispatch_stall",
                 "no_instruction", "branch_resolving", "membar", "drain", "sleeping",
                 "tex_throttle", "misc"]
HOPPER_STALL_REASONS = ["gmma"]  # warps waiting for their wgmma group (wgmma.wait_group)
STALL_PREFIX, STALL_SUFFIX = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
STALLS = [STALL_PREFIX + reason + STALL_SUFFIX for reason in STALL_REASONS]
HOPPER_STALLS = [STALL_PREFIX + reason + STALL_SUFFIX for reason in HOPPER_STALL_REASONS]
LABELS.update({m: f"Stall {r.replace('_', ' ')} (cycles/issue)" for m, r in
               zip(STALLS + HOPPER_STALLS, STALL_REASONS + HOPPER_STALL_REASONS)})

MEMORY = ["dram__bytes_read.sum", "dram__bytes_write.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
          "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
          "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]
TENSOR_PIPE, HMMA = ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                     "sm__inst_executed_pipe_tensor_op_hmma.sum")
GMMA = "sm__inst_executed_pipe_tensor_op_gmma.sum"
COMPUTE = ["launch__registers_per_thread", "sm__maximum_warps_per_active_cycle_pct",
           "sm__warps_active.avg.pct_of_peak_sustained_active",
           "smsp__issue_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
           "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", TENSOR_PIPE, HMMA,
           "smsp__sass_inst_executed_op_shared_ld.sum"]
DURATION, ISSUE = "gpu__time_duration.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active"
SETS = {
    "default": [DURATION] + MEMORY + [m for m in COMPUTE if m not in MEMORY] + STALLS,
    "memory": [DURATION] + MEMORY,
    "compute": [DURATION] + COMPUTE,
    "stalls": [DURATION, ISSUE] + STALLS,
}
TOP_STALLS = 3
# Counters of compute capability 9.0 only (ncu stops on a metric the GPU does not have), added to
# these sets on such a GPU: each goes after the metric named, or at the end.
HOPPER_EXTRAS = {"default": [(GMMA, HMMA)] + [(m, None) for m in HOPPER_STALLS],
                 "compute": [(GMMA, HMMA)],
                 "stalls": [(m, None) for m in HOPPER_STALLS]}


def metrics_for(set_name, capability):
    """The metrics of a counter set on a GPU of this compute capability ((major, minor), or None
    when unknown: then only the counters every architecture has)."""
    metrics = list(SETS[set_name])
    if capability is None or capability[0] != 9:
        return metrics
    for metric, after in HOPPER_EXTRAS.get(set_name, []):
        where = metrics.index(after) + 1 if after in metrics else len(metrics)
        metrics.insert(where, metric)
    return metrics


# ---------------------------------------------------------------------------------------------
# Parsing ncu's CSV and deriving rows (pure functions: tests/scripts/test_profile.py covers them)
# ---------------------------------------------------------------------------------------------

def number(text):
    """ncu prints '1,048,576', 'n/a' or ''; base units keep everything else a plain number."""
    text = (text or "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def parse_ncu_csv(text):
    """{metric: (unit, value)} of the first profiled kernel in ncu's --csv (details page) output.

    The tool's '==PROF==' lines and anything before the header row are skipped.
    Returns ({}, None) when no kernel was profiled.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        return {}, None
    rows = [r for r in csv.DictReader(io.StringIO("\n".join(lines[start:])))
            if r.get("Metric Name")]
    if not rows:
        return {}, None
    first = rows[0]["ID"]
    metrics = {r["Metric Name"]: (r.get("Metric Unit") or "", number(r.get("Metric Value")))
               for r in rows if r["ID"] == first}
    return metrics, rows[0].get("Kernel Name")


def value(metrics, name):
    return metrics.get(name, ("", None))[1]


def ratio(a, b, scale=1.0):
    return a / b * scale if a is not None and b else None


def derived_rows(metrics, flops=None, model_ratio=None):
    """[(label, unit, value)] computed from the counters of one kernel."""
    def get(name):
        return value(metrics, name)

    read, write = get("dram__bytes_read.sum"), get("dram__bytes_write.sum")
    rows = [
        ("DRAM bytes (read + write)", "byte",
         read + write if read is not None and write is not None else None),
        ("Tile-model global traffic (harness)", "byte",
         flops / model_ratio if flops and model_ratio else None),
        ("Global load sectors per request", "sector/request",
         ratio(get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
               get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"))),
        # Nsight Compute's SharedMemoryConflicts rule: conflicts as a share of wavefronts.
        ("Shared load bank conflicts / wavefronts", "%",
         ratio(get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
               get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), 100.0)),
        # FFMA counts threads, shared loads count warps: per warp, FFMA / 32 per LDS.
        ("FFMA per shared load (warp level)", "FFMA/LDS",
         ratio(get("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
               get("smsp__sass_inst_executed_op_shared_ld.sum"), 1 / 32)),
    ]
    return [row for row in rows if row[2] is not None]


def is_stall(metric):
    return metric in STALLS or metric in HOPPER_STALLS


def top_stalls(metrics, count=TOP_STALLS):
    present = [(value(metrics, m), m) for m in STALLS + HOPPER_STALLS
               if value(metrics, m) is not None]
    return [m for _, m in sorted(present, reverse=True)[:count]]


def build_table(results, requested, every_stall=False):
    """Rows [(label, metric or '', unit, {chapter: value})] for the chapters' results.

    results: {chapter: {"metrics": {...}, "flops": float, "ratio": float}}
    Stall rows are kept when the reason is among the largest of some chapter, or all of them
    with every_stall (metrics chosen by hand).
    """
    chapters = list(results)
    keep_stalls = {m for c in chapters for m in top_stalls(results[c]["metrics"])}

    def largest(metric):
        return max((value(results[c]["metrics"], metric) or 0) for c in chapters)

    stall_rows = sorted((m for m in requested if is_stall(m)), key=largest, reverse=True)
    requested = [m for m in requested if not is_stall(m)] + stall_rows
    table = []
    for metric in requested:
        if is_stall(metric) and not every_stall and metric not in keep_stalls:
            continue
        units = {results[c]["metrics"].get(metric, ("", None))[0] for c in chapters} - {""}
        table.append((LABELS.get(metric, metric), metric, ", ".join(sorted(units)),
                      {c: value(results[c]["metrics"], metric) for c in chapters}))
    derived = {}
    for c in chapters:
        for label, unit, v in derived_rows(results[c]["metrics"], results[c].get("flops"),
                                           results[c].get("ratio")):
            derived.setdefault((label, unit), {})[c] = v
    table += [(label, "", unit, values) for (label, unit), values in derived.items()]
    return table


# ---------------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------------

def human(v, unit):
    if v is None:
        return "-"
    if unit == "%":
        return f"{v:.1f} %"
    if unit in ("nsecond", "ns"):
        return f"{v / 1e6:.3f} ms"
    if unit == "byte":
        for scale, name in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if abs(v) >= scale:
                return f"{v / scale:.2f} {name}"
        return f"{v:.0f} B"
    if abs(v) >= 1e4:
        for scale, name in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(v) >= scale:
                return f"{v / scale:.2f} {name}"
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.2f}"


def shown_unit(unit):
    """The unit column: blank where human() already writes the unit beside the value."""
    return "" if unit in ("%", "byte", "nsecond", "ns") else unit


def render_text(table, chapters):
    header = ["counter", "unit"] + chapters
    lines = [[label, shown_unit(unit)] + [human(values.get(c), unit) for c in chapters]
             for label, _, unit, values in table]
    widths = [max(len(row[i]) for row in [header] + lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
                     for row in [header] + lines)


def not_run_lines(not_run):
    return [f"{name}: not run on this GPU: {reason}" for name, reason in not_run]


def render_markdown(table, chapters, context, not_run=()):
    out = [f"Nsight Compute counters, {context['shape']}, {context['gpu']} "
           f"(ncu {context['ncu_version']}; {context['date']}).", "",
           f"Command, per chapter: `{context['command']}`", "",
           "| counter | unit | " + " | ".join(chapters) + " |",
           "|:---|:---|" + "---:|" * len(chapters)]
    for label, _, unit, values in table:
        cells = [label, shown_unit(unit)] + [human(values.get(c), unit) for c in chapters]
        out.append("| " + " | ".join(cells) + " |")
    out += [""] + [f"- {line}" for line in not_run_lines(not_run)] + ([""] if not_run else [])
    out += ["Stall rows: the reasons among the three largest of some chapter; the CSV written "
            "beside this table (--csv) has every stall reason collected.", "",
            "Metrics: " + ", ".join(f"`{metric}`" for _, metric, _, _ in table if metric), ""]
    return "\n".join(out)


def write_csv(path, table, chapters):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["counter", "metric", "unit"] + chapters)
        for label, metric, unit, values in table:
            raw = ["" if values.get(c) is None else values[c] for c in chapters]
            writer.writerow([label, metric, unit] + raw)


# ---------------------------------------------------------------------------------------------
# Running ncu
# ---------------------------------------------------------------------------------------------

def find_ncu(option):
    """The ncu to run: --ncu as given; the default also looks in the CUDA toolkit's bin/."""
    fallback = ["/usr/local/cuda/bin/ncu"] if option == "ncu" else []
    for candidate in [option] + fallback:
        path = shutil.which(candidate) if candidate else None
        if path:
            return path
    return None


def ncu_version(ncu):
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "unknown"


def ncu_command(ncu, metrics, kernel_regex, log_file):
    return [ncu, "--csv", "--print-units", "base", "--clock-control", "none",
            "--kernel-name", f"regex:{kernel_regex}", "--launch-count", "1",
            "--metrics", ",".join(metrics), "--log-file", str(log_file)]


class NotRunHere(Exception):
    """The chapter cannot use this GPU (its one line: "error: <name> needs ...")."""


def profile_chapter(ncu, binary, shape_args, metrics, kernel_regex, tmp):
    """Run one chapter under ncu; returns {"metrics", "kernel", "flops", "ratio", "device"}."""
    log_file, report = Path(tmp) / f"{binary.name}.ncu.csv", Path(tmp) / f"{binary.name}.json"
    command = (ncu_command(ncu, metrics, kernel_regex, log_file)
               + [str(binary), "--verify-only"] + shape_args
               + ["--format", "json", "--output", str(report)])
    proc = subprocess.run(command, capture_output=True, text=True)
    text = log_file.read_text(errors="replace") if log_file.exists() else ""
    errors = [line for line in (text + proc.stderr).splitlines() if line.startswith("==ERROR==")]
    metrics_found, kernel = parse_ncu_csv(text)
    reason = unsupported_reason(proc.stderr)
    if reason and not metrics_found:
        raise NotRunHere(reason)
    if errors or not metrics_found:
        app_errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        why = errors[0] if errors else (
            f"no kernel matching regex:{kernel_regex} was profiled (exit {proc.returncode})"
            + (f": {app_errors[-1]}" if app_errors else ""))
        raise RuntimeError(why)
    result = {"metrics": metrics_found, "kernel": kernel, "flops": None, "ratio": None,
              "device": None}
    try:
        run = json.loads(report.read_text(encoding="utf-8"))
        row = run["rows"][0]
        result.update(flops=2.0 * row["m"] * row["n"] * row["k"], ratio=row.get("ratio"),
                      device=run.get("device", {}).get("name"))
    except (OSError, ValueError, KeyError, IndexError):
        pass  # the counters stand without the chapter's own report
    return result


def parse_args(argv):
    parser = ArgumentParser(
        description=__doc__, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapters", nargs="+", metavar="CHAPTER",
                        help="chapters to profile (03, 03_thread_tiling, thread_tiling); "
                             "default: all that are built")
    parser.add_argument("--size", type=int, default=4096, help="M = N = K (default: 4096)")
    parser.add_argument("--m", type=int, help="M (with --n and --k, instead of --size)")
    parser.add_argument("--n", type=int, help="N")
    parser.add_argument("--k", type=int, help="K")
    parser.add_argument("--set", default="default", choices=sorted(SETS),
                        help="counter set (default: %(default)s; see --list-sets)")
    parser.add_argument("--metrics", help="comma-separated ncu metric names, instead of --set")
    parser.add_argument("--list-sets", action="store_true", help="print the counter sets, exit")
    parser.add_argument("--markdown", type=Path, help="also write the table as markdown")
    parser.add_argument("--csv", type=Path, help="also write the table as CSV (raw numbers)")
    parser.add_argument("--kernel-regex", default="(^|::)sgemm_",
                        help="which kernel to profile: the chapters name theirs sgemm_*, "
                             "possibly inside a namespace (default: %(default)s)")
    parser.add_argument("--ncu", default="ncu", help="the ncu executable (default: from PATH)")
    parser.add_argument("--build-dir", type=Path, default=REPO / "build",
                        help="CMake build folder (default: build/)")
    parser.add_argument("--no-build", action="store_true", help="do not build first")
    args = parser.parse_args(argv)
    if any(v is not None for v in (args.m, args.n, args.k)):
        if None in (args.m, args.n, args.k):
            parser.error("--m, --n and --k go together")
        if min(args.m, args.n, args.k) < 1:
            parser.error("--m, --n and --k must be positive")
    elif args.size < 1:
        parser.error("--size must be positive")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.list_sets:
        for name, metrics in SETS.items():
            print(f"{name}:")
            print("\n".join(f"  {m}" for m in metrics))
            extras = [m for m, _ in HOPPER_EXTRAS.get(name, [])]
            if extras:
                print("  and on compute capability 9.0:")
                print("\n".join(f"  {m}" for m in extras))
        return 0
    try:
        names = select_chapters(args.chapters)
        metrics = metrics_for(args.set, compute_capability()) if not args.metrics else [
            m.strip() for m in args.metrics.split(",") if m.strip()]
    except ValueError as error:
        log(f"error: {error}")
        return EXIT_USAGE
    ncu = find_ncu(args.ncu)
    if ncu is None:
        log("error: ncu (Nsight Compute CLI) not found: install Nsight Compute or pass --ncu PATH")
        return EXIT_RUNTIME
    if not args.no_build:
        reason = gpu_status()  # before a build of a minute that could not be profiled
        if reason:
            log(f"error: no CUDA GPU is present ({reason}): profiling needs one")
            return EXIT_RUNTIME
        build(args.build_dir)
    bins = binaries(args.build_dir, names)
    if not bins:
        log(f"error: no chapter binary found in {args.build_dir / 'bin'}")
        return EXIT_USAGE

    if args.m is not None:
        shape_args = ["--m", str(args.m), "--n", str(args.n), "--k", str(args.k)]
        shape = f"M = {args.m}, N = {args.n}, K = {args.k}"
    else:
        shape_args, shape = ["--size", str(args.size)], f"M = N = K = {args.size}"
    results, not_run, failed = {}, [], False
    with tempfile.TemporaryDirectory(prefix="sgemm-profile-") as tmp:
        for i, (name, binary) in enumerate(bins.items(), 1):
            log(f"[{i}/{len(bins)}] ncu {name} ({shape}, {len(metrics)} metrics)")
            try:
                results[name] = profile_chapter(ncu, binary, shape_args, metrics,
                                                args.kernel_regex, tmp)
            except NotRunHere as reason:
                log(f"[{i}/{len(bins)}] {not_run_lines([(name, reason)])[0]}")
                not_run.append((name, str(reason)))
            except RuntimeError as error:
                log(f"[{i}/{len(bins)}] {name}: {error}")
                if "no CUDA GPU" in str(error):
                    return EXIT_RUNTIME  # the same for every chapter: say it once
                failed = True
    if not results:
        if not_run and not failed:
            log("error: no chosen chapter can use this GPU: "
                + "; ".join(f"{name} {reason}" for name, reason in not_run))
        return EXIT_RUNTIME
    chapters = list(results)
    table = build_table(results, metrics, every_stall=bool(args.metrics))
    full_table = build_table(results, metrics, every_stall=True)
    print("\n".join([render_text(table, chapters)] + not_run_lines(not_run)))

    template = ncu_command("ncu", ["<metrics>"], args.kernel_regex, "<log.csv>")[:-2]
    template += ["build/bin/<chapter>", "--verify-only"] + shape_args
    context = {
        "shape": shape, "ncu_version": ncu_version(ncu),
        "gpu": next((r["device"] for r in results.values() if r["device"]), "unknown GPU"),
        "date": datetime.date.today().isoformat(),
        "command": " ".join(p if "<" in p else shlex.quote(p) for p in template),
    }
    if args.markdown:
        args.markdown.write_text(render_markdown(table, chapters, context, not_run),
                                 encoding="utf-8")
        log(f"wrote {args.markdown}")
    if args.csv:
        write_csv(args.csv, full_table, chapters)
        log(f"wrote {args.csv}")
    return EXIT_RUNTIME if failed else 0


if __name__ == "__main__":
    sys.exit(main())
