#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/speed_error.py: the points it reads from the committed H100 measurements
are the expected chapters (00-14 and the cuBLAS modes from the tour, every side-by-side CSV row
skipped; with a tour that lacks 13 and 14, those two from the side-by-side CSVs) with the numbers
of those files, the committed figure is
in step with its inputs (and a changed input is seen), and bad input (a missing or broken file, a
missing column, no row at --size, another device, other inputs) is one `error:` line and exit 2.
Exit 77 (skipped) without matplotlib."""

import csv
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS, ScriptAssertions

import speed_error as se  # noqa: E402  (helpers puts scripts/ on the path)
from figures import stamped  # noqa: E402

SCRIPT = SCRIPTS / "speed_error.py"
RESULTS = REPO / "docs" / "results" / "nvidia-h100-80gb-hbm3"
ACCURACY = RESULTS / "hopper" / "accuracy_14"
CSVS = ("side_by_side_09_3xtf32.csv", "side_by_side_13_persistent_clusters.csv",
        "side_by_side_14_3xtf32_hopper.csv")
HOPPER = ("13_persistent_clusters", "14_3xtf32_hopper")
TOUR = ("00_naive", "01_coalescing", "02_smem_tiling", "03_thread_tiling", "04_vectorized",
        "05_bank_conflict", "06_double_buffer", "07_any_shape", "08_tensor_cores", "09_3xtf32",
        "10_wgmma", "11_tma", "12_warp_specialization") + HOPPER
EXPECTED = TOUR + ("cuBLAS FP32", "cuBLAS TF32")


def run(*options):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, options)], capture_output=True,
                          text=True)


def copy_inputs(root, without=()):
    """The committed inputs (and figure) under root, laid out as in docs/results/<gpu>/; the
    tour's rows of the chapters `without` left out (a tour that did not run them)."""
    root = Path(root)
    (root / "hopper" / "accuracy_14").mkdir(parents=True)
    shutil.copy(RESULTS / "results.json", root / "results.json")  # byte for byte: its sha256
    if without:
        document = json.loads((root / "results.json").read_text(encoding="utf-8"))
        document["rows"] = [r for r in document["rows"] if r["chapter"] not in without]
        (root / "results.json").write_text(json.dumps(document), encoding="utf-8")
    for name in CSVS:
        shutil.copy(ACCURACY / name, root / "hopper" / "accuracy_14" / name)
    (root / "figures").mkdir()
    shutil.copy(RESULTS / "figures" / se.NAME, root / "figures" / se.NAME)
    return root


