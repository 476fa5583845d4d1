#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for Nsight Compute's ncu, for host tests of scripts/profile.py: MADE-UP COUNTERS.

It takes the options profile.py passes, runs the application that follows them, and writes
--csv details-page rows (with the tool's '==PROF==' chatter) to --log-file.
FAKE_NCU_ERROR=1 makes it fail the way ncu does without counter permissions.
"""

import os
import subprocess
import sys
import zlib
from pathlib import Path

OPTIONS_WITH_VALUE = {"--print-units", "--clock-control", "--kernel-name", "--launch-count",
                      "--metrics", "--log-file"}
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
          '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
          '"Metric Value"')


def made_up(metric, chapter):
    """A deterministic number per (metric, chapter), with the unit ncu would print."""
    seed = zlib.crc32(f"{metric}/{chapter}".encode()) % 1000
    if metric.endswith(".ratio"):
        return "", f"{seed / 100:.2f}"
    if "pct" in metric:
        return "%", f"{seed / 10:.2f}"
    if metric == "gpu__time_duration.sum":
        return "nsecond", f"{1_000_000 + seed * 1000:,}"
    if metric.startswith("dram__bytes"):
        return "byte", f"{(seed + 1) * 1_048_576:,}"
    if metric == "launch__registers_per_thread":
        return "register/thread", str(32 + seed % 96)
    return "", f"{(seed + 1) * 10_000:,}"


def main():
    args, options = sys.argv[1:], {}
    if args == ["--version"]:
        print("NVIDIA (R) Nsight Compute Command Line Profiler (fake)\nVersion fake")
        return 0
    while args and args[0].startswith("--"):
        option = args.pop(0)
        options[option] = args.pop(0) if option in OPTIONS_WITH_VALUE else True
    if not args:
        print("==ERROR== no application to profile", file=sys.stderr)
        return 1
    out = ["==PROF== Connected to process 4242 (fake)"]
    if os.environ.get("FAKE_NCU_ERROR"):
        out.append("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
                   "NVIDIA GPU Performance Counters on the target device 0.")
    app = subprocess.run(args, capture_output=True, text=True)
    chapter = Path(args[0]).name
    if app.returncode not in (0, 1):  # the application failed before its kernel ran
        out.append("==WARNING== No kernels were profiled.")
    elif not os.environ.get("FAKE_NCU_ERROR"):
        out.append(HEADER)
        for launch in ("0", "1"):  # a second launch: the parser must keep only the first
            for metric in options.get("--metrics", "").split(","):
                unit, value = made_up(metric, chapter + launch)
                out.append(f'"{launch}","4242","{chapter}","localhost","sgemm_fake","1","7",'
                           f'"(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics",'
                           f'"{metric}","{unit}","{value}"')
    text = "\n".join(out) + "\n"
    if "--log-file" in options:
        Path(options["--log-file"]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    sys.stdout.write(app.stdout)  # the application's own output passes through, as with ncu
    sys.stderr.write(app.stderr)
    return app.returncode


if __name__ == "__main__":
    sys.exit(main())
