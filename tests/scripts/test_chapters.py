#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host tests of scripts/chapters.py: the one chapter list (read from CMakeLists.txt), which must
match the chapter folders; its --help; the exit codes; size lists; the build-free GPU check."""

import argparse
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS

import chapters  # noqa: E402  (helpers puts scripts/ on the path)


class ChapterListTest(unittest.TestCase):
    def test_reads_the_sgemm_add_chapter_lines_in_order(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "CMakeLists.txt"
            path.write_text(
                "include(cmake/SgemmChapter.cmake)\n"
                "sgemm_add_chapter(00_naive)\n"
                "# sgemm_add_chapter(99_retired)\n"
                "sgemm_add_chapter(02_b\n  TILES \"16,16,16\"\n        \"32,32,8\")\n"
                "  sgemm_add_chapter( 01_a TILES \"1\")\n"
                "function(sgemm_add_chapter_extra folder)\n"
                "sgemm_add_chapter(00_naive)\n")
            self.assertEqual(chapters.read_chapters(path), ["00_naive", "02_b", "01_a"])

    def test_every_listed_chapter_has_its_source(self):
        for folder in chapters.CHAPTERS:
            with self.subTest(folder=folder):
                stem = re.sub(r"^[0-9]+_", "", folder)  # the rule of sgemm_add_chapter()
                self.assertTrue((REPO / folder / f"{stem}.cu").is_file(),
                                f"CMakeLists.txt lists {folder} but {folder}/{stem}.cu is missing")

    def test_every_chapter_folder_is_listed(self):
        folders = sorted(p.name for p in REPO.iterdir()
                         if p.is_dir() and re.match(r"^[0-9]+_", p.name) and any(p.glob("*.cu")))
        self.assertTrue(folders)
        missing = [f for f in folders if f not in chapters.CHAPTERS]
        self.assertEqual(missing, [], "chapter folders without a sgemm_add_chapter(...) line in "
                                      "CMakeLists.txt")
        self.assertEqual(chapters.CHAPTERS, sorted(chapters.CHAPTERS), "not in reading order")

    def test_precision_contract_read_from_the_source(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for folder, text in (("08_a", "  chapter.precision = sgemm::Precision::kTf32;\n"),
                                 ("09_b", "// not Precision::kTf32, a comment\n/* Precision::kTf32"
                                          "\n */ int main() {}\n")):
                (root / folder).mkdir()
                (root / folder / (folder[3:] + ".cu")).write_text(text)
            self.assertEqual(chapters.chapter_precision("08_a", root), "TF32")
            self.assertEqual(chapters.chapter_precision("09_b", root), "FP32")
        self.assertEqual(chapters.chapter_precision("00_naive"), "FP32")
        tf32 = [c for c in chapters.CHAPTERS if chapters.chapter_precision(c) == "TF32"]
        self.assertIn("08_tensor_cores", tf32)

    def test_exit_codes_match_the_binaries(self):
        header = (REPO / "common" / "exit_codes.h").read_text(encoding="utf-8")
        codes = dict(re.findall(r"(kExit\w+)\s*=\s*(\d+)", header))
        self.assertEqual(
            [int(codes[n]) for n in ("kExitPass", "kExitWrongResult", "kExitUsage", "kExitRuntime")],
            [chapters.EXIT_PASS, chapters.EXIT_WRONG, chapters.EXIT_USAGE, chapters.EXIT_RUNTIME])


class CommandLineTest(unittest.TestCase):
    def run_chapters(self, *options):
        return subprocess.run([sys.executable, str(SCRIPTS / "chapters.py"), *options],
                              capture_output=True, text=True)

    def test_help_says_what_it_is_and_lists_the_chapters(self):
        proc = self.run_chapters("--help")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("sgemm_add_chapter", proc.stdout)
        self.assertIn("common/exit_codes.h", proc.stdout)
        listed = proc.stdout.split("chapters (", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
        self.assertEqual([line.strip() for line in listed], chapters.CHAPTERS)

    def test_without_options_prints_the_chapters(self):
        proc = self.run_chapters()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.splitlines(), chapters.CHAPTERS)

    def test_bad_option_is_one_error_line_and_exit_2(self):
        proc = self.run_chapters("--frobnicate")
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(proc.stderr, "error: unrecognized arguments: --frobnicate\n")


class SizeListTest(unittest.TestCase):
    def test_valid(self):
        self.assertEqual(chapters.parse_int_list("1024"), [1024])
        self.assertEqual(chapters.parse_int_list("1, 2,3"), [1, 2, 3])

    def test_invalid_says_what_a_size_is(self):
        for text, why in [("0", "0 is not >= 1"), ("-3", "-3 is not >= 1"),
                          ("abc", "'abc' is not a whole number"), ("1.5", "'1.5' is not a whole"),
                          ("1,,2", "empty item in '1,,2'"), ("", "empty item in ''"),
                          ("4,", "empty item in '4,'")]:
            with self.subTest(text=text):
                with self.assertRaises(argparse.ArgumentTypeError) as caught:
                    chapters.parse_int_list(text)
                self.assertTrue(str(caught.exception).startswith(why), str(caught.exception))
                self.assertIn("a size is a whole number >= 1", str(caught.exception))


class FakeDriver:
    """Stands in for libcuda: cuInit returns init_rc, cuDeviceGetCount reports count, device 0
    has compute capability cc."""

    def __init__(self, init_rc=0, count=1, cc=(9, 0)):
        self.init_rc, self.count, self.cc = init_rc, count, cc

    def cuInit(self, flags):  # noqa: N802  (the driver API's name)
        return self.init_rc

    def cuDeviceGetCount(self, pointer):  # noqa: N802
        pointer._obj.value = self.count
        return 0

    def cuGetErrorName(self, rc, pointer):  # noqa: N802
        pointer._obj.value = b"CUDA_ERROR_UNKNOWN"
        return 0

    def cuDeviceGet(self, pointer, ordinal):  # noqa: N802
        pointer._obj.value = ordinal
        return 0 if ordinal < self.count else 101  # CUDA_ERROR_INVALID_DEVICE

    def cuDeviceGetAttribute(self, pointer, attribute, device):  # noqa: N802
        pointer._obj.value = {chapters.CU_ATTRIBUTE_CC_MAJOR: self.cc[0],
                              chapters.CU_ATTRIBUTE_CC_MINOR: self.cc[1]}[attribute]
        return 0


class GpuStatusTest(unittest.TestCase):
    """chapters.gpu_status() sorts the driver's answers into words (Linux library names)."""

    def status(self, driver, query=lambda: chapters.gpu_status()):
        def load(name):
            if driver is None:
                raise OSError(f"{name}: cannot open shared object file")
            return driver
        saved = chapters.ctypes.CDLL, chapters.sys.platform
        chapters.ctypes.CDLL, chapters.sys.platform = load, "linux"
        try:
            return query()
        finally:
            chapters.ctypes.CDLL, chapters.sys.platform = saved

    def test_compute_capability(self):
        def capability(device=0):
            return lambda: chapters.compute_capability(device)
        self.assertEqual(self.status(FakeDriver(cc=(9, 0)), capability()), (9, 0))
        self.assertEqual(self.status(FakeDriver(cc=(8, 6)), capability()), (8, 6))
        self.assertIsNone(self.status(FakeDriver(count=1), capability(1)))
        self.assertIsNone(self.status(FakeDriver(init_rc=100), capability()))
        self.assertIsNone(self.status(None, capability()))

    def test_cases(self):
        self.assertEqual(self.status(None), "no NVIDIA driver: libcuda.so.1 not found")
        self.assertEqual(self.status(FakeDriver(init_rc=34)),
                         "no NVIDIA driver: only the CUDA toolkit's stub libcuda is installed")
        self.assertTrue(self.status(FakeDriver(init_rc=100)).startswith(
            "the NVIDIA driver finds no GPU"))
        self.assertEqual(self.status(FakeDriver(init_rc=999)),
                         "the NVIDIA driver failed to start (cuInit: CUDA_ERROR_UNKNOWN)")
        self.assertEqual(self.status(FakeDriver(count=0)), "the NVIDIA driver finds no GPU")
        self.assertIsNone(self.status(FakeDriver(count=2)))

    def test_the_real_driver_answers_without_raising(self):
        status = chapters.gpu_status()
        self.assertTrue(status is None or isinstance(status, str))

    def test_host_test_hint_names_the_folder(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp).resolve()
            self.assertIn(f"-B {folder} && cmake --build {folder} && ctest --test-dir {folder} "
                          "-L host", chapters.host_test_hint(folder))
            (folder / "CMakeCache.txt").write_text("")
            self.assertEqual(chapters.host_test_hint(folder), f"ctest --test-dir {folder} -L host")


if __name__ == "__main__":
    unittest.main()
