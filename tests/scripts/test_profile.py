#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of scripts/profile.py: parsing ncu's CSV, the derived rows, and whole runs against
a fake ncu (tests/scripts/fake_ncu.py) driving fake chapter binaries. No GPU, made-up counters."""

import csv
import importlib.util
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import HERE, REPO, SCRIPTS, environment, fake_build_dir

from chapters import CHAPTERS, chapter_source  # noqa: E402  (helpers puts scripts/ on the path)

# By path: the name "profile" also belongs to a standard-library module.
_spec = importlib.util.spec_from_file_location("sgemm_profile", SCRIPTS / "profile.py")
ncu_profile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ncu_profile)

CSV_TEXT = """==PROF== Connected to process 1 (build/bin/04_vectorized)
some output of the application
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1","04_vectorized","h","sgemm_vectorized","1","7","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","1,048,576"
"0","1","04_vectorized","h","sgemm_vectorized","1","7","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","4,000"
"0","1","04_vectorized","h","sgemm_vectorized","1","7","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","request","250"
"0","1","04_vectorized","h","sgemm_vectorized","1","7","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","","n/a"
"1","1","04_vectorized","h","sgemm_vectorized","1","7","(256, 1, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","7"
==PROF== Disconnected from process 1
"""


def stalls(**values):
    return {ncu_profile.STALL_PREFIX + k + ncu_profile.STALL_SUFFIX: ("", v)
            for k, v in values.items()}


class ParseTest(unittest.TestCase):
    def test_first_kernel_only_numbers_without_separators(self):
        metrics, kernel = ncu_profile.parse_ncu_csv(CSV_TEXT)
        self.assertEqual(kernel, "sgemm_vectorized")
        self.assertEqual(metrics["dram__bytes_read.sum"], ("byte", 1048576.0))
        self.assertEqual(metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"][1], 4000.0)
        self.assertIsNone(ncu_profile.value(
            metrics, "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"))

    def test_no_kernel_profiled(self):
        self.assertEqual(ncu_profile.parse_ncu_csv("==WARNING== No kernels were profiled.\n"),
                         ({}, None))

    def test_derived_rows(self):
        metrics = {
            "dram__bytes_read.sum": ("byte", 300.0), "dram__bytes_write.sum": ("byte", 100.0),
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": ("sector", 4000.0),
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": ("request", 250.0),
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": ("", 25.0),
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": ("", 100.0),
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": ("inst", 64.0 * 32),
            "smsp__sass_inst_executed_op_shared_ld.sum": ("inst", 16.0),
        }
        rows = {label: v for label, _, v in ncu_profile.derived_rows(metrics, 2e6, 10.0)}
        self.assertEqual(rows["DRAM bytes (read + write)"], 400.0)
        self.assertEqual(rows["Tile-model global traffic (harness)"], 2e5)
        self.assertEqual(rows["Global load sectors per request"], 16.0)
        self.assertEqual(rows["Shared load bank conflicts / wavefronts"], 25.0)
        self.assertEqual(rows["FFMA per shared load (warp level)"], 4.0)
        self.assertEqual(ncu_profile.derived_rows({}), [])

    def test_only_the_top_stalls_of_some_chapter_are_shown(self):
        results = {
            "a": {"metrics": stalls(long_scoreboard=9, barrier=5, wait=4, drain=1, misc=0.5)},
            "b": {"metrics": stalls(long_scoreboard=1, barrier=2, wait=3, drain=4, misc=0.1)},
        }
        labels = [row[0] for row in ncu_profile.build_table(results, ncu_profile.STALLS)]
        self.assertEqual(len(labels), 4)  # top 3 of a, top 3 of b: long sb, barrier, wait, drain
        self.assertNotIn("Stall misc (cycles/issue)", labels)
        every = ncu_profile.build_table(results, ncu_profile.STALLS, every_stall=True)
        self.assertEqual(len(every), len(ncu_profile.STALLS))

    def test_hopper_counters_only_on_compute_capability_9(self):
        gmma_stall = ncu_profile.HOPPER_STALLS[0]
        for capability in (None, (8, 0), (8, 9), (10, 0)):
            with self.subTest(capability=capability):
                default = ncu_profile.metrics_for("default", capability)
                self.assertEqual(default, ncu_profile.SETS["default"])
                self.assertNotIn(ncu_profile.GMMA, default)
        default = ncu_profile.metrics_for("default", (9, 0))
        # The wgmma count right after the mma.sync count, the gmma stall with the other stalls.
        self.assertEqual(default[default.index(ncu_profile.HMMA) + 1], ncu_profile.GMMA)
        self.assertIn(gmma_stall, default)
        self.assertEqual(len(default), len(ncu_profile.SETS["default"]) + 2)
        self.assertIn(ncu_profile.TENSOR_PIPE, ncu_profile.SETS["default"])
        self.assertIn(ncu_profile.GMMA, ncu_profile.metrics_for("compute", (9, 0)))
        self.assertNotIn(gmma_stall, ncu_profile.metrics_for("compute", (9, 0)))
        self.assertEqual(ncu_profile.metrics_for("stalls", (9, 0))[-1], gmma_stall)
        self.assertEqual(ncu_profile.metrics_for("memory", (9, 0)), ncu_profile.SETS["memory"])
        # The gmma stall is a stall row: sorted with the others, among the top three if large.
        results = {"a": {"metrics": {**stalls(long_scoreboard=1, barrier=2, wait=3),
                                     gmma_stall: ("", 9.0)}}}
        labels = [row[0] for row in ncu_profile.build_table(
            results, ncu_profile.STALLS + ncu_profile.HOPPER_STALLS)]
        self.assertEqual(labels, ["Stall gmma (cycles/issue)", "Stall wait (cycles/issue)",
                                  "Stall barrier (cycles/issue)"])

    def test_human(self):
        self.assertEqual(ncu_profile.human(None, ""), "-")
        self.assertEqual(ncu_profile.human(2.5e8, "byte"), "250.00 MB")
        self.assertEqual(ncu_profile.human(3.1e6, "nsecond"), "3.100 ms")
        self.assertEqual(ncu_profile.human(66.25, "%"), "66.2 %")
        self.assertEqual(ncu_profile.human(1.5e9, "inst"), "1.50 G")
        self.assertEqual(ncu_profile.human(128.0, "register/thread"), "128")
        self.assertEqual(ncu_profile.human(4.125, ""), "4.12")


# A kernel's name in CUDA source: `__global__ void [__launch_bounds__(...) ...] <name>(`.
KERNEL = re.compile(r"__global__\s+void\s+(?:__\w+__\s*\((?:[^()]|\([^()]*\))*\)\s*)*(\w+)\s*\(")


def kernels(path):
    return KERNEL.findall(Path(path).read_text(encoding="utf-8"))


class KernelSelectionTest(unittest.TestCase):
    """ncu profiles the first launch whose name matches --kernel-name. Before their GEMM, chapters
    may launch helpers: the harness's fill kernels, 07's pad_rows, and the TMA chapters' padded
    copy of A or B (copy_to_tma_rows, common/tma.h) when K or N is not a multiple of 4."""

    def matches(self, name):
        regex = re.compile(ncu_profile.parse_args([]).kernel_regex)
        # Bare, or qualified as ncu may print it: in the sgemm namespace or an anonymous one.
        return [bool(regex.search(f"{prefix}{name}"))
                for prefix in ("", "sgemm::", "(anonymous namespace)::")]

    def test_every_chapter_has_a_kernel_the_default_selects(self):
        for chapter in CHAPTERS:
            with self.subTest(chapter=chapter):
                names = [k for k in kernels(chapter_source(chapter)) if all(self.matches(k))]
                self.assertTrue(names, f"no kernel of {chapter} matches the default regex")

    def test_no_helper_kernel_is_selected(self):
        helpers = [k for path in sorted((REPO / "common").glob("*.cu*")) +
                   sorted((REPO / "common").glob("*.h")) for k in kernels(path)]
        helpers += [k for c in CHAPTERS for k in kernels(chapter_source(c))
                    if not k.startswith("sgemm_")]
        self.assertIn("copy_to_tma_rows", helpers)
        for name in helpers:
            with self.subTest(kernel=name):
                self.assertEqual(self.matches(name), [False, False, False])

    def test_a_kernel_without_global_loads_shows_no_sectors_per_request(self):
        # The TMA chapters load through the copy engine: no LSU global load requests at all.
        metrics = {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": ("sector", 0.0),
                   "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": ("request", 0.0)}
        labels = [label for label, _, _ in ncu_profile.derived_rows(metrics)]
        self.assertNotIn("Global load sectors per request", labels)


class RunTest(unittest.TestCase):
    """profile.py against a fake ncu and fake chapters."""

    def run_profile(self, *options, **env):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        fake_build_dir(self.root / "build", ["00_naive", "03_thread_tiling"])
        return subprocess.run(
            [sys.executable, str(SCRIPTS / "profile.py"), "--no-build", "--build-dir",
             str(self.root / "build"), "--ncu", str(HERE / "fake_ncu.py"), *options],
            capture_output=True, text=True, env=environment(**env), cwd=self.root)

    def tearDown(self):
        self.tmp.cleanup()

    def test_table_markdown_and_csv(self):
        proc = self.run_profile("--size", "512", "--markdown", "counters.md",
                                "--csv", "counters.csv")
        md, table = self.root / "counters.md", self.root / "counters.csv"
        self.assertEqual(proc.returncode, 0, proc.stderr)
        header = proc.stdout.splitlines()[0].split()
        self.assertEqual(header[-2:], ["00_naive", "03_thread_tiling"])
        self.assertIn("Global load sectors per request", proc.stdout)
        self.assertIn("FFMA per shared load (warp level)", proc.stdout)
        markdown = md.read_text()
        self.assertIn("M = N = K = 512, Fixture GPU", markdown)
        self.assertIn("--kernel-name 'regex:(^|::)sgemm_' --launch-count 1 --metrics <metrics> "
                      "build/bin/<chapter> --verify-only --size 512", markdown)
        with open(table, newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], ["counter", "metric", "unit", "00_naive", "03_thread_tiling"])
        # The CSV keeps every stall reason collected; the printed table only the largest.
        csv_stalls = {row[1] for row in rows if row[1] in ncu_profile.STALLS}
        self.assertEqual(csv_stalls, set(ncu_profile.STALLS))
        printed = [line for line in proc.stdout.splitlines() if line.startswith("Stall")]
        self.assertLess(len(printed), len(ncu_profile.STALLS))
        self.assertIn("has every stall reason collected", markdown)

    def test_shape_and_hand_picked_metrics(self):
        proc = self.run_profile("--m", "64", "--n", "32", "--k", "16", "--chapters", "03",
                                "--metrics", "dram__bytes_read.sum,smsp__inst_executed.sum")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("DRAM bytes read", proc.stdout)
        self.assertNotIn("Stall", proc.stdout)

    def test_a_chapter_that_cannot_use_the_gpu_is_named_and_left_out(self):
        proc = self.run_profile("--size", "64", "--markdown", "counters.md",
                                FAKE_CHAPTER_UNSUPPORTED="03_thread_tiling")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("error:", proc.stderr)
        self.assertEqual(proc.stdout.splitlines()[0].split()[-1], "00_naive")
        why = ("03_thread_tiling: not run on this GPU: needs compute capability 9.0 (Hopper: "
               "wgmma, sm_90a); device 0 is Fixture GPU, compute capability 0.0")
        self.assertIn(why, proc.stderr)
        self.assertEqual(proc.stdout.splitlines()[-1], why)
        self.assertIn(f"- {why}", (self.root / "counters.md").read_text())

    def test_when_no_chapter_can_use_the_gpu_one_line_and_exit_3(self):
        proc = self.run_profile("--chapters", "03", FAKE_CHAPTER_UNSUPPORTED="03_thread_tiling")
        self.assertEqual(proc.returncode, 3)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        self.assertEqual(len(errors), 1, proc.stderr)
        self.assertIn("no chosen chapter can use this GPU: 03_thread_tiling needs compute "
                      "capability 9.0", errors[0])

    def test_ncu_error_is_reported_and_exits_3(self):
        proc = self.run_profile(FAKE_NCU_ERROR="1")
        self.assertEqual(proc.returncode, 3)
        self.assertIn("ERR_NVGPUCTRPERM", proc.stderr)

    def test_no_gpu_stops_at_the_first_chapter(self):
        proc = self.run_profile(FAKE_CHAPTER_NO_GPU="1")
        self.assertEqual(proc.returncode, 3)
        self.assertIn("00_naive: no kernel matching regex:(^|::)sgemm_ was profiled (exit 3): "
                      "error: no CUDA GPU found", proc.stderr)
        self.assertNotIn("03_thread_tiling", proc.stderr)

    def test_missing_ncu_exits_3(self):
        proc = self.run_profile("--ncu", "/nonexistent/ncu")
        self.assertEqual(proc.returncode, 3)
        self.assertIn("ncu (Nsight Compute CLI) not found", proc.stderr)


if __name__ == "__main__":
    unittest.main()
