#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/promotion_table.py: the committed promotion table of chapter 09
(09_3xtf32/figures/promotion_h100.csv, which promotion.png is drawn from) is exactly what the script
builds from the committed H100 runs, and a missing or failed run gives one "error:" line."""

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS, ScriptAssertions

RUNS = REPO / "docs/results/nvidia-h100-80gb-hbm3/tensor_cores"
TABLE = REPO / "09_3xtf32/figures/promotion_h100.csv"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPTS / "promotion_table.py"), *map(str, args)],
                          capture_output=True, text=True)


class PromotionTable(ScriptAssertions, unittest.TestCase):
    def test_committed_table_is_built_from_the_committed_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "table.csv"
            proc = run("--output", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(out.read_text(), TABLE.read_text())

    def test_missing_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            for f in RUNS.glob("prom_promote_*.csv"):
                shutil.copy(f, tmp)
            (Path(tmp) / "prom_promote_8_wide.csv").unlink()
            proc = run("--runs", tmp, "--output", Path(tmp) / "t.csv")
            self.assert_one_error_line(proc, "prom_promote_8_wide.csv", rc=2)

    def test_failed_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            for f in RUNS.glob("prom_promote_*.csv"):
                shutil.copy(f, tmp)
            path = Path(tmp) / "prom_promote_2_uniform.csv"
            path.write_text(path.read_text().replace(",PASS,", ",FAIL,"))
            proc = run("--runs", tmp, "--output", Path(tmp) / "t.csv")
            self.assert_one_error_line(proc, "FAIL", rc=1)


if __name__ == "__main__":
    unittest.main()
