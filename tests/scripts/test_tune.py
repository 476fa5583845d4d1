#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of scripts/tune.py: its usage errors, and whole runs against a fake tuning build
(tests/scripts/fake_chapter.py linked under the names the tuning build gives; no GPU, made-up
numbers)."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import HERE, SCRIPTS, environment, ScriptAssertions

VARIANTS = [("first", "SGEMM_A=0,SGEMM_B=1"), ("second", "SGEMM_TILE=1,2,3,SGEMM_B=1")]


def fake_tuning_build(root):
    """A build folder as -DSGEMM_TUNING=ON leaves it for 06: the manifest, its variants, one tile,
    the chapter and the chapter before it."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    (root / "tiles").mkdir()
    (root / "tiles" / "06_double_buffer.variants").write_text(
        "".join(f"{name}\t{definitions}\n" for name, definitions in VARIANTS))
    names = ["05_bank_conflict", "06_double_buffer", "06_double_buffer.tile_64_128_16"]
    names += [f"06_double_buffer.variant_{name}" for name, _ in VARIANTS]
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
