"""`python -m jcode_mobile.demo` (what `make demo` runs): a whole session over
real loopback sockets against the fake gateway."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from jcode_mobile import demo
from jcode_mobile.fake_gateway import FakeJcodeServer
from jcode_mobile.gateway import RunningGateway

HARNESS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo_output():
    out = subprocess.run([sys.executable, "-m", "jcode_mobile.demo", "--frame-delay-ms", "20"], cwd=HARNESS,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_demo_shows_every_stage_of_the_session_in_order(demo_output):
    headings = [line for line in demo_output.splitlines() if line[:1].isdigit() and ". " in line]
    assert headings == [
        "1. First launch",
        "2. Pairing form filled in",
        "3. Paired: a new session over the WebSocket",
        "4. History of an earlier session",
        "5. Streaming: reasoning done",
        "6. Streaming: the tool card is running",
        "7. Streaming: the tool finished",
        "8. Reply complete",
        "9. A long turn is running",
        "10. Interrupted",
        "11. Connection dropped (reconnecting)",
        "12. Reconnected: the same session, history reloaded",
    ]


def test_the_demo_talks_to_a_gateway_on_a_loopback_port(demo_output):
    assert "fake jcode gateway listening on http://127.0.0.1:" in demo_output
    assert '"url":"ws://127.0.0.1:' in demo_output


def test_beside_each_screen_is_the_json_that_crossed_the_boundary(demo_output):
    assert '| > {"type":"tap_node","node_id":"pair.submit"}' in demo_output
    assert '| < {"effect_id":2,"type":"http_pair","host":"127.0.0.1"' in demo_output  # 1: the snapshot keeping the device name
    assert '> {"type":"websocket_event","line":[{"type":"tool_exec","id":"call_test"' in demo_output
    assert '> {"type":"websocket_closed","effect_id":4,"code":1006' in demo_output


def test_the_tool_card_goes_from_running_to_done(demo_output):
    running = demo_output.index("6. Streaming: the tool card is running")
    finished = demo_output.index("7. Streaming: the tool finished")
    assert "Tool bash [Running]" in demo_output[running:finished]
    assert "Tool bash [Done]" in demo_output[finished:]


def test_the_demo_prints_no_token_and_masks_secrets(demo_output):
    assert "tok-fake-0001" not in demo_output
    assert '"token":"•••"' in demo_output
    assert '"set_pair_code","value":"•••"' in demo_output


def test_the_demo_ends_with_the_cli_commands_to_try(demo_output):
    lines = demo_output.rstrip().splitlines()
    assert any(line.startswith("ok: ") for line in lines)
    assert "  python3 -m jcode_mobile.gateway --port 7643 --code 123456" in lines
    assert "  jcode-mobile tap pair.submit && jcode-mobile assert-screen chat --timeout 5" in lines


def test_demo_fails_when_pairing_fails():
    lines = []
    run = demo.Demo(out=lines.append, server=FakeJcodeServer(pair_code="999999"))
    with pytest.raises(demo.DemoFailure, match="pairing failed: Invalid or expired pairing code"):
        run.run()


def test_main_reports_failure_with_exit_code_1(monkeypatch, capsys):
    class Broken(demo.Demo):
        def __init__(self, **options):
            super().__init__(out=lambda line: None, server=FakeJcodeServer(pair_code="999999"))

    monkeypatch.setattr(demo, "Demo", Broken)
    assert demo.main([]) == 1
    assert "demo failed: pairing failed" in capsys.readouterr().err


def test_the_cli_commands_the_demo_prints_work(demo_output, tmp_path):
    """Run the printed commands as printed (the gateway on a free port instead
    of 7643, the trace in a scratch directory)."""
    lines = demo_output.splitlines()
    start = lines.index("  jcode-mobile start --scenario onboarding")
    script = "\n".join(line.strip() for line in lines[start:] if line.startswith("  jcode-mobile "))
    one_shot = re.search(r"or in one shot: (jcode-mobile run .*?)\\\n\s+(.*)", demo_output)
    assert one_shot is not None
    with RunningGateway(FakeJcodeServer(pair_code="123456")) as gateway:
        script = script.replace("7643", str(gateway.port)).replace("/tmp/session.json", str(tmp_path / "s.json"))
        shell = (f'jcode-mobile() {{ "{sys.executable}" -m jcode_mobile --socket "{tmp_path}/sim.sock" "$@"; }}\n'
                 "set -e\n" + script + "\n")
        out = subprocess.run(["bash", "-c", shell], cwd=HARNESS, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "replay identical" in out.stdout
        assert "You: Run the tests" in out.stdout  # the rendered chat screen
        gateway.call(lambda fake: fake.pair_codes.add("123456"))  # a code works once: `jcode pair` again
        command = (one_shot.group(1) + " " + one_shot.group(2)).replace("7643", str(gateway.port))
        out = subprocess.run(["bash", "-c", f'jcode-mobile() {{ "{sys.executable}" -m jcode_mobile "$@"; }}\n{command}'],
                             cwd=HARNESS, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines() == ["you: Run the tests", "assistant: You said: Run the tests"]
