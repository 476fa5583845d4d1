#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/rounds_figure.py (chapter 07's two_rounds.png, and the one Python copy of
07's launcher model, which shapes.py plans with): it reads every tile and constant from
07_any_shape/any_shape.cu, and shapes.py's plans on a device record are this copy's; the figure's
arithmetic is the
README's (777 x 333 x 16383: 20 slices make a round of 4 and a round of 2 and lose to 10 slices,
which one occupancy would not see; 3840^3: more than two rounds, the rule not applied, and
applying it there moves the plan); a source whose model the copy no longer mirrors is refused with
one line; the committed figure is in step with the source and the device record, and a change to
either is seen; bad input is one `error:` line and exit 2, a stale figure under --check exit 1.
Exit 77 (skipped) without matplotlib."""

import importlib.util
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS, ScriptAssertions

import rounds_figure as rf  # noqa: E402  (helpers puts scripts/ on the path)
import shapes  # noqa: E402
from figures import UsageError, stamped  # noqa: E402

SCRIPT = SCRIPTS / "rounds_figure.py"


def run(*options):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, options)], capture_output=True,
                          text=True)


def copy_inputs(root):
    """The source, the header, the device record and the committed figure under root, laid out as
    in the repository."""
    root = Path(root)
    for path in (rf.SOURCE, rf.SPLIT_HEADER, rf.RESULTS, rf.FIGURE):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / path, root / path)
    return root


def edit(path, old, new):
    """path with its one occurrence of `old` replaced by `new`."""
    text = Path(path).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: {old!r} occurs {text.count(old)} times"
    Path(path).write_text(text.replace(old, new), encoding="utf-8")


def model_and_device(root=REPO):
    return rf.read_model(root), rf.read_device(Path(root) / rf.RESULTS)


class ReadsTheSourceTest(unittest.TestCase):
    def test_tiles_constants_and_switches(self):
        # The values themselves are calibrate_07.py's (its --check and test hold any_shape.cu to
        # calibration_07.json); here: the reader finds every tile and constant the copy needs.
        model, _ = model_and_device()
        self.assertEqual([(t["alias"], t["block_m"], t["block_n"], t["blocks_per_sm"])
                          for t in model["tiles"]],
                         [("LargeTile", 128, 256, 1), ("MediumTile", 128, 128, 2),
                          ("SmallTile", 64, 128, 4), ("TallTile", 128, 64, 4),
                          ("TinyTile", 64, 64, 8), ("NarrowTile", 128, 32, 5),
                          ("WideTile", 32, 128, 5)])
        c = model["constants"]
        for name in ("kFillK", "kLaunchSeconds", "kDramShare", "kL2Share", "kSliceAlign",
                     "kKeepMargin"):
            self.assertGreater(c[name], 0, name)
        # N odd: each tile's own share (a field of kTileModels), no constant for all of them.
        self.assertNotIn("kOddRowsShare", c)
        odd = [t["odd_rows_share"] for t in model["tiles"]]
        self.assertTrue(all(0 < v <= 1.2 for v in odd), odd)
        self.assertGreater(len(set(odd)), 1, odd)
        self.assertEqual(c["kMaxSplits"], 256)
        self.assertEqual((c["kMaxWorkspaceBytes"], c["kMaxPaddedBytes"], c["kThinMax"],
                          c["kFewColsMax"]), (256 << 20, 1 << 30, 16, 24))
        self.assertEqual(model["switches"], {"SGEMM_TILE_COUNT": 7, "SGEMM_SPLIT_K": 1,
                                             "SGEMM_PADDED_B": 1, "SGEMM_THIN": 1,
                                             "SGEMM_WIDE_FEW_COLS": 1, "SGEMM_FORCED_PLAN": 0,
                                             "SGEMM_PARTIAL_ROUND": 1})

    def test_thin_shapes_follow_is_thin(self):
        # M <= 16, or N <= 24 (the wide few-columns kernel); without it N <= 16, as before.
        model, _ = model_and_device()
        self.assertTrue(rf.is_thin(model, 16, 5000))
        self.assertTrue(rf.is_thin(model, 5000, 24))
        self.assertFalse(rf.is_thin(model, 17, 25))
        self.assertFalse(rf.is_thin(model, 24, 5000))  # few rows stop at 16
        narrow = dict(model, switches=dict(model["switches"], SGEMM_WIDE_FEW_COLS=0))
        self.assertFalse(rf.is_thin(narrow, 5000, 24))
        self.assertTrue(rf.is_thin(narrow, 5000, 16))
        # thin_kind: few rows (1) when M is the thin side, else few columns (2).
        self.assertEqual([rf.thin_kind(model, *s) for s in ((8, 4096), (8, 4), (5000, 20))],
                         [1, 2, 2])

    def test_the_device_is_the_suites(self):
        _, device = model_and_device()
        record = json.loads((REPO / rf.RESULTS).read_text(encoding="utf-8"))["device"]
        self.assertEqual(device["sms"], record["sms"])
        self.assertEqual(device["fma_per_s_per_sm"],
                         record["fp32_lanes_per_sm"] * record["sm_clock_mhz"] * 1e6)
        self.assertEqual(device["dram_bytes_per_s"], record["dram_bandwidth_gbs"] * 1e9)


class ModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model, cls.device = model_and_device()
        cls.record = json.loads((REPO / rf.RESULTS).read_text(encoding="utf-8"))["device"]
        cls.small = rf.tile_index(cls.model, rf.EXAMPLE_TILE)

    def shapes_to_try(self):
        return ([tuple(s[:3]) for s in shapes.SUITE] + [(s, s, s) for s in range(1024, 8193, 640)]
                + [rf.EXAMPLE, rf.SAWTOOTH, (4352, 4352, 4352), (4095, 4097, 4095)])

    def test_shapes_py_plans_with_this_copy(self):
        # shapes.py (the plan column, --waves, the sawtooth) calls this copy on a device record.
        for m, n, k in self.shapes_to_try():
            with self.subTest(shape=(m, n, k)):
                for tile in range(len(self.model["tiles"])):
                    for wanted in (1, 4, 20):
                        k_slice = rf.slice_of(self.model, k, wanted)
                        splits = rf.ceil_div(k, k_slice)
                        for pad in ((False, True) if n % 2 else (False,)):
                            ours = rf.predict(self.model, self.device, (m, n, k), tile, splits,
                                              k_slice, pad)["seconds"]
                            theirs = shapes.predict_seconds(m, n, k, self.record, tile, splits,
                                                            k_slice, pad=pad)
                            self.assertAlmostEqual(ours / theirs, 1.0, places=12)
                plan = rf.plan_for(self.model, self.device, (m, n, k))
                tile, splits, seconds, pad = shapes.plan(m, n, k, self.record, with_pad=True)
                self.assertEqual((plan["tile"], plan["splits"], plan["pad"]), (tile, splits, pad))
                self.assertAlmostEqual(plan["seconds"] / seconds, 1.0, places=12)

    def test_each_tile_runs_odd_rows_at_its_own_share(self):
        # N odd, B not padded: a tile's rate is its own odd_rows_share of the N-even rate; another
        # tile's share changes nothing of it.
        model = json.loads(json.dumps(self.model))
        shares = [0.5 + 0.05 * i for i in range(len(model["tiles"]))]
        for tile, share in zip(model["tiles"], shares):
            tile["odd_rows_share"] = share
        for i, share in enumerate(shares):
            with self.subTest(tile=i):
                odd = rf.predict(model, self.device, (4096, 4097, 4096), i, 1, 4096)
                even = rf.predict(model, self.device, (4096, 4098, 4096), i, 1, 4096)
                self.assertEqual(odd["rows"], share)
                self.assertEqual(even["rows"], 1.0)
                self.assertAlmostEqual(even["rate"] * share / odd["rate"], 1.0, places=12)
                padded = rf.predict(model, self.device, (4096, 4097, 4096), i, 1, 4096, True)
                self.assertEqual(padded["rows"], 1.0)
                other = json.loads(json.dumps(model))
                other["tiles"][(i + 1) % len(shares)]["odd_rows_share"] = 0.99
                self.assertEqual(rf.predict(other, self.device, (4096, 4097, 4096), i, 1,
                                            4096)["seconds"], odd["seconds"])

    def test_a_lower_odd_share_pads_where_a_higher_one_does_not(self):
        # 1023 x 513 x 1023 on the H100: 64 x 64 at 0.865 of its rate with 4-byte copies of B is
        # predicted faster with B padded; 128 x 32 at 0.971, without. At one share for both
        # (their mean) each of the two chooses the other way: the plan follows the tile's own.
        shape, low, high = (1023, 513, 1023), 4, 5
        model = json.loads(json.dumps(self.model))
        model["tiles"][low]["odd_rows_share"] = 0.865
        model["tiles"][high]["odd_rows_share"] = 0.971
        self.assertTrue(rf.plan_for(model, self.device, shape, tiles=(low,))["pad"])
        self.assertFalse(rf.plan_for(model, self.device, shape, tiles=(high,))["pad"])
        for tile in (low, high):
            model["tiles"][tile]["odd_rows_share"] = 0.918
        self.assertFalse(rf.plan_for(model, self.device, shape, tiles=(low,))["pad"])
        self.assertTrue(rf.plan_for(model, self.device, shape, tiles=(high,))["pad"])

    def test_the_rounds_add_up_to_the_models_time(self):
        for shape in self.shapes_to_try():
            for rule in rf.RULES:
                for tile in range(len(self.model["tiles"])):
                    for wanted in (1, 3, 10, 20, 64):
                        k_slice = rf.slice_of(self.model, shape[2], wanted)
                        parts = rf.predict(self.model, self.device, shape, tile,
                                           rf.ceil_div(shape[2], k_slice), k_slice, rule=rule)
                        with self.subTest(shape=shape, rule=rule, tile=tile, wanted=wanted):
                            self.assertAlmostEqual(sum(r[2] for r in parts["rounds"])
                                                   / parts["compute"], 1.0, places=12)
                            self.assertEqual(sum(r[0] for r in parts["rounds"]), parts["per_sm"])
                            self.assertTrue(all(r[0] <= parts["full"] for r in parts["rounds"]))
                            self.assertAlmostEqual(parts["compute"] + parts["reduce"]
                                                   + parts["pad"], parts["seconds"], places=15)

    def test_the_readmes_example(self):
        # README.md: "777 x 333 x 16383 on 64 x 128 with 20 slices is 5.9 blocks per SM, a round of
        # 4 and a round of 2 at occupancy(64 x 128, 2) of the rate"; 10 slices are one round.
        # Which of the two the launcher takes is the measured constants' business: not pinned.
        panels, picks = rf.cases(self.model, self.device)
        twenty, ten = panels[0], panels[1]
        self.assertEqual((twenty["plan"]["splits"], ten["plan"]["splits"]), (20, 10))
        self.assertEqual(round(twenty["parts"]["blocks"] / self.device["sms"], 1), 5.9)
        self.assertEqual([r[0] for r in twenty["parts"]["rounds"]], [4, 2])
        self.assertTrue(twenty["parts"]["applied"])
        self.assertEqual(twenty["parts"]["rounds"][-1][1],
                         self.model["tiles"][self.small]["occupancy_rate"][1])
        self.assertEqual(round(ten["parts"]["blocks"] / self.device["sms"], 2), 2.95)
        self.assertEqual([r[0] for r in ten["parts"]["rounds"]], [3])
        chosen = picks[(rf.EXAMPLE, "source")]
        self.assertLessEqual(chosen["seconds"], min(ten["parts"]["seconds"],
                                                    twenty["parts"]["seconds"]))
        # Counted at one occupancy (the model before the rule), 20 slices look faster than the
        # rule times them: their second round runs at its own, lower rate.
        self.assertLess(twenty["other"]["seconds"], twenty["parts"]["seconds"])

    def test_the_sawtooth_case(self):
        # README.md: at 3840^3 the rule (the last round at its own occupancy, after any number of
        # rounds) moves the plan away from the one the rule capped at two rounds took.
        panels, picks = rf.cases(self.model, self.device)
        saw = panels[2]
        self.assertGreater(saw["parts"]["per_sm"], 2 * saw["parts"]["full"])
        capped = picks[(rf.SAWTOOTH, "two rounds")]
        self.assertNotEqual((capped["tile"], capped["splits"]),
                            (saw["plan"]["tile"], saw["plan"]["splits"]))
        self.assertFalse(saw["other"]["applied"])


class DriftTest(unittest.TestCase, ScriptAssertions):
    def test_a_changed_model_is_refused_with_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_inputs(tmp)
            edit(root / rf.SOURCE, "per_sm <= 2 * full", "per_sm <= 3 * full")
            with self.assertRaisesRegex(UsageError, r"predict_seconds now says .*3\*full"):
                rf.read_model(root)
            self.assert_one_error_line(run("--root", root, "--out", Path(tmp) / "x.png"),
                                       "predict_seconds", "3*full", "the copy needs the same")
            self.assertFalse((Path(tmp) / "x.png").exists())

    def test_a_changed_helper_or_device_read_is_refused(self):
        for path, old, new, fragment in (
                (rf.SOURCE, "static_cast<int64_t>(p.m) * padded_ld(p.n); }",
                 "static_cast<int64_t>(p.m) * p.n; }", "slice_floats"),
                (rf.SOURCE, "constexpr double kL2Share = ", "constexpr double kL2Shared = ",
                 "kL2Share"),
                (rf.SOURCE, "d.l2_bytes = l2;", "d.l2_bytes = l2 / 2;", "d.l2_bytes=l2;"),
                (rf.SOURCE, "d.blocks_per_sm[4] = prepare_tile<TinyTile>();",
                 "d.blocks_per_sm[4] = prepare_tile<TallTile>();", "kTileModels[4] is not")):
            with self.subTest(edit=new), tempfile.TemporaryDirectory() as tmp:
                root = copy_inputs(tmp)
                edit(root / path, old, new)
                self.assert_one_error_line(run("--root", root, "--out", Path(tmp) / "x.png"),
                                           fragment)

    def test_an_occupancy_the_h100_cannot_hold_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_inputs(tmp)
            edit(root / rf.SOURCE, "using SmallTile = Tile<64, 128, 16, 32, 64, 8, 8, 3>;",
                 "using SmallTile = Tile<64, 128, 16, 32, 64, 8, 8, 12>;")
            self.assert_one_error_line(run("--root", root, "--check"), "SmallTile",
                                       "ask for 4 blocks per SM, the H100 holds 1")


class CommittedFigureTest(unittest.TestCase, ScriptAssertions):
    def test_the_committed_figure_matches_its_source(self):
        self.assertEqual(rf.out_of_date(REPO), [])
        proc = run("--check")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_a_change_is_seen_and_a_redraw_follows_it(self):
        # The source's own values (they come from the calibration), each changed.
        text = (REPO / rf.SOURCE).read_text()
        share = re.search(r"SmallTile::kThreads / 32, (0\.\d+),", text).group(1)
        fill = re.search(r"constexpr int kFillK = (\d+);", text).group(1)
        # 32 x 128's odd_rows_share, the last value of its kTileModels row.
        wide = re.search(r"\{WideTile::kBlockM[^}]*\}", text).group(0)
        changes = ((rf.SOURCE, f"SmallTile::kThreads / 32, {share},",
                    "SmallTile::kThreads / 32, 0.702,"),
                   (rf.SOURCE, f"constexpr int kFillK = {fill};", "constexpr int kFillK = 48;"),
                   (rf.SOURCE, wide, re.sub(r"0\.\d+\}$", "0.5}", wide)),
                   (rf.RESULTS, '"sms": 132,', '"sms": 114,'))
        for path, old, new in changes:
            with self.subTest(edit=new), tempfile.TemporaryDirectory() as tmp:
                root = copy_inputs(tmp)
                edit(root / path, old, new)
                self.assertEqual(len(rf.out_of_date(root)), 1)
                proc = run("--root", root, "--check")
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertRegex(proc.stderr, r"^\S*two_rounds\.png is out of date: run python3 "
                                 r"scripts/rounds_figure.py\n$")
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_inputs(tmp)
            edit(root / rf.SOURCE, *changes[0][1:])
            proc = run("--root", root)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(rf.out_of_date(root), [])
            self.assertIn("SmallTile 64x128 share 0.702/", stamped(root / rf.FIGURE))
            size = (root / rf.FIGURE).stat().st_size
            self.assertTrue(1000 < size < 150_000, size)

    def test_a_figure_never_stamped_is_out_of_date(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_inputs(tmp)
            from PIL import Image
            Image.new("RGB", (4, 4)).save(root / rf.FIGURE)
            self.assertEqual(len(rf.out_of_date(root)), 1)
            (root / rf.FIGURE).unlink()
            self.assertEqual(len(rf.out_of_date(root)), 1)


class UsageTest(unittest.TestCase, ScriptAssertions):
    def test_bad_input_is_one_line_and_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            self.assert_one_error_line(run("--root", tmp / "nowhere"), "any_shape.cu",
                                       "cannot read")
            root = copy_inputs(tmp / "root")
            (tmp / "nodevice.json").write_text('{"rows": []}', encoding="utf-8")
            self.assert_one_error_line(run("--root", root, "--results", tmp / "nodevice.json"),
                                       "no device record")
            (tmp / "broken.json").write_text("{", encoding="utf-8")
            self.assert_one_error_line(run("--root", root, "--results", tmp / "broken.json"),
                                       "not JSON")
            record = json.loads((REPO / rf.RESULTS).read_text(encoding="utf-8"))
            del record["device"]["l2_bytes"]
            (tmp / "nol2.json").write_text(json.dumps(record), encoding="utf-8")
            self.assert_one_error_line(run("--root", root, "--results", tmp / "nol2.json"),
                                       "no positive l2_bytes")
            self.assert_one_error_line(run("--root", root, "--out", tmp), "is a folder")
            (tmp / "file").write_text("x", encoding="utf-8")
            self.assert_one_error_line(run("--root", root, "--out", tmp / "file" / "x.png"),
                                       "cannot write")
            self.assert_one_error_line(run("--bogus"), "--bogus")


if __name__ == "__main__":
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib not installed: skipped")
        sys.exit(77)
    unittest.main()
