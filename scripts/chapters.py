# SPDX-License-Identifier: MIT
"""What tour.py, profile.py and plot.py share: the chapter list, the build, the binaries."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The ladder, in reading order. A chapter that has not been written yet simply has no binary.
CHAPTERS = [
    "00_naive",
    "01_coalescing",
    "02_smem_tiling",
    "03_thread_tiling",
    "04_vectorized",
    "05_bank_conflict",
    "06_double_buffer",
]

# Exit codes, the same as the chapter binaries' (common/harness.h).
EXIT_PASS, EXIT_WRONG, EXIT_USAGE, EXIT_RUNTIME = 0, 1, 2, 3


def log(message):
    print(message, file=sys.stderr, flush=True)


def gpu_slug(name):
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3' (the folder under docs/results/)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unknown-gpu"


def parse_int_list(text):
    """'1024,2048' -> [1024, 2048]; for argparse's type=."""
    try:
        values = [int(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise ValueError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise ValueError(f"expected positive integers, got {text!r}")
    return values


def select_chapters(wanted):
    """Chapter names from a list of names, numbers ('03') or names without the number."""
    if not wanted:
        return list(CHAPTERS)
    chosen = []
    for item in wanted:
        matches = [c for c in CHAPTERS if item in (c, c[:2], c[3:])]
        if not matches:
            raise ValueError(f"unknown chapter {item!r} (known: {', '.join(CHAPTERS)})")
        chosen += [c for c in matches if c not in chosen]
    return [c for c in CHAPTERS if c in chosen]  # always in ladder order


def binaries(build_dir, names):
    """{chapter: path} for the selected chapters whose binary exists."""
    found = {}
    for name in names:
        path = Path(build_dir) / "bin" / name
        if path.is_file() and os.access(path, os.X_OK):
            found[name] = path
    return found


def build(build_dir, cache_args=()):
    """Configure once (Release; Ninja when available; plus cache_args such as -DSGEMM_TUNING=ON),
    then always run the incremental build."""
    build_dir = Path(build_dir)
    if not (build_dir / "CMakeCache.txt").exists():
        configure = ["cmake", "-S", str(REPO), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     *cache_args]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        prefix = os.environ.get("CMAKE_PREFIX_PATH")
        if prefix:  # the environment uses ':' between entries, a CMake list uses ';'
            configure.append("-DCMAKE_PREFIX_PATH=" + prefix.replace(os.pathsep, ";"))
        run_build_step(configure)
    run_build_step(["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 1)])


def run_build_step(command):
    """Run one build command; a failure ends the script with exit code 3."""
    log("+ " + " ".join(command))
    if shutil.which(command[0]) is None:
        log(f"error: {command[0]} not found on PATH: the build needs it")
        raise SystemExit(EXIT_RUNTIME)
    # The build's own output goes to stderr so that stdout keeps only the results.
    if subprocess.run(command, cwd=REPO, stdout=sys.stderr).returncode != 0:
        log(f"error: build step failed: {' '.join(command)}")
        raise SystemExit(EXIT_RUNTIME)


def git_commit():
    """(commit, dirty) of the working tree, or (None, None) outside a git checkout."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                text=True, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return commit, bool(status.strip())
