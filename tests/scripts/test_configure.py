#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of the configure step's own errors (cmake/Dependencies.cmake and
cmake/CudaArchitectures.cmake): a missing CLI11 or GoogleTest ends the configure within seconds
with one message naming the package to install, and architectures below 8.0 are refused. Also the
skip reasons CTest prints after its summary (cmake/RecordSkip.cmake, cmake/SkippedTests.cmake).

Nothing here touches the network: the downloads are switched off (SGEMM_FETCH_DEPS=OFF) or
pointed at local files. CTest passes the outer build's cmake, generator and compilers through
SGEMM_TEST_* environment variables (tests/CMakeLists.txt), and CMAKE_PREFIX_PATH as is."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from helpers import REPO

CMAKE = os.environ.get("SGEMM_TEST_CMAKE") or shutil.which("cmake") or "cmake"
GENERATOR = os.environ.get("SGEMM_TEST_GENERATOR") or ("Ninja" if shutil.which("ninja") else "")
COMPILERS = [f"-DCMAKE_{lang}_COMPILER={os.environ[var]}"
             for lang, var in (("CUDA", "SGEMM_TEST_CUDA_COMPILER"),
                               ("CXX", "SGEMM_TEST_CXX_COMPILER")) if os.environ.get(var)]
CLI11_SHA256 = "f2d893a65c3b1324c50d4e682c0cdc021dd0477ae2c048544f39eed6654b699a"


def configure(build_dir, *options):
    """(exit code, output with CMake's line wrapping undone, seconds)."""
    command = [CMAKE, "-S", str(REPO), "-B", str(build_dir), *COMPILERS, *options]
    if GENERATOR:
        command += ["-G", GENERATOR]
    began = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True)
    return proc.returncode, " ".join((proc.stdout + proc.stderr).split()), time.monotonic() - began


