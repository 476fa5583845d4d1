# SPDX-License-Identifier: MIT
"""Shared by the host tests of scripts/: paths, and a build folder of fake chapter binaries."""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCRIPTS = REPO / "scripts"
sys.path.insert(0, str(SCRIPTS))

from chapters import CHAPTERS  # noqa: E402  (needs the path above)


def fake_build_dir(root, chapters=CHAPTERS):
    """<root>/bin/<chapter> -> fake_chapter.py, like a CMake build folder without a GPU."""
    bin_dir = Path(root) / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in chapters:
        (bin_dir / name).symlink_to(HERE / "fake_chapter.py")
    return Path(root)


def environment(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_")}
    env.update(extra)
    return env


class ScriptAssertions:
    """Mixed into the unittest.TestCase classes that run a script."""

    def assert_one_error_line(self, proc, *fragments, rc=2):
        """The script failed with exit code rc and one `error:` line holding every fragment."""
        self.assertEqual(proc.returncode, rc, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        for fragment in fragments:
            self.assertIn(str(fragment), lines[0])
