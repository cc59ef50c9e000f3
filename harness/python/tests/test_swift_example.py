"""The Swift example host (Sources/JcodeMobileExample) runs a whole session.

`jcode-mobile-swift-example` links the core through the JcodeMobileSwift
product (a ViewModel and a PlatformAdapter over POSIX sockets: HTTP, a
WebSocket client, timers) and runs against the fake jcode gateway started
here on a free loopback port. The binary comes from the environment
(``JCODE_MOBILE_SWIFT_EXAMPLE``; ``make test-swift-example`` builds it and
sets it). Every run is bounded twice: by the example's own ``--timeout`` and
by the subprocess timeout.
"""

import os
import subprocess

import pytest

from jcode_mobile.fake_gateway import FakeJcodeServer, Reply
from jcode_mobile.gateway import Faults, RunningGateway

EXAMPLE = os.environ.get("JCODE_MOBILE_SWIFT_EXAMPLE")
CODE = "314159"
TOKEN = "example-token-" + "7" * 50
WORKING_DIR = "/home/me/project"
REPLY = Reply(text="All 42 tests pass.", reasoning="Run the suite first.",
              tools=[{"id": "call_1", "name": "bash", "input": '{"command":"make test"}', "output": "42 passed"}])

pytestmark = pytest.mark.skipif(
    not EXAMPLE, reason="JCODE_MOBILE_SWIFT_EXAMPLE is not set: run `make test-swift-example`, which builds "
                        "the example (swift build --product jcode-mobile-swift-example) and points it there")


def run_example(port, *, code=CODE, message="Run the tests", timeout_s=20):
    return subprocess.run(
        [EXAMPLE, "--host", "127.0.0.1", "--port", str(port), "--code", code, "--working-dir", WORKING_DIR,
         "--message", message, "--device-name", "Swift example", "--timeout", str(timeout_s)],
        capture_output=True, text=True, timeout=timeout_s + 15)


@pytest.fixture
def gateway():
    with RunningGateway(FakeJcodeServer(pair_code=CODE, token=TOKEN, replies=[REPLY])) as running:
        yield running


def test_the_example_pairs_connects_sends_and_prints_the_reply(gateway):
    port = gateway.port

    out = run_example(port)

    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    lines = out.stdout.splitlines()
    milestones = [line for line in lines if line.startswith("* ")]
    assert milestones[0] == f"* paired with jcode at 127.0.0.1:{port}"
    assert milestones[1].startswith("* connected, session session_")
    assert milestones[2:] == ["* reply finished: All 42 tests pass.", "* disconnected (disconnected)"]
    # the effects, in the order the core asked for them (the token never printed)
    assert f"→ #2 http_pair 127.0.0.1:{port}" in lines
    assert f"→ #3 secure_store_write jcode.token.127.0.0.1:{port}" in lines
    assert f"→ #4 websocket_connect ws://127.0.0.1:{port}/ws" in lines
    sends = [line for line in lines if " websocket_send " in line]
    assert sends == [
        '→ #8 websocket_send {"id":1,"type":"subscribe","working_dir":"/home/me/project",'
        '"client_instance_id":"swift-example-device"}',
        '→ #9 websocket_send {"id":2,"type":"get_history"}',
        '→ #13 websocket_send {"id":3,"type":"message","content":"Run the tests"}',
    ]
    assert TOKEN not in out.stdout
    # screens: the filled-in form, the turn running, the reply on the chat screen
    assert "  Working directory on the server: /home/me/project" in lines
    assert "  ~ jcode is working…" in lines
    last_chat = out.stdout.rsplit("· chat ---\n", 1)[1]
    assert "  You: Run the tests\n" in last_chat
    assert "    tool bash [Done]\n" in last_chat
    assert "  jcode\n    All 42 tests pass.\n" in last_chat  # a reply shows as its markdown blocks
    # and the gateway saw the same session
    assert gateway.call(lambda fake: [r["type"] for r in fake.requests]) == ["subscribe", "get_history", "message"]
    assert gateway.call(lambda fake: [d["name"] for d in fake.devices.values()]) == ["Swift example"]


def test_screens_are_printed_as_the_reply_streams_in():
    server = FakeJcodeServer(pair_code=CODE, replies=[Reply(text="one two three four five six")])
    with RunningGateway(server, faults=Faults(delay_ms=60)) as gateway:
        out = run_example(gateway.port)

    assert out.returncode == 0, out.stderr
    # The reply shows as its markdown blocks: a paragraph under the speaker.
    lines = out.stdout.splitlines()
    replies = [after for line, after in zip(lines, lines[1:]) if line in ("  jcode", "  jcode (typing)")]
    assert replies[-1] == "    one two three four five six"
    assert len(replies) >= 3, out.stdout  # partial replies were drawn as they arrived
    assert all("one two three four five six".startswith(r.strip()) for r in replies)


def test_a_wrong_code_fails_with_the_servers_reason(gateway):
    out = run_example(gateway.port, code="000000")

    assert out.returncode == 1
    assert out.stderr == "jcode-mobile-swift-example: could not pair: Invalid or expired pairing code\n"
    assert "* paired" not in out.stdout


def test_a_pair_request_left_unanswered_fails_after_the_http_timeout():
    with RunningGateway(FakeJcodeServer(pair_code=CODE), faults=Faults(http_stall=True)) as gateway:
        out = run_example(gateway.port, timeout_s=4)  # HTTP gives up after half of it

        assert out.returncode == 1
        assert out.stderr.startswith(f"jcode-mobile-swift-example: could not pair: Could not reach 127.0.0.1:{gateway.port} ")
        assert "no answer in time" in out.stderr


def test_a_gateway_that_never_answers_on_the_socket_runs_out_of_time():
    with RunningGateway(FakeJcodeServer(pair_code=CODE), faults=Faults(stall=True)) as gateway:
        out = run_example(gateway.port, timeout_s=2)

    assert out.returncode == 3
    assert out.stderr == ("jcode-mobile-swift-example: timed out after 2 s waiting for the connection "
                          "(screen chat, connection connected)\n")


def test_bad_arguments_print_the_usage():
    out = subprocess.run([EXAMPLE, "--port", "7643"], capture_output=True, text=True, timeout=15)

    assert out.returncode == 2
    assert out.stderr.splitlines()[0].startswith("usage: jcode-mobile-swift-example --code CODE --working-dir DIR")
    assert out.stderr.splitlines()[-1] == "jcode-mobile-swift-example: --code and --working-dir are required"


def test_a_port_outside_1_to_65535_is_refused_at_once():
    out = subprocess.run([EXAMPLE, "--code", "123456", "--working-dir", WORKING_DIR, "--port", "99999"],
                         capture_output=True, text=True, timeout=15)

    assert out.returncode == 2
    assert out.stderr.splitlines()[-1] == "jcode-mobile-swift-example: --port must be from 1 to 65535, not 99999"


def test_an_empty_message_is_refused_at_once():
    out = subprocess.run([EXAMPLE, "--code", "123456", "--working-dir", WORKING_DIR, "--message", "  "],
                         capture_output=True, text=True, timeout=15)

    assert out.returncode == 2
    assert out.stderr.splitlines()[-1] == "jcode-mobile-swift-example: --message must not be empty"
