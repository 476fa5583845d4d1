#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of scripts/calibrate_07.py: the derivations recover known constants from times a
known model produces, whole runs against fake binaries (no GPU, made-up numbers), and
any_shape.cu holds the committed calibration's constants."""

import json
import os
import stat
import statistics
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import SCRIPTS, ScriptAssertions, environment

import calibrate_07 as cal  # noqa: E402  (helpers puts scripts/ on the path)
import rounds_figure as rf  # noqa: E402

REPO = SCRIPTS.parent
DEVICE = {"name": "Fixture GPU", "sms": 132, "fma_per_s_per_sm": 128 * 1980e6,
          "dram_bytes_per_s": 3352.3e9, "l2_bytes": 52428800.0,
          "record": {"name": "Fixture GPU", "sms": 132, "sm_clock_mhz": 1980,
                     "fp32_lanes_per_sm": 128, "dram_bandwidth_gbs": 3352.3,
                     "l2_bytes": 52428800}}
# The "true" constants the fake GPU runs at: the derivation must find them again.
TRUTH = {"kFillK": 41, "kLaunchSeconds": 2.7e-6, "kL2Share": 1.63, "kDramShare": 0.87}
TRUE_TILES = [(0.741, 0.733, []), (0.702, 0.699, [0.613]), (0.713, 0.705, [0.81, 0.91, 0.97]),
              (0.688, 0.681, [0.79, 0.88, 0.96]),
              (0.611, 0.604, [0.45, 0.8, 0.7, 0.95, 0.82, 0.98, 0.88]),
              (0.583, 0.571, [0.7, 0.85, 0.95]), (0.592, 0.577, [0.75, 0.86, 0.96])]
# Each tile's column shares (A streamed: its rows on 128-byte lines, and not).
TRUE_COLUMNS = [(1.02, 1.01), (1.0, 1.0), (1.0, 0.99), (0.99, 0.97), (0.96, 0.8), (0.75, 0.74),
                (1.02, 1.01)]
# Each tile's odd-row share (N odd, 4-byte copies of B): every tile its own.
TRUE_ODD = [0.902, 0.931, 0.968, 0.944, 0.857, 0.983, 0.911]


def true_model():
    model = rf.read_model(REPO)
    model["constants"].update(TRUTH)
    for tile, (share, split, rates), (column, unaligned), odd in zip(
            model["tiles"], TRUE_TILES, TRUE_COLUMNS, TRUE_ODD):
        tile.update(peak_share=share, split_peak_share=split, occupancy_rate=rates,
                    column_share=column, column_share_unaligned=unaligned, odd_rows_share=odd)
    return model


def fake_seconds(model, shape, tile, splits):
    k_slice = rf.slice_of(model, shape[2], splits)
    return rf.predict(model, DEVICE, shape, tile, rf.ceil_div(shape[2], k_slice), k_slice)[
        "seconds"]


def fake_bench(truth=TRUTH, dram=3352.3e9, l2=52428800):
    cases = []
    for m, n, s in [(4, 4, 2), (512, 512, 4), (1024, 1024, 2), (1024, 1024, 4), (2048, 2048, 2),
                    (4096, 4096, 4), (8192, 8192, 2)]:
        moved, footprint = 4.0 * m * n * (s + 1), 4.0 * m * n * s
        share = truth["kL2Share"] if footprint <= l2 else truth["kDramShare"]
        us = 1e6 * (truth["kLaunchSeconds"] + (moved / (dram * share) if m > 4 else 0.0))
        cases.append(f"case m={m} n={n} splits={s} bytes={moved:.0f} footprint={footprint:.0f} "
                     f"us={us:.6f}")
    return "\n".join(cases + [f"device dram_gbs={dram / 1e9:.1f} l2_bytes={l2}"]) + "\n"


