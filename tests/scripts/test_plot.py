#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/plot.py: it draws the three figures from the committed fixture
(tests/scripts/fixture/: the made-up "Fixture GPU", not a measurement) and from every results
folder committed under docs/results/ (the measured runs the README shows), writes them beside the
results it is given, and turns every bad input into one "error:" line with exit code 2.

Exit code 77 when matplotlib is not installed (CTest: SKIP_RETURN_CODE 77).
"""

import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import HERE, SCRIPTS, ScriptAssertions

import plot  # noqa: E402  (helpers puts scripts/ on the path)
from chapters import CHAPTERS  # noqa: E402

FIXTURE = HERE / "fixture"
COMMITTED = sorted(p for p in (HERE.parent.parent / "docs" / "results").glob("*")
                   if (p / "results.json").is_file())
FIGURES = ["ladder_bar.png", "size_sweep.png", "roofline.png"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def plot_run(*args):
    return subprocess.run([sys.executable, str(SCRIPTS / "plot.py"), *map(str, args)],
                          capture_output=True, text=True)


class PlotTest(ScriptAssertions, unittest.TestCase):
    def assert_pngs(self, out):
        for name in FIGURES:
            path = Path(out) / name
            self.assertTrue(path.is_file(), f"{name} missing")
            self.assertGreater(path.stat().st_size, 1000, f"{name} is empty")
            self.assertEqual(path.read_bytes()[:8], PNG_SIGNATURE, f"{name} is not a PNG")

    def assert_draws_three_pngs(self, folder):
        with tempfile.TemporaryDirectory() as out:
            proc = plot_run(folder, "--out", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn(out, proc.stdout)
            self.assert_pngs(out)

    def test_draws_three_pngs_from_the_fixture(self):
        self.assert_draws_three_pngs(FIXTURE)

    def test_draws_three_pngs_from_the_committed_results(self):
        self.assertTrue(COMMITTED, "no results folder committed under docs/results/")
        for folder in COMMITTED:
            with self.subTest(folder=folder.name):
                self.assert_draws_three_pngs(folder)

    def test_size_option(self):
        with tempfile.TemporaryDirectory() as out:
            self.assertEqual(plot_run(FIXTURE, "--size", "2048", "--out", out).returncode, 0)
            self.assert_one_error_line(plot_run(FIXTURE, "--size", "3000", "--out", out),
                                       "no results at size 3000")

    def test_writes_beside_the_results_it_is_given(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "my-gpu"
            folder.mkdir()
            shutil.copy(FIXTURE / "results.json", folder)
            proc = plot_run(folder)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assert_pngs(folder / "figures")
            self.assertIn(str(folder / "figures"), proc.stdout)

    def test_a_results_folder_must_be_named(self):
        # No default: a default folder under docs/results/ would overwrite tracked figures.
        self.assert_one_error_line(plot_run(), "results")

    def test_unusable_output_folders(self):
        self.assert_one_error_line(plot_run(FIXTURE, "--out", "/proc/x"), "/proc/x")
        with tempfile.TemporaryDirectory() as tmp:
            a_file = Path(tmp) / "README.md"
            a_file.write_text("not a folder\n")
            self.assert_one_error_line(plot_run(FIXTURE, "--out", a_file), a_file, "is a file")

    def test_broken_results_name_the_file(self):
        good = json.loads((FIXTURE / "results.json").read_text())
        no_size = json.loads(json.dumps(good))
        del no_size["rows"][3]["m"]
        text_tflops = json.loads(json.dumps(good))
        text_tflops["rows"][0]["tflops"] = "fast"
        negative_ratio = json.loads(json.dumps(good))
        negative_ratio["rows"][5]["ratio"] = -1.0
        no_peak = json.loads(json.dumps(good))
        del no_peak["device"]["fp32_peak_tflops"]
        cases = {"not json": "{\"rows\": [", "no rows": json.dumps({"device": good["device"]}),
                 "a list": "[]", "no m": json.dumps(no_size),
                 "text tflops": json.dumps(text_tflops), "no peak": json.dumps(no_peak),
                 "negative ratio": json.dumps(negative_ratio)}
        for case, text in cases.items():
            with self.subTest(case=case), tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "results.json"
                path.write_text(text)
                self.assert_one_error_line(plot_run(tmp, "--out", Path(tmp) / "f"), path)
        with tempfile.TemporaryDirectory() as tmp:
            missing = Path(tmp) / "nothing-here"
            self.assert_one_error_line(plot_run(missing), missing / "results.json")
            self.assert_one_error_line(plot_run(FIXTURE / "results.json"), "is a file")

    def test_the_fixture_has_every_chapter_and_both_precisions(self):
        document = json.loads((FIXTURE / "results.json").read_text())
        self.assertEqual({r["chapter"] for r in document["rows"]}, set(CHAPTERS))
        self.assertEqual({r.get("precision") for r in document["rows"]}, {"FP32", "TF32"})

    def test_more_chapters_and_unknown_ones_draw(self):
        # Chapters past the list (a TF32 one among them) draw; one the list does not know is grey.
        document = json.loads((FIXTURE / "results.json").read_text())
        tf32 = [r for r in document["rows"] if r.get("precision") == "TF32"]
        extra = []
        for name in ["11_not_yet_listed", "12_not_yet_listed"]:
            extra += [dict(r, chapter=name) for r in tf32 if r["chapter"] == tf32[0]["chapter"]]
        document["rows"] += extra
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "results.json").write_text(json.dumps(document))
            proc = plot_run(tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assert_pngs(Path(tmp) / "figures")
        self.assertEqual(len(set(plot.MARKERS)), len(plot.MARKERS))
        self.assertGreaterEqual(len(plot.MARKERS), len(CHAPTERS))

    def test_a_tf32_chapter_is_measured_against_cublas_tf32(self):
        document = json.loads((FIXTURE / "results.json").read_text())
        shape = (4096, 4096, 4096)
        tf32 = [r["cublas_tflops"] for r in document["rows"]
                if r.get("precision") == "TF32" and (r["m"], r["n"], r["k"]) == shape]
        self.assertEqual(plot.cublas_median(document["rows"], shape, "TF32"),
                         statistics.median(tf32))
        self.assertLess(plot.cublas_median(document["rows"], shape),
                        plot.cublas_median(document["rows"], shape, "TF32"))

    def test_labels_of_one_column_are_spread(self):
        # Chapters 03-05: one ratio, a few TFLOP/s apart; 00 far away keeps its own height.
        points = [(1.5, 1.53), (1.5, 1.57), (1.5, 1.62), (-0.6, -0.3)]
        heights = plot.spread_labels(points, 0.15)
        column = sorted(heights[:3])
        self.assertGreaterEqual(column[1] - column[0], 0.15 - 1e-9)
        self.assertGreaterEqual(column[2] - column[1], 0.15 - 1e-9)
        self.assertAlmostEqual(sum(heights[:3]) / 3, sum(p[1] for p in points[:3]) / 3)
        self.assertAlmostEqual(heights[3], -0.3)

    def test_help_documents_the_exit_codes(self):
        proc = plot_run("--help")
        self.assertEqual(proc.returncode, 0)
        self.assertIn("exit codes", proc.stdout)
        self.assertIn("2  bad usage", proc.stdout)


if __name__ == "__main__":
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib not installed: skipped")
        sys.exit(77)
    unittest.main()
