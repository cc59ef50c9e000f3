"""How ``jcode-mobile`` finds and talks to a background simulator."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ENV_SOCKET = "JCODE_MOBILE_SOCKET"


class NoSimulator(Exception):
    """Nothing answers at the socket path."""


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
    """Start a detached simulator at ``path``; returns its status once it answers."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.exists():
        path.unlink()  # a stale socket left by a simulator that died
    log_path = path.with_suffix(".log")
    command = [sys.executable, "-m", "jcode_mobile.cli.simulator", "--socket", str(path),
               "--options", json.dumps(options)] + extra
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with open(log_path, "ab") as log:
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