class DeriveTest(unittest.TestCase):
    def setUp(self):
        self.model = true_model()

    def test_the_split_k_constants_come_back(self):
        got = cal.derive_split_k(cal.parse_bench(fake_bench()))
        for name in ("kLaunchSeconds", "kL2Share", "kDramShare"):
            self.assertAlmostEqual(got[name], TRUTH[name], delta=1e-3 * TRUTH[name], msg=name)

    def test_the_tile_constants_come_back(self):
        times, shapes_of = {}, {}
        for tile, plan, roles in cal.recipes(self.model["tiles"], DEVICE["sms"]):
            splits = int(plan.split(",")[1])
            for role, shape in roles:
                times[(tile, role)] = fake_seconds(self.model, shape, tile, splits)
                shapes_of[(tile, role)] = shape
        constants, rows = cal.derive_tiles(self.model["tiles"], times, shapes_of, DEVICE, TRUTH)
        self.assertEqual(constants, {"kFillK": TRUTH["kFillK"]})
        for row, (share, split, rates), (column, unaligned), odd in zip(rows, TRUE_TILES,
                                                                         TRUE_COLUMNS, TRUE_ODD):
            self.assertAlmostEqual(row["peak_share"], share, places=6)
            self.assertAlmostEqual(row["split_peak_share"], split, places=6)
            self.assertAlmostEqual(row["column_share"], column, places=6)
            self.assertAlmostEqual(row["column_share_unaligned"], unaligned, places=6)
            self.assertAlmostEqual(row["odd_rows_share"], odd, places=6)
            self.assertAlmostEqual(row["measured_fill"], TRUTH["kFillK"], places=6)
            # One entry per count below the full one (none for one block per SM).
            self.assertEqual(len(row["occupancy_rate"]), row["blocks_per_sm"] - 1)
            for got, want in zip(row["occupancy_rate"], rates):
                self.assertAlmostEqual(got, want, places=6)

    def test_the_runs_fill_the_slots_as_they_say(self):
        for tile, plan, roles in cal.recipes(self.model["tiles"], DEVICE["sms"]):
            t = self.model["tiles"][tile]
            for role, (m, n, k) in roles:
                blocks = rf.ceil_div(m, t["block_m"]) * rf.ceil_div(n, t["block_n"])
                want = {"short": 2 * t["blocks_per_sm"], "long": 2 * t["blocks_per_sm"],
                        "odd": 2 * t["blocks_per_sm"], "split": t["blocks_per_sm"],
                        "column": 2 * t["blocks_per_sm"],
                        "column unaligned": 2 * t["blocks_per_sm"]}.get(
                    role, int(role.split()[-1]) if role.startswith("occupancy") else None)
                self.assertEqual(blocks, want * DEVICE["sms"], (tile, role))
                if role.startswith("column"):
                    # one column of tiles, A's rows on 128-byte lines or not
                    self.assertEqual(n, t["block_n"])
                    self.assertEqual(k % 32 == 0, role == "column")
                else:
                    self.assertEqual(k % 16, 0)
            self.assertEqual(sum(r == "odd" for r, _ in roles), plan.endswith(",1,0"))

    def test_the_margin_is_the_median_error(self):
        rows = []
        for i, error in enumerate([0.01, -0.03, 0.05, -0.02, 0.04]):
            shape = (1024 * (i + 1), 2048, 4096)
            seconds = fake_seconds(self.model, shape, 2, 1) * (1 + error)
            rows.append({"shape": list(shape), "seconds": seconds,
                         "plan": {"tile": 2.0, "splits": 1.0, "k_slice": 4096.0, "pad": 0.0}})
        self.assertAlmostEqual(cal.derive_margin(self.model, DEVICE, rows), 0.03, places=9)

    def test_grid_for_is_exact_and_nearly_square(self):
        for blocks, bm, bn in [(264, 128, 256), (1056, 64, 128), (132, 64, 64), (396, 128, 64)]:
            m, n = cal.grid_for(blocks, bm, bn)
            self.assertEqual((m // bm) * (n // bn), blocks)
            self.assertLess(max(m, n) / min(m, n), 2.5)


FAKE = '''#!{python}
import json, os, sys
sys.path.insert(0, {tests!r})
import test_calibrate_07 as t
if os.path.basename(sys.argv[0]) == "split_k_bench":
    sys.stdout.write(t.fake_bench())
    sys.exit(0)
t.fake_forced_binary(sys.argv[1:])
'''


def fake_forced_binary(argv):
    """07's calibration build on the fake GPU: SGEMM_PLAN's plan (unset: the 128 x 128 tile, no
    split), times from true_model(), one plan line per shape on stderr, the JSON report."""
    args = {flag: value for flag, value in zip(argv, argv[1:] + [""]) if flag.startswith("--")}
    model = true_model()
    plan = os.environ.get("SGEMM_PLAN", "1,1,0")
    if plan == "bad":
        sys.stderr.write("error: SGEMM_PLAN=bad: expected tile,splits,pad\n")
        sys.exit(2)
    tile, wanted, pad = (int(v) for v in plan.split(","))
    rows = []
    for m, n, k in zip(*(map(int, args[f"--{x}"].split(",")) for x in "mnk")):
        k_slice = rf.slice_of(model, k, wanted)
        splits = rf.ceil_div(k, k_slice)
        seconds = rf.predict(model, DEVICE, (m, n, k), tile, splits, k_slice)["seconds"]
        t = model["tiles"][tile]
        sys.stderr.write(f"plan m={m} n={n} k={k} thin=0 tile={tile} block_m={t['block_m']} "
                         f"block_n={t['block_n']} blocks_per_sm={t['blocks_per_sm']} "
                         f"splits={splits} k_slice={k_slice} pad={pad} predicted_us=1.0\n")
        rows.append({"m": m, "n": n, "k": k, "time_ms": 1e3 * seconds, "status": "PASS"})
    device = dict(DEVICE["record"])
    Path(args["--output"]).write_text(json.dumps({"device": device, "rows": rows}))


class RunTest(ScriptAssertions, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        bin_dir = self.root / "build" / "bin"
        bin_dir.mkdir(parents=True)
        fake = self.root / "fake.py"
        fake.write_text(FAKE.format(python=sys.executable, tests=str(Path(__file__).parent)))
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
        for name in (cal.FORCED, cal.BENCH):
            (bin_dir / name).symlink_to(fake)

    def tearDown(self):
        self.tmp.cleanup()

    def calibrate(self, *options, **env):
        return subprocess.run([sys.executable, str(SCRIPTS / "calibrate_07.py"), "--no-build",
                               "--build-dir", str(self.root / "build"), *options],
                              capture_output=True, text=True, env=environment(**env))

    def test_a_whole_run_writes_what_it_derived(self):
        out = self.root / "results" / "calibration_07.json"
        proc = self.calibrate("--out", str(out), "--samples", "3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        document = json.loads(out.read_text())
        c = document["constants"]
        self.assertEqual(c["kFillK"], TRUTH["kFillK"])
        self.assertEqual(c["kL2Share"], TRUTH["kL2Share"])
        self.assertNotIn("kOddRowsShare", c)  # each tile's own, below
        self.assertEqual([round(t["peak_share"], 3) for t in document["tiles"]],
                         [s for s, _, _ in TRUE_TILES])
        self.assertEqual([round(t["odd_rows_share"], 3) for t in document["tiles"]], TRUE_ODD)
        # The fake runs exactly the model, so the model's error on the 07 suite is nil.
        self.assertEqual(c["kKeepMargin"], 0.0)
        table = out.with_suffix(".md").read_text()
        self.assertEqual(proc.stdout, table)
        self.assertIn("| `kFillK` | 41 |", table)
        self.assertNotIn("kOddRowsShare", table)
        self.assertIn(" | 41.0 | 0.857 |", table)  # 64 x 64: its fill, its odd-row share
        self.assertIn("Generated by `scripts/calibrate_07.py`", table)
        # The fake GPU's constants are not any_shape.cu's: the run says so, --check fails.
        self.assertIn("any_shape.cu differs: kFillK", proc.stderr)
        check = self.calibrate("--check", "--out", str(out))
        self.assertEqual(check.returncode, 1, check.stderr)
        self.assertIn("differs: kFillK: any_shape.cu", check.stderr)
        source = rf.read_model(REPO)["tiles"][4]["odd_rows_share"]
        self.assertIn(f"differs: odd_rows_share[4]: any_shape.cu {source}, derived 0.857",
                      check.stderr)

    def test_a_missing_binary_is_one_error_line(self):
        (self.root / "build" / "bin" / cal.BENCH).unlink()
        proc = self.calibrate("--out", str(self.root / "x.json"))
        self.assert_one_error_line(proc, cal.BENCH, "is not built")

    def test_bad_options(self):
        for options, word in [(["--samples", "0"], "--samples"), (["--frobnicate"], "frob")]:
            with self.subTest(options=options):
                self.assert_one_error_line(self.calibrate(*options), word)


class SourceTest(unittest.TestCase):
    def test_any_shape_holds_the_committed_calibration(self):
        # Every measured constant of the launcher's model is the calibration's, as rounded.
        self.assertTrue(cal.RESULTS.is_file(), cal.RESULTS)
        document = json.loads(cal.RESULTS.read_text())
        self.assertEqual(cal.differences(rf.read_model(REPO), document), [])
        self.assertEqual(cal.main(["--check"]), 0)

    def test_each_tiles_odd_rows_share_is_held_to_its_own_measurement(self):
        # The committed calibration measured every tile's odd-row share; the source must hold
        # each one, not their median.
        document = json.loads(cal.RESULTS.read_text())
        model = rf.read_model(REPO)
        self.assertEqual([t["odd_rows_share"] for t in model["tiles"]],
                         [round(t["odd_rows_share"], 3) for t in document["tiles"]])
        self.assertGreater(len({t["odd_rows_share"] for t in model["tiles"]}), 1)
        median = statistics.median(t["odd_rows_share"] for t in model["tiles"])
        for tile in model["tiles"]:
            tile["odd_rows_share"] = median
        wrong = cal.differences(model, document)
        self.assertTrue(wrong)
        self.assertTrue(all(w.startswith("odd_rows_share[") for w in wrong), wrong)


if __name__ == "__main__":
    unittest.main()
