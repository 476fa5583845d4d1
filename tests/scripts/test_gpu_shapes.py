#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of the GPU tests of the TMA chapters (cmake/GpuTests.cmake), no GPU needed:
- the shape lists: the paths that copy A (K % 4 != 0) or B (N % 4 != 0) into padded rows before
  TMA reads them (common/tma.h, tma_readable) are verified on both of the launchers' tiles and
  run under the sanitizers, so that a shape list edited later cannot drop one unnoticed;
- the registered tests (`ctest -N` in the build folder): synccheck for every chapter that includes
  common/tma.h (the mbarrier chapters) and none other, in the sanitizer part, and the padded and
  accuracy-contract tests in the tensor-core part; a synccheck test, too, for 09, whose warps meet
  on an mbarrier without TMA."""

import math
import os
import re
import subprocess
import unittest

from helpers import REPO

from chapters import CHAPTERS, chapter_source  # noqa: E402  (helpers puts scripts/ on the path)

GPU_TESTS = REPO / "cmake" / "GpuTests.cmake"
INCLUDES_TMA = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"common/tma\.h"', re.MULTILINE)
USES_MBARRIER = re.compile(r'"mbarrier\.')
# The launchers of chapters 11 and 12 take their big tile, 256 x 128, unless it gives fewer
# blocks than half the SMs; then the small one (takes_small_tile). The GPU tests run on the H100.
H100_SMS = 132


def shape_list(text, *names):
    """The shapes of three set(<name> "m1,m2,...") lines of GpuTests.cmake: M, N and K."""
    dims = []
    for name in names:
        match = re.search(rf'set\({name} "([0-9,]+)"\)', text)
        if match is None:
            raise AssertionError(f"{GPU_TESTS} has no set({name} ...) line")
        dims.append([int(v) for v in match.group(1).split(",")])
    if len({len(values) for values in dims}) != 1:
        raise AssertionError(f"{', '.join(names)}: lists of different lengths")
    return list(zip(*dims))


def tile(m, n):
    return "big" if math.ceil(m / 256) * math.ceil(n / 128) >= H100_SMS // 2 else "small"


def padded(m, n, k):
    """Which operands the launcher copies into padded rows: "A", "B", "A+B" or ""."""
    return "+".join(name for name, odd in (("A", k % 4), ("B", n % 4)) if odd)


class TmaShapesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = GPU_TESTS.read_text(encoding="utf-8")
        cls.matrix = shape_list(cls.text, "SGEMM_TEST_M", "SGEMM_TEST_N", "SGEMM_TEST_K")
        cls.tma = shape_list(cls.text, "tma_m", "tma_n", "tma_k")  # the TMA chapters' .padded
        cls.sanitizer = shape_list(cls.text, "SGEMM_SANITIZER_M", "SGEMM_SANITIZER_N",
                                   "SGEMM_SANITIZER_K")

    def test_every_padded_path_is_verified_on_both_tiles(self):
        covered = {(tile(m, n), padded(m, n, k)) for m, n, k in self.matrix + self.tma}
        for size in ("big", "small"):
            for operands in ("A", "B", "A+B"):
                with self.subTest(tile=size, padded=operands):
                    self.assertIn((size, operands), covered)

    def test_the_padded_tests_add_what_the_matrix_lacks(self):
        # B padded with N even: the epilogue's 8-byte stores beside a padded B, on both tiles.
        even = {tile(m, n) for m, n, k in self.tma if n % 4 == 2}
        self.assertEqual(even, {"big", "small"})
        # Rows of one float (K = 1) on the big tile; K shorter than one K tile (32) on the small.
        self.assertIn(("big", 1), {(tile(m, n), k) for m, n, k in self.tma})
        self.assertTrue(any(tile(m, n) == "small" and k < 32 and k % 4 for m, n, k in self.tma))
        # Every shape of the padded tests pads something.
        self.assertTrue(all(padded(*shape) for shape in self.tma), self.tma)

    def test_the_sanitizers_see_the_padded_copies(self):
        covered = {(tile(m, n), padded(m, n, k)) for m, n, k in self.sanitizer}
        self.assertIn(("small", "A"), covered)
        self.assertIn(("small", "A+B"), covered)
        self.assertIn(("big", "A+B"), covered)  # B's copy after A's in the workspace


class RegisteredTestsTest(unittest.TestCase):
    """The tests the build folder registered: SGEMM_TEST_BUILD_DIR and SGEMM_TEST_CTEST, set by
    tests/CMakeLists.txt; skipped when the file runs on its own."""

    def listed(self, label):
        build, ctest = (os.environ.get(v) for v in ("SGEMM_TEST_BUILD_DIR", "SGEMM_TEST_CTEST"))
        if not build or not ctest:
            self.skipTest("run through ctest: SGEMM_TEST_BUILD_DIR and SGEMM_TEST_CTEST unset")
        proc = subprocess.run([ctest, "--test-dir", build, "-N", "-L", label],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return set(re.findall(r"Test +#[0-9]+: (\S+)", proc.stdout))

    def test_synccheck_for_every_chapter_that_uses_mbarriers(self):
        # 09 meets its warps at a tile's end on an mbarrier without TMA (sm_80's mbarrier).
        users = [c for c in CHAPTERS
                 if USES_MBARRIER.search(chapter_source(c).read_text(encoding="utf-8"))
                 or INCLUDES_TMA.search(chapter_source(c).read_text(encoding="utf-8"))]
        self.assertIn("09_3xtf32", users)
        sanitizers = self.listed("^gpu_sanitizers$")
        for chapter in users:
            with self.subTest(chapter=chapter):
                self.assertTrue(any(t.startswith(chapter + ".") and t.endswith("synccheck")
                                    for t in sanitizers), sorted(sanitizers))

    def test_synccheck_wherever_mbarriers_are_used_in_the_sanitizer_part(self):
        tma = [c for c in CHAPTERS
               if INCLUDES_TMA.search(chapter_source(c).read_text(encoding="utf-8"))]
        self.assertIn("11_tma", tma)
        self.assertIn("12_warp_specialization", tma)
        sanitizers = self.listed("^gpu_sanitizers$")
        self.assertEqual(sorted(t[:-len(".synccheck")] for t in sanitizers
                                if t.endswith(".synccheck")), tma)
        tensor_cores = self.listed("^gpu_tensor_cores$")
        for chapter in tma:
            with self.subTest(chapter=chapter):
                self.assertIn(f"{chapter}.racecheck", sanitizers)
                self.assertIn(f"{chapter}.padded", tensor_cores)
                self.assertIn(f"{chapter}.padded_alpha_beta", tensor_cores)

    def test_the_tma_chapters_have_their_accuracy_contract(self):
        tensor_cores = self.listed("^gpu_tensor_cores$")
        for chapter in ("11_tma", "12_warp_specialization"):
            for dist in ("uniform", "normal", "wide"):
                with self.subTest(chapter=chapter, dist=dist):
                    self.assertIn(f"{chapter}.accuracy_{dist}", tensor_cores)
                    self.assertIn(f"{chapter}.mutant_no_rounding.accuracy_{dist}", tensor_cores)


if __name__ == "__main__":
    unittest.main()
