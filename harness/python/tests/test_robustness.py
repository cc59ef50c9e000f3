"""Inputs from a misbehaving server must never abort the host process.

Each case runs in a child process, so a crash shows up as a failed test
instead of killing pytest."""

import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1]

CHILD = """
import sys
from jcode_mobile import App
app = App({"scenario": "connected_chat"})
app.dispatch({"type": "send_message", "text": "think"})
app.platform_event({"type": "websocket_event", "event": {"type": "reasoning_delta", "text": "hmm"}})
app.platform_event(b'{"type":"websocket_event","event":{"type":"reasoning_done","duration_secs":%s}}')
app.state()
app.tree()
print("survived")
"""


def run_child(duration: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD % duration], cwd=HARNESS, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("duration", ["1.4", "0", "-3", "5e18"])
def test_reasoning_duration_in_range(duration):
    child = run_child(duration)
    assert child.returncode == 0 and "survived" in child.stdout, child.stderr


@pytest.mark.parametrize("duration", ["1e19", "-1e19", "1e999"])
def test_reasoning_duration_out_of_range_does_not_abort(duration):
    child = run_child(duration)
    assert child.returncode == 0 and "survived" in child.stdout, (child.returncode, child.stderr[-500:])
