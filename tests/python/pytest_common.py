"""What the Python package's tests share: the attnscope binary ($ATTNSCOPE_BIN, set by ctest), the
fixture models ($ATTNSCOPE_FIXTURES), the package imported from the source tree, private temporary
directories, and running the CLI. Each test file is a unittest program run by /usr/bin/python3."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))

BIN = os.environ.get("ATTNSCOPE_BIN", os.path.join(ROOT, "build", "bin", "attnscope"))
FIXTURES = os.environ.get("ATTNSCOPE_FIXTURES", os.path.join(ROOT, "build", "fixtures"))
SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests


def have_torch():
    return importlib.util.find_spec("torch") is not None


def run(args, check=True, **kw):
    """Runs attnscope with `args`; returns the CompletedProcess (stdout/stderr as bytes)."""
    done = subprocess.run([BIN] + list(args), capture_output=True, timeout=300, **kw)
    if check and done.returncode != 0:
        raise AssertionError(f"attnscope {' '.join(args)} exited {done.returncode}: "
                             f"{done.stderr.decode(errors='replace')}")
    return done


def heads_json(trace_path):
    """`attnscope heads --trace FILE --json`: the C++ reader's view of a trace's numbers."""
    return json.loads(run(["heads", "--trace", trace_path, "--json", "-o", "-"]).stdout)


class TempDirCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="attnscope-pytest-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)


def main():
    os.environ["ATTNSCOPE_BIN"] = BIN
    if not os.access(BIN, os.X_OK):
        print(f"SKIPPED: no attnscope executable at {BIN}")
        sys.exit(SKIP)
    unittest.main(verbosity=2)
