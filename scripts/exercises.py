#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""List, build and run the chapters' exercises: the commands behind the READMEs' answers.

Each chapter's exercises are described in <chapter>/exercises/exercises.json: for every exercise
its number, a title and the commands that answer it. A command names the binaries it runs as
{bin}/<target>: the chapter itself (bin/03_thread_tiling), a tuning candidate or variant
(bin/03_thread_tiling.tile_64_128_8_8_8, bin/04_vectorized.variant_scalar: -DSGEMM_TUNING=ON) or
an exercise, the chapter's source with <chapter>/exercises/<n>.patch applied
(bin/03_thread_tiling.exercise_<n>, -DSGEMM_EXERCISES=ON, cmake/Exercises.cmake). A command may
also carry
  "expect": the exit code it should end with, or a list of them (default 0);
  "grep":   a regular expression: print only the output lines that match (ncu's counter lines);
  "count":  regular expressions: print how many output lines match each (SASS instructions).

The script configures its build folder once (-DSGEMM_EXERCISES=ON -DSGEMM_TUNING=ON
-DBUILD_TESTING=OFF), builds only the targets the selected commands name, then runs each command
and prints it, its (filtered) output and its exit code. A command whose binary cannot use this GPU
(chapters 10 on need compute capability 9.0: one line "error: <chapter> needs ...", exit 3) is
reported as not run on this GPU, with that reason; it fails nothing.
"""

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from chapters import (EXIT_PASS, EXIT_RUNTIME, EXIT_USAGE, EXIT_WRONG, REPO, ArgumentParser, log,
                      build, select_chapters, unsupported_reason)

EXAMPLES = """\
examples:
  python3 scripts/exercises.py --list                         # every exercise and its commands
  python3 scripts/exercises.py --chapters 02                  # build and run chapter 02's
  python3 scripts/exercises.py --chapters 05 --exercises 3 --log-dir /tmp/ex
  python3 scripts/exercises.py --chapters 10 --build-only     # build now, run later with
  python3 scripts/exercises.py --chapters 10 --no-build       # --no-build (two shorter steps)

exit codes: 0 every command that could run ended as expected, 1 some command did not, 2 bad usage,
3 the build failed, a tool is missing, the GPU is unusable, or no command could use this GPU
"""

BIN_TOKEN = re.compile(r"\{bin\}/([A-Za-z0-9_.]+)")


def manifest_path(chapter):
    return REPO / chapter / "exercises" / "exercises.json"


def load_exercises(chapter):
    """The chapter's exercises as a list of dicts, checked; [] when it has no exercises file.
    Raises ValueError naming the file for anything malformed."""
    path = manifest_path(chapter)
    if not path.exists():
        return []
    where = path.relative_to(REPO)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{where}: {error}") from None
    exercises = document.get("exercises") if isinstance(document, dict) else None
    if not isinstance(exercises, list) or not exercises:
        raise ValueError(f"{where}: expected an object with a non-empty list 'exercises'")
    for exercise in exercises:
        if not isinstance(exercise.get("number"), int) or not exercise.get("commands"):
            raise ValueError(f"{where}: every exercise needs a 'number' and 'commands'")
        for command in exercise["commands"]:
            if not isinstance(command, dict) or not isinstance(command.get("run"), str):
                raise ValueError(f"{where}: exercise {exercise['number']}: a command is an "
                                 "object with a 'run' string")
            for target in BIN_TOKEN.findall(command["run"]):
                if not target.startswith(chapter):
                    raise ValueError(f"{where}: exercise {exercise['number']}: {target} is not "
                                     f"a binary of {chapter}")
    return exercises


def targets_of(command):
    """The CMake targets a command runs, from its {bin}/<target> tokens."""
    return BIN_TOKEN.findall(command["run"])


def expected_codes(command):
    expect = command.get("expect", EXIT_PASS)
    return expect if isinstance(expect, list) else [expect]


def argv_of(command, bin_dir):
    return [BIN_TOKEN.sub(lambda m: str(Path(bin_dir) / m.group(1)), word)
            for word in shlex.split(command["run"])]


def shown(command, bin_dir):
    """The command as a reader would type it from the repository root."""
    try:
        prefix = str(Path(bin_dir).resolve().relative_to(REPO))
    except ValueError:
        prefix = str(bin_dir)
    return BIN_TOKEN.sub(lambda m: f"{prefix}/{m.group(1)}", command["run"])


def filtered(output, command):
    """The lines of output to print: all, those matching 'grep', or a count per 'count' pattern."""
    lines = output.splitlines()
    if "count" in command:
        return [f"{pattern}: {sum(1 for line in lines if re.search(pattern, line))} lines"
                for pattern in command["count"]]
    if "grep" in command:
        return [line for line in lines if re.search(command["grep"], line)]
    return lines


def run_command(command, bin_dir, timeout, log_file=None):
    """Run one command; returns (exit code or None when it could not start, printed lines, what
    the binary needs and this GPU lacks or None)."""
    argv = argv_of(command, bin_dir)
    if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
        return None, [f"error: {argv[0]} not found (build it, or put it on PATH)"], None
    try:
        proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, [f"error: still running after {timeout} s, stopped"], None
    output = proc.stdout + proc.stderr
    if log_file is not None:
        Path(log_file).write_text(f"$ {shown(command, bin_dir)}\n{output}exit {proc.returncode}\n")
    reason = unsupported_reason(proc.stderr) if proc.returncode == EXIT_RUNTIME else None
    return proc.returncode, filtered(output, command), reason


def configure_and_build(build_dir, targets):
    """The exercise build: every exercise patch and tuning candidate can be built in it."""
    build(build_dir, ["-DSGEMM_EXERCISES=ON", "-DSGEMM_TUNING=ON", "-DBUILD_TESTING=OFF"], targets)


def main(argv=None):
    parser = ArgumentParser(description=__doc__, epilog=EXAMPLES,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapters", nargs="+",
                        help="chapters (default: every one with exercises)")
    parser.add_argument("--exercises", nargs="+", type=int, metavar="N",
                        help="only these exercise numbers (of each selected chapter)")
    parser.add_argument("--list", action="store_true", help="print the exercises and commands only")
    parser.add_argument("--build-dir", default=str(REPO / "build-exercises"))
    parser.add_argument("--no-build", action="store_true", help="use the binaries as they are")
    parser.add_argument("--build-only", action="store_true",
                        help="build what the selected commands run, run nothing")
    parser.add_argument("--log-dir", help="also write each command's whole output to a file here")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds one command may run (default 600)")
    args = parser.parse_args(argv)
    try:
        chapters = select_chapters(args.chapters)
        selected = [(c, e) for c in chapters for e in load_exercises(c)
                    if not args.exercises or e["number"] in args.exercises]
    except ValueError as error:
        log(f"error: {error}")
        return EXIT_USAGE
    if not selected:
        log("error: no exercise matches --chapters/--exercises")
        return EXIT_USAGE

    bin_dir = Path(args.build_dir) / "bin"
    if args.no_build and args.build_only:
        log("error: --no-build and --build-only exclude each other")
        return EXIT_USAGE
    if args.list:
        for chapter, exercise in selected:
            print(f"{chapter} exercise {exercise['number']}: {exercise.get('title', '')}")
            for command in exercise["commands"]:
                print(f"  $ {shown(command, bin_dir)}")
        return EXIT_PASS

    if not args.no_build:
        configure_and_build(args.build_dir,
                            {t for _, e in selected for c in e["commands"] for t in targets_of(c)})
        if args.build_only:
            log(f"built in {args.build_dir}; run with the same options and --no-build")
            return EXIT_PASS
    if args.log_dir:
        Path(args.log_dir).mkdir(parents=True, exist_ok=True)

    failed = missing = not_run = ran = 0
    for chapter, exercise in selected:
        print(f"== {chapter} exercise {exercise['number']}: {exercise.get('title', '')}",
              flush=True)
        for i, command in enumerate(exercise["commands"], 1):
            print(f"$ {shown(command, bin_dir)}", flush=True)
            log_file = (Path(args.log_dir) / f"{chapter}.exercise_{exercise['number']}.{i}.log"
                        if args.log_dir else None)
            rc, lines, reason = run_command(command, bin_dir, args.timeout, log_file)
            for line in lines:
                print(f"  {line}")
            if reason and rc not in expected_codes(command):
                not_run += 1
                print(f"-> exit {rc}: not run on this GPU: {reason}", flush=True)
                continue
            ran += 1
            if rc is None:
                missing += 1
            elif rc == EXIT_RUNTIME and rc not in expected_codes(command):
                missing += 1  # the chapter binaries' "no GPU / CUDA failure"
                print(f"-> exit {rc}: could not run")
            elif rc in expected_codes(command):
                print(f"-> exit {rc} (expected)")
            else:
                failed += 1
                print(f"-> exit {rc}, expected {' or '.join(map(str, expected_codes(command)))}")
            sys.stdout.flush()
    if not_run:
        log(f"note: {not_run} command(s) not run: their binaries cannot use this GPU")
    if not ran:
        log("error: no selected command could use this GPU")
        return EXIT_RUNTIME
    if missing:
        log(f"error: {missing} command(s) could not run")
        return EXIT_RUNTIME
    if failed:
        log(f"error: {failed} command(s) ended with an unexpected exit code")
        return EXIT_WRONG
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
