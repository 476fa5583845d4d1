#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host test of the documentation, as a reader of a fresh clone meets it:

- every relative link and image in every tracked markdown file points at a file or folder of the
  repository (anchors are not checked; web addresses are not followed);
- the ladder table of README.md shows the numbers of the committed results.json it cites: the
  table is read from its header ("TFLOP/s 4096³", "% of cuBLAS 8192³", ...), its rows by their
  first cell (a chapter of results.json, the cuBLAS median or the FP32 peak), and every number is
  compared with the value in results.json printed with the same number of decimals.

Runs without a GPU (CTest label host). A mismatch fails with the file, the row, the column, the
number shown and the number in results.json. A cell that still holds a @@MEASURE(...)@@ marker
(a number to be measured) fails too, naming the text to write in its place, formatted as the
tour prints it, from the results.json the section cites: after a tour, the failure lists every
cell to fill.
"""

import json
import re
import statistics
import subprocess
import unittest
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parent.parent.parent

# Folders that are never part of the documentation a clone carries (build outputs, caches).
SKIP_DIRS = {".git", ".deps", "__pycache__", "scratch"}

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target) and ![alt](target), with an optional "title"; <target> in angle brackets too.
INLINE_LINK = re.compile(r"\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
# [label]: target (reference definitions, at the start of a line).
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"<(?:img|a|source)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']",
                       re.IGNORECASE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")

# A ladder column: "TFLOP/s 4096³", "% of cuBLAS 4096³" or "rms error 4096³" (the error against
# FP64, relative to rms(C)); also written 4096^3.
COLUMN = re.compile(r"^(TFLOP/s|% of cuBLAS|rms error)\s+(\d+)\s*(?:³|\^3)$")
MARKDOWN_LINK_TEXT = re.compile(r"^\[([^\]]+)\]\([^)]*\)$")
RESULTS_DIR = re.compile(r"^docs/results/([^/]+)/")
MARKER = re.compile(r"@@MEASURE\(.*?\)@@")


def tour_format(value, metric, label):
    """A value as the ladder writes it (scripts/tour.py's fmt): TFLOP/s with 3, 2 or 1 decimals
    as it grows, % of cuBLAS with 1 (100 for the cuBLAS rows), the rms error as 2.61e-04."""
    if metric == "rms error":
        return f"{value:.2e}"
    if metric == "% of cuBLAS":
        return "100" if label.startswith("cuBLAS") else f"{value:.1f}"
    digits = 3 if abs(value) < 1 else 2 if abs(value) < 100 else 1
    return f"{value:.{digits}f}"


def markdown_files():
    """The tracked markdown files (git ls-files); every .md under the root outside a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "*.md"], cwd=REPO,
                             capture_output=True, check=True)
        names = [n for n in out.stdout.decode().split("\0") if n]
        return [REPO / n for n in names if (REPO / n).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in REPO.rglob("*.md")
                if not any(part in SKIP_DIRS or part.startswith("build")
                           for part in p.relative_to(REPO).parts)]


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code spans blanked out."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)[0] * len(match.group(2))
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def link_targets(text):
    """(line number, target) of every link, image and reference definition in the prose."""
    for number, line in prose_lines(text):
        for pattern in (INLINE_LINK, REFERENCE, HTML_ATTR):
            for match in pattern.finditer(line):
                target = match.group(1).strip()
                if target.startswith("<") and target.endswith(">"):
                    target = target[1:-1]
                yield number, target


def local_path(md_file, target):
    """The file a relative target points at, or None for web addresses and in-page anchors."""
    if not target or target.startswith("#") or SCHEME.match(target) or target.startswith("//"):
        return None
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return None
    base = REPO if path.startswith("/") else md_file.parent
    return (base / path.lstrip("/")).resolve()


def table_after(lines, start):
    """The markdown table starting at lines[start]: (header cells, [(line number, cells)])."""
    def cells(line):
        return [c.strip() for c in line.strip().strip("|").split("|")]
    header = cells(lines[start])
    rows = []
    for index in range(start + 2, len(lines)):  # lines[start + 1] is the |---| rule
        if not lines[index].lstrip().startswith("|"):
            break
        rows.append((index + 1, cells(lines[index])))
    return header, rows


