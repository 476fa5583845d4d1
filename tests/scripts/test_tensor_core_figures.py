#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/tensor_core_figures.py: it reads chapters 08's and 09's real tile
parameters and chapter 10's wgmma tile (and follows a changed SGEMM_TILE or in-flight switch),
draws every figure their READMEs embed, plays chapters 08's and 10's pipelines out in the order
the kernels run them, mirrors common/split_k.h's launch plan (checked against the C++ test's
cases), keeps every committed figure in step with what it is drawn from (08's tile, 10's tile and
switches, 09's measured CSV, the script's fragment layout, bit formats and schematic durations),
and refuses a source it cannot read with one `error:` line and exit 2. Exit 77 (skipped) without
matplotlib."""

import csv
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parent.parent.parent
SCRIPT = REPO / "scripts" / "tensor_core_figures.py"
sys.path.insert(0, str(REPO / "scripts"))

import tensor_core_figures  # noqa: E402
from figures import stamped  # noqa: E402

SOURCE08 = REPO / "08_tensor_cores" / "tensor_cores.cu"
SOURCE10 = REPO / tensor_core_figures.HOPPER_SOURCE
CHAPTERS = ("08_tensor_cores", "09_3xtf32", "10_wgmma")


def edit(path, pattern, replacement):
    """path's one line matching pattern (a whole line), replaced."""
    text, count = re.subn(pattern, replacement, Path(path).read_text(encoding="utf-8"),
                          flags=re.M)
    assert count == 1, f"{path}: no single line matches {pattern}"
    Path(path).write_text(text, encoding="utf-8")


def with_hopper_tile(root, values):
    """A copy of 10's source under root whose default SGEMM_TILE is `values`."""
    path = Path(root) / tensor_core_figures.HOPPER_SOURCE
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SOURCE10, path)
    edit(path, r"^#define SGEMM_TILE .*$", "#define SGEMM_TILE " + values)
    return path


def with_in_flight(root, value):
    """Root's copy of 10's source, its default SGEMM_WGMMA_IN_FLIGHT set to `value`."""
    edit(Path(root) / tensor_core_figures.HOPPER_SOURCE, r"^#define SGEMM_WGMMA_IN_FLIGHT .*$",
         f"#define SGEMM_WGMMA_IN_FLIGHT {value}")


def with_tile(root, values):
    """Root's copy of 08's source, its default SGEMM_TILE set to `values`."""
    edit(Path(root) / "08_tensor_cores" / "tensor_cores.cu", r"^#define SGEMM_TILE .*$",
         "#define SGEMM_TILE " + values)


def sources(root):
    """Copies of the sources and the measured CSV the figures are drawn from, under root."""
    for source in (SOURCE08, SOURCE10, REPO / tensor_core_figures.PROMOTION_CSV,
                   REPO / tensor_core_figures.SOURCE09, REPO / tensor_core_figures.PARTS_TXT,
                   REPO / tensor_core_figures.SPLIT_HEADER):
        target = Path(root) / source.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)


def remeasure(table):
    """The promotion CSV as if measured again: its first row 1 TFLOP/s faster."""
    with open(table, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    rows[0]["tflops"] = str(float(rows[0]["tflops"]) + 1)
    with open(table, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        writer.writerows(rows)


def draw(*options):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, options)], capture_output=True,
                          text=True)