def edit_csv(path, chapter, size, field, value):
    """Set one field of the row of `chapter` at size^3 in a harness CSV."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    hits = [r for r in rows if r["chapter"] == chapter and r["m"] == str(size)]
    assert len(hits) == 1, (path, chapter, size)
    hits[0][field] = value
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def tour_rows(size):
    rows = json.loads((RESULTS / "results.json").read_text(encoding="utf-8"))["rows"]
    return {r["chapter"]: r for r in rows if r["m"] == r["n"] == r["k"] == size}


def csv_row(name, size):
    with open(ACCURACY / name, encoding="utf-8", newline="") as f:
        return next(r for r in csv.DictReader(f) if r["m"] == str(size))


class PointsTest(unittest.TestCase):
    def check_points(self, size):
        data = se.gather(RESULTS, size=size)
        points = {p["name"]: p for p in data["points"]}
        self.assertEqual(tuple(p["name"] for p in data["points"]), EXPECTED)
        # The tour rows are canonical: every side-by-side row is skipped.
        self.assertEqual(data["skipped"], ["09_3xtf32"] + list(HOPPER))
        tour = tour_rows(size)
        for chapter in TOUR:
            self.assertEqual(points[chapter]["source"], "results.json")
            self.assertEqual(points[chapter]["tflops"], tour[chapter]["tflops"])
            self.assertEqual(points[chapter]["error"], tour[chapter]["fp64_error"]["rms_rel_c"])
            self.assertEqual(points[chapter]["precision"], tour[chapter]["precision"])
        self.assertEqual(points["14_3xtf32_hopper"]["precision"], "FP32")
        self.assertEqual(points["13_persistent_clusters"]["precision"], "TF32")
        # cuBLAS: the median speed of the chapter processes of its precision, as the README's
        # ladder gives it; its own error on the same inputs.
        for precision in ("FP32", "TF32"):
            rows = [r for r in tour.values() if r["precision"] == precision]
            cublas = points[f"cuBLAS {precision}"]
            self.assertEqual(cublas["kind"], "cublas")
            self.assertEqual(cublas["tflops"],
                             statistics.median(r["cublas_tflops"] for r in rows))
            field = f"cublas_{precision.lower()}_error"
            self.assertEqual(cublas["error"], statistics.median(
                r[field]["rms_rel_c"] for r in tour.values() if r[field]))
        self.assertEqual(data["origins"]["TF32"],
                         ["08_tensor_cores", "10_wgmma", "11_tma", "12_warp_specialization",
                          "13_persistent_clusters"])
        return points

    def test_chapters_the_tour_lacks_come_from_the_side_by_side_csvs(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_inputs(tmp, without=HOPPER)
            data = se.gather(root)
            points = {p["name"]: p for p in data["points"]}
            self.assertEqual(tuple(p["name"] for p in data["points"]), EXPECTED)
            self.assertEqual(data["skipped"], ["09_3xtf32"])
            for chapter, name in zip(HOPPER, CSVS[1:]):
                row = csv_row(name, 4096)
                self.assertEqual(points[chapter]["source"], name)
                self.assertEqual(points[chapter]["tflops"], float(row["tflops"]))
                self.assertEqual(points[chapter]["error"], float(row["fp64_rms_rel_c"]))
                self.assertEqual(points[chapter]["precision"], row["precision"])

    def test_the_points_at_4096_are_every_chapter_and_both_cublas_modes(self):
        points = self.check_points(4096)
        # The README ladder's cuBLAS rows at 4096^3, as the README shows them.
        ladder = {}
        for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] in ("cuBLAS FP32", "cuBLAS TF32"):
                ladder[cells[0]] = cells[3]  # the "TFLOP/s 4096³" column
        for name, shown in ladder.items():
            decimals = len(shown.split(".")[1]) if "." in shown else 0
            self.assertEqual(f"{points[name]['tflops']:.{decimals}f}", shown)
        self.assertEqual(sorted(ladder), ["cuBLAS FP32", "cuBLAS TF32"])

    def test_the_points_at_8192_too(self):
        self.check_points(8192)

    def test_chapter_ranges_in_the_caption(self):
        self.assertEqual(se.numbers(["00_naive", "01_coalescing", "02_smem_tiling", "09_3xtf32",
                                     "11_tma", "12_warp_specialization"]), "00-02, 09, 11-12")
        self.assertEqual(se.numbers([]), "")


class CommittedFigureTest(unittest.TestCase):
    def test_committed_figure_matches_its_inputs(self):
        # Fails when a measurement file changed without a redraw: the figure would show numbers
        # the repository no longer holds.
        self.assertEqual(se.out_of_date(RESULTS), [])

    def test_a_changed_input_makes_it_stale(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_inputs(tmp)
            self.assertEqual(se.out_of_date(root), [])
            edit_csv(root / "hopper" / "accuracy_14" / CSVS[2], "14_3xtf32_hopper", 4096,
                     "tflops", "120")
            stale = se.out_of_date(root)
            self.assertEqual(len(stale), 1)
            self.assertIn("speed_error.png is out of date: run python3 scripts/speed_error.py",
                          stale[0])
            (root / "figures" / se.NAME).unlink()
            self.assertEqual(len(se.out_of_date(root)), 1)

    def test_the_script_writes_a_stamped_figure(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = run(RESULTS, "--out", tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            png = Path(tmp) / se.NAME
            self.assertEqual(proc.stdout.strip(), f"wrote {png}")
            self.assertEqual(stamped(png), se.gather(RESULTS)["signature"])
            proc = run("--size", 8192, "--out", tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(stamped(Path(tmp) / "speed_error_8192.png"),
                             se.gather(RESULTS, size=8192)["signature"])

    def test_help(self):
        proc = run("--help")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("exit codes:", proc.stdout)
        self.assertIn("--size", proc.stdout)


class BadInputTest(unittest.TestCase, ScriptAssertions):
    def test_bad_usage(self):
        self.assert_one_error_line(run("--size", 0), "--size 0")
        self.assert_one_error_line(run("--size", "x"), "--size")
        self.assert_one_error_line(run("--bogus"), "--bogus")
        self.assert_one_error_line(run("--size", 2048, "--out", "/nonexistent-out"),
                                   "no row at 2048x2048x2048", "have: 1024x1024x1024")

    def test_missing_or_broken_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_inputs(tmp)
            out = Path(tmp) / "out"
            accuracy = root / "hopper" / "accuracy_14"
            self.assert_one_error_line(run(Path(tmp) / "none", "--out", out),
                                       "results.json: no such file")
            self.assert_one_error_line(run(root, "--accuracy", Path(tmp) / "none", "--out", out),
                                       "no such folder")
            self.assert_one_error_line(run(root, "--accuracy", root / "figures", "--out", out),
                                       "no side_by_side_*.csv")
            self.assert_one_error_line(run(root, "--size", 3000, "--out", out),
                                       "no results at size 3000")
            self.assert_one_error_line(run(root, "--out", root / "results.json"),
                                       "is a file, not a folder")
            (accuracy / "side_by_side_99_x.csv").write_text("not,a,harness,csv\n")
            self.assert_one_error_line(run(root, "--out", out), "side_by_side_99_x.csv",
                                       "no header line")
            (accuracy / "side_by_side_99_x.csv").write_text("chapter,m,n,k,tflops\n")
            self.assert_one_error_line(run(root, "--out", out), "no column cublas_tflops")
            (accuracy / "side_by_side_99_x.csv").unlink()
            self.assertFalse(out.exists())
            (root / "results.json").write_text("{")
            self.assert_one_error_line(run(root, "--out", out), "not valid JSON")

    def test_rows_that_do_not_belong(self):
        cases = (("tflops", "fast", "tflops is not a number"),
                 ("fp64_rms_rel_c", "nan", "fp64_rms_rel_c is not a number >= 0"),
                 ("device", "NVIDIA A100", "ran on 'NVIDIA A100'"),
                 ("cublas_fp32_rms_rel_c", "1.2e-06", "other inputs"),
                 ("m", "4000", "no row at 4096x4096x4096"),
                 ("precision", "BF16", "neither FP32 nor TF32"))
        for field, value, fragment in cases:
            with self.subTest(field=field), tempfile.TemporaryDirectory() as tmp:
                root = copy_inputs(tmp, without=HOPPER)  # 14's CSV row is then read
                edit_csv(root / "hopper" / "accuracy_14" / CSVS[2], "14_3xtf32_hopper", 4096,
                         field, value)
                self.assert_one_error_line(run(root, "--out", Path(tmp) / "out"), CSVS[2],
                                           fragment)

    def test_a_tour_row_without_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_inputs(tmp)
            document = json.loads((root / "results.json").read_text(encoding="utf-8"))
            row = next(r for r in document["rows"] if r["chapter"] == "03_thread_tiling"
                       and r["m"] == 4096)
            row["fp64_error"] = None
            (root / "results.json").write_text(json.dumps(document), encoding="utf-8")
            self.assert_one_error_line(run(root, "--out", Path(tmp) / "out"),
                                       "03_thread_tiling at 4096", "no rms error")
            row["fp64_error"] = 2.5e-7  # a bare number is read as the rms error
            (root / "results.json").write_text(json.dumps(document), encoding="utf-8")
            points = {p["name"]: p for p in se.gather(root)["points"]}
            self.assertEqual(points["03_thread_tiling"]["error"], 2.5e-7)


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not installed: skipped")
        sys.exit(77)
    unittest.main()