def row_label(cell):
    """'[00_naive](00_naive/README.md)' -> '00_naive'; other cells as they are, bold removed."""
    cell = cell.strip().strip("*").strip()
    match = MARKDOWN_LINK_TEXT.match(cell)
    return (match.group(1) if match else cell).strip("`* ")


def decimals(shown):
    return len(shown.split(".", 1)[1]) if "." in shown else 0


class LinkTest(unittest.TestCase):
    def test_every_relative_link_resolves(self):
        files = markdown_files()
        self.assertTrue(files, "no markdown files found")
        broken = []
        for md in files:
            text = md.read_text(encoding="utf-8")
            for number, target in link_targets(text):
                path = local_path(md, target)
                if path is not None and not path.exists():
                    broken.append(f"{md.relative_to(REPO)}:{number}: {target}")
        if broken:
            self.fail("links to files that do not exist:\n  " + "\n  ".join(broken))

    def test_the_link_reader_finds_what_it_should(self):
        # The reader itself, on a made-up page: a test that finds nothing would pass anything.
        text = ("[a](x.md) ![b](fig/y.png \"t\") [c](https://example.org) [d](#anchor)\n"
                "`[not](code.md)`\n```\n[not](fenced.md)\n```\n[e]: <ref file.md>\n"
                "<img src=\"z.svg\"> [f](w.md#part)\n")
        targets = [t for _, t in link_targets(text)]
        self.assertEqual(targets, ["x.md", "fig/y.png", "https://example.org", "#anchor",
                                   "ref file.md", "w.md#part", "z.svg"])
        page = REPO / "docs" / "page.md"
        self.assertIsNone(local_path(page, "https://example.org"))
        self.assertIsNone(local_path(page, "#anchor"))
        self.assertEqual(local_path(page, "w.md#part"), (REPO / "docs" / "w.md").resolve())
        self.assertEqual(local_path(page, "../a%20b.md"), (REPO / "a b.md").resolve())