class DependenciesTest(unittest.TestCase):
    """One build folder, configured several times: the compiler checks run once."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="sgemm-configure-")
        cls.build = Path(cls.tmp.name) / "build"
        # The first configure also checks the compilers (seconds); the message comes right after.
        cls.first = configure(cls.build, "-DCMAKE_CUDA_ARCHITECTURES=90",
                              "-DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON", "-DSGEMM_FETCH_DEPS=OFF",
                              "-DBUILD_TESTING=OFF")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_cli11_and_no_download_says_what_to_install(self):
        rc, out, _ = self.first
        self.assertNotEqual(rc, 0, out)
        self.assertIn("cli11 not found, and SGEMM_FETCH_DEPS is OFF. Install it (Debian/Ubuntu: "
                      "apt-get install libcli11-dev), or unpack the package and pass "
                      "-DCMAKE_PREFIX_PATH=<its usr folder>.", out)
        self.assertNotIn("downloading", out)

    def test_user_architectures_are_printed(self):
        self.assertIn("-- CUDA architectures: 90 (-DCMAKE_CUDA_ARCHITECTURES)", self.first[1])

    def test_failed_download_fails_at_once_with_the_same_advice(self):
        rc, out, seconds = configure(self.build, "-DSGEMM_FETCH_DEPS=ON",
                                     "-DSGEMM_CLI11_URL=file:///nonexistent/v2.4.2.tar.gz")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("cli11 not found, and downloading file:///nonexistent/v2.4.2.tar.gz failed",
                      out)
        self.assertIn("apt-get install libcli11-dev", out)
        self.assertLess(seconds, 30)  # no retries (FetchContent's own took ~90 s offline)

    def test_download_with_the_wrong_hash_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            archive = Path(tmp) / "v2.4.2.tar.gz"
            archive.write_bytes(b"not CLI11")
            rc, out, _ = configure(self.build, "-DSGEMM_FETCH_DEPS=ON",
                                   f"-DSGEMM_CLI11_URL={archive.as_uri()}")
        self.assertNotEqual(rc, 0, out)
        self.assertIn(f"expected {CLI11_SHA256}", out)

    def test_no_googletest_says_what_to_install(self):
        rc, out, seconds = configure(self.build, "-DCMAKE_DISABLE_FIND_PACKAGE_CLI11=OFF",
                                     "-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON",
                                     "-DSGEMM_FETCH_DEPS=OFF", "-DBUILD_TESTING=ON",
                                     "-USGEMM_CLI11_URL")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("googletest not found, and SGEMM_FETCH_DEPS is OFF. Install it "
                      "(Debian/Ubuntu: apt-get install libgtest-dev)", out)
        self.assertIn("-DBUILD_TESTING=OFF", out)
        self.assertLess(seconds, 30)


class ArchitecturesTest(unittest.TestCase):
    """Checked before project(): refused within a second, before any compiler runs."""

    def refused(self, archs):
        with tempfile.TemporaryDirectory(prefix="sgemm-configure-") as tmp:
            rc, out, seconds = configure(Path(tmp) / "build", f"-DCMAKE_CUDA_ARCHITECTURES={archs}")
        self.assertNotEqual(rc, 0, out)
        self.assertLess(seconds, 30)
        self.assertNotIn("The CUDA compiler identification", out)
        return out

    def test_below_8_0_is_refused(self):
        out = self.refused("80;75")
        self.assertIn('CUDA architectures "80;75" (-DCMAKE_CUDA_ARCHITECTURES): 75 is below compute '
                      "capability 8.0, which the chapters need", out)
        self.assertIn("-DCMAKE_CUDA_ARCHITECTURES=90", out)

    def test_all_is_refused(self):
        self.assertIn('"all" includes GPUs below compute capability 8.0', self.refused("all"))

    def test_malformed_is_refused(self):
        self.assertIn('"8.0" is not an architecture like 90, 90a, 90-real or native',
                      self.refused("8.0"))


class SkipReasonsTest(unittest.TestCase):
    """What a skipping test records and what CTest prints after its summary."""

    def script(self, name, *definitions):
        proc = subprocess.run([CMAKE, *definitions, "-P", str(REPO / "cmake" / name)],
                              capture_output=True, text=True)
        return proc.returncode, proc.stdout + proc.stderr

    def test_records_and_summary(self):
        python = sys.executable
        with tempfile.TemporaryDirectory() as tmp:
            skipped = Path(tmp) / "Skipped"
            skipped.mkdir()
            for i in range(6):
                self.script("RecordSkip.cmake", f"-DRECORD={skipped}/gpu.test{i}",
                            "-DREASON=no CUDA GPU on this machine")
            # A script test that exits 77: its last line says why.
            rc, out = self.script(
                "RecordSkip.cmake", f"-DRECORD={skipped}/scripts.plot",
                f"-DRUN={python}|-c|print('drawing')\nprint('matplotlib not installed: skipped')\n"
                "raise SystemExit(77)")  # (a CMake list: no ';' in the command)
            self.assertEqual(rc, 0, out)
            self.assertIn("SGEMM-SKIP: matplotlib not installed", out)
            # Passing and failing commands leave no record; a failure fails the test.
            self.assertEqual(self.script("RecordSkip.cmake", f"-DRECORD={skipped}/pass",
                                         f"-DRUN={python}|-c|pass")[0], 0)
            self.assertNotEqual(self.script("RecordSkip.cmake", f"-DRECORD={skipped}/fail",
                                            f"-DRUN={python}|-c|raise SystemExit(1)")[0], 0)

            rc, out = self.script("SkippedTests.cmake", f"-DSKIP_DIR={skipped}")
            self.assertEqual(rc, 0, out)
            self.assertEqual(out.splitlines(), [
                "Why tests were skipped:",
                "  6 skipped: no CUDA GPU on this machine (gpu.test0, gpu.test1, gpu.test2, "
                "gpu.test3, ... and 2 more)",
                "  1 skipped: matplotlib not installed (scripts.plot)"])
            self.script("SkippedTests.cmake", f"-DSKIP_DIR={skipped}", "-DCLEAR=ON")
            self.assertFalse(skipped.exists())
            self.assertEqual(self.script("SkippedTests.cmake", f"-DSKIP_DIR={skipped}"), (0, ""))


if __name__ == "__main__":
    unittest.main()
