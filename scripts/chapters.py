# SPDX-License-Identifier: MIT
"""The chapter list the scripts share, read from the sgemm_add_chapter(...) lines of the top-level
CMakeLists.txt, so that adding a chapter is one line there. tour.py, profile.py, plot.py, tune.py
and exercises.py import this module (the list, a chapter's precision contract, the build, the
binaries, the GPU check, the line of a chapter that cannot use the GPU); run alone, it prints the
chapters in reading order, one per line."""

import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Exit codes, the same as the chapter binaries' (common/exit_codes.h).
EXIT_PASS, EXIT_WRONG, EXIT_USAGE, EXIT_RUNTIME = 0, 1, 2, 3

# A chapter is a line that starts with sgemm_add_chapter(<folder>; commented-out lines start with
# '#' and do not match.
CHAPTER_LINE = re.compile(r"^[ \t]*sgemm_add_chapter\([ \t]*([A-Za-z0-9_]+)", re.MULTILINE)


def read_chapters(cmakelists):
    """The chapter folders of a CMakeLists.txt, in the order of their sgemm_add_chapter lines."""
    chapters = []
    for name in CHAPTER_LINE.findall(Path(cmakelists).read_text(encoding="utf-8")):
        if name not in chapters:
            chapters.append(name)
    return chapters


def log(message):
    print(message, file=sys.stderr, flush=True)


def _repository_chapters():
    cmakelists = REPO / "CMakeLists.txt"
    try:
        chapters = read_chapters(cmakelists)
    except OSError as error:
        log(f"error: cannot read the chapter list: {error}")
        raise SystemExit(EXIT_RUNTIME) from None
    if not chapters:
        log(f"error: no sgemm_add_chapter(...) line in {cmakelists}")
        raise SystemExit(EXIT_RUNTIME)
    return chapters


# The ladder, in reading order. A chapter that has not been built simply has no binary.
CHAPTERS = _repository_chapters()


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the chapter binaries' convention for bad usage: one `error:` line, exit 2
    (argparse's own prints the usage block first and names the script)."""

    def error(self, message):
        log(f"error: {message}")
        raise SystemExit(EXIT_USAGE)


def gpu_slug(name):
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3' (the folder under docs/results/)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unknown-gpu"


SIZE_RULE = "a size is a whole number >= 1; several are comma-separated, e.g. 1024,4096"


def parse_int_list(text):
    """'1024,2048' -> [1024, 2048]; for argparse's type=, whose message names the option."""
    values = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise argparse.ArgumentTypeError(f"empty item in {text!r} ({SIZE_RULE})")
        try:
            value = int(item)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not a whole number ({SIZE_RULE})") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{value} is not >= 1 ({SIZE_RULE})")
        values.append(value)
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


# A chapter source says its precision contract in its spec (chapter.precision =
# sgemm::Precision::kTf32); without that line the harness's default, FP32, holds.
TF32_CONTRACT = re.compile(r"\bPrecision::kTf32\b")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def chapter_source(chapter, root=REPO):
    """<folder>/<name without the number>.cu, the rule of sgemm_add_chapter()."""
    return Path(root) / chapter / (re.sub(r"^[0-9]+_", "", chapter) + ".cu")


def chapter_precision(chapter, root=REPO):
    """The precision contract a chapter's source declares, "TF32" or "FP32" (comments ignored).
    For choices made before anything runs; a run's own report says it too (its rows' precision)."""
    text = COMMENT.sub("", chapter_source(chapter, root).read_text(encoding="utf-8"))
    return "TF32" if TF32_CONTRACT.search(text) else "FP32"


# The one line a chapter binary prints, exit code 3, on a GPU it cannot use (Chapter::unsupported
# in common/harness.h): "error: 10_wgmma needs compute capability 9.0 (...); device 0 is ...".
UNSUPPORTED_LINE = re.compile(r"^error: ([0-9]+_[A-Za-z0-9_.]+) (needs .+)$", re.MULTILINE)


def unsupported_reason(stderr):
    """What the chapter needs and this GPU lacks ("needs compute capability 9.0 ..."), when a
    binary refused the GPU for that reason; None for every other failure."""
    match = UNSUPPORTED_LINE.search(stderr or "")
    return match.group(2).strip() if match else None


def binaries(build_dir, names):
    """{chapter: path} for the selected chapters whose binary exists."""
    found = {}
    for name in names:
        path = Path(build_dir) / "bin" / name
        if path.is_file() and os.access(path, os.X_OK):
            found[name] = path
    return found


