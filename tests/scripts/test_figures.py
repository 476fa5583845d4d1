#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/figures.py: the parser finds every chapter's parameters in the committed
sources (and fails loudly when it cannot), the figures follow a changed tile, the address and
bank arithmetic they draw agrees with the chapters' READMEs, and bad input gives one "error:"
line with exit code 2.

Exit code 77 when matplotlib is not installed (CTest: SKIP_RETURN_CODE 77).
"""

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS, ScriptAssertions

import figures  # noqa: E402  (helpers puts scripts/ on the path)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# Figures in a chapter's folder that other scripts draw (and their tests check): 07's launcher
# model (scripts/rounds_figure.py) and its waves (scripts/shapes.py --waves).
DRAWN_ELSEWHERE = {"07_any_shape": {"two_rounds.png", "waves.png", "waves_split_k.png"}}


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPTS / "figures.py"), *map(str, args)],
                          capture_output=True, text=True)


def copy_chapters(root):
    """The chapter sources only, so a test can change a tile without touching the tree."""
    for chapter in figures.REQUIRED:
        source = figures.chapter_source(REPO, chapter)
        (Path(root) / chapter).mkdir(parents=True)
        shutil.copy(source, Path(root) / chapter / source.name)
    return Path(root)


def set_tile(root, chapter, values):
    path = figures.chapter_source(root, chapter)
    text, count = re.subn(r"^#define SGEMM_TILE .*$", "#define SGEMM_TILE " + values,
                          path.read_text(), count=1, flags=re.M)
    assert count == 1, f"{path}: no SGEMM_TILE line to change"
    path.write_text(text)
    return path


def set_define(root, chapter, name, value):
    path = figures.chapter_source(root, chapter)
    text, count = re.subn(r"^#define " + name + r" .*$", f"#define {name} {value}",
                          path.read_text(), count=1, flags=re.M)
    assert count == 1, f"{path}: no {name} line to change"
    path.write_text(text)
    return path


def set_constant(root, chapter, name, value):
    path = figures.chapter_source(root, chapter)
    text, count = re.subn(r"^constexpr int " + name + r" = \d+;",
                          f"constexpr int {name} = {value};", path.read_text(), count=1,
                          flags=re.M)
    assert count == 1, f"{path}: no constexpr int {name} line to change"
    path.write_text(text)
    return path


class ParserTest(unittest.TestCase):
    def test_finds_every_chapters_parameters(self):
        # Fails when a chapter's source no longer says its tile in a way the figures can read.
        for chapter, names in figures.REQUIRED.items():
            with self.subTest(chapter=chapter):
                values, params, path = figures.parameters(REPO, chapter)
                self.assertEqual(len(values), len(names))
                self.assertTrue(all(v > 0 for v in values), params)
                self.assertEqual(path.parent.name, chapter)

    def test_reads_the_fields_in_the_structs_order(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_chapters(tmp)
            set_tile(root, "05_bank_conflict", "64, 128, 16, 32, 64, 8, 8")
            values, _, _ = figures.parameters(root, "05_bank_conflict")
            self.assertEqual(values, [64, 128, 16, 32, 64, 8, 8])

    def test_missing_or_mismatched_tiles_are_errors_naming_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_chapters(tmp)
            path = set_tile(root, "06_double_buffer", "128, 256, 16")
            with self.assertRaisesRegex(figures.UsageError, re.escape(str(path))):
                figures.parameters(root, "06_double_buffer")
            path = figures.chapter_source(root, "03_thread_tiling")
            path.write_text(re.sub(r"#define SGEMM_TILE .*", "", path.read_text()))
            with self.assertRaisesRegex(figures.UsageError, "cannot find block_m"):
                figures.parameters(root, "03_thread_tiling")
            path = figures.chapter_source(root, "00_naive")
            path.write_text(path.read_text().replace("kBlockDimY", "kRows"))
            with self.assertRaisesRegex(figures.UsageError, "kBlockDimY"):
                figures.parameters(root, "00_naive")


class CommittedFiguresTest(unittest.TestCase):
    def test_committed_figures_match_the_committed_sources(self):
        # Every figure carries the parameters it was drawn from. A tile changed without
        # re-running the script leaves a README picture of a kernel that no longer exists.
        for chapter in figures.REQUIRED:
            pngs = sorted(p for p in (REPO / chapter / "figures").glob("*.png")
                          if p.name not in DRAWN_ELSEWHERE.get(chapter, ()))
            with self.subTest(chapter=chapter):
                self.assertTrue(pngs, f"{chapter}/figures/ has no figure")
                want = figures.signature(REPO, chapter)
                for png in pngs:
                    self.assertEqual(figures.stamped(png), want,
                                     f"{png} is out of date: run python3 scripts/figures.py")


class ArithmeticTest(unittest.TestCase):
    def test_sectors_per_request_match_chapters_00_and_01(self):
        # 00_naive/README.md: A 32, B 1 (broadcast), C 32; 01_coalescing/README.md: A 1, B 4, C 4.
        naive = figures.warp_requests(figures.warp_elements(32, rows_on_x=True))
        coalesced = figures.warp_requests(figures.warp_elements(32, rows_on_x=False))
        self.assertEqual([len(figures.sectors(c)) for c in naive.values()], [32, 1, 32])
        self.assertEqual([len(figures.sectors(c)) for c in coalesced.values()], [1, 4, 4])

    def test_lds128_wavefronts_match_the_table_of_chapter_05(self):
        # 05_bank_conflict/README.md: 04's layout A 2, B 8; warp tiling with the plain lane order
        # A 2, B 4; with the interleaved lanes A 2, B 2 (at 128 x 128 x 16, warp 32 x 64, 8 x 8).
        tile = dict(block_m=128, block_n=128, block_k=16, warp_m=32, warp_n=64, thread_m=8,
                    thread_n=8)

        def count(starts):
            return sum(len(waves) for _, waves in figures.lds128_wavefronts(starts))

        for layout, want in (("04", (2, 8)), ("plain", (2, 4)), ("05", (2, 2))):
            a, b = figures.fragment_starts(layout, tile)
            self.assertEqual((count(a), count(b)), want, layout)

    def test_the_wide_few_columns_layout_matches_the_kernel(self):
        # 07_any_shape/any_shape.cu: four warps of 4 row groups of 4 rows (64 rows a block), two
        # passes over a 64-k chunk, 4 x 24 = 96 sums a lane, halved at offsets 4, 2, 1 down to 12.
        _, params, path = figures.parameters(REPO, "07_any_shape")
        layout = figures.wide_layout(path, *(params[n] for n in (
            "kThinThreads", "kThinMax", "kFewColsMax", "kWideChunk", "kWideLanesK",
            "kWideRowsPerLane")))
        self.assertEqual({n: layout[n] for n in ("rows", "per_warp", "passes", "values",
                                                  "per_lane", "lanes_per_row", "steps")},
                         dict(rows=64, per_warp=16, passes=2, values=96, per_lane=12,
                              lanes_per_row=2, steps=[4, 2, 1]))

    def test_the_reduce_scatter_leaves_lane_k_its_own_values(self):
        # reduce_scatter: lane l ends with values lane_k * kPerLane .. + kPerLane - 1 (lane 9 of
        # 8-lane groups: lane_k 1, v[12 .. 23], row 0 of its group, columns 12-23).
        for values, lanes in ((96, 8), (128, 32), (96, 16)):
            ranges = figures.scatter_ranges(values, lanes)
            per_lane = values // lanes
            self.assertEqual(len(ranges), lanes.bit_length() - 1)
            self.assertEqual(ranges[-1], [(i * per_lane, i * per_lane + per_lane - 1)
                                          for i in range(lanes)])
        self.assertEqual(figures.scatter_ranges(96, 8)[0], [(0, 47)] * 4 + [(48, 95)] * 4)

    def test_a_bank_conflict_is_one_extra_wavefront(self):
        # Lanes 0 and 4 of every group of 8 on the same bank, different words: 2 per group.
        starts = [32 * (lane % 8 // 4) + 4 * (lane % 4) + 512 * (lane // 8) for lane in range(32)]
        groups = figures.lds128_wavefronts(starts)
        self.assertEqual([len(waves) for _, waves in groups], [2, 2, 2, 2])


class CommandTest(ScriptAssertions, unittest.TestCase):
    def test_draws_every_chapter_small_and_follows_the_tile(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_chapters(Path(tmp) / "src")
            set_tile(root, "06_double_buffer", "128, 128, 16, 64, 32, 8, 8, 2")
            out = Path(tmp) / "out"
            proc = run("--root", root, "--out", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("block_m = 128, block_n = 128, block_k = 16, stages = 2", proc.stdout)
            pngs = sorted(out.glob("*/*.png"))
            self.assertEqual(len(pngs), 11, proc.stdout)
            for chapter in figures.REQUIRED:
                self.assertTrue(list((out / chapter).glob("*.png")), f"{chapter}: no figure")
            pipeline = out / "06_double_buffer" / "pipeline.png"
            self.assertIn("stages = 2", figures.stamped(pipeline))
            for png in pngs:
                self.assertEqual(png.read_bytes()[:8], PNG_SIGNATURE, png)
                self.assertLess(png.stat().st_size, 150_000, f"{png} is too big for a README")

    def test_chapters_option(self):
        with tempfile.TemporaryDirectory() as out:
            proc = run("--chapters", "05", "--out", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(sorted(p.name for p in Path(out).glob("*/*.png")),
                             ["banks.png", "hierarchy.png"])

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assert_one_error_line(run("--chapters", "42", "--out", tmp), "'42'")
            a_file = Path(tmp) / "README.md"
            a_file.write_text("x\n")
            self.assert_one_error_line(run("--chapters", "02", "--out", a_file), a_file)
            self.assert_one_error_line(run("--chapters", "02", "--out", "/proc/x"), "/proc/x")
            root = copy_chapters(Path(tmp) / "src")
            path = set_tile(root, "02_smem_tiling", "32, 32")
            self.assert_one_error_line(run("--root", root, "--chapters", "02", "--out", tmp),
                                       path, "2 values")
            self.assert_one_error_line(run("--bogus"), "--bogus")
            path = set_define(root, "07_any_shape", "SGEMM_FEW_COLS_STAGES", 1)
            self.assert_one_error_line(run("--root", root, "--chapters", "07", "--out", tmp),
                                       path, "at least 2")

    def test_the_few_columns_figure_follows_the_source(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_chapters(Path(tmp) / "src")
            set_define(root, "07_any_shape", "SGEMM_FEW_COLS_STAGES", 2)
            proc = run("--root", root, "--chapters", "07", "--out", Path(tmp) / "out")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            png = Path(tmp) / "out" / "07_any_shape" / "few_columns.png"
            self.assertIn("SGEMM_FEW_COLS_STAGES = 2", figures.stamped(png))

    def test_the_wide_few_columns_figure_follows_the_source(self):
        # 16 lanes along k: 2 row groups a warp, 32 rows a block, 4 steps; 20 columns.
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_chapters(Path(tmp) / "src")
            set_constant(root, "07_any_shape", "kWideLanesK", 16)
            set_constant(root, "07_any_shape", "kFewColsMax", 20)
            proc = run("--root", root, "--chapters", "07", "--out", Path(tmp) / "out")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("kFewColsMax = 20, kWideChunk = 64, kWideLanesK = 16, "
                          "kWideRowsPerLane = 4", proc.stdout)
            png = Path(tmp) / "out" / "07_any_shape" / "few_columns_wide.png"
            self.assertEqual(png.read_bytes()[:8], PNG_SIGNATURE)
            self.assertIn("kWideLanesK = 16", figures.stamped(png))
            self.assertIn("kFewColsMax = 20", figures.stamped(png))

    def test_impossible_wide_few_columns_constants_are_refused(self):
        # What the kernel's static_asserts refuse, or no wide layout at all: one line each,
        # naming the source.
        for name, value, message in (("kWideLanesK", 3, "power of two"),
                                     ("kWideChunk", 48, "do not cover a chunk's k"),
                                     ("kFewColsMax", 23, "whole columns of one row"),
                                     ("kFewColsMax", 16, "no wide few-columns layout"),
                                     ("kWideRowsPerLane", 0, "must be positive")):
            with self.subTest(name=name, value=value), tempfile.TemporaryDirectory() as tmp:
                root = copy_chapters(Path(tmp) / "src")
                path = set_constant(root, "07_any_shape", name, value)
                self.assert_one_error_line(run("--root", root, "--chapters", "07", "--out", tmp),
                                           path, message)

    def test_the_row_copies_figure_follows_the_small_tile(self):
        # 07's SmallTile is read from its `using` line; a thread's copies follow the plan.
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_chapters(Path(tmp) / "src")
            path = figures.chapter_source(root, "07_any_shape")
            text = path.read_text()
            self.assertIn("using SmallTile = Tile<64, 128, 16, 32, 64, 8, 8, 3>;", text)
            path.write_text(text.replace("using SmallTile = Tile<64, 128, 16, 32, 64, 8, 8, 3>;",
                                         "using SmallTile = Tile<64, 256, 16, 32, 64, 8, 16, 3>;"))
            proc = run("--root", root, "--chapters", "07", "--out", Path(tmp) / "out")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            png = Path(tmp) / "out" / "07_any_shape" / "row_copies.png"
            self.assertIn("SmallTile::kBlockN = 256", figures.stamped(png))
            path.write_text(text.replace("using SmallTile = Tile<64, 128, 16, 32, 64, 8, 8, 3>;",
                                         "using SmallTile = Tile<64, 32, 16, 32, 32, 4, 8, 3>;"))
            self.assert_one_error_line(run("--root", root, "--chapters", "07", "--out", tmp),
                                       path, "more than 32 chunks")

    def test_copy_plans(self):
        # 64 x 128 tile, 128 threads: thread 0 copies column 0 of all 16 rows (a thread per
        # chunk), or columns 0, 32, 64, 96 of rows 0, 4, 8, 12 (a warp per row); every cell of
        # the K tile is copied once in both.
        plans = figures.copy_plans(128, 16, 128)
        for plan, cells in (("thread", {(r, 0) for r in range(16)}),
                            ("row", {(r, c) for r in (0, 4, 8, 12) for c in (0, 32, 64, 96)})):
            owner = plans[plan]
            self.assertEqual({(r, c) for r in range(16) for c in range(128) if owner[r][c] == 0},
                             cells, plan)
            counts = [sum(row.count(t) for row in owner) for t in range(128)]
            self.assertEqual(set(counts), {16}, plan)


if __name__ == "__main__":
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib not installed: skipped")
        sys.exit(77)
    unittest.main()
