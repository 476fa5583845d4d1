#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of scripts/tour.py: merging the chapters' JSON, the ladder, and whole tours run
against fake chapter binaries (tests/scripts/fake_chapter.py; no GPU, made-up numbers)."""

import contextlib
import copy
import csv
import io
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import SCRIPTS, environment, fake_build_dir

import tour  # noqa: E402  (helpers puts scripts/ on the path)
from chapters import (CHAPTERS, chapter_precision, chapter_source, gpu_slug,  # noqa: E402
                      select_chapters)


def hopper_chapters():
    """The chapters that refuse a GPU other than compute capability 9.0 (their spec names
    sgemm::sm90a_unsupported, common/wgmma.h), in ladder order."""
    return [c for c in CHAPTERS
            if "sm90a_unsupported" in chapter_source(c).read_text(encoding="utf-8")]


def report(chapter, sizes, device="Fixture GPU", cublas=40.0, status="PASS"):
    rows = [{"chapter": chapter, "m": s, "n": s, "k": s, "tflops": 10.0, "cublas_tflops": cublas,
             "pct_cublas": 25.0, "pct_peak": 20.0, "ratio": 31.0, "bound": "compute",
             "status": status, "first_mismatch": None} for s in sizes]
    return {"schema": 1, "chapter": chapter, "title": "t", "command": "c", "date": "d",
            "device": {"name": device, "fp32_peak_tflops": 50.0}, "settings": {"seed": 1},
            "rows": rows}


class MergeTest(unittest.TestCase):
    def test_rows_come_out_in_ladder_order_then_by_size(self):
        runs = [report("03_thread_tiling", [4096, 1024]), report("00_naive", [2048, 1024])]
        merged = tour.merge_runs(runs)
        order = [(r["chapter"], r["m"]) for r in merged["rows"]]
        self.assertEqual(order, [("00_naive", 1024), ("00_naive", 2048),
                                 ("03_thread_tiling", 1024), ("03_thread_tiling", 4096)])
        self.assertEqual([c["chapter"] for c in merged["chapters"]],
                         ["03_thread_tiling", "00_naive"])
        self.assertEqual(merged["device"]["name"], "Fixture GPU")

    def test_refuses_reports_from_two_gpus(self):
        with self.assertRaises(ValueError):
            tour.merge_runs([report("00_naive", [1024]), report("01_coalescing", [1024], "Other")])
        with self.assertRaises(ValueError):
            tour.merge_runs([])

    def test_load_run_rejects_other_schemas(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "r.json"
            bad = copy.deepcopy(report("00_naive", [8]))
            bad["schema"] = 2
            path.write_text(json.dumps(bad))
            with self.assertRaises(ValueError):
                tour.load_run(path)
            path.write_text(json.dumps(report("00_naive", [8])))
            self.assertEqual(tour.load_run(path)["chapter"], "00_naive")

    def test_cublas_row_is_the_median_over_chapter_processes(self):
        runs = [report(c, [1024], cublas=v) for c, v in
                zip(["00_naive", "01_coalescing", "02_smem_tiling"], [30.0, 50.0, 40.0])]
        runs.append(report("03_thread_tiling", [1024], cublas=None))  # --no-cublas
        merged = tour.merge_runs(runs)
        self.assertEqual(tour.cublas_median(merged["rows"], (1024, 1024, 1024)), (40.0, 3))
        header, lines = tour.ladder_table(merged["rows"], merged["device"], (1024, 1024, 1024))
        self.assertEqual(lines[-2][:3], ["cuBLAS (median of 3)", "FP32", "40.00"])
        self.assertEqual(lines[-2][4], "80.0")  # % of the 50 TFLOP/s peak
        self.assertEqual(lines[-1][:3], ["FP32 peak", "-", "50.00"])

    def test_tf32_chapters_get_their_own_cublas_row_and_errors_show(self):
        runs = [report("06_double_buffer", [1024], cublas=50.0),
                report("08_tensor_cores", [1024], cublas=400.0)]
        runs[1]["rows"][0]["precision"] = "TF32"
        runs[0]["rows"][0]["fp64_error"] = {"rms_rel_c": 1.15e-6}
        runs[0]["rows"][0]["cublas_fp32_error"] = {"rms_rel_c": 1.2e-6}
        merged = tour.merge_runs(runs)
        self.assertEqual(tour.cublas_median(merged["rows"], (1024, 1024, 1024)), (50.0, 1))
        self.assertEqual(tour.cublas_median(merged["rows"], (1024, 1024, 1024), "TF32"),
                         (400.0, 1))
        header, lines = tour.ladder_table(merged["rows"], merged["device"], (1024, 1024, 1024))
        self.assertIn("rms error vs FP64", header)
        self.assertEqual(lines[0][1], "FP32")
        self.assertEqual(lines[0][7], "1.15e-06")
        self.assertEqual(lines[1][1], "TF32")
        self.assertEqual([line[0] for line in lines[-3:]],
                         ["cuBLAS (median of 1)", "cuBLAS TF32 (median of 1)", "FP32 peak"])
        self.assertEqual(lines[-3][7], "1.20e-06")

    def test_a_chapter_not_run_keeps_its_place_with_its_reason(self):
        runs = [report("00_naive", [1024]), report("09_3xtf32", [1024])]
        why = "needs compute capability 9.0 (Hopper: wgmma, sm_90a); device 0 is X, 8.0"
        merged = tour.merge_runs(runs, [{"chapter": "03_thread_tiling", "reason": why}])
        self.assertEqual(merged["not_run"], [{"chapter": "03_thread_tiling", "reason": why}])
        header, lines = tour.ladder_table(merged["rows"], merged["device"], (1024, 1024, 1024),
                                          merged["not_run"])
        self.assertEqual([line[0] for line in lines[:3]],
                         ["00_naive", "03_thread_tiling", "09_3xtf32"])
        self.assertEqual(lines[1], ["03_thread_tiling"] + ["-"] * 7 + ["not run on this GPU"])
        self.assertIn("cuBLAS (median of 2)", [line[0] for line in lines])
        text = tour.render_text(merged)
        self.assertIn(f"03_thread_tiling: not run on this GPU: {why}", text)
        environment = {"date": "d", "command": "c", "git_commit": None, "git_dirty": None}
        markdown = tour.render_markdown(merged, environment)
        self.assertIn("| 03_thread_tiling | - | - | - | - | - | - | - | not run on this GPU |",
                      markdown)
        self.assertIn(f"- 03_thread_tiling: not run on this GPU: {why}", markdown)

    def test_the_binaries_line_for_a_gpu_they_cannot_use(self):
        line = ("error: 10_wgmma needs compute capability 9.0 (Hopper: wgmma, sm_90a); device 0 "
                "is NVIDIA A100-SXM4-80GB, compute capability 8.0")
        self.assertEqual(tour.unsupported_reason("some output\n" + line + "\n"),
                         line.split(" ", 2)[2])
        self.assertEqual(tour.unsupported_reason(
            "error: 10_wgmma needs code built for sm_90a (...); device 0 is H100"),
            "needs code built for sm_90a (...); device 0 is H100")
        for other in ("error: shape 200000x200000x200000 needs 640.10 GB of device memory",
                      "error: no CUDA GPU found", "", None):
            self.assertIsNone(tour.unsupported_reason(other), other)

    def test_unmeasured_values_print_as_dashes(self):
        self.assertEqual(tour.fmt(None), "-")
        self.assertEqual(tour.fmt(0.25), "0.250")
        self.assertEqual(tour.fmt(44.31), "44.31")
        self.assertEqual(tour.fmt(682.7), "682.7")


class NamesTest(unittest.TestCase):
    def test_gpu_slug(self):
        self.assertEqual(gpu_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3")
        self.assertEqual(gpu_slug("NVIDIA GeForce RTX 4090 (D)"), "nvidia-geforce-rtx-4090-d")

    def test_select_chapters(self):
        self.assertEqual(select_chapters(["03", "00_naive", "vectorized"]),
                         ["00_naive", "03_thread_tiling", "04_vectorized"])
        self.assertEqual(select_chapters(None), CHAPTERS)
        with self.assertRaises(ValueError):
            select_chapters(["99"])


class TourTest(unittest.TestCase):
    """Whole tours against fake chapter binaries."""

    def run_tour(self, *options, **env):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        fake_build_dir(root / "build")
        self.results = root / "results"
        return subprocess.run(
            [sys.executable, str(SCRIPTS / "tour.py"), "--no-build", "--build-dir",
             str(root / "build"), "--results-dir", str(self.results), *options],
            capture_output=True, text=True, env=environment(**env))

    def tearDown(self):
        self.tmp.cleanup()

    def test_pass_writes_the_three_files(self):
        proc = self.run_tour("--sizes", "256,512", "--time-budget", "0.5")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        count = len(CHAPTERS)
        tf32 = sum(chapter_precision(c) == "TF32" for c in CHAPTERS)
        self.assertIn("M = N = K = 512", proc.stdout)
        # One cuBLAS row per precision contract, each the median of its chapters' processes.
        self.assertIn(f"cuBLAS (median of {count - tf32})", proc.stdout)
        if tf32:
            self.assertIn(f"cuBLAS TF32 (median of {tf32})", proc.stdout)
        self.assertIn(f"[{count}/{count}] {CHAPTERS[-1]}", proc.stderr)
        document = json.loads((self.results / "results.json").read_text())
        self.assertEqual(len(document["rows"]), 2 * count)
        self.assertEqual(document["environment"]["gpu"], "Fixture GPU")
        self.assertIn("--sizes 256,512", document["environment"]["command"])
        self.assertEqual(document["settings"]["time_budget_s"], 0.5)  # passed through
        with open(self.results / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2 * count)
        self.assertEqual(rows[0]["device_name"], "Fixture GPU")
        ladder = (self.results / "ladder.md").read_text()
        self.assertIn("| 00_naive |", ladder)

    def test_wrong_result_is_reported_and_exits_1(self):
        proc = self.run_tour("--sizes", "256", "--chapters", "02", "03",
                             FAKE_CHAPTER_FAIL="03_thread_tiling")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        line = next(x for x in proc.stdout.splitlines() if x.startswith("03_thread_tiling"))
        self.assertTrue(line.endswith("FAIL"), line)
        self.assertIn("FAIL: wrong result in 03_thread_tiling", proc.stderr)
        document = json.loads((self.results / "results.json").read_text())
        self.assertEqual(document["rows"][1]["first_mismatch"]["col"], 1)

    def test_a_chapter_that_cannot_use_the_gpu_is_shown_not_run_and_the_tour_goes_on(self):
        last = CHAPTERS[-1]
        proc = self.run_tour("--sizes", "256", FAKE_CHAPTER_UNSUPPORTED=last)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("error:", proc.stderr)
        self.assertIn(f"{last}: not run on this GPU: needs compute capability 9.0", proc.stderr)
        line = next(x for x in proc.stdout.splitlines() if x.startswith(last))
        self.assertTrue(line.endswith("not run on this GPU"), line)
        self.assertIn(f"{last}: not run on this GPU: needs compute capability 9.0 (Hopper: "
                      "wgmma, sm_90a); device 0 is Fixture GPU", proc.stdout)
        document = json.loads((self.results / "results.json").read_text())
        self.assertEqual(len(document["rows"]), len(CHAPTERS) - 1)
        self.assertEqual([c["chapter"] for c in document["not_run"]], [last])
        self.assertIn(f"| {last} | - |", (self.results / "ladder.md").read_text())

    def test_on_a_gpu_before_hopper_every_hopper_chapter_is_not_run_in_ladder_order(self):
        hopper = hopper_chapters()
        if not hopper:
            self.skipTest("no chapter needs compute capability 9.0")
        proc = self.run_tour("--sizes", "256", FAKE_CHAPTER_UNSUPPORTED=",".join(hopper))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("error:", proc.stderr)
        document = json.loads((self.results / "results.json").read_text())
        self.assertEqual([c["chapter"] for c in document["not_run"]], hopper)
        self.assertEqual(len(document["rows"]), len(CHAPTERS) - len(hopper))
        shown = [line.split()[0] for line in proc.stdout.splitlines()
                 if line.endswith("not run on this GPU")]
        self.assertEqual(shown, hopper)
        # cuBLAS TF32's median comes from the TF32 chapters that ran, the Hopper ones left out.
        ran_tf32 = sum(chapter_precision(c) == "TF32" for c in CHAPTERS if c not in hopper)
        if ran_tf32:
            self.assertIn(f"cuBLAS TF32 (median of {ran_tf32})", proc.stdout)
        ladder = (self.results / "ladder.md").read_text()
        for chapter in hopper:
            self.assertIn(f"| {chapter} | - |", ladder)
            self.assertIn(f"- {chapter}: not run on this GPU: needs compute capability 9.0",
                          ladder)

    def test_when_no_chosen_chapter_can_use_the_gpu_one_line_and_exit_3(self):
        proc = self.run_tour("--sizes", "64", "--chapters", "00", "02",
                             FAKE_CHAPTER_UNSUPPORTED="00_naive,02_smem_tiling")
        self.assertEqual(proc.returncode, 3)
        self.assertEqual(proc.stdout, "")
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(errors, ["error: no chosen chapter can use this GPU: 00_naive needs "
                                  "compute capability 9.0 (Hopper: wgmma, sm_90a); device 0 is "
                                  "Fixture GPU, compute capability 0.0; 02_smem_tiling needs "
                                  "compute capability 9.0 (Hopper: wgmma, sm_90a); device 0 is "
                                  "Fixture GPU, compute capability 0.0"])
        self.assertFalse(self.results.exists())

    def test_no_gpu_prints_one_error_line_naming_the_build_folder_and_exits_3(self):
        proc = self.run_tour(FAKE_CHAPTER_NO_GPU="1")
        self.assertEqual(proc.returncode, 3)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(len(errors), 1, proc.stderr)
        self.assertTrue(errors[0].startswith("error: no CUDA GPU is present ("), errors[0])
        build = Path(self.tmp.name).resolve() / "build"
        self.assertIn(f"ctest --test-dir {build} -L host", errors[0])
        self.assertEqual(proc.stdout, "")
        self.assertFalse(self.results.exists())

    def test_bad_sizes_say_what_a_size_is(self):
        for sizes, why in [("0", "0 is not >= 1"), ("abc", "'abc' is not a whole number"),
                           ("64,,128", "empty item in '64,,128'"), ("-5", "-5 is not >= 1")]:
            with self.subTest(sizes=sizes):
                proc = self.run_tour("--sizes=" + sizes)
                self.assertEqual(proc.returncode, 2)
                self.assertEqual(proc.stdout, "")
                self.assertEqual(proc.stderr, f"error: argument --sizes: {why} (a size is a whole "
                                              "number >= 1; several are comma-separated, e.g. "
                                              "1024,4096)\n")
                self.tmp.cleanup()

    def test_no_save_writes_nothing(self):
        proc = self.run_tour("--sizes", "128", "--chapters", "00", "--no-save")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertFalse(self.results.exists())

    def test_bad_chapter_is_usage_error(self):
        proc = self.run_tour("--chapters", "42")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("unknown chapter", proc.stderr)


class GpuFirstTest(unittest.TestCase):
    """Without a GPU the tour stops before the build (which takes a minute), in one line."""

    def tour_main(self, gpu_reason, *options):
        built = []
        saved = tour.gpu_status, tour.build
        tour.gpu_status = lambda: gpu_reason
        tour.build = lambda build_dir, *args: built.append(build_dir)
        stderr = io.StringIO()
        try:
            with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(stderr):
                self.build_dir = Path(tmp).resolve() / "my-build"
                code = tour.main(["--build-dir", str(self.build_dir), "--no-save", *options])
        finally:
            tour.gpu_status, tour.build = saved
        return code, stderr.getvalue(), built

    def test_no_gpu_stops_before_the_build(self):
        code, stderr, built = self.tour_main("no NVIDIA driver: libcuda.so.1 not found")
        self.assertEqual(code, 3)
        self.assertEqual(built, [])
        self.assertEqual(len(stderr.splitlines()), 1, stderr)
        self.assertTrue(stderr.startswith("error: no CUDA GPU is present (no NVIDIA driver: "
                                          "libcuda.so.1 not found): the tour needs one;"), stderr)
        # Not configured yet: the hint configures, builds and tests that same folder.
        self.assertIn(f"-B {self.build_dir} && cmake --build {self.build_dir} && "
                      f"ctest --test-dir {self.build_dir} -L host", stderr)

    def test_with_a_gpu_the_build_runs(self):
        code, stderr, built = self.tour_main(None, "--sizes", "64")
        self.assertEqual(built, [self.build_dir])
        self.assertEqual(code, 2)  # the fake build made no binaries
        self.assertIn(f"error: no chapter binary found in {self.build_dir / 'bin'}", stderr)


if __name__ == "__main__":
    unittest.main()
