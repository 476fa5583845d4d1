#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of scripts/exercises.py and of the committed exercises: every exercises.json is
well formed, names only binaries the build makes, and every patch still applies to its chapter;
the script's listing, its bad-input lines, and runs against stand-in binaries (no GPU)."""

import contextlib
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS, environment

import exercises  # noqa: E402  (helpers puts scripts/ on the path)
from chapters import CHAPTERS  # noqa: E402

CMAKELISTS = (REPO / "CMakeLists.txt").read_text(encoding="utf-8")


def all_exercises():
    return [(c, e) for c in CHAPTERS for e in exercises.load_exercises(c)]


def patch_check_command(patch):
    """A command that checks, without writing, that a patch applies to the tree exactly."""
    if shutil.which("patch"):
        return ["patch", "--dry-run", "-p1", "--fuzz=0", "-s", "-i", str(patch)]
    if shutil.which("git") and (REPO / ".git").exists():
        return ["git", "apply", "--check", str(patch)]
    return None


class CommittedExercisesTest(unittest.TestCase):
    def test_chapters_have_exercises(self):
        chapters = {c for c, _ in all_exercises()}
        self.assertIn("00_naive", chapters)
        self.assertGreater(len(all_exercises()), 10)

    def test_every_binary_is_one_the_build_makes(self):
        for chapter, exercise in all_exercises():
            for command in exercise["commands"]:
                for target in exercises.targets_of(command):
                    where = f"{chapter} exercise {exercise['number']}: {target}"
                    suffix = target[len(chapter):]
                    if suffix.startswith(".exercise_"):
                        patch = REPO / chapter / "exercises" / (suffix[10:] + ".patch")
                        self.assertTrue(patch.is_file(), f"{where}: no {patch.name}")
                    elif suffix.startswith(".tile_"):
                        tile = '"' + suffix[6:].replace("_", ",") + '"'
                        self.assertIn(tile, CMAKELISTS, f"{where}: not a TILES entry")
                    elif suffix.startswith(".variant_"):
                        variant = '"' + suffix[9:] + ":"
                        self.assertIn(variant, CMAKELISTS, f"{where}: not a VARIANTS entry")
                    else:
                        self.assertEqual(suffix, "", f"{where}: unknown kind of binary")

    def test_every_patch_is_used_and_applies(self):
        used = {(c, t) for c, e in all_exercises() for cmd in e["commands"]
                for t in exercises.targets_of(cmd)}
        patches = sorted(REPO.glob("[0-9][0-9]_*/exercises/*.patch"))
        self.assertTrue(patches)
        for patch in patches:
            chapter = patch.parent.parent.name
            self.assertIn((chapter, f"{chapter}.exercise_{patch.stem}"), used,
                          f"{patch.relative_to(REPO)} is run by no command")
            check = patch_check_command(patch)
            if check is None:
                self.skipTest("neither patch nor git is available")
            proc = subprocess.run(check, cwd=REPO, capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0,
                             f"{patch.relative_to(REPO)} no longer applies:\n"
                             f"{proc.stdout}{proc.stderr}")


