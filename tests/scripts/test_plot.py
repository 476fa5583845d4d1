#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/plot.py: it draws the three figures from the committed fixture
(tests/scripts/fixture/: the made-up "Fixture GPU", not a measurement) and from every results
folder committed under docs/results/ (the measured runs the README shows).

Exit code 77 when matplotlib is not installed (CTest: SKIP_RETURN_CODE 77).
"""

import importlib.util
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import HERE, SCRIPTS

FIXTURE = HERE / "fixture"
COMMITTED = sorted(p for p in (HERE.parent.parent / "docs" / "results").glob("*")
                   if (p / "results.json").is_file())
FIGURES = ["ladder_bar.png", "size_sweep.png", "roofline.png"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def plot(*args):
    return subprocess.run([sys.executable, str(SCRIPTS / "plot.py"), *map(str, args)],
                          capture_output=True, text=True)


class PlotTest(unittest.TestCase):
    def assert_draws_three_pngs(self, folder):
        with tempfile.TemporaryDirectory() as out:
            proc = plot(folder, "--out", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            for name in FIGURES:
                path = Path(out) / name
                self.assertTrue(path.is_file(), f"{name} missing")
                self.assertGreater(path.stat().st_size, 1000, f"{name} is empty")
                self.assertEqual(path.read_bytes()[:8], PNG_SIGNATURE, f"{name} is not a PNG")

    def test_draws_three_pngs_from_the_fixture(self):
        self.assert_draws_three_pngs(FIXTURE)

    def test_draws_three_pngs_from_the_committed_results(self):
        self.assertTrue(COMMITTED, "no results folder committed under docs/results/")
        for folder in COMMITTED:
            with self.subTest(folder=folder.name):
                self.assert_draws_three_pngs(folder)

    def test_size_option(self):
        with tempfile.TemporaryDirectory() as out:
            self.assertEqual(plot(FIXTURE, "--size", "2048", "--out", out).returncode, 0)
            proc = plot(FIXTURE, "--size", "3000", "--out", out)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("no results at size 3000", proc.stderr)


if __name__ == "__main__":
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib not installed: skipped")
        sys.exit(77)
    unittest.main()
