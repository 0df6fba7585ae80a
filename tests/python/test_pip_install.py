"""`pip install ./python` works offline with Debian's python3 (setuptools backend, pure Python):
into a venv that sees the system's numpy and torch, then used from another directory, the
installed package (not the source tree) writes a trace and renders it."""
import os
import shutil
import subprocess
import sys

from pytest_common import ROOT, TempDirCase, main


class PipInstall(TempDirCase):
    def test_install_into_a_venv_offline(self):
        src = os.path.join(self.tmp, "src")
        # A copy: building in place would leave build/ and *.egg-info in the source tree.
        shutil.copytree(os.path.join(ROOT, "python"), src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        venv = os.path.join(self.tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
        py = os.path.join(venv, "bin", "python")
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   PYTHONPATH="")
        done = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation",
                               "--no-index", src], capture_output=True, text=True, env=env)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        script = (
            "import attnscope, numpy as np, sys\n"
            "print(attnscope.__file__)\n"
            "a = np.full((1, 2, 3, 3), 1 / 3)\n"
            "attnscope.write_trace('t.json', [a, a], ['x', 'y', 'z'])\n"
            "svg = attnscope.render('t.json', layer=1, head=1)\n"
            "assert svg.lstrip().startswith('<?xml'), svg[:80]\n"
            "print(len(svg))\n")
        work = os.path.join(self.tmp, "elsewhere")
        os.mkdir(work)
        done = subprocess.run([py, "-c", script], cwd=work, capture_output=True, text=True,
                              env=env)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        where = done.stdout.splitlines()[0]
        self.assertTrue(where.startswith(venv), where)
        self.assertGreater(int(done.stdout.splitlines()[1]), 500)
        done = subprocess.run([os.path.join(venv, "bin", "pip"), "show", "attnscope"],
                              capture_output=True, text=True, env=env)
        self.assertIn("Version: 0.1.0", done.stdout)


if __name__ == "__main__":
    main()
