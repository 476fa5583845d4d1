#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of scripts/hopper_figures.py: it reads chapters 11's, 12's, 13's and 14's sources as
their default builds compile them (the switch defaults, the struct's constant expressions, the main
loop's operations, make_fragment_plan, the mbarrier counts, A rounded before the GEMM, 12's
producer and hand-back, 13's multicast, its four tiles (a defaulted template parameter included)
and Schedule::unit, 14's PairTile, split rule, wgmma and promotion), 14's timeline promotes and
restarts the partial sums where the kernel does, the fragment plan it draws reads every bank once
per half-warp, the timelines play the kernels' orders out whatever the durations, 13's unit order
is the one its comment describes (a hand-worked case), its launcher's choice of tile and K slices
is the hand-worked one (rules and model) and the source's with_tile picks as the copy does, its
launches cover every tile once, every committed figure is in step with what it is drawn from,
and a source it cannot read (or one of a design the figures do not draw) is one `error:` line
and exit 2. Exit 77 (skipped) without matplotlib."""

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

CHAPTERS = ("11_tma", "12_warp_specialization", "13_persistent_clusters", "14_3xtf32_hopper")
SOURCES = (hf.TMA_SOURCE, hf.WS_SOURCE, hf.TMA_HEADER, hf.CLUSTER_SOURCE, hf.SPLIT_SOURCE)


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
        self.assertEqual(hf.evaluate("(1u << T::kB) - 1", names), 3)  # 13's multicast mask
        self.assertEqual(hf.evaluate("1 + 2 << 3 >> 1", {}), 12)  # shifts bind below +
        # && and || short-circuit as in C++ (14's promote with kPromoteTiles = 0).
        self.assertEqual(hf.evaluate("(kZ > 0 && 1 % kZ == 0) || 0", {"kZ": 0}), 0)
        self.assertEqual(hf.evaluate("1 || 1 / 0", {}), 1)
        for bad in ("kUnknown + 1", "f(2)", "2 +", "(1", "1 && 1 / 0"):
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

    def test_reads_chapter_13(self):
        kernel = hf.cluster_kernel(REPO)
        k, small = kernel["k"], kernel["tiles"]["SmallTile"]
        self.assertTrue(all(isinstance(k[n], int) and k[n] > 0 for n in hf.CLUSTER_FIELDS), k)
        self.assertEqual(k["kCluster"], 2)
        self.assertEqual(k["kBoxRowsA"] * k["kCluster"], k["kBlockM"])
        self.assertEqual({bar: kernel["arrivals"][bar] for bar in ("full", "empty")},
                         {"full": 1, "empty": 4 * k["kConsumers"] * k["kCluster"]})
        self.assertEqual(kernel["expect_tx"], k["kStageBytes"])
        self.assertEqual(kernel["mask"], 0b11)  # both ranks
        # SmallTile: the same struct, evaluated for its own template values.
        self.assertEqual(small["kBlockM"], 128)
        self.assertEqual(small["kBlockN"], 64 * small["kConsumers"])
        self.assertEqual(small["kStageBytes"], (small["kBlockM"] + small["kBlockN"]) * 32 * 4)
        self.assertEqual(small["kBoxRowsA"], small["kBlockM"] // 2)
        # The cluster: SGEMM_CLUSTER, the default of the struct's fourth parameter, where the alias
        # leaves it out (MainTile, SmallTile); 1 where it says so.
        tiles = kernel["tiles"]
        self.assertEqual(list(tiles), list(hf.LAUNCHER_TILES))
        self.assertEqual({name: t["kCluster"] for name, t in tiles.items()},
                         {"MainTile": 2, "SmallTile": 2, "SoloTile": 1, "ShortTile": 1})
        self.assertEqual(tiles["SoloTile"]["kBlockM"], k["kBlockM"])
        short = tiles["ShortTile"]
        self.assertEqual((short["kBlockM"], short["kWgmmaN"], short["kRowBlocks"],
                          short["kStages"], short["kBoxRowsA"]), (64, 64, 1, 9, 64))
        # The model's rates, the numbers tile_rate's static_assert quotes.
        self.assertEqual({name: int(hf.tile_rate(tiles[name], kernel["model"]))
                          for name in hf.MODEL_TILES},
                         {"MainTile": 2048, "SmallTile": 1638, "ShortTile": 1170})
        param, var, statements = kernel["unit"]
        self.assertEqual((param, var), ("u", "w"))
        self.assertEqual(set(kernel["assign"]) & set(hf.SCHEDULE_FIELDS),
                         set(hf.SCHEDULE_FIELDS))

    def test_reads_chapter_14(self):
        kernel = hf.split_kernel(REPO)
        k = kernel["k"]
        self.assertTrue(all(isinstance(k[n], int) and k[n] > 0 for n in hf.SPLIT_FIELDS), k)
        # PairTile = SplitTile<SGEMM_TILE, SGEMM_CLUSTER>: the tile's values, then the cluster.
        self.assertEqual((k["kBlockM"], k["kConsumers"], k["kStages"], k["kCluster"]),
                         (128, 2, 4, 2))
        self.assertEqual(k["kStageBytes"], (2 * k["kBlockM"] + k["kBlockN"]) * k["kBlockK"] * 4)
        self.assertEqual(k["kPromoteTiles"], k["SGEMM_PROMOTE"] // k["kKSteps"])
        self.assertEqual(kernel["splitting"], 3)
        self.assertEqual(kernel["arrivals"], {"full": 1, "split": 3,
                                              "empty": 4 * k["kConsumers"] * k["kCluster"]})
        self.assertEqual(kernel["narrow"], k["kBlockN"])
        self.assertEqual(kernel["expect_tx"], {"pass": k["kStageBytes"],
                                               "producer": k["kStageBytes"] - k["kSizeA"] * 4})
        self.assertEqual([p[:2] for p in kernel["products"]],
                         [("small", "desc_big"), ("big", "desc_small"), ("big", "desc_big")])
        # after's condition: every kPromoteTiles K tiles, and the unit's last.
        self.assertEqual([kernel["promote"](kt, 3) for kt in range(3)], [True] * 3)

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
            # tensor_map_2d's map (the loads the figures draw), not tensor_map_slices' (stores)
            edit(root / hf.TMA_HEADER,
                 r"^(.*)CU_TENSOR_MAP_SWIZZLE_128B(, CU_TENSOR_MAP_L2_PROMOTION_L2_256B.*)$",
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
        cases += [
            (hf.CLUSTER_SOURCE, hf.cluster_kernel, [(r"^#define SGEMM_CLUSTER .*$",
                                                     "#define SGEMM_CLUSTER 1")],
             "clusters of 2 blocks sharing A's box by multicast"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel, [(r"^#define SGEMM_MULTICAST .*$",
                                                     "#define SGEMM_MULTICAST 0")],
             "clusters of 2 blocks sharing A's box by multicast"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel, [(r"^#define SGEMM_PERSISTENT .*$",
                                                     "#define SGEMM_PERSISTENT 0")],
             "persistent clusters"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(.*mbarrier_init\(&empty\[s\], 4 \* T::kConsumers)( \* T::kCluster\);)$",
               r"\1);")], "arrivals"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(.*mbarrier_arrive_expect_tx\(&full\[stage\], )T::kStageBytes(\);)$",
               r"\g<1>T::kStageBytes / 2\2")], "expecting kStageBytes"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(.*&full\[stage\], )\(1u << T::kCluster\) - 1(\);)$", r"\g<1>1\2")],
             "multicast to every block"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(.*)mbarrier_arrive_cluster\(&empty\[stage\], lane\);$",
               r"\1mbarrier_arrive_cluster(&empty[stage], 0);")],
             "lane r arrives on rank r's empty"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(\s*const int unit_step = ).*$", r"\g<1>1;")],
             "cluster c walking units c, c \\+ clusters"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(\s*)w\.pair_n = inside / rows;$", r"\1w.pair_n = helper(inside);")],
             r"Schedule::unit: cannot run `w.pair_n = helper\(inside\)`"),
            # The launcher's choice of tile: its switches, its rules, its model.
            (hf.CLUSTER_SOURCE, hf.cluster_kernel, [(r"^#define SGEMM_PLAN_MODEL .*$",
                                                     "#define SGEMM_PLAN_MODEL 0")],
             "the launcher's default choice of tile .* has SGEMM_PLAN_MODEL 0"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(\s*if \(one_column\) return f\()SoloTile(\{\}\);)$", r"\1MainTile\2")],
             r"with_tile picks MainTile for 129 x 64 x 1024, the figures' copy of its rules "
             r"\(launcher_tile\) SoloTile: the copy needs the source's change"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(\s*if \(one_column\) return )f(\(SoloTile\{\}\);)$", r"\1g\2")],
             r"with_tile, run for 129 x 64 x 1024: cannot read"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(\s*if \(SGEMM_SHORT_ROWS && p\.m <= )(SmallTile::kBlockM\) return.*)$",
               r"\g<1>2 * \2")],
             "with_tile picks SmallTile for 129 x 129 x 1024, the figures' copy of its rules "
             r"\(launcher_tile\) MainTile"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(\s*)(if \(shorter < main && shorter < small\) return f\(ShortTile\{\}\);)$",
               r"\1if (small < main) return f(SmallTile{});\n\1\2")],
             "with_tile picks SmallTile for 129 x 129 x 4096, the figures' copy of its rules "
             r"\(launcher_tile\) ShortTile"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(\s*const double c_bytes = \(split\.splits > 1 \? 2\.0 \* split\.splits)"
               r" \+ 1( : 1\.0\).*)$", r"\1\2")],
             "plan_clocks no longer says `const double c_bytes="),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^(.*static_cast<int>\(tile_rate<SmallTile>\(\)\) == )1638(.*)$", r"\g<1>1639\2")],
             "tile_rate's static_assert quotes SmallTile at 1639 FLOP per clock, the figures' "
             "copy of tile_rate computes 1638"),
            (hf.CLUSTER_SOURCE, hf.cluster_kernel,
             [(r"^using ShortTile = .*$", "using ShortTile = PersistentTile<64, 2>;")],
             "ShortTile gives 2 values but PersistentTile has 4 template parameters"),
        ]
        cases += [
            (hf.SPLIT_SOURCE, hf.split_kernel, [(r"^#define SGEMM_SPLIT_A .*$",
                                                 "#define SGEMM_SPLIT_A 0")],
             "SGEMM_SPLIT_A 3's rule"),
            (hf.SPLIT_SOURCE, hf.split_kernel,
             [(r"^(.*mbarrier_init\(&split\[s\], )kSplittingWarps(\);)$", r"\g<1>1\2")],
             "arrivals"),
            (hf.SPLIT_SOURCE, hf.split_kernel,
             [(r"^(\s*)sgemm::wgmma_tf32<T::kWgmmaN>\(part\[i\], big\[P\]\[s\], "
               r"desc_small \+ offset\);$", "")],
             "three wgmma per k-step"),
            (hf.SPLIT_SOURCE, hf.split_kernel,
             [(r"^(\s*)sgemm::wgmma_wait<1>\(\);$", r"\1sgemm::wgmma_wait<0>();")],
             "wgmma_wait<0>\(\) \(promotion\) or wgmma_wait<1>"),
            (hf.SPLIT_SOURCE, hf.split_kernel, [(r"^using PairTile = .*$",
                                                 "using PairTile = SplitTile<SGEMM_TILE>;")],
             "PairTile gives 3 values"),
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


class PromotionTest(unittest.TestCase):
    def check(self, kernel, tiles):
        k = kernel["k"]
        plan = hf.split_schedule(kernel, tiles)
        every = k["kPromoteTiles"]
        want = [kt for kt in range(tiles) if (every and (kt + 1) % every == 0) or kt + 1 == tiles]
        self.assertEqual(plan["promoted"], want)
        per_tile = k["kKSteps"] * k["kRowBlocks"] * 3
        self.assertEqual(len(plan["tensor"]), tiles * per_tile)
        # scale-d = 0 on the first wgmma of the unit and of each K tile after a promotion alone.
        fresh = [i // per_tile for i, (*_, scale_d) in enumerate(plan["tensor"]) if not scale_d]
        self.assertEqual(fresh, [0] + [kt + 1 for kt in want if kt + 1 < tiles])
        for kt in want:  # the add starts once every wgmma issued so far is done
            wait = next(x1 for kind, _, x1, t in plan["warpgroup"] if kind == "wait0" and t == kt)
            done = max(x1 for _, _, x1, t, _ in plan["tensor"] if t <= kt)
            self.assertGreaterEqual(wait, done)
        ordered = sorted((x0, x1) for _, x0, x1, *_ in plan["tensor"])
        for (_, end), (start, _) in zip(ordered, ordered[1:]):
            self.assertGreaterEqual(start, end - 1e-9)

    def test_promotes_where_the_kernel_does(self):
        self.check(hf.split_kernel(REPO), 3)
        for promote in (8, 12, 0):  # every 2 or 3 K tiles; 0: at the unit's end only
            with self.subTest(promote=promote), tempfile.TemporaryDirectory() as tmp:
                sources(tmp)
                edit(Path(tmp) / hf.SPLIT_SOURCE, r"^#define SGEMM_PROMOTE .*$",
                     f"#define SGEMM_PROMOTE {promote}")
                kernel = hf.split_kernel(Path(tmp))
                self.assertEqual(kernel["k"]["kPromoteTiles"], promote // 4)
                self.check(kernel, 7)


class UnitOrderTest(unittest.TestCase):
    """Chapter 13's Schedule::unit (the source's statements, run) and hopper_figures'
    grouped_unit (written from the comment's description) against a case worked by hand."""

    # 5 tile rows, 3 pair columns, groups of 2 rows, 2 K slices. Slice 0: group 0 (rows 0-1)
    # walks pair column 0 top to bottom, then 1, then 2; group 1 (rows 2-3) the same; group 2
    # holds row 4 alone. Slice 1 repeats it from unit 15. (tile_m, pair_n) by unit:
    HAND = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2),
            (2, 0), (3, 0), (2, 1), (3, 1), (2, 2), (3, 2),
            (4, 0), (4, 1), (4, 2)]

    def fields(self, tiles_m, pairs_n, group_rows, splits=1):
        return {"tiles_m": tiles_m, "pairs_n": pairs_n, "splits": splits, "k_slice": 64,
                "group_rows": group_rows}

    def test_the_source_walks_the_hand_worked_order(self):
        kernel = hf.cluster_kernel(REPO)
        fields = self.fields(5, 3, 2, splits=2)
        want = [(m, p, z) for z in (0, 1) for m, p in self.HAND]
        source = [tuple(hf.schedule_unit(kernel, fields, u)[f] for f in hf.UNIT_FIELDS)
                  for u in range(30)]
        self.assertEqual(source, want)
        self.assertEqual([hf.grouped_unit(5, 3, 2, u) for u in range(30)], want)

    def test_the_source_matches_the_reference_everywhere(self):
        kernel = hf.cluster_kernel(REPO)
        for tiles_m, pairs_n, group_rows, splits in ((1, 1, 8, 1), (16, 16, 8, 1), (7, 5, 3, 2),
                                                     (9, 2, 8, 3), (4, 6, 1, 1), (3, 1, 2, 4)):
            fields = self.fields(tiles_m, pairs_n, group_rows, splits)
            units = tiles_m * pairs_n * splits
            walk = [tuple(hf.schedule_unit(kernel, fields, u)[f] for f in hf.UNIT_FIELDS)
                    for u in range(units)]
            self.assertEqual(walk, [hf.grouped_unit(tiles_m, pairs_n, group_rows, u)
                                    for u in range(units)], fields)
            # Every (tile row, pair, slice) exactly once.
            self.assertEqual(sorted(walk), sorted((m, p, z) for z in range(splits)
                                                  for m in range(tiles_m)
                                                  for p in range(pairs_n)))
            if group_rows == 1:  # row after row
                self.assertEqual(walk[:pairs_n], [(0, p, 0) for p in range(pairs_n)])

    def test_schedule_png_launch(self):
        # 4096^3: 16 x 32 tiles of 256 x 128, 16 x 16 units, 66 clusters: 4 rounds. Round 0 is
        # units 0-65: in groups of 8 rows, 8 whole pair columns and 2 units of the ninth (8 rows
        # of A, 18 tile columns of B); row after row, 4 whole rows and 2 units of the fifth (5
        # rows, all 32 columns).
        kernel = hf.cluster_kernel(REPO)
        self.assertEqual(kernel["k"]["kGroupRows"], 8)  # the case below is worked for 8
        launch = hf.cluster_launch(kernel, 4096, 4096, 4096, 66)
        self.assertEqual((launch["name"], launch["splits"], launch["units"], launch["launched"],
                          launch["rounds"]), ("MainTile", 1, 256, 66, 4))
        self.assertEqual([(u, c, r) for u, c, r, *_ in launch["walk"][64:68]],
                         [(64, 64, 0), (65, 65, 0), (66, 0, 1), (67, 1, 1)])
        self.assertEqual(launch["walk"][65][3:], (1, 8, 0))
        rows, cols = hf.round_reach(launch, 4096)
        self.assertEqual((rows, cols), (list(range(8)), list(range(18))))
        rows, cols = hf.round_reach(hf.cluster_launch(kernel, 4096, 4096, 4096, 66,
                                                      group_rows=1), 4096)
        self.assertEqual((rows, cols), (list(range(5)), list(range(32))))

    def test_the_rules_pick_the_hand_worked_tiles(self):
        kernel = hf.cluster_kernel(REPO)
        cases = {(64, 4096, 4096): "ShortTile",    # M <= 64
                 (100, 128, 4096): "ShortTile",    # M <= 128 and one column of tiles
                 (129, 128, 4096): "SoloTile",     # one column of tiles
                 (1000, 100, 4096): "SoloTile",
                 (128, 4096, 4096): "SmallTile",   # M <= 128
                 (4096, 4096, 4096): "MainTile",   # 16 x 32 = 512 big tiles >= 132 SMs
                 (2048, 8448, 64): "MainTile"}     # 8 x 66 = 528
        for shape, want in cases.items():
            name, _, model = hf.launcher_tile(kernel, *shape, 66)
            self.assertEqual((name, model), (want, None), shape)
            self.assertEqual(hf.source_tile(kernel, *shape, 66), want, shape)

    def test_split_k_png_plans(self):
        # Worked from common/split_k.h and the launcher's model, 132 SMs, 132 slots for every
        # tile (66 pairs, or 132 unpaired blocks), 2 x 2619 MHz x 640 bytes / 1980 MHz =
        # 1693.09 DRAM bytes per SM clock. 1024 x 1024 x 65536 (2048 K tiles, C 4 MiB):
        # - 256 x 128: 32 tiles, floor(132 / 32) = 4 slices of 16384, 4 tile rows x 4 pairs x 4
        #   = 64 units on 64 clusters; busiest SM 256 x 128 x 16384 = 536.9 M multiply-adds, x 2
        #   / 2048 = 524,288 clocks, + C 9 x 4 MiB / 1693.09 = 22,296: 546,584;
        # - 128 x 128: 64 tiles, 2 slices of 32768, 8 x 4 x 2 = 64 units; the same multiply-adds at
        #   1638.4 FLOP per clock: 655,360, + 5 x 4 MiB: 12,387: 667,747;
        # - 64 x 128: 128 tiles, one slice, 16 x 8 = 128 units on 128 of 132 clusters; 536.9 M at
        #   1170.3: 917,504, + 4 MiB: 2,477: 919,981. The big tile, 4 slices.
        # 1024^3 (32 K tiles): the same tiles and slices (each slice at least 4 K tiles) a 64th as
        # deep: 8,192 + 22,296 = 30,488; 10,240 + 12,387 = 22,627; 14,336 + 2,477 = 16,813. The
        # 64-row tile, K not split.
        kernel = hf.cluster_kernel(REPO)
        want = {(1024, 1024, 65536): ("MainTile", [(4, 16384, 64, 64, 546584),
                                                   (2, 32768, 64, 64, 667747),
                                                   (1, 65536, 128, 128, 919981)]),
                (1024, 1024, 1024): ("ShortTile", [(4, 256, 64, 64, 30488),
                                                   (2, 512, 64, 64, 22627),
                                                   (1, 1024, 128, 128, 16813)])}
        self.assertEqual(set(hf.SPLIT_SHAPES_13), set(want))
        for shape, (pick, got), plans in zip(want, want.values(),
                                             hf.split_k_plans(kernel, 66)):
            self.assertEqual(plans[0], pick)
            self.assertEqual(hf.source_tile(kernel, *shape, 66), pick)
            self.assertEqual([(launch["splits"], launch["k_slice"], launch["units"],
                               launch["launched"], round(parts["clocks"]))
                              for launch, parts in plans[2]], got)
            self.assertEqual([launch["name"] for launch, _ in plans[2]], list(hf.MODEL_TILES))
            self.assertEqual(hf.cluster_launch(kernel, *shape, 66)["name"], pick)
        self.assertAlmostEqual(hf.DRAM_BYTES_PER_CLOCK, 3352.32e9 / 1980e6)
        # SGEMM_SPLIT_K 0: one slice for every tile, and the model picks the 64-row tile for the
        # long K too (917,504 + 2,477 clocks against 2 x 256 x 128 x 65536 / 2048 = 2,097,152).
        plain = hf.cluster_launch(kernel, 1024, 1024, 65536, 66, split_k=False)
        self.assertEqual((plain["name"], plain["splits"], plain["units"]), ("ShortTile", 1, 128))

    def test_the_source_picks_as_the_copy(self):
        # with_tile run from the source against launcher_tile, on shapes besides the probes.
        kernel = hf.cluster_kernel(REPO)
        for clusters in (66, 60):
            for m in (1, 63, 96, 127, 130, 192, 384, 640, 768, 2000):
                for n in (1, 127, 130, 384, 2000, 3000):
                    for k_dim in (33, 2048, 30000):
                        self.assertEqual(hf.source_tile(kernel, m, n, k_dim, clusters),
                                         hf.launcher_tile(kernel, m, n, k_dim, clusters)[0],
                                         (m, n, k_dim, clusters))

    def test_launches_cover_every_tile_once(self):
        kernel = hf.cluster_kernel(REPO)
        shapes = ((4096, 4096, 4096, 66), (1000, 3000, 300, 7), (16, 4096, 14336, 66),
                  (300, 130, 5000, 66), (1000, 100, 4096, 66))
        for (m, n, k_dim, clusters), tile in [(shape, None) for shape in shapes] + [
                ((300, 130, 5000, 66), name) for name in hf.LAUNCHER_TILES]:
            launch = hf.cluster_launch(kernel, m, n, k_dim, clusters, tile=tile)
            tile, cluster = launch["tile"], launch["tile"]["kCluster"]
            covered = sorted((tile_m, pair_n * cluster + rank, z)
                             for _, _, _, tile_m, pair_n, z in launch["walk"]
                             for rank in range(cluster)
                             if (pair_n * cluster + rank) * tile["kBlockN"] < n)
            tiles_m, tiles_n = -(-m // tile["kBlockM"]), -(-n // tile["kBlockN"])
            self.assertEqual(covered, sorted((r, c, z) for r in range(tiles_m)
                                             for c in range(tiles_n)
                                             for z in range(launch["splits"])))
            for u, c, r, *_ in launch["walk"]:  # cluster c takes c, c + launched, ...
                self.assertEqual(u, c + r * launch["launched"])


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
            # 13: each figure goes stale with what it draws, and only then.
            ch13 = "13_persistent_clusters/figures/"
            edit(root / hf.CLUSTER_SOURCE, r"^#define SGEMM_GROUP_ROWS .*$",
                 "#define SGEMM_GROUP_ROWS 4")
            self.assertEqual(stale(root), [ch13 + "schedule.png"])
            sources(root)
            with_tile(root, hf.CLUSTER_SOURCE, "256, 2, 3")
            self.assertEqual(stale(root), [ch13 + "multicast.png", ch13 + "split_k.png"])
            sources(root)
            edit(root / hf.CLUSTER_SOURCE, r"^using SmallTile = .*$",
                 "using SmallTile = PersistentTile<128, 2, 5>;")
            self.assertEqual(stale(root), [ch13 + "split_k.png"])
            sources(root)
            edit(root / hf.CLUSTER_SOURCE, r"^using ShortTile = .*$",
                 "using ShortTile = PersistentTile<64, 2, 8, 1>;")
            self.assertEqual(stale(root), [ch13 + "split_k.png"])
            sources(root)
            with mock.patch.object(hf, "DRAM_BYTES_PER_CLOCK", 1500.0):
                self.assertEqual(stale(root), [ch13 + "split_k.png"])
            # The order itself: rows inside a group walked in reverse (split_k.png draws the
            # clusters' units and slices, not where their tiles lie).
            edit(root / hf.CLUSTER_SOURCE, r"^(\s*w\.tile_m = first_row \+ )inside % rows;$",
                 r"\g<1>rows - 1 - inside % rows;")
            self.assertEqual(stale(root), [ch13 + "schedule.png"])
            sources(root)
            # The slices in reverse: what split_k.png colours (schedule.png has one slice).
            edit(root / hf.CLUSTER_SOURCE, r"^(\s*w\.slice = )u / per_slice;$",
                 r"\g<1>splits - 1 - u / per_slice;")
            self.assertEqual(stale(root), [ch13 + "split_k.png"])
            sources(root)
            # 14: the tile, the promotion and the timeline's durations.
            ch14 = ["14_3xtf32_hopper/figures/split.png"]
            with_tile(root, hf.SPLIT_SOURCE, "128, 2, 3")
            self.assertEqual(stale(root), ch14)
            sources(root)
            edit(root / hf.SPLIT_SOURCE, r"^#define SGEMM_PROMOTE .*$", "#define SGEMM_PROMOTE 8")
            self.assertEqual(stale(root), ch14)
            sources(root)
            with mock.patch.dict(hf.SPLIT_DURATIONS, {"add": 9.0}):
                self.assertEqual(stale(root), ch14)
            self.assertEqual(stale(root), [])
            with mock.patch.object(hf, "RESIDENT_CLUSTERS", 60):
                self.assertEqual(stale(root), [ch13 + "schedule.png", ch13 + "split_k.png"])
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

    def test_clusters_option(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = draw("--out", tmp, "--clusters", "0")
            self.assertEqual(proc.returncode, 2)
            self.assertRegex(proc.stderr, r"^error: --clusters must be at least 1\n$")
            # Another count draws (and stamps) what it assumes.
            plt = hf.pyplot(hf.SCRIPT)
            png = Path(tmp) / "schedule.png"
            hf.draw_schedule(plt, hf.cluster_kernel(REPO), 60, png)
            self.assertGreater(png.stat().st_size, 1000)
            self.assertIn("60 resident clusters assumed",
                          hf.signatures(REPO, 60)[("13_persistent_clusters", "schedule.png")])

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
                # The chapter's own figures (figures/x.png), not the results folder's.
                for png in re.findall(r"(?<![\w/])figures/([\w.-]+\.png)", text):
                    self.assertTrue((Path(tmp) / chapter / png).is_file(),
                                    f"{chapter}/README.md embeds figures/{png}, not drawn")


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not installed: skipped")
        sys.exit(77)
    unittest.main()