def fake_binary(path, rc, text, stream="stdout"):
    path.write_text(f"#!{sys.executable}\nimport sys\nprint({text!r}, file=sys.{stream})\n"
                    f"sys.exit({rc})\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


class ScriptTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.build = Path(self.tmp.name) / "build"
        (self.build / "bin").mkdir(parents=True)

    def tearDown(self):
        self.tmp.cleanup()

    def script(self, *options):
        return subprocess.run([sys.executable, str(SCRIPTS / "exercises.py"), *options],
                              capture_output=True, text=True, env=environment())

    def test_list_prints_every_command(self):
        proc = self.script("--list", "--chapters", "00", "--build-dir", str(self.build))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("00_naive exercise 3:", proc.stdout)
        self.assertIn("bin/00_naive.exercise_3 --size 256 --beta 0", proc.stdout)

    def test_bad_input_is_one_error_line_and_exit_2(self):
        for options in (["--chapters", "99"], ["--exercises", "x"], ["--chapters", "00",
                                                                      "--exercises", "77"]):
            proc = self.script("--list", *options)
            self.assertEqual(proc.returncode, 2, options)
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
            self.assertTrue(proc.stderr.startswith("error: "), proc.stderr)

    def run_00_exercise_3(self, exercise_rc):
        # Exercise 3 of chapter 00 expects the patched binary to fail (exit 1) and the chapter
        # to pass: stand-ins with chosen exit codes play both.
        fake_binary(self.build / "bin" / "00_naive.exercise_3", exercise_rc, "result FAIL")
        fake_binary(self.build / "bin" / "00_naive", 0, "result PASS")
        logs = Path(self.tmp.name) / "logs"
        proc = self.script("--chapters", "00", "--exercises", "3", "--no-build", "--build-dir",
                           str(self.build), "--log-dir", str(logs))
        return proc, logs

    def test_expected_exit_codes_pass(self):
        proc, logs = self.run_00_exercise_3(1)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("== 00_naive exercise 3:", proc.stdout)
        self.assertIn("  result FAIL\n-> exit 1 (expected)", proc.stdout)
        self.assertIn("result PASS", (logs / "00_naive.exercise_3.2.log").read_text())

    def test_an_unexpected_exit_code_fails_the_run(self):
        proc, _ = self.run_00_exercise_3(0)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("-> exit 0, expected 1", proc.stdout)

    def test_a_binary_that_cannot_use_the_gpu_is_not_run_and_fails_nothing(self):
        line = ("error: 00_naive needs compute capability 9.0 (Hopper: wgmma, sm_90a); device 0 "
                "is Fixture GPU, compute capability 0.0")
        fake_binary(self.build / "bin" / "00_naive.exercise_3", 3, line, "stderr")
        fake_binary(self.build / "bin" / "00_naive", 0, "result PASS")
        options = ["--chapters", "00", "--exercises", "3", "--no-build", "--build-dir",
                   str(self.build)]
        proc = self.script(*options)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("-> exit 3: not run on this GPU: needs compute capability 9.0", proc.stdout)
        self.assertIn("-> exit 0 (expected)", proc.stdout)
        self.assertIn("note: 1 command(s) not run", proc.stderr)
        # Nothing could run at all: exit 3, one error line.
        fake_binary(self.build / "bin" / "00_naive", 3, line, "stderr")
        proc = self.script(*options)
        self.assertEqual(proc.returncode, 3)
        self.assertEqual([x for x in proc.stderr.splitlines() if x.startswith("error:")],
                         ["error: no selected command could use this GPU"])

    def test_build_only_builds_and_runs_nothing(self):
        built = []
        saved = exercises.configure_and_build
        exercises.configure_and_build = lambda build_dir, targets: built.append(targets)
        try:
            with contextlib.redirect_stdout(io.StringIO()) as stdout, \
                    contextlib.redirect_stderr(io.StringIO()):
                code = exercises.main(["--chapters", "00", "--exercises", "3", "--build-only",
                                       "--build-dir", str(self.build)])
        finally:
            exercises.configure_and_build = saved
        self.assertEqual(code, 0)
        self.assertEqual(built, [{"00_naive", "00_naive.exercise_3"}])
        self.assertEqual(stdout.getvalue(), "")
        proc = self.script("--chapters", "00", "--build-only", "--no-build")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--no-build and --build-only", proc.stderr)

    def test_a_missing_binary_is_a_runtime_error(self):
        proc = self.script("--chapters", "00", "--exercises", "3", "--no-build", "--build-dir",
                           str(self.build))
        self.assertEqual(proc.returncode, 3)
        self.assertIn("not found", proc.stdout)

    def test_output_filters(self):
        output = "a LDS.128 x\nb LDS R1\nl1tex__x 5\nc LDS.128 y\n"
        self.assertEqual(exercises.filtered(output, {"count": [r"\bLDS\.128\b", r"\bLDS\s"]}),
                         [r"\bLDS\.128\b: 2 lines", r"\bLDS\s: 1 lines"])
        self.assertEqual(exercises.filtered(output, {"grep": "__"}), ["l1tex__x 5"])
        self.assertEqual(len(exercises.filtered(output, {})), 4)


if __name__ == "__main__":
    os.chdir(REPO)
    unittest.main()
