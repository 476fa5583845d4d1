#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/tensor_core_figures.py: it reads chapters 08's and 09's real tile
parameters (08's Hopper tile too, and follows a changed SGEMM_HOPPER_TILE), draws every figure
their READMEs embed and wgmma.png, keeps the committed wgmma.png in step with 08's source, and
refuses a source it cannot read with one `error:` line and exit 2. Exit 77 (skipped) without
matplotlib."""

import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

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

    def test_committed_wgmma_figure_matches_the_source(self):
        # Fails when SGEMM_HOPPER_TILE (or HopperTile's constants) changed without a redraw.
        self.assertEqual(stamped(REPO / "08_tensor_cores" / "figures" / "wgmma.png"),
                         tensor_core_figures.hopper_signature(
                             tensor_core_figures.hopper_tile_of(SOURCE08)),
                         "08_tensor_cores/figures/wgmma.png is out of date: run "
                         "python3 scripts/tensor_core_figures.py")

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
