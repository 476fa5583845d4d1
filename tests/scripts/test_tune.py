#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of scripts/tune.py: its usage errors, and whole runs against a fake tuning build
(tests/scripts/fake_chapter.py linked under the names the tuning build gives; no GPU, made-up
numbers)."""

import contextlib
import io
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import HERE, SCRIPTS, environment, ScriptAssertions

import tune  # noqa: E402  (helpers puts scripts/ on the path)

VARIANTS = [("first", "SGEMM_A=0,SGEMM_B=1"), ("second", "SGEMM_TILE=1,2,3,SGEMM_B=1")]


def fake_tuning_build(root, chapter="06_double_buffer", before="05_bank_conflict"):
    """A build folder as -DSGEMM_TUNING=ON leaves it for a chapter: the manifest, its variants, one
    tile, the chapter and the chapter it starts from."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    (root / "tiles").mkdir()
    (root / "tiles" / f"{chapter}.variants").write_text(
        "".join(f"{name}\t{definitions}\n" for name, definitions in VARIANTS))
    names = [before, chapter, f"{chapter}.tile_64_128_16"]
    names += [f"{chapter}.variant_{name}" for name, _ in VARIANTS]
    for name in names:
        (bin_dir / name).symlink_to(HERE / "fake_chapter.py")
    return root