class LadderTest(unittest.TestCase):
    README = REPO / "README.md"

    def ladder(self):
        """(results.json path, header, rows) of README.md's ladder table."""
        lines = self.README.read_text(encoding="utf-8").splitlines()
        start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("|")
                      and any(COLUMN.match(c.strip()) for c in line.strip().strip("|").split("|"))),
                     None)
        self.assertIsNotNone(start, "README.md has no ladder table (a header with columns like "
                                    "'TFLOP/s 4096³' or '% of cuBLAS 4096³')")
        header, rows = table_after(lines, start)
        # The results folder the ladder cites: links into docs/results/<gpu>/ in its section.
        top = max((i for i in range(start) if lines[i].startswith("#")), default=0)
        end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
        section = "\n".join(lines[top:end])
        folders = set()
        for _, target in link_targets(section):
            path = local_path(self.README, target)
            if path is not None:
                match = RESULTS_DIR.match(path.relative_to(REPO).as_posix()
                                          if path.is_relative_to(REPO) else "")
                if match:
                    folders.add(match.group(1))
        self.assertEqual(len(folders), 1,
                         f"README.md, lines {top + 1}-{end}: the ladder's section must link into "
                         f"exactly one docs/results/<gpu>/ folder (found {sorted(folders)}), so "
                         "that the test knows which results.json it shows")
        results = REPO / "docs" / "results" / folders.pop() / "results.json"
        self.assertTrue(results.is_file(), f"{results.relative_to(REPO)} does not exist")
        return results, header, rows

    def test_readme_ladder_equals_results_json(self):
        results, header, rows = self.ladder()
        document = json.loads(results.read_text(encoding="utf-8"))
        by_key = {(r["chapter"], r["m"], r["n"], r["k"]): r for r in document["rows"]}
        chapters = {r["chapter"] for r in document["rows"]}
        columns = [(i, COLUMN.match(c)) for i, c in enumerate(header)]
        columns = [(i, m.group(1), int(m.group(2))) for i, m in columns if m]
        where = f"README.md against {results.relative_to(REPO)}"

        def expected(label, metric, size):
            if label in chapters:
                row = by_key.get((label, size, size, size))
                if row is None:
                    return None, f"results.json has no {label} row at {size}³"
                if metric == "rms error":
                    return (row.get("fp64_error") or {}).get("rms_rel_c"), None
                return row["tflops" if metric == "TFLOP/s" else "pct_cublas"], None
            if label.startswith("cuBLAS"):
                # One cuBLAS row per precision class: a TF32 chapter times cuBLAS TF32.
                precision = "TF32" if "TF32" in label else "FP32"
                same = [r for r in document["rows"] if (r["m"], r["n"], r["k"]) == (size, size, size)
                        and (r.get("precision") or "FP32") == precision]
                if metric == "rms error":
                    key = "cublas_tf32_error" if precision == "TF32" else "cublas_fp32_error"
                    errors = [(r.get(key) or {}).get("rms_rel_c") for r in same]
                    errors = [e for e in errors if e is not None]
                    if not errors:
                        return None, f"results.json has no {precision} cuBLAS error at {size}³"
                    return statistics.median(errors), None
                values = [r["cublas_tflops"] for r in same if r.get("cublas_tflops") is not None]
                if not values:
                    return None, f"results.json has no {precision} cuBLAS time at {size}³"
                return (statistics.median(values) if metric == "TFLOP/s" else 100.0), None
            if label.startswith("FP32 peak") and metric == "TFLOP/s":
                return document["device"]["fp32_peak_tflops"], None
            return None, (f"row {label!r} is neither a chapter of results.json "
                          f"({', '.join(sorted(chapters))}) nor the cuBLAS or FP32-peak row")

        problems, checked = [], 0
        for number, cells in rows:
            label = row_label(cells[0])
            for index, metric, size in columns:
                if index >= len(cells) or cells[index] in ("", "-"):
                    continue
                value, error = expected(label, metric, size)
                if MARKER.search(cells[index]):
                    fill = error or ("no value in results.json" if value is None else
                                     f"write {tour_format(value, metric, label)}")
                    problems.append(f"README.md:{number}: {label}, '{header[index]}': a "
                                    f"@@MEASURE marker; {fill}")
                    continue
                shown = cells[index].replace("**", "").rstrip("%").strip()
                if error or value is None:
                    problems.append(f"README.md:{number}: {error or 'no value in results.json'}")
                    continue
                if "e" in shown.lower():  # scientific notation, e.g. 1.15e-06
                    mantissa = shown.lower().split("e")[0]
                    want = f"{value:.{decimals(mantissa)}e}"
                    shown = shown.lower()
                else:
                    want = f"{value:.{decimals(shown)}f}"
                checked += 1
                if shown != want:
                    problems.append(f"README.md:{number}: {label}, '{header[index]}': shows "
                                    f"{shown}, results.json has {value!r} ({want})")
        self.assertTrue(checked, f"{where}: the ladder table has no numbers to check")
        if problems:
            self.fail(f"{where}:\n  " + "\n  ".join(problems))

    def test_the_ladder_reader_reads_headers_and_labels(self):
        self.assertEqual(COLUMN.match("TFLOP/s 4096³").groups(), ("TFLOP/s", "4096"))
        self.assertEqual(COLUMN.match("% of cuBLAS 8192^3").groups(), ("% of cuBLAS", "8192"))
        self.assertEqual(COLUMN.match("rms error 4096³").groups(), ("rms error", "4096"))
        self.assertIsNone(COLUMN.match("idea"))
        self.assertEqual(row_label("[06_double_buffer](06_double_buffer/README.md)"),
                         "06_double_buffer")
        self.assertEqual(row_label("**cuBLAS FP32**"), "cuBLAS FP32")
        self.assertEqual(decimals("36.70"), 2)
        self.assertEqual(decimals("100"), 0)
        self.assertEqual(tour_format(229.49, "TFLOP/s", "08_tensor_cores"), "229.5")
        self.assertEqual(tour_format(80.154, "TFLOP/s", "09_3xtf32"), "80.15")
        self.assertEqual(tour_format(0.5031, "TFLOP/s", "00_naive"), "0.503")
        self.assertEqual(tour_format(57.93, "% of cuBLAS", "08_tensor_cores"), "57.9")
        self.assertEqual(tour_format(100.0, "% of cuBLAS", "cuBLAS TF32"), "100")
        self.assertEqual(tour_format(2.6149e-4, "rms error", "10_wgmma"), "2.61e-04")
        self.assertTrue(MARKER.search("| @@MEASURE(10 TFLOP/s 4096³, python3 scripts/tour.py)@@ |"))


if __name__ == "__main__":
    unittest.main()
