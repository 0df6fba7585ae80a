"""The issue's end-to-end test (run under xvfb-run): head_view twice from one script drives ONE
window (the first call starts `attnscope view`, the second goes through the window's socket), the
window then shows the second trace's tokens, a bad trace is refused with the message
`attnscope view FILE` prints while the window keeps the second trace, and show() on a model
updates the same window. The window process is ended at the end.

XDG_RUNTIME_DIR, XDG_CACHE_HOME and XDG_CONFIG_HOME point into a private temporary directory, so
the socket is this test's own and no other window (another test, the user's) can answer it."""
import json
import os
import signal
import subprocess
import sys
import time

from pytest_common import BIN, FIXTURES, SKIP, TempDirCase, have_torch, main

if not have_torch():
    print("SKIPPED: python3-torch is not installed")
    sys.exit(SKIP)
if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
    print("SKIPPED: no display (run under xvfb-run)")
    sys.exit(SKIP)

import attnscope  # noqa: E402
from attnscope import _window  # noqa: E402
from standins import Model, Tokenizer  # noqa: E402
from test_package import stand_in_attentions  # noqa: E402


def windows_of(runtime):
    """Pids of attnscope processes whose XDG_RUNTIME_DIR is `runtime` (this test's own)."""
    found = []
    want = f"XDG_RUNTIME_DIR={runtime}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if cmd and os.path.basename(cmd[0]) == b"attnscope" and want in env:
            found.append(int(pid))
    return found


class OneWindow(TempDirCase):
    def setUp(self):
        super().setUp()
        self.runtime = self.path("run")
        os.mkdir(self.runtime, 0o700)
        self.saved = {k: os.environ.get(k) for k in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME",
                                                      "XDG_CONFIG_HOME")}
        os.environ["XDG_RUNTIME_DIR"] = self.runtime
        os.environ["XDG_CACHE_HOME"] = self.path("cache")
        os.environ["XDG_CONFIG_HOME"] = self.path("config")

    def tearDown(self):
        for pid in windows_of(self.runtime):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while windows_of(self.runtime) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in windows_of(self.runtime):
            os.kill(pid, signal.SIGKILL)
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        log = os.path.join(self.runtime, "attnscope", "window.log")
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                print("--- window.log ---\n" + f.read()[-3000:])
        super().tearDown()

    def test_two_head_views_one_window(self):
        self.assertIsNone(_window.status())
        first = ["the", "cat", "sat", "down"]
        second = ["[CLS]", "a", "bank", "by", "the", "river", "[SEP]"]
        t0 = time.monotonic()
        self.assertIsNone(attnscope.head_view(stand_in_attentions(2, 3, 4, seed=1), first))
        print(f"first head_view (starts the window): {time.monotonic() - t0:.2f} s")
        st1 = _window.status()
        self.assertIsNotNone(st1)
        self.assertEqual(st1["mode"], "view")
        self.assertEqual(st1["tokens"], first)
        self.assertEqual(windows_of(self.runtime), [st1["pid"]])
        sock = os.path.join(self.runtime, "attnscope", "window.sock")
        self.assertEqual(os.stat(sock).st_mode & 0o777, 0o600)

        t0 = time.monotonic()
        self.assertIsNone(attnscope.head_view(stand_in_attentions(3, 2, 7, seed=2), second))
        print(f"second head_view (through the socket): {time.monotonic() - t0:.2f} s")
        st2 = _window.status()
        self.assertEqual(st2["pid"], st1["pid"])
        self.assertEqual(st2["tokens"], second)
        self.assertEqual(windows_of(self.runtime), [st1["pid"]])

        # A trace the window must refuse: one row sums to 0.7. The message is view FILE's.
        good = attnscope.write_trace(self.path("good.json"), stand_in_attentions(1, 1, 3),
                                     ["x", "y", "z"])
        with open(good) as f:
            doc = json.load(f)
        doc["attention"][0][0][2] = [0.5, 0.1, 0.1]
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            json.dump(doc, f)
        direct = subprocess.run([BIN, "view", bad, "--no-socket"], capture_output=True,
                                text=True, timeout=60, stdin=subprocess.DEVNULL)
        self.assertNotEqual(direct.returncode, 0)
        expected = direct.stderr.strip().splitlines()[-1]
        if expected.startswith("attnscope: "):
            expected = expected[len("attnscope: "):]
        with self.assertRaises(attnscope.WindowError) as ctx:
            attnscope.view(bad)
        self.assertEqual(str(ctx.exception), expected)
        st3 = _window.status()
        self.assertEqual(st3["pid"], st1["pid"])
        self.assertEqual(st3["tokens"], second)

        # show() on a model drives the same window.
        folder = os.path.join(FIXTURES, "gpt2-tiny-f32")
        trace = attnscope.show(Model(folder), Tokenizer(folder), "The cat sat on the mat.")
        st4 = _window.status()
        self.assertEqual(st4["pid"], st1["pid"])
        self.assertEqual(len(st4["tokens"]), len(trace.tokens))
        self.assertEqual(windows_of(self.runtime), [st1["pid"]])

    def test_bad_first_trace_reports_the_window_log(self):
        # No window yet and a trace it cannot open: the started window exits, the error says why.
        bad = self.path("broken.json")
        with open(bad, "w") as f:
            f.write('{"format": "attnscope-trace/1", "model": {}}')
        with self.assertRaises(attnscope.WindowError) as ctx:
            attnscope.view(bad)
        self.assertIn("exited", str(ctx.exception))
        self.assertIn("broken.json", str(ctx.exception))
        self.assertEqual(windows_of(self.runtime), [])


if __name__ == "__main__":
    main()
