#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/hopper_figures.py: it reads chapters 11's and 12's sources as their
default builds compile them (the switch defaults, the struct's constant expressions, the main
loop's operations, make_fragment_plan, the mbarrier counts, A rounded before the GEMM, 12's
producer and hand-back), the fragment plan it draws reads every bank once per half-warp, the
timelines play the kernels' orders out whatever the durations, every committed figure is in step
with what it is drawn from, and a source it cannot read (or one of a design the figures do not
draw) is one `error:` line and exit 2. Exit 77 (skipped) without matplotlib."""

import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parent.parent.parent
SCRIPT = REPO / "scripts" / "hopper_figures.py"
sys.path.insert(0, str(REPO / "scripts"))

import hopper_figures as hf  # noqa: E402
from figures import stamped  # noqa: E402

CHAPTERS = ("11_tma", "12_warp_specialization")
SOURCES = (hf.TMA_SOURCE, hf.WS_SOURCE, hf.TMA_HEADER)


def edit(path, pattern, replacement):
    """path's one line matching pattern (a whole line), replaced."""
    text, count = re.subn(pattern, replacement, Path(path).read_text(encoding="utf-8"),
                          flags=re.M)
    assert count == 1, f"{path}: no single line matches {pattern}"
    Path(path).write_text(text, encoding="utf-8")


def sources(root):
    """Copies of the sources the figures are drawn from, under root."""
    for source in SOURCES:
        target = Path(root) / source
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / source, target)


def with_tile(root, source, values):
    edit(Path(root) / source, r"^#define SGEMM_TILE .*$", "#define SGEMM_TILE " + values)


def draw(*options):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, options)], capture_output=True,
                          text=True)


