"""The client of the running window's trace socket.

A window (`attnscope`, `attnscope view FILE`, …) serves an AF_UNIX stream socket at
$XDG_RUNTIME_DIR/attnscope/window.sock (without XDG_RUNTIME_DIR: /tmp/attnscope-<uid>/window.sock)
to its own user only. One JSON request line goes in, one JSON answer line comes back:
{"op":"view","path":P} shows a trace file, {"op":"status"} says what the window shows. When no
window answers, show_file() starts `attnscope view FILE` detached (the binary from
$ATTNSCOPE_BIN, else `attnscope` on PATH) and waits until it answers.
"""
import json
import os
import shutil
import socket
import stat
import subprocess
import time

# How long a new window may take to answer `status`.
START_TIMEOUT_S = 20.0
# A request's answer: loading a large trace takes a while.
ANSWER_TIMEOUT_S = 120.0
MAX_LINE = 64 * 1024
_started = []  # windows this process started (kept, so Popen never warns they still run)


class WindowError(RuntimeError):
    """The window refused a trace (the message is `attnscope view FILE`'s), or no window could be
    reached or started (the message says why, with the end of the window's log)."""


def runtime_dir():
    """The socket's directory: $XDG_RUNTIME_DIR/attnscope, else /tmp/attnscope-<uid>."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "attnscope")
    return f"/tmp/attnscope-{os.getuid()}"


def socket_path():
    return os.path.join(runtime_dir(), "window.sock")


def _private_dir(path):
    """Creates `path` 0700 if missing; refuses one that is a symlink, not a directory or another
    user's, and narrows one of ours that others may enter to 0700 (as the window's server does)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise WindowError(f"{path} is not a directory (a symlink?): refusing to use it")
    if st.st_uid != os.getuid():
        raise WindowError(f"{path} belongs to another user (uid {st.st_uid}): refusing to use it")
    if st.st_mode & 0o077:  # ours, but others may enter: narrowed, as the window does
        os.chmod(path, 0o700)
    return path


def request(message, timeout=ANSWER_TIMEOUT_S, path=None):
    """Sends one request (a dict) to the window and returns its answer (a dict). Raises
    ConnectionError (FileNotFoundError, ConnectionRefusedError, …) when no window listens, and
    WindowError when the answer is not one JSON line."""
    line = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
    if len(line) > MAX_LINE:
        raise WindowError(f"the request is {len(line)} bytes, over the window's {MAX_LINE}")
    path = path or socket_path()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(line)
        answer = b""
        try:
            while not answer.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
                if len(answer) > 64 * MAX_LINE:
                    raise WindowError("the window's answer is too long")
        except socket.timeout:
            raise WindowError(f"the window did not answer within {timeout:.0f} s") from None
    if not answer.strip():
        raise WindowError("the window closed the connection without an answer")
    try:
        doc = json.loads(answer.decode("utf-8"))
    except ValueError:
        raise WindowError(f"the window's answer is not JSON: {answer[:200]!r}") from None
    if not isinstance(doc, dict):
        raise WindowError(f"the window's answer is not a JSON object: {answer[:200]!r}")
    return doc


def _checked(answer):
    if not answer.get("ok"):
        raise WindowError(answer.get("error") or f"the window refused: {answer}")
    return answer


def status(timeout=5.0):
    """What the running window shows ({"ok", "pid", "mode", "tokens", "source"}), or None when no
    window listens."""
    try:
        return _checked(request({"op": "status"}, timeout=timeout))
    except (ConnectionError, FileNotFoundError, socket.timeout):
        return None


def binary():
    """The attnscope executable: $ATTNSCOPE_BIN, else `attnscope` on PATH."""
    b = os.environ.get("ATTNSCOPE_BIN")
    if b:
        if not os.access(b, os.X_OK):
            raise WindowError(f"ATTNSCOPE_BIN is {b!r}, which is not an executable")
        return b
    found = shutil.which("attnscope")
    if not found:
        raise WindowError("attnscope is not on PATH: install it (the .deb, or cmake --install) "
                          "or set ATTNSCOPE_BIN to the executable")
    return found


def _tail(path, lines=12):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def start_window(trace_path, timeout=START_TIMEOUT_S):
    """Starts `attnscope view TRACE` detached from this process (its own session; stdout and
    stderr to window.log beside the socket) and waits until it answers `status`. Returns the
    status. WindowError (with the log's last lines) when it exits or never answers."""
    exe = binary()
    log_path = os.path.join(_private_dir(runtime_dir()), "window.log")
    with open(log_path, "ab") as log:
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {exe} view {trace_path}\n".encode())
        log.flush()
        proc = subprocess.Popen([exe, "view", trace_path], stdin=subprocess.DEVNULL, stdout=log,
                                stderr=log, start_new_session=True, close_fds=True)
    _started.append(proc)  # the window outlives this call (and may outlive this process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = status(timeout=2.0)
        if st is not None:
            return st
        code = proc.poll()
        if code is not None:
            raise WindowError(f"the window exited ({code}) before it answered:\n"
                              f"{_tail(log_path)}")
        time.sleep(0.1)
    raise WindowError(f"the window (pid {proc.pid}) did not answer within {timeout:.0f} s; the "
                      f"end of {log_path}:\n{_tail(log_path)}")


def show_file(trace_path):
    """Shows a trace file in the running window, starting one when none answers. Returns the
    window's answer ({"ok", "tokens", "layers", "heads"} from a running window, the status of a
    new one). WindowError carries the window's message when it refuses the file."""
    trace_path = os.path.abspath(os.fspath(trace_path))
    try:
        return _checked(request({"op": "view", "path": trace_path}))
    except (ConnectionError, FileNotFoundError):
        pass  # no window listens (no socket, or a stale one): start one on this trace
    except PermissionError as e:
        raise WindowError(f"cannot reach the window's socket {socket_path()}: {e.strerror}") \
            from None
    return start_window(trace_path)
