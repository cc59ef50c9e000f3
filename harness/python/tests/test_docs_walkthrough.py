"""The README's and docs/SIMULATOR.md's commands, run in order as written, against one fake gateway.

The commands are read from the documents themselves, so this test fails when
the docs drift from what works. What the test changes, and only that:

- ``make …`` and ``pip install …`` lines are skipped: the suite runs after
  ``make lib``, with the package importable from ``harness/python``;
- ``jcode-mobile`` runs as ``python -m jcode_mobile`` and ``python3`` as this
  interpreter, with the simulator's socket in a temporary directory;
- the documented port 7643 (and ``$PORT``) becomes a free loopback port, and
  ``/tmp/`` a temporary directory;
- ``curl`` (the offline section's drop, through the gateway's control
  endpoint) runs as written: it must be installed;
- optional arguments written ``[--json]`` are left out, ``|| exit 1`` is
  dropped (every command must succeed anyway), a line ending ``&`` starts in
  the background, and a gateway command identical to a running one is that
  gateway (SIMULATOR.md: "the README's, if it still runs").
"""

import os
import queue
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

from conftest import HARNESS, REPO

DOCUMENTED_PORT = "7643"
COMMAND_TIMEOUT = 60


def sh_blocks(text: str) -> List[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S)


def section(text: str, title: str) -> str:
    """The text under the heading ``title`` (up to the next heading of any level)."""
    found = re.search(r"^#+ " + re.escape(title) + r"\n(.*?)(?=^#+ |\Z)", text, re.M | re.S)
    assert found is not None, f"no section {title!r}"
    return found.group(1)


def documented_commands() -> List[str]:
    """Every command of the README's simulator section, then of SIMULATOR.md's install,
    person, test-agent and offline sections, in order (one string per line, continuations joined)."""
    readme = (REPO / "README.md").read_text()
    simulator = (REPO / "docs" / "SIMULATOR.md").read_text()
    blocks = sh_blocks(section(readme, "The Linux simulator"))
    for title in ("Install", "For a person: watch it, then drive it", "For a test agent", "Offline and back"):
        blocks += sh_blocks(section(simulator, title))
    lines: List[str] = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip():
                lines.append(line)
    return lines


def commands_of(line: str) -> List[List[str]]:
    """The commands of one documented line: ``&&`` runs the next one after success,
    ``|| exit 1`` is dropped; a trailing ``&`` is kept as the last word."""
    line = re.sub(r"\s\[[^\]]*\]", "", line)  # optional arguments: [--json] [--timeout 120]
    words = shlex.split(line, comments=True)
    commands: List[List[str]] = [[]]
    skip = False
    for word in words:
        if word == "&&":
            commands.append([])
            skip = False
        elif word == "||":
            skip = True
        elif not skip:
            commands[-1].append(word)
    return [c for c in commands if c]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Gateway:
    def __init__(self, argv: List[str], env: Dict[str, str]):
        self.argv = argv
        self.process = subprocess.Popen(argv, cwd=HARNESS, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines: "queue.Queue[str]" = queue.Queue()
        self.output: List[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        first = self.lines.get(timeout=COMMAND_TIMEOUT)
        assert first.startswith("jcode fake gateway listening on http://127.0.0.1:"), first

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))
            self.lines.put(line.rstrip("\n"))

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=10)