class ReaderTest(unittest.TestCase):
    def test_evaluates_constant_expressions_as_cxx_does(self):
        names = {"kA": 472, "kB": 2}
        self.assertEqual(hf.evaluate("(kA) / kB / 8 * 8 > 256 ? 256 : kA / kB / 8 * 8", names),
                         232)
        self.assertEqual(hf.evaluate("1 + 2 * 3 - 8 / 3 % 2", {}), 7)  # (8 / 3) % 2 = 0
        self.assertEqual(hf.evaluate("-7 / 2", {}), -3)  # truncation toward zero
        self.assertEqual(hf.evaluate("-7 % 2", {}), -1)
        self.assertEqual(hf.evaluate("T::kA * static_cast<int>(sizeof(float))", names), 1888)
        self.assertEqual(hf.evaluate("sgemm::ceil_div(kA, 96)", names), 5)
        self.assertEqual(hf.evaluate("5 ^ (3 & 6) | 8", {}), 15)
        self.assertEqual(hf.evaluate("kA == 472 && !(kB != 2) || 0", names), 1)
        self.assertEqual(hf.evaluate("kUnknown == 2 ? 1 : 7", {}, otherwise=0), 7)
        for bad in ("kUnknown + 1", "f(2)", "2 +", "(1"):
            with self.assertRaises(hf.Unknown, msg=bad):
                hf.evaluate(bad, names)

    def test_preprocess_keeps_what_the_default_build_compiles(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "k.cu"
            path.write_text("#ifndef SGEMM_X\n#define SGEMM_X 2\n#endif\n"
                            "#ifndef SGEMM_Y  // set elsewhere? no\n#define SGEMM_Y 0\n#endif\n"
                            "#if SGEMM_X == 1\nint one;\n#elif SGEMM_X == 2\nint two;\n"
                            "#else\nint other;\n#endif\n#if SGEMM_Y\nint y;\n#else\nint no_y;\n"
                            "#endif\n#if SGEMM_UNDEFINED\nint never;\n#endif\n"
                            "#ifdef SGEMM_X\nint defined_x;\n#endif\n")
            text, defines = hf.preprocess(path)
            self.assertEqual(re.findall(r"int (\w+);", text), ["two", "no_y", "defined_x"])
            self.assertEqual((defines["SGEMM_X"], defines["SGEMM_Y"]), ("2", "0"))
            path.write_text("#if SGEMM_X\nint x;\n")
            with self.assertRaisesRegex(hf.UsageError, "#if without #endif"):
                hf.preprocess(path)

    def test_reads_chapter_11(self):
        kernel = hf.tma_kernel(REPO)
        k = kernel["k"]
        self.assertTrue(all(isinstance(k[n], int) and k[n] > 0 for n in hf.TMA_FIELDS), k)
        self.assertEqual(k["kBoxesB"] * k["kBoxN"], k["kBlockN"])
        self.assertEqual(kernel["arrivals"], {"full": 1})  # thread 0's arrive.expect_tx
        self.assertEqual(kernel["barrier_ops"], sorted(hf.TMA_OPS))
        prologue, step = hf.loop_ops(kernel)
        # 10's order: kAhead = kStages - 2 tiles issued ahead, one wgmma group in flight.
        ahead = k["kStages"] - 2
        self.assertEqual(prologue, [("issue_first", ahead)])
        self.assertEqual(step, [("prepare", 0), ("wait", 1), ("barrier", None),
                                ("issue", ahead), ("multiply", 0)])

    def test_reads_chapter_12(self):
        kernel = hf.ws_kernel(REPO)
        k, arrivals = kernel["k"], kernel["arrivals"]
        # The register split (the source's own ternary expressions, evaluated) is one that
        # setmaxnreg accepts: multiples of 8 from 24 to 256, within the registers at launch.
        for n in ("kProducerRegisters", "kConsumerRegisters"):
            self.assertTrue(k[n] % 8 == 0 and 24 <= k[n] <= 256, (n, k[n]))
        self.assertLessEqual(k["kProducerRegisters"] + k["kConsumers"] * k["kConsumerRegisters"],
                             (1 + k["kConsumers"]) * k["kLaunchRegisters"])
        self.assertEqual(k["kThreads"], 128 * (1 + k["kConsumers"]))
        if k["kConsumers"] == 2:  # the default: 384 threads, 168 each at launch
            self.assertEqual((k["kLaunchRegisters"], k["kProducerRegisters"],
                              k["kConsumerRegisters"]), (168, 40, 232))
        self.assertEqual(arrivals, {"full": 1, "empty": 4 * k["kConsumers"]})
        self.assertEqual(kernel["barrier_ops"], sorted(hf.WS_OPS))
        self.assertEqual(kernel["hand_back"], 1)
        self.assertTrue(kernel["split"])

    def test_a_source_it_cannot_read_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            sources(root)
            with_tile(root, hf.TMA_SOURCE, "256, 128")
            with self.assertRaisesRegex(hf.UsageError, "SGEMM_TILE has 2 values"):
                hf.tma_kernel(root)
            with_tile(root, hf.TMA_SOURCE, "192, 128, 4")  # a static_assert of the struct
            with self.assertRaisesRegex(hf.UsageError, "192, 128, 4: whole wgmma tiles"):
                hf.tma_kernel(root)
            sources(root)
            edit(root / hf.TMA_HEADER, r"^(.*)CU_TENSOR_MAP_SWIZZLE_128B(.*)$",
                 r"\1CU_TENSOR_MAP_SWIZZLE_64B\2")
            with self.assertRaisesRegex(hf.UsageError, "SWIZZLE_64B"):
                hf.header_modes(root)
            (root / hf.TMA_SOURCE).unlink()
            proc = draw("--root", root, "--out", root / "out")
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertRegex(proc.stderr, r"^error: .*tma\.cu: cannot read.*\n$")

    def test_a_design_the_figures_do_not_draw_is_a_usage_error(self):
        # The figures draw the final kernels; a default build of another design is refused with
        # one line rather than drawn wrong.
        cases = [
            (hf.TMA_SOURCE, hf.tma_kernel, [(r"^#define SGEMM_ROUND_A_BEFORE .*$",
                                             "#define SGEMM_ROUND_A_BEFORE 0")],
             "A rounded to TF32 by a pass before the GEMM"),
            (hf.TMA_SOURCE, hf.tma_kernel,
             [(r"^#define SGEMM_ROUND_A_BEFORE .*$", "#define SGEMM_ROUND_A_BEFORE 0"),
              (r"^constexpr bool kRoundABefore = .*$", "constexpr bool kRoundABefore = 1;")],
             "`prepare` rounds A in shared memory"),
            (hf.WS_SOURCE, hf.ws_kernel, [(r"^#define SGEMM_ROUND_TF32 .*$",
                                           "#define SGEMM_ROUND_TF32 0")],
             "A rounded to TF32 by a pass before the GEMM"),
            (hf.WS_SOURCE, hf.ws_kernel, [(r"^(\s*)if \(tid != 0\) return;$", r"\1")],
             "thread 0 alone issues"),
            (hf.WS_SOURCE, hf.ws_kernel,
             [(r"^(.*mbarrier_init\(&empty\[s\], )4 \* (T::kConsumers\);)$", r"\g<1>128 * \2")],
             "arrivals"),
            (hf.WS_SOURCE, hf.ws_kernel,
             [(r"^(.*mbarrier_arrive\(&empty\[\(tile - )1(\).*)$", r"\g<1>2\2")],
             "hand back the stage of tile t - N right after wgmma_wait<N>"),
            (hf.WS_SOURCE, hf.ws_kernel,
             [(r"^(\s*)(sgemm::mbarrier_wait\(&full\[stage\].*)$",
               r"\1sgemm::mbarrier_wait(&ready[stage], 0);\n\1\2")],
             "the default build inits .* has .*wait ready"),
        ]
        for source, read, edits, message in cases:
            with self.subTest(message=message), tempfile.TemporaryDirectory() as tmp:
                sources(tmp)
                for pattern, replacement in edits:
                    edit(Path(tmp) / source, pattern, replacement)
                with self.assertRaisesRegex(hf.UsageError, message):
                    read(Path(tmp))


class FragmentPlanTest(unittest.TestCase):
    def test_every_half_warp_load_reads_all_banks(self):
        # The claim tma.png draws, for every warp, k-step and load of both chapters' plans.
        for kernel in (hf.tma_kernel(REPO), hf.ws_kernel(REPO)):
            k = kernel["k"]
            groups = k.get("kWarpgroups", k.get("kConsumers"))
            columns = []
            for group in range(groups):
                for warp in range(4):
                    for k_step in range(k["kKSteps"]):
                        loads = hf.warp_loads(kernel, group, warp, k_step)
                        for load in (0, 1):
                            for half in (0, 1):
                                self.assertEqual(hf.half_warp_banks(loads, load, half),
                                                 [1] * 32, (kernel["source"], group, warp))
                        # The swizzle undone gives the columns the epilogue writes: the plan's
                        # col and col + 1, at k t (lo) and t + 4 (hi) alike.
                        for i, (lane, load, _, _, col) in enumerate(loads):
                            plan = hf.fragment_plan(kernel, group, warp, lane // 4, lane % 4)
                            self.assertEqual(col, plan["col"] + i % 2)
                    columns += [hf.fragment_plan(kernel, group, warp, g, 0)["col"] + e
                                for g in range(8) for e in (0, 1)]
            self.assertEqual(sorted(columns), list(range(k["kBlockN"])))

    def test_the_columns_in_order_conflict(self):
        # tma.png's counterexample: the same columns, loaded in order, hit 16 banks twice.
        kernel = hf.tma_kernel(REPO)
        hits = hf.half_warp_banks(hf.warp_loads(kernel, 0, 0, plan=hf.in_order_plan), 0, 0)
        self.assertEqual(sorted(hits), [0] * 16 + [2] * 16)


class ScheduleTest(unittest.TestCase):
    @staticmethod
    def tens_order(stages):  # 10's main loop, kAhead = stages - 2
        return ([("issue_first", stages - 2)],
                [("prepare", 0), ("wait", 1), ("barrier", None), ("issue", stages - 2),
                 ("multiply", 0)])

    def test_11_plays_out_the_kernels_order(self):
        kernel = hf.tma_kernel(REPO)
        for stages in (3, 4, 5):
            orders = {"ten": self.tens_order(stages)}
            if stages == kernel["k"]["kStages"]:  # its offsets are the source's kStages'
                orders["source"] = hf.loop_ops(kernel)
            for name, (prologue, step) in orders.items():
                for durations in ({}, {"latency": 30.0}, {"group": 12.0}, {"fragments": 0.1}):
                    with self.subTest(order=name, stages=stages, durations=durations):
                        tiles = 2 * stages + 3
                        plan = hf.tma_schedule(prologue, step, stages, tiles, durations)
                        copies, groups = plan["copies"], plan["groups"]
                        self.assertEqual(sorted(copies), list(range(tiles)))
                        waits = {t: (a, b) for kind, t, a, b in plan["phases"]
                                 if kind == "wait"}
                        for t in range(tiles):
                            stage, issued, landed = copies[t]
                            self.assertEqual(stage, t % stages)
                            self.assertLessEqual(landed, waits[t][1])
                            self.assertGreaterEqual(groups[t][0], waits[t][1])
                            if t >= stages:  # refilled only once the last reader is done
                                self.assertGreaterEqual(issued, groups[t - stages][1])
                            if t:
                                self.assertGreaterEqual(groups[t][0], groups[t - 1][1])
                        starts = [a for _, _, a, _ in plan["phases"]]
                        self.assertEqual(starts, sorted(starts))

    def test_11_refuses_an_order_that_races(self):
        # Copies one tile further ahead than 10's order allows overwrite a stage being read.
        with self.assertRaisesRegex(hf.UsageError, "refills stage"):
            hf.tma_schedule([("issue_first", 3)], [("prepare", 0), ("wait", 1),
                                                   ("barrier", None), ("issue", 3),
                                                   ("multiply", 0)], 4, 10)
        with self.assertRaisesRegex(hf.UsageError, "before issuing it"):
            hf.tma_schedule([("issue_first", 1)], [("prepare", 1), ("multiply", 1)], 4, 6)
        with self.assertRaisesRegex(hf.UsageError, "before waiting for its bytes"):
            hf.tma_schedule([("issue_first", 2)], [("multiply", 0), ("prepare", 0)], 4, 6)

    def test_12_plays_out_the_kernels_order(self):
        for stages, consumers, hand_back in ((2, 1, 1), (3, 2, 1), (4, 2, 1), (4, 3, 1),
                                             (4, 2, 2)):
            for durations in ({}, {"latency": 30.0}, {"group": 9.0}, {"fragments": 4.0}):
                with self.subTest(stages=stages, consumers=consumers, hand_back=hand_back,
                                  durations=durations):
                    self.check_12(stages, consumers, hand_back, 2 * stages + 3, durations)

    def check_12(self, stages, consumers, hand_back, tiles, durations):
        plan = hf.ws_schedule(stages, consumers, tiles, hand_back, durations)
        producer, steps, groups = plan["producer"], plan["consumers"], plan["groups"]
        for t in range(tiles):
            issued = producer[t]["issue"][0]
            self.assertEqual("wait" in producer[t], t >= stages)
            if t >= stages:  # the stage comes back only when every consumer is done with it
                self.assertGreaterEqual(issued, plan["empty"][t - stages])
                self.assertGreaterEqual(plan["empty"][t - stages],
                                        max(groups[(c, t - stages)][1]
                                            for c in range(consumers)))
            self.assertGreater(plan["landed"][t], producer[t]["issue"][1])
            for c in range(consumers):
                phases = steps[c][t]
                self.assertGreaterEqual(phases["fragments"][0], plan["landed"][t])
                self.assertGreaterEqual(groups[(c, t)][0], phases["wgmma_issue"][1])
                if t >= hand_back:  # the retired group is done before the warps arrive
                    self.assertEqual(plan["arrived"][(c, t - hand_back)],
                                     phases["wgmma_wait"][1])
                    self.assertGreaterEqual(phases["wgmma_wait"][1],
                                            groups[(c, t - hand_back)][1])
        ordered = sorted(groups.values())
        for (_, end), (start, _) in zip(ordered, ordered[1:]):
            self.assertGreaterEqual(start, end - 1e-9)  # the tensor cores: one group at a time
        # The last hand_back tiles' stages are never handed back.
        self.assertEqual(sorted(plan["empty"]), list(range(tiles - hand_back)))

    def test_12_keeps_the_tensor_cores_busy_in_steady_state(self):
        # What pipeline.png shows with its schematic durations: after the ring has filled, each
        # group starts as the one before ends.
        plan = hf.ws_schedule(4, 2, 14)
        ordered = sorted(plan["groups"].values())
        for (_, end), (start, _) in list(zip(ordered, ordered[1:]))[8:]:
            self.assertAlmostEqual(start, end)


class CommittedFiguresTest(unittest.TestCase):
    def test_committed_figures_match_their_sources(self):
        # Fails when a source, the header's swizzle, the schematic durations or the edge example
        # changed without a redraw: the README would show what no longer exists.
        self.assertEqual(hf.out_of_date(REPO), [])

    def test_a_stale_figure_of_each_kind_is_seen(self):
        def stale(root):
            return [line.split(" ")[0] for line in hf.out_of_date(root)]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for chapter in CHAPTERS:
                shutil.copytree(REPO / chapter / "figures", root / chapter / "figures")
            sources(root)
            self.assertEqual(stale(root), [])
            with_tile(root, hf.TMA_SOURCE, "128, 128, 4")
            self.assertIn("11_tma/figures/tma.png is out of date: run python3 "
                          "scripts/hopper_figures.py", hf.out_of_date(root))
            self.assertEqual(stale(root), ["11_tma/figures/tma.png",
                                           "11_tma/figures/mbarrier.png"])
            sources(root)
            with mock.patch.dict(hf.TMA_DURATIONS, {"group": 1.0}):
                self.assertEqual(stale(root), ["11_tma/figures/mbarrier.png"])
            with mock.patch.dict(hf.EDGE_EXAMPLE, {"K": 41}):
                self.assertEqual(stale(root), ["11_tma/figures/tma.png"])
            with mock.patch.dict(hf.WS_DURATIONS, {"group": 1.0}):
                self.assertEqual(stale(root), ["12_warp_specialization/figures/pipeline.png"])
            with_tile(root, hf.WS_SOURCE, "128, 2, 3")
            self.assertEqual(stale(root), ["12_warp_specialization/figures/roles.png",
                                           "12_warp_specialization/figures/pipeline.png"])
            sources(root)
            edit(root / hf.WS_SOURCE, r"^#define SGEMM_REGISTER_SPLIT .*$",
                 "#define SGEMM_REGISTER_SPLIT 0")
            self.assertEqual(stale(root), ["12_warp_specialization/figures/roles.png",
                                           "12_warp_specialization/figures/pipeline.png"])
            # A figure saved without a stamp is out of date too.
            from PIL import Image
            plain = root / "11_tma" / "figures" / "tma.png"
            with Image.open(plain) as image:
                image.load()
            image.save(plain)
            self.assertIn("11_tma/figures/tma.png", stale(root))
            # The redraw stamps every figure with what it was drawn from.
            with_tile(root, hf.TMA_SOURCE, "128, 128, 4")
            proc = draw("--root", tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(stale(root), [])
            self.assertIn("kBlockM = 128", stamped(root / "11_tma" / "figures" / "tma.png"))

    def test_draws_every_figure_the_readmes_embed(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = draw("--out", tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            for chapter, name in hf.FIGURES:
                drawn = Path(tmp) / chapter / name
                self.assertGreater(drawn.stat().st_size, 1000)
                self.assertTrue(stamped(drawn))
            for chapter in CHAPTERS:
                readme = REPO / chapter / "README.md"
                if not readme.is_file():
                    continue
                text = readme.read_text(encoding="utf-8")
                for png in re.findall(r"figures/([\w.-]+\.png)", text):
                    self.assertTrue((Path(tmp) / chapter / png).is_file(),
                                    f"{chapter}/README.md embeds figures/{png}, not drawn")


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not installed: skipped")
        sys.exit(77)
    unittest.main()
