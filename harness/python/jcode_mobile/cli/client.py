"""How ``jcode-mobile`` finds and talks to a background simulator."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ENV_SOCKET = "JCODE_MOBILE_SOCKET"


class NoSimulator(Exception):
    """Nothing answers at the socket path."""


class UnsafeDirectory(NoSimulator):
    """The socket's directory is not private to this user: refused, nothing is opened there."""


def private_dir(directory: Path, *, create: bool) -> None:
    """Checks that ``directory`` (where the socket, the log and the saved
    state live) is this user's alone: a directory, not a symbolic link,
    owned by this user, mode 0700 or narrower. With ``create``, a missing one
    is made with mode 0700 first. Raises :class:`UnsafeDirectory` otherwise:
    another local user who made it (``/tmp/jcode-mobile-<uid>`` before this
    user did) could read the saved state, or swap the socket and receive
    what the person types, a pairing code included."""
    if create:
        try:
            directory.mkdir(mode=0o700, parents=True)
        except FileExistsError:
            pass
        except OSError as problem:
            raise UnsafeDirectory(f"cannot create {directory}: {problem.strerror or problem}") from None
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return  # nothing there, so nothing to trust (and no simulator to reach)
    way_out = ("set XDG_RUNTIME_DIR (or JCODE_MOBILE_SOCKET, or --socket) to a directory only you can use, "
               f"or remove {directory} if it is yours to remove")
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        why = "it is a symbolic link" if stat.S_ISLNK(info.st_mode) else "it is not a directory"
        raise UnsafeDirectory(f"refusing to use {directory}: {why}; {way_out}")
    if info.st_uid != os.getuid():
        raise UnsafeDirectory(f"refusing to use {directory}: it belongs to uid {info.st_uid}, not to you "
                              f"(uid {os.getuid()}), who could read the saved state and take over the socket; {way_out}")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise UnsafeDirectory(f"refusing to use {directory}: its permissions {mode:04o} let other users in "
                              f"(it must be 0700); `chmod 700 {directory}`, or {way_out}")


def default_socket() -> Path:
    """``$JCODE_MOBILE_SOCKET``, else ``$XDG_RUNTIME_DIR/jcode-mobile/sim.sock``,
    else ``/tmp/jcode-mobile-<uid>/sim.sock``."""
    env = os.environ.get(ENV_SOCKET)
    if env:
        return Path(env)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "jcode-mobile" if runtime else Path(f"/tmp/jcode-mobile-{os.getuid()}")
    return base / "sim.sock"


def state_file(path: Path, kind: str) -> Path:
    """Where the simulator at socket ``path`` keeps its data by default:
    ``<socket>.storage.json`` (the app's snapshot) and ``<socket>.secure.json``
    (tokens, mode 0600), beside the socket, so ``start`` after ``shutdown``
    finds them again."""
    return path.with_name(f"{path.stem}.{kind}.json")


def request(path: Path, command: str, args: Optional[Dict[str, Any]] = None, *, timeout: float = 60.0) -> dict:
    """Send one command; returns the simulator's answer (``{"ok", …}``)."""
    payload = json.dumps({"command": command, "args": args or {}}).encode() + b"\n"
    private_dir(path.parent, create=False)  # a socket someone else could have put there is not talked to
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            conn.sendall(payload)
            chunks: List[bytes] = []
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    except (FileNotFoundError, ConnectionRefusedError):
        raise NoSimulator(f"no simulator is running at {path} (start one with `jcode-mobile start`)") from None
    except socket.timeout:
        raise NoSimulator(f"the simulator at {path} did not answer within {timeout:g} s") from None
    except OSError as problem:
        raise NoSimulator(f"cannot reach the simulator at {path}: {problem.strerror or problem}") from None
    data = b"".join(chunks)
    if not data:
        raise NoSimulator(f"the simulator at {path} closed the connection without an answer")
    return json.loads(data)


def is_running(path: Path) -> bool:
    try:
        return bool(request(path, "status", timeout=2.0).get("ok"))
    except (NoSimulator, ValueError):
        return False


def spawn(path: Path, options: dict, extra: List[str], *, wait: float = 15.0) -> dict:
    """Start a detached simulator at ``path``; returns its status once it
    answers. Its directory is made private first (:func:`private_dir`)."""
    private_dir(path.parent, create=True)
    path.unlink(missing_ok=True)  # a stale socket left by a simulator that died
    log_path = path.with_suffix(".log")
    command = [sys.executable, "-m", "jcode_mobile.cli.simulator", "--socket", str(path),
               "--options", json.dumps(options)] + extra
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with open_log(log_path) as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   start_new_session=True, env=env)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] if log_path.exists() else []
            reason = tail[0] if tail else f"exit status {process.returncode}"
            raise NoSimulator(f"the simulator exited at start: {reason} (log: {log_path})")
        try:
            answer = request(path, "status", timeout=2.0)
            if answer.get("ok"):
                return answer["result"]
        except NoSimulator:
            pass
        time.sleep(0.05)
    process.kill()
    raise NoSimulator(f"the simulator did not start within {wait:g} s (log: {log_path})")


def open_log(path: Path):
    """The simulator's log, opened for appending: created with mode 0600,
    never through a symbolic link (``O_NOFOLLOW``), and only a regular
    file of this user's (an older log is narrowed to 0600)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as problem:
        if os.path.islink(path):
            raise UnsafeDirectory(f"refusing to write the log {path}: it is a symbolic link") from None
        raise UnsafeDirectory(f"cannot open the log {path}: {problem.strerror or problem}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        os.close(fd)
        raise UnsafeDirectory(f"refusing to write the log {path}: not a regular file of yours")
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "ab")