def test_the_readme_and_simulator_walkthrough_succeeds_in_order_against_one_gateway(tmp_path):
    assert shutil.which("curl"), "the offline walkthrough drops the connection with curl"
    port = str(free_port())
    env = {**os.environ, "JCODE_MOBILE_SOCKET": str(tmp_path / "sim.sock"), "PORT": port,
           "PYTHONPATH": str(HARNESS) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    lines = documented_commands()
    assert any(line.startswith("jcode-mobile run ") for line in lines)
    ran: List[tuple] = []  # (words as documented, stdout)
    gateway: Optional[Gateway] = None
    skipped: List[str] = []
    try:
        for line in lines:
            line = line.replace(DOCUMENTED_PORT, port).replace('"$PORT"', port).replace(" /tmp/", f" {tmp_path}/")
            for words in commands_of(line):
                if words[0] in ("make", "pip"):
                    skipped.append(" ".join(words))
                    continue
                background = words[-1] == "&"
                words = [w for w in words if w != "&"]
                argv = ([sys.executable, "-m", "jcode_mobile"] + words[1:] if words[0] == "jcode-mobile"
                        else [sys.executable] + words[1:] if words[0] == "python3" else words)
                if words[:3] == ["python3", "-m", "jcode_mobile.gateway"]:
                    if gateway is not None:
                        assert gateway.argv == argv, "the docs start a second, different gateway"
                        assert gateway.process.poll() is None
                        continue
                    gateway = Gateway(argv, env)
                    continue
                assert not background, line
                started = time.monotonic()
                out = subprocess.run(argv, cwd=HARNESS, env=env, capture_output=True, text=True,
                                     timeout=COMMAND_TIMEOUT)
                assert out.returncode == 0, (line, out.returncode, out.stdout, out.stderr,
                                             gateway.output if gateway else None)
                assert time.monotonic() - started < COMMAND_TIMEOUT
                ran.append((words, out.stdout))
    finally:
        subprocess.run([sys.executable, "-m", "jcode_mobile", "shutdown"], cwd=HARNESS, env=env,
                       capture_output=True, timeout=COMMAND_TIMEOUT)
        status = gateway.stop() if gateway is not None else None
    assert status == 0
    assert skipped == ["pip install ./harness/python", "make lib", "pip install ./harness/python", "make demo"]

    # the key outputs: run's transcript, the walkthrough's chat, the replay
    runs = [stdout for words, stdout in ran if words[:2] == ["jcode-mobile", "run"]]
    assert len(runs) == 2
    assert "You said: hi" in runs[0]
    assert "You said: Run the tests" in runs[1]
    renders = [stdout for words, stdout in ran if words[:2] == ["jcode-mobile", "render"]]
    assert "Run the tests" in renders[-2]
    # offline: the screen SIMULATOR.md shows (the session's name aside), then the drop and the reconnect
    simulator_md = (REPO / "docs" / "SIMULATOR.md").read_text()
    # the section's first text block (its screen's "# Lynx" line would end section())
    offline = re.search(r"^```text\n(.*?)^```", simulator_md[simulator_md.index("\n## Offline and back\n"):],
                        re.M | re.S)
    assert offline is not None
    assert without_session_name(renders[-1]) == without_session_name(offline.group(1))
    assert "  You (waiting to send): Still there?\n" in renders[-1]
    drops = [stdout for words, stdout in ran if words[0] == "curl"]
    assert drops == ['{"ok":true,"dropped":1}']
    assert [words[:2] for words, _ in ran].count(["jcode-mobile", "replay"]) == 1
    # one gateway paired every documented client with the one code
    assert gateway is not None
    pairs = [line for line in gateway.output if line.startswith("HTTP POST /pair")]
    assert [line.split(" (device")[0] for line in pairs] == ["HTTP POST /pair -> 200"] * 4, gateway.output
    assert gateway.output.count("drop: 1 connection(s) dropped") == 1, gateway.output


def without_session_name(screen: str) -> str:
    """The chat screen with its session's name (``# Lynx``, ``Lynx — jcode``) as NAME:
    the fake names sessions in the order it makes them."""
    name = screen.splitlines()[0].removeprefix("# ")
    assert name and " " not in name, screen
    return screen.replace(name, "NAME").strip("\n")


def pair_over_http(port: int, code: str, device: str) -> int:
    import json
    import urllib.error
    import urllib.request
    request = urllib.request.Request(f"http://127.0.0.1:{port}/pair", method="POST", data=json.dumps(
        {"code": code, "device_id": f"id-{device}", "device_name": device}).encode())
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as refused:
        return refused.code


def wait_for_lines(gateway: Gateway, count: int) -> List[str]:
    lines = []
    while len(lines) < count:
        lines.append(gateway.lines.get(timeout=COMMAND_TIMEOUT))
    return lines


def test_the_command_line_gateway_code_pairs_again_and_a_one_time_code_says_why_it_refuses():
    env = {**os.environ, "PYTHONPATH": str(HARNESS)}
    reusable = Gateway([sys.executable, "-m", "jcode_mobile.gateway", "--port", "0", "--code", "246810"], env)
    try:
        port = int(re.search(r":(\d+) ", reusable.output[0]).group(1))
        assert [pair_over_http(port, "246810", name) for name in ("one", "two")] == [200, 200]
        assert pair_over_http(port, "135790", "three") == 401
        assert wait_for_lines(reusable, 3) == [
            "HTTP POST /pair -> 200 (device 'one')",
            "HTTP POST /pair -> 200 (device 'two')",
            "HTTP POST /pair -> 401 (device 'three'): refused, the code is not one this gateway issued",
        ]
    finally:
        assert reusable.stop() == 0
    once = Gateway([sys.executable, "-m", "jcode_mobile.gateway", "--port", "0", "--code", "246810", "--one-time-code"],
                   env)
    try:
        port = int(re.search(r":(\d+) ", once.output[0]).group(1))
        assert [pair_over_http(port, "246810", name) for name in ("one", "two")] == [200, 401]
        assert wait_for_lines(once, 2) == [
            "HTTP POST /pair -> 200 (device 'one')",
            "HTTP POST /pair -> 401 (device 'two'): refused, the code was already used by an earlier pairing "
            "(a code works once, as in jcode)",
        ]
        assert not any("246810" in line for line in once.output[1:]), "the code is never logged"
    finally:
        assert once.stop() == 0


def test_submitting_an_incomplete_form_from_the_cli_prints_what_is_missing(tmp_path):
    import json
    env = {**os.environ, "JCODE_MOBILE_SOCKET": str(tmp_path / "sim.sock"), "PYTHONPATH": str(HARNESS)}

    def cli(*words: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "jcode_mobile", *words], cwd=HARNESS, env=env,
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT)

    assert cli("start", "--scenario", "onboarding").returncode == 0
    try:
        assert cli("set-field", "host", "127.0.0.1").returncode == 0
        out = cli("dispatch", '{"type":"submit_pairing"}')
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == {"ok": True, "revision": 2, "effects": [],
                                          "refused": "pairing form is incomplete: pair_code, device_name, working_dir"}
        screen = cli("render").stdout
        assert "! Enter the 6-digit pairing code shown by `jcode pair`." in screen
        assert "! Enter the host name" not in screen
    finally:
        assert cli("shutdown").returncode == 0