class TuneTest(ScriptAssertions, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def tune(self, *options, **env):
        return subprocess.run([sys.executable, str(SCRIPTS / "tune.py"), *options],
                              capture_output=True, text=True, env=environment(**env))

    def test_no_build_with_nothing_built_names_the_preset_and_folder(self):
        proc = self.tune("--chapters", "06", "--no-build", "--build-dir", str(self.root / "none"))
        self.assert_one_error_line(proc, "--preset tuning", "build-tuning/",
                                   str(self.root / "none"))

    def test_bad_input_is_one_error_line_and_exit_2(self):
        for options, word in [(["--sizes", "0"], "--sizes"), (["--sizes", "4096,,8"], "--sizes"),
                              (["--samples", "abc"], "--samples"), (["--chapters", "99"], "99"),
                              (["--only", "everything"], "--only"), (["--frobnicate"], "frob")]:
            with self.subTest(options=options):
                proc = self.tune(*options, "--no-build", "--build-dir", str(self.root))
                self.assert_one_error_line(proc, word)

    def test_help_describes_every_option(self):
        proc = self.tune("--help")
        self.assertEqual(proc.returncode, 0)
        text = " ".join(proc.stdout.split())
        self.assertIn("--build-dir BUILD_DIR the tuning build folder", text)
        self.assertIn("exit codes:", text)

    def test_writes_attribution_in_variant_order_and_the_tile_table(self):
        build = fake_tuning_build(self.root / "build")
        out = self.root / "out"
        proc = self.tune("--chapters", "06", "--sizes", "256,512", "--samples", "5", "--no-build",
                         "--build-dir", str(build), "--out-dir", str(out))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        text = (out / "tuning_06.md").read_text()
        self.assertIn("python3 scripts/tune.py --chapters 06 --sizes 256,512", text)
        steps = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ")]
        self.assertEqual(steps[:5], ["| step", "| previous chapter (05_bank_conflict)",
                                     "| variant `first`", "| variant `second`",
                                     "| this chapter (06_double_buffer)"])
        self.assertIn("`SGEMM_TILE=1,2,3,SGEMM_B=1`", text)
        self.assertIn("| 64,128,16 | 06_double_buffer.tile_64_128_16 |", text)
        self.assertIn("| default (SGEMM_TILE as in the source) | 06_double_buffer |", text)
        self.assertIn("256³ % of cuBLAS", text)
        self.assertIn("Fixture GPU", text)

    def test_a_tf32_chapter_starts_from_the_nearest_earlier_tf32_chapter(self):
        ladder = ["06_a", "07_b", "08_tc", "09_split", "10_next", "11_more", "12_split"]
        contract = {"08_tc": "TF32", "10_next": "TF32", "11_more": "TF32"}.get

        def baseline(chapter):
            return tune.baseline_chapter(chapter, ladder, lambda c: contract(c, "FP32"))
        self.assertIsNone(baseline("06_a"))
        self.assertEqual(baseline("07_b"), "06_a")
        self.assertEqual(baseline("08_tc"), "07_b")      # no TF32 before it: the previous one
        self.assertEqual(baseline("09_split"), "08_tc")  # an FP32 chapter: the previous one
        self.assertEqual(baseline("10_next"), "08_tc")   # past 09, the FP32 branch
        self.assertEqual(baseline("11_more"), "10_next")
        self.assertEqual(baseline("12_split"), "11_more")

    def test_the_attribution_names_a_starting_chapter_that_is_not_the_previous_one(self):
        tf32 = [c for c in tune.CHAPTERS if tune.chapter_precision(c) == "TF32"]
        if len(tf32) < 2 or tune.baseline_chapter(tf32[1]) == tune.CHAPTERS[
                tune.CHAPTERS.index(tf32[1]) - 1]:
            self.skipTest("no TF32 chapter whose starting chapter is not the one before it")
        build = fake_tuning_build(self.root / "build", tf32[1], tf32[0])
        proc = self.tune("--chapters", tf32[1], "--sizes", "64", "--no-build", "--build-dir",
                         str(build), "--no-save", "--only", "variants")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        steps = [line.split(" | ")[0] for line in proc.stdout.splitlines()
                 if line.startswith("| ")]
        self.assertEqual(steps[1], f"| the chapter it builds on ({tf32[0]})")
        self.assertEqual(steps[-1], f"| this chapter ({tf32[1]})")

    def test_a_binary_that_cannot_use_the_gpu_is_a_note_not_an_error(self):
        build = fake_tuning_build(self.root / "build")
        proc = self.tune("--chapters", "06", "--sizes", "64", "--no-build", "--build-dir",
                         str(build), "--no-save",
                         FAKE_CHAPTER_UNSUPPORTED="06_double_buffer.variant_second")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("note: 06_double_buffer.variant_second: not run on this GPU: needs compute "
                      "capability 9.0", proc.stderr)
        self.assertNotIn("variant `second`", proc.stdout)
        self.assertIn("variant `first`", proc.stdout)

    def test_build_only_builds_and_measures_nothing(self):
        built = []
        saved = tune.build_tuning
        tune.build_tuning = lambda build_dir, chapters, what: built.append((chapters, what))
        try:
            with contextlib.redirect_stderr(io.StringIO()) as stderr:
                code = tune.main(["--chapters", "06", "--build-only", "--build-dir",
                                  str(self.root / "b")])
        finally:
            tune.build_tuning = saved
        self.assertEqual(code, 0)
        self.assertEqual(built, [(["06_double_buffer"], "all")])
        self.assertIn("--no-build", stderr.getvalue())
        proc = self.tune("--chapters", "06", "--build-only", "--no-build")
        self.assert_one_error_line(proc, "--no-build and --build-only")

    def test_a_wrong_variant_exits_1_and_is_marked(self):
        build = fake_tuning_build(self.root / "build")
        proc = self.tune("--chapters", "06", "--sizes", "64", "--no-build", "--build-dir",
                         str(build), "--no-save",
                         FAKE_CHAPTER_FAIL="06_double_buffer.variant_second")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        row = next(x for x in proc.stdout.splitlines() if x.startswith("| variant `second`"))
        self.assertTrue(row.endswith("| FAIL |"), row)
        self.assertIn("error: wrong results from 06_double_buffer.variant_second",
                      proc.stderr.strip().splitlines()[-1])

    def test_no_gpu_exits_3(self):
        build = fake_tuning_build(self.root / "build")
        proc = self.tune("--chapters", "06", "--sizes", "64", "--no-build", "--build-dir",
                         str(build), "--no-save", FAKE_CHAPTER_NO_GPU="1")
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn("no CUDA GPU", proc.stderr)


if __name__ == "__main__":
    unittest.main()
