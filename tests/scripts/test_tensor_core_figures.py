#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/tensor_core_figures.py: it reads chapters 08's and 09's real tile
parameters (08's Hopper tile too, and follows a changed SGEMM_HOPPER_TILE), draws every figure
their READMEs embed and wgmma.png, keeps every committed figure in step with what it is drawn from
(08's tile and Hopper tile, 09's measured CSV, the script's fragment layout and bit formats), and
refuses a source it cannot read with one `error:` line and exit 2. Exit 77 (skipped) without
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


def with_hopper_tile(root, values):
    """A copy of 08's source under root whose default SGEMM_HOPPER_TILE is `values`."""
    path = Path(root) / "08_tensor_cores" / "tensor_cores.cu"
    path.parent.mkdir(parents=True, exist_ok=True)
    text, count = re.subn(r"^#define SGEMM_HOPPER_TILE .*$", "#define SGEMM_HOPPER_TILE " + values,
                          SOURCE08.read_text(encoding="utf-8"), flags=re.M)
    assert count == 1, f"{SOURCE08}: no SGEMM_HOPPER_TILE line to change"
    path.write_text(text, encoding="utf-8")
    return path


def with_tile(root, values):
    """Root's copy of 08's source, its default SGEMM_TILE set to `values`."""
    path = Path(root) / "08_tensor_cores" / "tensor_cores.cu"
    text, count = re.subn(r"^#define SGEMM_TILE .*$", "#define SGEMM_TILE " + values,
                          path.read_text(encoding="utf-8"), flags=re.M)
    assert count == 1, f"{path}: no SGEMM_TILE line to change"
    path.write_text(text, encoding="utf-8")


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


class TensorCoreFiguresTest(unittest.TestCase):
    def test_reads_the_chapters_tiles(self):
        for source in (REPO / "08_tensor_cores" / "tensor_cores.cu", REPO / "09_3xtf32" / "3xtf32.cu"):
            tile = tensor_core_figures.tile_of(source)
            self.assertTrue(tile, source)
            self.assertTrue(all(isinstance(v, int) and v > 0 for v in tile.values()), tile)

    def test_unreadable_source_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "bad.cu"
            bad.write_text("// no tile here\n")
            with self.assertRaises(tensor_core_figures.UsageError):
                tensor_core_figures.tile_of(bad)

    def test_reads_the_hopper_tile(self):
        tile = tensor_core_figures.hopper_tile_of(SOURCE08)
        self.assertEqual(set(tile), set(tensor_core_figures.HOPPER_FIELDS))
        self.assertEqual(tile["wgmma_n"], tile["kWgmmaN"])
        with tempfile.TemporaryDirectory() as tmp:
            # The values land on HopperTile's template parameters, in their order.
            changed = tensor_core_figures.hopper_tile_of(with_hopper_tile(tmp, "128, 64, 3"))
            self.assertEqual((changed["kBlockM"], changed["kBlockN"], changed["kStages"]),
                             (128, 64, 3))
            self.assertEqual(changed["kBlockK"], tile["kBlockK"])
            for values, message in (("128, 64", "has 2 values but HopperTile has 3"),
                                    ("192, 64, 3", "kBlockM is not a multiple of kWgmmaN"),
                                    ("128, x, 3", "not a list of integers")):
                with self.assertRaisesRegex(tensor_core_figures.UsageError, message):
                    tensor_core_figures.hopper_tile_of(with_hopper_tile(tmp, values))
            path = with_hopper_tile(tmp, "128, 64, 3")
            path.write_text(re.sub(r"using \w+ = HopperTile<SGEMM_HOPPER_TILE>;", "",
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

    def test_committed_figures_match_their_sources(self):
        # Fails when a tile, the Hopper tile, the promotion CSV, the fragment layout or the bit
        # formats changed without a redraw: the README would show what no longer exists.
        self.assertEqual(tensor_core_figures.out_of_date(REPO), [])

    def test_a_stale_figure_of_each_kind_is_seen(self):
        # A copy of the committed figures and their inputs; change one input of each kind and
        # only the figures drawn from it are out of date, until the script redraws them.
        def stale(root):
            return [line.split(" ")[0] for line in tensor_core_figures.out_of_date(root)]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for chapter in ("08_tensor_cores", "09_3xtf32"):
                shutil.copytree(REPO / chapter / "figures", root / chapter / "figures")
            source = root / "08_tensor_cores" / "tensor_cores.cu"
            shutil.copy(SOURCE08, source)
            table = root / tensor_core_figures.PROMOTION_CSV
            self.assertEqual(stale(root), [])
            with_tile(root, "128, 128, 32, 64, 64, 3")
            self.assertIn("08_tensor_cores/figures/banks.png is out of date: run "
                          "python3 scripts/tensor_core_figures.py",
                          tensor_core_figures.out_of_date(root))
            self.assertEqual(stale(root), ["08_tensor_cores/figures/warp_tile.png",
                                           "08_tensor_cores/figures/banks.png"])
            with_hopper_tile(root, "128, 64, 3")  # from 08's source: SGEMM_TILE as committed
            self.assertEqual(stale(root), ["08_tensor_cores/figures/wgmma.png"])
            shutil.copy(SOURCE08, source)
            remeasure(table)
            self.assertEqual(stale(root), ["09_3xtf32/figures/promotion.png"])
            shutil.copy(REPO / tensor_core_figures.PROMOTION_CSV, table)
            wrong = lambda lane: [(lane // 4, lane % 4)] * 4  # noqa: E731
            with mock.patch.object(tensor_core_figures, "c_fragment", wrong):
                self.assertEqual(stale(root), ["08_tensor_cores/figures/fragments.png"])
            with mock.patch.object(tensor_core_figures, "SPLIT_SHIFT", 12):
                self.assertEqual(stale(root), ["09_3xtf32/figures/split.png"])
            # A figure saved without a stamp (as these five were before) is out of date too.
            from PIL import Image
            plain = root / "09_3xtf32" / "figures" / "split.png"
            with Image.open(plain) as image:
                image.load()
            image.save(plain)
            self.assertEqual(stale(root), ["09_3xtf32/figures/split.png"])
            # The redraw stamps every figure with what it was drawn from.
            with_tile(root, "128, 128, 32, 64, 64, 3")
            remeasure(table)
            self.assertEqual(len(stale(root)), 4)
            proc = subprocess.run([sys.executable, str(SCRIPT), "--root", tmp],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(stale(root), [])
            self.assertIn("block_n = 128",
                          stamped(root / "08_tensor_cores" / "figures" / "warp_tile.png"))

    def test_wgmma_figure_follows_the_source(self):
        with tempfile.TemporaryDirectory() as tmp:
            with_hopper_tile(tmp, "128, 64, 3")
            shutil.copytree(REPO / "09_3xtf32" / "figures", Path(tmp) / "09_3xtf32" / "figures")
            proc = subprocess.run([sys.executable, str(SCRIPT), "--root", tmp, "--out",
                                   Path(tmp) / "out"], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("kBlockM = 128, kBlockN = 64, kBlockK = 32, kStages = 3",
                          stamped(Path(tmp) / "out" / "08_tensor_cores" / "wgmma.png"))
            with_hopper_tile(tmp, "128, 64")
            proc = subprocess.run([sys.executable, str(SCRIPT), "--root", tmp, "--out",
                                   Path(tmp) / "out"], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 2)
            self.assertRegex(proc.stderr, r"^error: .*SGEMM_HOPPER_TILE has 2 values.*\n$")

    def test_draws_every_figure_the_readmes_embed(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([sys.executable, str(SCRIPT), "--out", tmp],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertGreater((Path(tmp) / "08_tensor_cores" / "wgmma.png").stat().st_size, 1000)
            for chapter in ("08_tensor_cores", "09_3xtf32"):
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