def pyplot(script):
    """matplotlib's pyplot on the file-only Agg backend, or None after one `error:` line saying that
    `script` needs matplotlib (the caller then exits with EXIT_USAGE)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log(f"error: matplotlib is not installed (pip install matplotlib): {script} needs it")
        return None
    return plt


def configure(build_dir, cache_args=()):
    """Configure build_dir once (Release; Ninja when available; plus cache_args such as
    -DSGEMM_TUNING=ON); an existing configuration is kept as it is."""
    build_dir = Path(build_dir)
    if (build_dir / "CMakeCache.txt").exists():
        return
    command = ["cmake", "-S", str(REPO), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
               *cache_args]
    if shutil.which("ninja"):
        command += ["-G", "Ninja"]
    prefix = os.environ.get("CMAKE_PREFIX_PATH")
    if prefix:  # the environment uses ':' between entries, a CMake list uses ';'
        command.append("-DCMAKE_PREFIX_PATH=" + prefix.replace(os.pathsep, ";"))
    run_build_step(command)


def build(build_dir, cache_args=(), targets=None):
    """Configure once (see configure()), then always run the incremental build: of everything, or
    of the given targets only."""
    configure(build_dir, cache_args)
    command = ["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 1)]
    if targets:
        command += ["--target", *sorted(targets)]
    run_build_step(command)


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
    """(commit, dirty) of the working tree, or (None, None) outside a git checkout.

    The scripts' own results (docs/results/) do not make the tree dirty: a tuning run after a tour
    in the same clone measures the code of the commit, whatever the tour wrote."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                text=True, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                 ".", ":(exclude)docs/results"],
                                cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return commit, bool(status.strip())


# CUDA driver API result codes (cuda.h) that need their own words.
CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_NO_DEVICE = 34, 100


def _driver_names():
    if sys.platform.startswith("linux"):
        return ["libcuda.so.1", "libcuda.so"]
    if sys.platform == "win32":
        return ["nvcuda.dll"]
    return []


def _load_driver(names):
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


# cuDeviceGetAttribute's CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR and _MINOR (cuda.h).
CU_ATTRIBUTE_CC_MAJOR, CU_ATTRIBUTE_CC_MINOR = 75, 76


def compute_capability(device=0):
    """(major, minor) of a CUDA device as the driver reports it (CUDA_VISIBLE_DEVICES applies),
    or None when there is no driver, no such GPU, or the driver fails. Needs no build."""
    cuda = _load_driver(_driver_names())
    if cuda is None or cuda.cuInit(0) != 0:
        return None
    handle, major, minor = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
    if cuda.cuDeviceGet(ctypes.byref(handle), device) != 0:
        return None
    if (cuda.cuDeviceGetAttribute(ctypes.byref(major), CU_ATTRIBUTE_CC_MAJOR, handle) != 0
            or cuda.cuDeviceGetAttribute(ctypes.byref(minor), CU_ATTRIBUTE_CC_MINOR, handle) != 0):
        return None
    return major.value, minor.value


def gpu_status():
    """None when the CUDA driver reports a GPU, else why not, in a few words.

    Asks the driver itself (libcuda, which every CUDA program loads) through ctypes, so it needs
    no build: a script can say "no GPU" before spending a minute compiling. A driver too old for
    the toolkit passes here; the chapter binaries then say so themselves.
    """
    names = _driver_names()
    if not names:
        return None  # no CUDA driver to ask on this platform: let the build and binaries decide
    cuda = _load_driver(names)
    if cuda is None:
        return f"no NVIDIA driver: {names[0]} not found"
    rc = cuda.cuInit(0)
    if rc == CUDA_ERROR_NO_DEVICE:
        hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
        return ("the NVIDIA driver finds no GPU"
                + (f" (CUDA_VISIBLE_DEVICES={hidden!r})" if hidden is not None else ""))
    if rc == CUDA_ERROR_STUB_LIBRARY:
        return "no NVIDIA driver: only the CUDA toolkit's stub libcuda is installed"
    if rc != 0:
        message = ctypes.c_char_p()
        cuda.cuGetErrorName(rc, ctypes.byref(message))
        return f"the NVIDIA driver failed to start (cuInit: {(message.value or b'?').decode()})"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return "the NVIDIA driver finds no GPU"
    return None


def shown_path(path):
    """A path as the user would type it: relative to the working folder when inside it."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(path)


def host_test_hint(build_dir):
    """The command that runs the host tests (they need no GPU) in this build folder."""
    folder = shown_path(build_dir)
    if (Path(build_dir) / "CMakeCache.txt").exists():
        return f"ctest --test-dir {folder} -L host"
    return (f"cmake -S {shown_path(REPO)} -B {folder} && cmake --build {folder} && "
            f"ctest --test-dir {folder} -L host")


def main(argv=None):
    parser = ArgumentParser(
        prog="chapters.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"chapters ({len(CHAPTERS)}, from {REPO / 'CMakeLists.txt'}):\n  "
               + "\n  ".join(CHAPTERS)
               + "\n\nexit codes of the scripts and the chapter binaries (common/exit_codes.h):\n"
                 "  0 pass, 1 wrong result, 2 bad usage, 3 build or CUDA/runtime failure")
    parser.parse_args(argv)
    print("\n".join(CHAPTERS))
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
