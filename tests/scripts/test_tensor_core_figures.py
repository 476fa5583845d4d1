#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/tensor_core_figures.py: it reads chapters 08's and 09's real tile
parameters, draws every figure their READMEs embed, and refuses a source it cannot read with one
`error:` line and exit 2. Exit 77 (skipped) without matplotlib."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SCRIPT = REPO / "scripts" / "tensor_core_figures.py"
sys.path.insert(0, str(REPO / "scripts"))

import tensor_core_figures  # noqa: E402


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

    def test_draws_every_figure_the_readmes_embed(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([sys.executable, str(SCRIPT), "--out", tmp],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
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