class TensorCoreFiguresTest(unittest.TestCase):
    def test_reads_the_chapters_tiles(self):
        for source in (SOURCE08, REPO / "09_3xtf32" / "3xtf32.cu"):
            tile = tensor_core_figures.tile_of(source)
            self.assertTrue(tile, source)
            self.assertTrue(all(isinstance(v, int) and v > 0 for v in tile.values()), tile)

    def test_unreadable_source_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "bad.cu"
            bad.write_text("// no tile here\n")
            with self.assertRaises(tensor_core_figures.UsageError):
                tensor_core_figures.tile_of(bad)
            with self.assertRaises(tensor_core_figures.UsageError):
                tensor_core_figures.hopper_tile_of(bad)

    def test_reads_the_hopper_tile(self):
        tile = tensor_core_figures.hopper_tile_of(SOURCE10)
        self.assertEqual(set(tile), set(tensor_core_figures.HOPPER_FIELDS))
        self.assertEqual(tile["wgmma_n"], tile["kWgmmaN"])
        self.assertIn(tile["kInFlight"], (0, 1))
        with tempfile.TemporaryDirectory() as tmp:
            # The values land on HopperTile's template parameters, in their order.
            changed = tensor_core_figures.hopper_tile_of(with_hopper_tile(tmp, "128, 64, 3"))
            self.assertEqual((changed["kBlockM"], changed["kBlockN"], changed["kStages"]),
                             (128, 64, 3))
            self.assertEqual(changed["kBlockK"], tile["kBlockK"])
            # kInFlight is the default of the switch the struct reads.
            with_in_flight(tmp, 0)
            self.assertEqual(tensor_core_figures.hopper_tile_of(
                Path(tmp) / tensor_core_figures.HOPPER_SOURCE)["kInFlight"], 0)
            for values, message in (("128, 64", "has 2 values but HopperTile has 3"),
                                    ("192, 64, 3", "kBlockM is not a multiple of kWgmmaN"),
                                    ("128, 64, 2", "fewer than 2 \\+ kInFlight stages"),
                                    ("128, x, 3", "not a list of integers")):
                with self.assertRaisesRegex(tensor_core_figures.UsageError, message):
                    tensor_core_figures.hopper_tile_of(with_hopper_tile(tmp, values))
            path = with_hopper_tile(tmp, "128, 64, 3")
            path.write_text(re.sub(r"using \w+ = HopperTile<SGEMM_TILE>;", "",
                                   path.read_text(encoding="utf-8")), encoding="utf-8")
            with self.assertRaisesRegex(tensor_core_figures.UsageError, "no `using"):
                tensor_core_figures.hopper_tile_of(path)

    def test_swizzle_spreads_a_k_step_over_all_banks(self):
        # The claim wgmma.png draws: one k-step's chunks of rows 0-7 hit every bank once with
        # the swizzle, and the same 4 banks 8 times without it.
        for k_step in range(4):
            for hits in tensor_core_figures.k_step_banks(k_step, swizzled=True):
                self.assertEqual(hits, [1] * 32)
            for hits in tensor_core_figures.k_step_banks(k_step, swizzled=False):
                self.assertEqual(sorted(hits), [0] * 28 + [8] * 4)

    def test_pipeline_plays_out_the_kernels_order(self):
        # What pipeline.png draws must be what the kernel does, whatever the durations.
        for stages, in_flight in ((4, 1), (3, 1), (4, 0), (2, 0), (5, 1)):
            for durations in ({}, {"latency": 30.0}, {"group": 12.0}):
                with self.subTest(stages=stages, in_flight=in_flight, durations=durations):
                    tiles = stages + 4
                    plan = tensor_core_figures.pipeline_schedule(stages, in_flight, tiles,
                                                                 durations)
                    copies, steps, groups = plan["copies"], plan["steps"], plan["groups"]
                    self.assertEqual(plan["ahead"], stages - 1 - in_flight)
                    self.assertEqual(sorted(copies), list(range(tiles)))
                    for t in range(tiles):
                        stage, issued, landed = copies[t]
                        self.assertEqual(stage, t % stages)
                        # Tile t's copies are issued in the step kAhead tiles earlier (or the
                        # prologue) and have landed before the tile is rounded.
                        if t >= plan["ahead"]:
                            self.assertEqual(issued, steps[t - plan["ahead"]]["issue"][0])
                        self.assertLessEqual(landed, steps[t]["round"][0])
                        # A stage is refilled only once the wgmma that read it are done.
                        if t >= stages:
                            self.assertGreaterEqual(issued, groups[t - stages][1])
                        # At the barrier at most kInFlight groups still run.
                        barrier = steps[t]["barrier"][0]
                        running = [g for g in range(t) if groups[g][1] > barrier]
                        self.assertLessEqual(len(running), in_flight)
                        # Groups run one after another, each issued at the end of its step.
                        self.assertGreaterEqual(groups[t][0], steps[t]["wgmma_issue"][1])
                        if t > 0:
                            self.assertGreaterEqual(groups[t][0], groups[t - 1][1])
                    self.assertEqual(plan["end"], max(groups[tiles - 1][1],
                                                      steps[-1]["wgmma_issue"][1]))
        # With one group in flight the tensor cores run group t - 1 while tile t is rounded.
        plan = tensor_core_figures.pipeline_schedule(4, 1, 8)
        for t in range(3, 8):
            self.assertLess(plan["steps"][t]["round"][0], plan["groups"][t - 1][1])

    def test_08_pipeline_plays_out_the_kernels_order(self):
        # What 08's pipeline.png draws must be the prefetched main loop, whatever the durations.
        for stages, k_steps in ((4, 2), (3, 4), (2, 2), (5, 2)):
            for durations in ({}, {"copy_latency": 60.0}, {"load_latency": 9.0}):
                with self.subTest(stages=stages, k_steps=k_steps, durations=durations):
                    tiles = stages + 3
                    plan = tensor_core_figures.tile08_pipeline(stages, k_steps, tiles, durations)
                    copies, issues, barriers = plan["copies"], plan["issues"], plan["barriers"]
                    loads, mmas = plan["loads"], plan["mmas"]
                    self.assertEqual(sorted(mmas), [(t, s) for t in range(tiles)
                                                    for s in range(k_steps)])
                    for t in range(tiles):
                        stage, issued, landed, freed = copies[t]
                        self.assertEqual(stage, t % stages)
                        # The copies of tile t + kStages - 1 go at the top of iteration t,
                        # after the barrier of tile t - 1 freed that stage.
                        top = issues[t + stages - 1][0]
                        self.assertGreaterEqual(top, barriers[t - 1][1])
                        self.assertLessEqual(top, mmas[(t, 0)][0])
                        if t + stages in copies:
                            self.assertGreaterEqual(copies[t + stages][1], freed)
                        # The barrier of tile t's last k-step waits for tile t + 1 and frees
                        # tile t's stage once every fragment of tile t was loaded.
                        self.assertLessEqual(copies[t + 1][2], barriers[t][0])
                        self.assertEqual(freed, barriers[t][1])
                        for s in range(k_steps):
                            self.assertLessEqual(loads[(t, s)][1], barriers[t][0])
                            # Step s + 1's loads are issued before step s is multiplied, and
                            # step s is multiplied only once its fragments arrived.
                            following = (t, s + 1) if s + 1 < k_steps else (t + 1, 0)
                            self.assertLessEqual(loads[following][1], mmas[(t, s)][0])
                            self.assertGreaterEqual(mmas[(t, s)][0], loads[(t, s)][2])
                        # The next tile's first loads cross the barrier before the last mma.
                        self.assertGreaterEqual(loads[(t + 1, 0)][0], barriers[t][1])
                        self.assertLessEqual(barriers[t][1], mmas[(t, k_steps - 1)][0])
                        if t > 0:
                            self.assertGreaterEqual(mmas[(t, 0)][0],
                                                    mmas[(t - 1, k_steps - 1)][1])

    def test_split_k_plan_mirrors_common_split_k(self):
        # The cases of tests/host/split_k_test.cpp, with 08's tiles read from its source.
        big, small = tensor_core_figures.tile_specs(tensor_core_figures.tile_of(SOURCE08),
                                                    tensor_core_figures.small_tile_of(SOURCE08))
        self.assertEqual(big, dict(block_m=128, block_n=256, block_k=16, stages=4, slots=132))
        self.assertEqual(small, dict(block_m=64, block_n=128, block_k=32, stages=3, slots=264))
        plan_split_k = tensor_core_figures.plan_split_k
        self.assertEqual(plan_split_k(132, 132, 8192, 32, 3), (1, 8192))
        self.assertEqual(plan_split_k(1000, 132, 8192, 32, 3), (1, 8192))
        self.assertEqual(plan_split_k(64, 132, 8192, 32, 3), (2, 4096))
        self.assertEqual(plan_split_k(1, 264, 150, 32, 3), (1, 150))
        self.assertLessEqual(plan_split_k(1, 1000, 16 * 32, 32, 3)[0], 5)

        def plan(m, n, k, split_k=True):
            return tensor_core_figures.plan_tiles(m, n, k, big, small, 132, split_k)
        self.assertEqual(plan(8192, 8192, 8192), (False, (1, 8192)))
        self.assertFalse(plan(2048, 2048, 2048)[0])  # a tie keeps the big tile
        self.assertTrue(plan(1536, 1536, 1536)[0])
        self.assertEqual(plan(8192, 128, 8192), (True, (2, 4096)))
        self.assertEqual(plan(64, 64, 1 << 20)[0:2], (True, (256, 4096)))
        self.assertEqual(plan(64, 64, 1 << 20, split_k=False), (True, (1, 1 << 20)))
        # The README's table ("Every shape"): 96 x 96 x 1048576.
        self.assertEqual(plan(96, 96, 1 << 20), (True, (132, 7968)))
        cost = tensor_core_figures.plan_cost
        self.assertEqual(cost(2, 132, 64, 128, (132, 7968)), 130547712)
        self.assertEqual(cost(1, 132, 128, 256, plan_split_k(1, 132, 1 << 20, 16, 4)), 260571136)
        self.assertEqual(cost(128, 132, 128, 256, (1, 2048)), cost(512, 132, 64, 128, (1, 2048)))

    def test_the_split_limit_is_read_from_common_split_k(self):
        # kMaxSplits comes from the header (here 256), never a copy: a header that says
        # otherwise moves the plan's cap, one without it is a usage error.
        self.assertEqual(tensor_core_figures.read_max_splits(REPO), 256)
        self.assertEqual(tensor_core_figures.max_splits(), 256)
        with tempfile.TemporaryDirectory() as tmp:
            header = Path(tmp) / "common" / "split_k.h"
            header.parent.mkdir()
            text = (REPO / "common" / "split_k.h").read_text()
            header.write_text(text.replace("kMaxSplits = 256;", "kMaxSplits = 64;"))
            self.assertEqual(tensor_core_figures.read_max_splits(Path(tmp)), 64)
            header.write_text(text.replace("kMaxSplits = 256;", "kMaxSlices = 256;"))
            with self.assertRaisesRegex(tensor_core_figures.UsageError, "kMaxSplits"):
                tensor_core_figures.read_max_splits(Path(tmp))

    def test_rounds_plan_mirrors_common_split_k(self):
        # The cases of tests/host/split_k_test.cpp's RoundsCutKWhereTheLastRoundIdles, with 09's
        # tile read from its source and its constants as 09 passes them on the H100.
        tile = tensor_core_figures.tile_of(REPO / tensor_core_figures.SOURCE09)
        self.assertEqual((tile["block_m"], tile["block_n"], tile["block_k"], tile["stages"]),
                         (128, 128, 32, 3))
        consts = tensor_core_figures.rounds_constants(REPO / tensor_core_figures.SOURCE09)
        self.assertEqual(consts, dict(kFp32PeakShare=0.87, kDramShare=0.90, kLaunchSeconds=1.9e-6,
                                      kFourByteLoss=0.15))

        def plan(m, n, k):
            tiles = -(-m // 128) * -(-n // 128)
            return tensor_core_figures.plan_split_k_rounds(
                m, n, k, tiles, 132, 128, 128, 32, 3, 0.87 * 66.9e12, 0.90 * 3352e9, 1.9e-6)[0]
        self.assertEqual(plan(1536, 1536, 1536), (4, 384))
        self.assertEqual(plan(1001, 3003, 5008)[0], 2)
        self.assertEqual(plan(4096, 4096, 4096), (1, 4096))
        self.assertEqual(plan(8192, 8192, 8192), (1, 8192))
        self.assertEqual(plan(4096, 4096, 256), (1, 256))
        self.assertEqual(plan(1664, 1664, 64), (1, 64))
        # The figure's second shape: padded to K = 1024, two slices (the model's miss).
        # 09's padding rule: 2049 x 2051 x 1023 is copied (K -> 1024), 777 x 333 x 16383 is not
        # (its copies would cost a third of the multiply).
        self.assertEqual(tensor_core_figures.kernel_k(2049, 2051, 1023, 0.15), 1024)
        self.assertEqual(tensor_core_figures.kernel_k(777, 333, 16383, 0.15), 16383)
        self.assertEqual(plan(2049, 2051, 1024), (2, 512))
        times = tensor_core_figures.measured_plans(REPO / tensor_core_figures.PARTS_TXT)
        self.assertEqual(sorted(times[(1536, 1536, 1536)]), ["default", "no_split_rounds"])

    def test_committed_figures_match_their_sources(self):
        # Fails when a tile, 10's tile or switches, the promotion CSV, the fragment layout, the
        # bit formats or the schematic durations changed without a redraw: the README would show
        # what no longer exists.
        self.assertEqual(tensor_core_figures.out_of_date(REPO), [])

    def test_a_stale_figure_of_each_kind_is_seen(self):
        # A copy of the committed figures and their inputs; change one input of each kind and
        # only the figures drawn from it are out of date, until the script redraws them.
        def stale(root):
            return [line.split(" ")[0] for line in tensor_core_figures.out_of_date(root)]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for chapter in CHAPTERS:
                shutil.copytree(REPO / chapter / "figures", root / chapter / "figures",
                                dirs_exist_ok=True)
            sources(root)
            table = root / tensor_core_figures.PROMOTION_CSV
            self.assertEqual(stale(root), [])
            with_tile(root, "128, 128, 32, 64, 64, 3")
            self.assertIn("08_tensor_cores/figures/banks.png is out of date: run "
                          "python3 scripts/tensor_core_figures.py",
                          tensor_core_figures.out_of_date(root))
            self.assertEqual(stale(root), ["08_tensor_cores/figures/warp_tile.png",
                                           "08_tensor_cores/figures/banks.png",
                                           "08_tensor_cores/figures/pipeline.png",
                                           "08_tensor_cores/figures/split_k.png",
                                           "08_tensor_cores/figures/prepared.png"])
            sources(root)
            edit(root / "08_tensor_cores" / "tensor_cores.cu", r"^using SmallTile = .*$",
                 "using SmallTile = Tile<64, 64, 32, 32, 32, 3>;")
            self.assertEqual(stale(root), ["08_tensor_cores/figures/split_k.png"])
            sources(root)
            edit(root / "08_tensor_cores" / "tensor_cores.cu",
                 r"^#define SGEMM_PREPARED_TILE .*$",
                 "#define SGEMM_PREPARED_TILE 128, 128, 32, 64, 64, 4")
            self.assertEqual(stale(root), ["08_tensor_cores/figures/prepared.png"])
            sources(root)
            with mock.patch.dict(tensor_core_figures.PIPELINE08_DURATIONS, {"mma": 1.0}):
                self.assertEqual(stale(root), ["08_tensor_cores/figures/pipeline.png"])
            with_hopper_tile(root, "128, 64, 3")
            self.assertEqual(stale(root), ["10_wgmma/figures/wgmma.png",
                                           "10_wgmma/figures/pipeline.png"])
            sources(root)
            with_in_flight(root, 0)
            self.assertEqual(stale(root), ["10_wgmma/figures/pipeline.png"])
            sources(root)
            with mock.patch.dict(tensor_core_figures.PIPELINE_DURATIONS, {"group": 1.0}):
                self.assertEqual(stale(root), ["10_wgmma/figures/pipeline.png"])
            remeasure(table)
            self.assertEqual(stale(root), ["09_3xtf32/figures/promotion.png"])
            sources(root)
            wrong = lambda lane: [(lane // 4, lane % 4)] * 4  # noqa: E731
            with mock.patch.object(tensor_core_figures, "c_fragment", wrong):
                self.assertEqual(stale(root), ["08_tensor_cores/figures/fragments.png"])
            with mock.patch.object(tensor_core_figures, "SPLIT_SHIFT", 12):
                self.assertEqual(stale(root), ["09_3xtf32/figures/split.png"])
            edit(root / tensor_core_figures.SOURCE09, r"^#define SGEMM_TILE_BARRIER .*$",
                 "#define SGEMM_TILE_BARRIER 0")
            self.assertEqual(stale(root), ["09_3xtf32/figures/tile_end.png"])
            sources(root)
            # A figure saved without a stamp is out of date too.
            from PIL import Image
            plain = root / "09_3xtf32" / "figures" / "split.png"
            with Image.open(plain) as image:
                image.load()
            image.save(plain)
            self.assertEqual(stale(root), ["09_3xtf32/figures/split.png"])
            # The redraw stamps every figure with what it was drawn from.
            with_tile(root, "128, 128, 32, 64, 64, 3")
            with_hopper_tile(root, "128, 64, 3")
            remeasure(table)
            self.assertEqual(len(stale(root)), 9)
            proc = draw("--root", tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(stale(root), [])
            self.assertIn("block_n = 128",
                          stamped(root / "08_tensor_cores" / "figures" / "warp_tile.png"))
            self.assertIn("kStages = 3, kInFlight = 1",
                          stamped(root / "10_wgmma" / "figures" / "pipeline.png"))
            for name in ("pipeline.png", "split_k.png"):
                self.assertIn("block_k = 32, warp_m = 64, warp_n = 64, stages = 3",
                              stamped(root / "08_tensor_cores" / "figures" / name))

    def test_tile_end_waits_as_the_barriers_do(self):
        # __syncthreads(): every warp's last mma starts when the slowest split ends; the
        # mbarrier: each warp's starts at its own split's end, and each waits after it for that
        # same moment; the tensor cores idle less.
        lanes = {b: tensor_core_figures.tile_end_timings(8, 4, b) for b in (0, 1)}
        everyone = max(bar[1] for bars in lanes[0] for bar in bars if bar[2] == "split")
        for w in range(8):
            mma0 = [bar for bar in lanes[0][w] if bar[2] == "mma"]
            mma1 = [bar for bar in lanes[1][w] if bar[2] == "mma"]
            split1 = [bar for bar in lanes[1][w] if bar[2] == "split"][0]
            self.assertEqual(len(mma0), 4)
            self.assertAlmostEqual(mma0[-1][0], everyone)
            self.assertAlmostEqual(mma1[-1][0], split1[1])
            nxt = [bar for bar in lanes[1][w] if bar[2] == "next"][0]
            self.assertGreaterEqual(nxt[0], everyone - 1e-9)
        idle = {b: sum(e - s for s, e in tensor_core_figures.tile_end_idle(lanes[b]))
                for b in (0, 1)}
        self.assertGreater(idle[0], idle[1])
        self.assertGreater(idle[1], 0)

    def test_wgmma_figures_follow_the_source(self):
        with tempfile.TemporaryDirectory() as tmp:
            sources(tmp)
            with_hopper_tile(tmp, "128, 64, 3")
            out = Path(tmp) / "out"
            proc = draw("--root", tmp, "--out", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("kBlockM = 128, kBlockN = 64, kBlockK = 32, kStages = 3",
                          stamped(out / "10_wgmma" / "wgmma.png"))
            self.assertIn("kBlockK = 32, kStages = 3, kInFlight = 1",
                          stamped(out / "10_wgmma" / "pipeline.png"))
            with_hopper_tile(tmp, "128, 64")
            proc = draw("--root", tmp, "--out", out)
            self.assertEqual(proc.returncode, 2)
            self.assertRegex(proc.stderr, r"^error: .*SGEMM_TILE has 2 values.*\n$")

    def test_draws_every_figure_the_readmes_embed(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = draw("--out", tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            for name in ("wgmma.png", "pipeline.png"):
                self.assertGreater((Path(tmp) / "10_wgmma" / name).stat().st_size, 1000)
            for name in ("pipeline.png", "split_k.png"):
                self.assertGreater((Path(tmp) / "08_tensor_cores" / name).stat().st_size, 1000)
            for chapter in CHAPTERS:
                readme = (REPO / chapter / "README.md").read_text(encoding="utf-8")
                for png in sorted((REPO / chapter / "figures").glob("*.png")):
                    if f"figures/{png.name}" in readme:
                        drawn = Path(tmp) / chapter / png.name
                        self.assertTrue(drawn.is_file(), f"{drawn} was not drawn")
                        self.assertGreater(drawn.stat().st_size, 1000)


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not installed: skipped")
        sys.exit(77)
    unittest.main()
