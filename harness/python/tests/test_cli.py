"""The `jcode-mobile` command, driven as a person or a test agent would: a
background simulator over a Unix socket, talking to the fake gateway over
real loopback sockets."""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from jcode_mobile.fake_gateway import FakeJcodeServer, Reply
from jcode_mobile.gateway import RunningGateway

HARNESS = Path(__file__).resolve().parents[1]
WORKING_DIR = "/home/me/project"
CODE = "123456"


def cli(*args, socket=None, timeout=60):
    command = [sys.executable, "-m", "jcode_mobile"]
    if socket is not None:
        command += ["--socket", str(socket)]
    return subprocess.run(command + [str(a) for a in args], cwd=HARNESS, capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(out):
    """The failure is one line on stderr, never a traceback."""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert lines[0].startswith("jcode-mobile: ")
    return lines[0]


@pytest.fixture
def gateway():
    server = FakeJcodeServer(pair_code=CODE, replies=[Reply(text="All 42 tests pass.", reasoning="Run them.",
                                                            tools=[{"id": "t1", "name": "bash",
                                                                    "input": '{"command":"make test"}',
                                                                    "output": "42 passed"}])])
    with RunningGateway(server) as running:
        yield running


@pytest.fixture
def sim(tmp_path):
    """A started simulator (onboarding); shut down after the test."""
    socket = tmp_path / "sim.sock"
    out = cli("start", "--scenario", "onboarding", socket=socket)
    assert out.returncode == 0, out.stderr
    yield socket
    cli("shutdown", socket=socket, timeout=15)


def pair(socket, port):
    for name, value in [("host", "127.0.0.1"), ("port", port), ("code", CODE), ("device_name", "CLI phone"),
                        ("working_dir", WORKING_DIR)]:
        out = cli("set-field", name, value, socket=socket)
        assert out.returncode == 0, out.stderr
    out = cli("tap", "pair.submit", socket=socket)
    assert out.returncode == 0, out.stderr


def test_start_reports_the_pid_screen_and_socket(sim):
    out = cli("status", socket=sim)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    assert status["screen"] == "onboarding"
    assert status["connection"] == "disconnected"
    assert status["socket"] == str(sim)


def test_a_person_pairs_chats_and_reads_the_reply_over_real_sockets(gateway, sim):
    pair(sim, gateway.port)
    assert cli("assert-screen", "chat", "--timeout", "10", socket=sim).returncode == 0
    assert cli("assert-no-error", socket=sim).returncode == 0
    assert cli("assert-effect", "websocket_connect", socket=sim).returncode == 0
    assert cli("set-field", "draft", "Run the tests", socket=sim).returncode == 0
    assert cli("assert-node", "chat.send", "--enabled", "--role", "button", socket=sim).returncode == 0
    out = cli("tap", "chat.send", socket=sim)
    assert out.returncode == 0, out.stderr
    assert cli("assert-text", "All 42 tests pass.", "--timeout", "10", socket=sim).returncode == 0
    screen = cli("render", socket=sim).stdout
    assert "Run the tests" in screen
    assert "All 42 tests pass." in screen
    state = json.loads(cli("state", socket=sim).stdout)
    assert state["connection"]["phase"] == "connected"
    # the person's message, the reasoning with the tool call, then the answer
    assert [(e["role"], e["text"]) for e in state["transcript"]] == [
        ("user", "Run the tests"), ("assistant", ""), ("assistant", "All 42 tests pass.")]
    assert gateway.fake.subscribes[0]["working_dir"] == WORKING_DIR


def test_find_node_prints_one_node_without_children(sim):
    out = cli("find-node", "pair.submit", socket=sim)
    assert out.returncode == 0, out.stderr
    node = json.loads(out.stdout)
    assert node["id"] == "pair.submit"
    assert node["role"] == "button"
    assert "children" not in node


def test_tree_and_log_are_json(sim):
    assert json.loads(cli("tree", socket=sim).stdout)["id"] == "root"
    cli("set-field", "host", "devbox.local", socket=sim)
    log = json.loads(cli("log", "--limit", "1", socket=sim).stdout)
    assert [e["type"] for e in log["entries"]] == ["set_host"]


def test_dispatch_and_event_print_the_report(sim):
    out = cli("dispatch", '{"type":"set_port","value":"7000"}', socket=sim)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ok"] is True
    out = cli("event", '{"type":"app_background"}', socket=sim)
    assert out.returncode == 0, out.stderr
    assert json.loads(cli("state", socket=sim).stdout)["lifecycle"]["is_foreground"] is False


def test_load_scenario_changes_the_screen(sim):
    assert cli("load-scenario", "connected_chat", socket=sim).returncode == 0
    assert cli("assert-screen", "chat", socket=sim).returncode == 0


def test_a_failed_assertion_exits_1_with_a_structured_message(sim):
    out = cli("assert-screen", "chat", "--timeout", "0.2", socket=sim)
    assert out.returncode == 1
    line = one_line_error(out)
    assert line.startswith("jcode-mobile: assertion failed: ")
    failure = json.loads(line[len("jcode-mobile: assertion failed: "):])
    assert failure == {"assert": "screen", "expected": "chat", "actual": "onboarding"}


def test_assert_node_names_the_property_that_differs(sim):
    out = cli("assert-node", "pair.check", "--enabled", "--timeout", "0.2", socket=sim)
    assert out.returncode == 1
    failure = json.loads(one_line_error(out).split("assertion failed: ", 1)[1])
    assert failure == {"assert": "node", "node_id": "pair.check", "expected": {"enabled": True},
                       "actual": {"enabled": False}}


def test_assert_effect_fails_for_an_effect_never_executed(sim):
    out = cli("assert-effect", "http_pair", "--timeout", "0.1", socket=sim)
    assert out.returncode == 1
    assert '"expected": "http_pair"' in one_line_error(out)


def test_tapping_an_unknown_node_is_refused_in_one_line(sim):
    out = cli("tap", "no.such.node", socket=sim)
    assert out.returncode == 4
    assert one_line_error(out) == "jcode-mobile: no node 'no.such.node' in the tree"


def test_tapping_a_disabled_button_is_refused(sim):
    # "Check server" needs a host first
    out = cli("tap", "pair.check", socket=sim)
    assert out.returncode == 4
    assert one_line_error(out) == "jcode-mobile: node 'pair.check' is disabled"


def test_set_field_also_takes_a_text_fields_node_id(sim):
    assert cli("set-field", "pair.host", "devbox.local", socket=sim).returncode == 0
    assert json.loads(cli("state", socket=sim).stdout)["pairing"]["host"] == "devbox.local"


def test_set_field_on_a_node_that_is_not_a_text_field_is_refused(sim):
    out = cli("set-field", "pair.submit", "x", socket=sim)
    assert out.returncode == 4
    assert one_line_error(out) == "jcode-mobile: node 'pair.submit' is not a text field"


def test_an_unknown_field_lists_the_known_ones(sim):
    out = cli("set-field", "colour", "blue", socket=sim)
    assert out.returncode == 4
    assert one_line_error(out) == ("jcode-mobile: unknown field 'colour' (known: code, device_name, draft, host, "
                                   "pair_code, port, working_dir)")


def test_invalid_json_is_answered_by_the_core(sim):
    out = cli("dispatch", '{"type":', socket=sim)
    assert out.returncode == 4
    assert "invalid_json" in one_line_error(out)


def test_a_bad_argument_is_one_line_and_exit_2():
    out = cli("log", "--limit", "-1", socket="/nonexistent/sim.sock")
    assert out.returncode == 2
    assert "must be from 0 to 4294967295" in one_line_error(out)
    out = cli("no-such-command")
    assert out.returncode == 2
    one_line_error(out)


def test_no_simulator_is_exit_3(tmp_path):
    out = cli("state", socket=tmp_path / "nothing.sock")
    assert out.returncode == 3
    assert one_line_error(out) == (f"jcode-mobile: no simulator is running at {tmp_path / 'nothing.sock'} "
                                   "(start one with `jcode-mobile start`)")


def test_a_killed_simulator_is_exit_3(tmp_path):
    socket = tmp_path / "sim.sock"
    assert cli("start", socket=socket).returncode == 0
    pid = json.loads(cli("status", socket=socket).stdout)["pid"]
    os.kill(pid, 9)
    for _ in range(50):  # the simulator is not our child: wait until its socket stops answering
        out = cli("status", socket=socket)
        if out.returncode != 0:
            break
    assert out.returncode == 3
    one_line_error(out)


def test_starting_twice_on_one_socket_is_refused(sim):
    out = cli("start", socket=sim)
    assert out.returncode == 4
    assert "already running" in one_line_error(out)


def test_shutdown_removes_the_socket(tmp_path):
    socket = tmp_path / "sim.sock"
    assert cli("start", socket=socket).returncode == 0
    out = cli("shutdown", socket=socket)
    assert out.returncode == 0
    assert not socket.exists()


def test_an_exported_session_replays_identically(gateway, sim, tmp_path):
    pair(sim, gateway.port)
    assert cli("assert-screen", "chat", "--timeout", "10", socket=sim).returncode == 0
    trace = tmp_path / "session.json"
    out = cli("export-replay", trace, socket=sim)
    assert out.returncode == 0, out.stderr
    text = trace.read_text()
    assert CODE not in text  # the pairing code is a secret
    assert gateway.fake.token not in text
    out = cli("replay", trace)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("replay identical")


def test_replaying_a_tampered_trace_exits_1(gateway, sim, tmp_path):
    pair(sim, gateway.port)
    trace = tmp_path / "session.json"
    assert cli("export-replay", trace, socket=sim).returncode == 0
    data = json.loads(trace.read_text())
    data["final"]["state"]["screen"] = "settings"
    trace.write_text(json.dumps(data))
    out = cli("replay", trace)
    assert out.returncode == 1
    assert one_line_error(out).startswith("jcode-mobile: replay differs: ")


def test_replay_of_a_missing_file_is_refused(tmp_path):
    out = cli("replay", tmp_path / "missing.json")
    assert out.returncode == 4
    assert one_line_error(out) == f"jcode-mobile: no trace at {tmp_path / 'missing.json'}"


# -- run: one session in one process ---------------------------------------------


def test_run_pairs_sends_and_prints_the_transcript(gateway):
    out = cli("run", "--host", "127.0.0.1", "--port", gateway.port, "--code", CODE, "--working-dir", WORKING_DIR,
              "--message", "Run the tests", "--timeout", "30")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "you: Run the tests",
        "assistant (thinking): Run them.",
        "  tool bash: succeeded",
        "assistant: All 42 tests pass.",
    ]


def test_run_json_prints_the_final_state(gateway):
    out = cli("run", "--host", "127.0.0.1", "--port", gateway.port, "--code", CODE, "--working-dir", WORKING_DIR,
              "--message", "hi", "--json", "--timeout", "30")
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    assert state["screen"] == "chat"
    assert state["transcript"][0]["text"] == "hi"


def test_run_with_a_wrong_code_exits_5_with_the_servers_reason(gateway):
    out = cli("run", "--host", "127.0.0.1", "--port", gateway.port, "--code", "654321", "--working-dir",
              WORKING_DIR, "--message", "hi", "--timeout", "30")
    assert out.returncode == 5
    assert one_line_error(out) == "jcode-mobile: could not pair: Invalid or expired pairing code"


class ForgetfulServer(FakeJcodeServer):
    """Pairs, then refuses the token it issued at the WebSocket upgrade (401)."""

    def _issue_token(self, device_id, device_name, apns_token):
        token = super()._issue_token(device_id, device_name, apns_token)
        self.valid_tokens.discard(token)
        return token


def test_run_exits_6_when_the_socket_refuses_the_new_token():
    with RunningGateway(ForgetfulServer(pair_code=CODE)) as gateway:
        out = cli("run", "--host", "127.0.0.1", "--port", gateway.port, "--code", CODE, "--working-dir",
                  WORKING_DIR, "--message", "hi", "--timeout", "30")
    assert out.returncode == 6
    assert one_line_error(out) == ("jcode-mobile: could not connect: This device is no longer paired with the "
                                   "server. Re-pair to reconnect.")


def test_run_against_a_closed_port_exits_5(unused_port):
    out = cli("run", "--host", "127.0.0.1", "--port", unused_port, "--code", CODE, "--working-dir", WORKING_DIR,
              "--message", "hi", "--timeout", "30")
    assert out.returncode == 5
    assert one_line_error(out).startswith("jcode-mobile: could not pair: Could not reach 127.0.0.1:")


def test_run_with_a_relative_working_dir_exits_2(gateway):
    out = cli("run", "--host", "127.0.0.1", "--port", gateway.port, "--code", CODE, "--working-dir", "project",
              "--message", "hi", "--timeout", "30")
    assert out.returncode == 2
    assert one_line_error(out).startswith("jcode-mobile: working_dir: ")


def test_run_exits_7_when_the_turn_never_finishes(gateway):
    gateway.call(lambda fake: fake.replies.clear())
    gateway.call(lambda fake: fake.replies.append(Reply(text="never ends", hold_after=2)))
    out = cli("run", "--host", "127.0.0.1", "--port", gateway.port, "--code", CODE, "--working-dir", WORKING_DIR,
              "--message", "hi", "--timeout", "4")
    assert out.returncode == 7
    assert one_line_error(out).startswith("jcode-mobile: the turn did not finish within the timeout")


@pytest.fixture
def unused_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_start_after_shutdown_restores_the_paired_server_the_session_and_the_draft(gateway, tmp_path):
    socket = tmp_path / "sim.sock"
    try:
        out = cli("start", socket=socket)
        assert out.returncode == 0, out.stderr
        assert "restored" not in out.stdout  # nothing saved yet: onboarding
        pair(socket, gateway.port)
        assert cli("assert-screen", "chat", "--timeout", "10", socket=socket).returncode == 0
        # chat (today's jcode forgets a session nothing was said in when its connection ends)
        assert cli("set-field", "draft", "Run the tests", socket=socket).returncode == 0
        assert cli("tap", "chat.send", socket=socket).returncode == 0
        assert cli("assert-text", "All 42 tests pass.", "--timeout", "10", socket=socket).returncode == 0
        first = json.loads(cli("state", socket=socket).stdout)
        assert cli("set-field", "draft", "Half a thought", socket=socket).returncode == 0
        assert cli("shutdown", socket=socket, timeout=15).returncode == 0

        # the saved data sits beside the socket: the snapshot (no token) and the token (0600)
        saved = json.loads((tmp_path / "sim.storage.json").read_text())
        assert saved["snapshot"]["selected_server_id"] == f"127.0.0.1:{gateway.port}"
        assert saved["snapshot"]["composer"]["draft"] == "Half a thought"
        assert (tmp_path / "sim.secure.json").stat().st_mode & 0o777 == 0o600

        out = cli("start", socket=socket)
        assert out.returncode == 0, out.stderr
        assert "screen chat, restored from the saved data" in out.stdout
        assert json.loads(cli("status", socket=socket).stdout)["restored"] is True
        assert cli("assert-no-error", "--timeout", "10", socket=socket).returncode == 0
        for _ in range(100):
            state = json.loads(cli("state", socket=socket).stdout)
            if state["connection"]["phase"] == "connected" and state["session"]["history_loaded"]:
                break
        assert state["connection"]["phase"] == "connected"
        assert state["session"]["id"] == first["session"]["id"]  # the same session, resumed
        assert state["draft"] == "Half a thought"
        assert [(m["role"], m["text"]) for m in state["transcript"]][:1] == [("user", "Run the tests")]
        assert gateway.call(lambda fake: len(fake.pair_requests)) == 1  # never paired again
        assert cli("assert-effect", "secure_store_read", socket=socket).returncode == 0
        assert cli("shutdown", socket=socket, timeout=15).returncode == 0

        out = cli("start", "--fresh", socket=socket)  # ignore the saved data
        assert out.returncode == 0, out.stderr
        assert "screen onboarding" in out.stdout and "restored" not in out.stdout
    finally:
        cli("shutdown", socket=socket, timeout=15)


# -- pictures and points of the screen ------------------------------------------------------

GOLDEN_SCREENS = HARNESS / "tests" / "golden" / "screens"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_screenshot_of_a_scenario_writes_a_png_of_the_scaled_size(tmp_path):
    from jcode_mobile.picture import png_size

    file = tmp_path / "approval.png"
    out = cli("screenshot", file, "--scenario", "tool_approval_required", "--scale", "2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (f"wrote {file}: PNG of scenario tool_approval_required, 780×1688 px "
                                  f"(390×844 points at scale 2), revision 0")
    assert file.read_bytes().startswith(PNG_SIGNATURE)
    assert png_size(file) == (780, 1688)


def test_screenshot_of_a_scenario_as_svg_in_another_viewport(tmp_path):
    from jcode_mobile.picture import svg_nodes

    file = tmp_path / "onboarding.svg"
    out = cli("screenshot", file, "--scenario", "onboarding", "--viewport", "320x568")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"wrote {file}: SVG of scenario onboarding, 320×568 points, revision 0"
    import xml.etree.ElementTree as ET
    root = ET.parse(file).getroot()
    assert (root.get("width"), root.get("height")) == ("320", "568")
    # The form is taller than this screen: it scrolls, its top shown (Pair is below the fold).
    assert "pair.scan_qr" in svg_nodes(file) and "pair.submit" not in svg_nodes(file)


def test_the_cli_png_of_a_scenario_has_the_pixels_of_the_golden_drawn_through_the_abi(tmp_path):
    from jcode_mobile.picture import font_problem, pixel_diff

    assert font_problem() is None, font_problem()
    file = tmp_path / "stdin.png"
    out = cli("screenshot", file, "--scenario", "stdin_request_pending")
    assert out.returncode == 0, out.stderr
    diff = pixel_diff(GOLDEN_SCREENS / "stdin_request_pending.png", file,
                      svg=GOLDEN_SCREENS / "stdin_request_pending.svg")
    assert not diff, f"{diff} (diff image: {diff.save_image(tmp_path / 'stdin.diff.png')})"


def test_screenshot_of_the_simulators_screen_follows_what_it_shows(sim, tmp_path):
    from jcode_mobile.picture import svg_nodes

    before = tmp_path / "before.svg"
    assert cli("screenshot", before, socket=sim).returncode == 0
    assert cli("set-field", "host", "devbox.local", socket=sim).returncode == 0
    after = tmp_path / "after.svg"
    out = cli("screenshot", after, socket=sim)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"wrote {after}: SVG of the simulator's screen, 390×844 points, revision 1"
    assert "devbox.local" not in "".join(svg_nodes(before)["pair.host"].text)
    assert "devbox.local" in "".join(svg_nodes(after)["pair.host"].text)
    png = tmp_path / "after.png"
    assert cli("screenshot", png, socket=sim).returncode == 0
    assert png.read_bytes().startswith(PNG_SIGNATURE)


def test_hit_test_and_tap_at_a_point_of_the_simulators_screen(tmp_path):
    socket = tmp_path / "chat.sock"
    assert cli("start", "--scenario", "connected_chat", socket=socket).returncode == 0
    try:
        settings = json.loads(cli("find-node", "nav.settings", socket=socket).stdout)["bounds"]
        x, y = settings["x"] + settings["width"] // 2, settings["y"] + settings["height"] // 2
        hit = json.loads(cli("hit-test", x, y, socket=socket).stdout)
        assert (hit["node"]["id"], hit["path"], hit["tap_target"]) == (
            "nav.settings", ["root", "chat.header", "nav.settings"], "nav.settings")
        out = cli("tap", x, y, socket=socket)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(f"tapped nav.settings at ({x}, {y}): revision 1")
        assert cli("assert-screen", "settings", socket=socket).returncode == 0
    finally:
        cli("shutdown", socket=socket, timeout=15)


def test_scroll_moves_the_message_list_and_is_refused_off_the_chat(tmp_path):
    socket = tmp_path / "chat.sock"
    assert cli("start", "--scenario", "chat_streaming", socket=socket).returncode == 0
    try:
        out = cli("scroll", "0", socket=socket)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("scrolled the messages to 0 of ")
        assert json.loads(cli("find-node", "chat.messages", socket=socket).stdout)["scroll"]["offset"] == 0
        out = cli("scroll", "end", socket=socket)
        assert out.returncode == 0, out.stderr
        scroll = json.loads(cli("find-node", "chat.messages", socket=socket).stdout)["scroll"]
        assert scroll["offset"] == scroll["max_offset"] > 0
        cli("load-scenario", "onboarding", socket=socket)
        out = cli("scroll", "0", socket=socket)
        assert out.returncode == 4
        assert one_line_error(out) == "jcode-mobile: the message list is not on the onboarding screen"
    finally:
        cli("shutdown", socket=socket, timeout=15)


def test_tapping_a_point_with_nothing_tappable_is_refused_in_one_line(sim):
    out = cli("tap", 389, 843, socket=sim)
    assert out.returncode == 4
    assert one_line_error(out) == "jcode-mobile: nothing tappable at (389, 843): root (screen), in root"
    out = cli("tap", 1000, 10, socket=sim)
    assert out.returncode == 4
    assert one_line_error(out) == "jcode-mobile: (1000, 10) is outside the screen"


@pytest.mark.parametrize("args, message", [
    (["screenshot", "shot.jpg", "--scenario", "onboarding"], "screenshot: shot.jpg must end in .svg or .png"),
    (["screenshot", "shot.png", "--viewport", "320x568"], "screenshot: --viewport needs --scenario"),
    (["screenshot", "shot.png", "--scenario", "onboarding", "--viewport", "wide"], "is not WIDTHxHEIGHT"),
    (["screenshot", "shot.png", "--scenario", "onboarding", "--scale", "0"], "must be more than 0"),
    (["screenshot", "shot.png", "--scenario", "onboarding", "--viewport", "10000x10000", "--scale", "4"],
     "more than the 32767 a side"),
    (["tap", "1", "2", "3"], "tap: give a node id, or the two coordinates X Y"),
    (["tap", "nan", "3"], "tap: 'nan' is not a finite number of points"),
    (["hit-test", "1", "inf"], "'inf' is not a finite number of points"),
    (["scroll", "-3"], "must be 0 or more points"),
])
def test_bad_picture_and_point_arguments_are_one_line_and_exit_2(tmp_path, args, message):
    out = subprocess.run([sys.executable, "-m", "jcode_mobile", "--socket", str(tmp_path / "none.sock")] + args,
                         cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(HARNESS)})
    assert out.returncode == 2, out.stderr
    assert message in one_line_error(out)


def test_screenshot_of_an_unknown_scenario_is_refused(tmp_path):
    out = cli("screenshot", tmp_path / "x.svg", "--scenario", "nope")
    assert out.returncode == 4
    assert "invalid_scenario" in one_line_error(out)
    assert not (tmp_path / "x.svg").exists()


# -- issue 28: the turn that did not finish, scenario names, clean errors ------------------

SCENARIOS = ("onboarding, pairing_ready, connected_chat, pairing_invalid_code, server_unreachable, "
             "connected_empty_chat, chat_streaming, tool_approval_required, tool_failed, network_reconnect, "
             "offline_queued_message, long_running_task, stdin_request_pending, model_switch_failed, "
             "push_tool_approval_opened, markdown_reply, code_edit_review, approval_unsupported")


def run_during_the_turn(gateway, action, *, timeout="20"):
    """`jcode-mobile run` against ``gateway`` (whose turn never finishes by itself); ``action(gateway)``
    runs once the server has received the message. Returns the finished process's output."""
    import threading
    import time

    process = subprocess.Popen(
        [sys.executable, "-m", "jcode_mobile", "run", "--host", "127.0.0.1", "--port", str(gateway.port), "--code",
         CODE, "--working-dir", WORKING_DIR, "--message", "Run the tests", "--timeout", timeout],
        cwd=HARNESS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def act():
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if any(r.get("type") == "message" for r in gateway.call(lambda fake: list(fake.requests))):
                action(gateway)
                return
            time.sleep(0.05)

    worker = threading.Thread(target=act, daemon=True)
    worker.start()
    try:
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    worker.join(timeout=10)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def endless_turn_gateway(server_class=FakeJcodeServer):
    return RunningGateway(server_class(pair_code=CODE, replies=[Reply(text="never ends", hold_after=2)]))


def test_run_exits_7_when_the_gateway_dies_during_the_turn():
    with endless_turn_gateway() as gateway:
        port = gateway.port
        out = run_during_the_turn(gateway, lambda g: g.stop())
    assert out.returncode == 7, out.stderr
    assert out.stdout == ""
    assert out.stderr == (f"jcode-mobile: the turn did not finish: the connection to 127.0.0.1 port {port} "
                          "dropped during it\n")


def test_run_exits_7_when_the_socket_drops_during_the_turn():
    with endless_turn_gateway() as gateway:
        out = run_during_the_turn(gateway, lambda g: g.drop_connections())
    assert out.returncode == 7, out.stderr
    assert out.stdout == ""
    assert out.stderr == (f"jcode-mobile: the turn did not finish: the connection to 127.0.0.1 port {gateway.port} "
                          "dropped during it\n")


class FailingTurnServer(FakeJcodeServer):
    """Acknowledges a message, then answers it with an error (no turn, no done)."""

    def _on_message(self, socket, request):
        return [{"type": "ack", "id": request["id"]},
                {"type": "error", "id": request["id"], "message": "The provider is unavailable"}]


def test_run_exits_7_when_the_server_answers_the_message_with_an_error():
    with RunningGateway(FailingTurnServer(pair_code=CODE)) as gateway:
        out = cli("run", "--host", "127.0.0.1", "--port", gateway.port, "--code", CODE, "--working-dir",
                  WORKING_DIR, "--message", "hi", "--timeout", "20")
    assert out.returncode == 7, out.stderr
    assert out.stdout == ""
    assert out.stderr == ("jcode-mobile: the turn did not finish: the server answered with an error: "
                          "The provider is unavailable\n")


def test_run_against_a_closed_port_names_the_host_and_port_in_plain_words(unused_port):
    out = cli("run", "--host", "127.0.0.1", "--port", unused_port, "--code", CODE, "--working-dir", WORKING_DIR,
              "--message", "hi", "--timeout", "30")
    assert out.returncode == 5
    assert out.stderr == (f"jcode-mobile: could not pair: Could not reach 127.0.0.1:{unused_port} (cannot connect to "
                          f"127.0.0.1 port {unused_port}: connection refused). Check that jcode is running there "
                          "with the gateway enabled and that this device is on the same network.\n")


@pytest.mark.parametrize("command", ["start", "screenshot", "load-scenario"])
def test_help_lists_the_scenarios_the_library_knows(command):
    out = cli(command, "--help")
    assert out.returncode == 0, out.stderr
    assert f"(one of: {SCENARIOS})" in " ".join(out.stdout.split())


def test_starting_an_unknown_scenario_lists_the_scenarios(tmp_path):
    out = cli("start", "--scenario", "nope", socket=tmp_path / "sim.sock")
    assert out.returncode == 4
    assert out.stderr == ('jcode-mobile: invalid_scenario: unknown scenario "nope" (field scenario); '
                          f"the scenarios are: {SCENARIOS}\n")
    assert not (tmp_path / "sim.sock").exists()


def test_loading_an_unknown_scenario_lists_the_scenarios(sim):
    out = cli("load-scenario", "nope", socket=sim)
    assert out.returncode == 4
    assert out.stderr == ('jcode-mobile: invalid_scenario: unknown scenario "nope" (field scenario); '
                          f"the scenarios are: {SCENARIOS}\n")


def test_a_screenshot_of_an_unknown_scenario_lists_the_scenarios(tmp_path):
    out = cli("screenshot", tmp_path / "x.svg", "--scenario", "nope")
    assert out.returncode == 4
    assert out.stderr == ('jcode-mobile: the core refused the options: invalid_scenario: unknown scenario "nope" '
                          f"(field scenario); the scenarios are: {SCENARIOS}\n")


@pytest.mark.parametrize("args, message", [
    (["start", "--viewport", "zz"],
     "jcode-mobile: start: argument --viewport: 'zz' is not WIDTHxHEIGHT in points, such as 390x844 (see --help)\n"),
    (["no-such-command"], "jcode-mobile: argument COMMAND: invalid choice: 'no-such-command' (choose from "),
    ([], "jcode-mobile: the following arguments are required: COMMAND (see --help)\n"),
    (["run", "--host", "h"], "jcode-mobile: run: the following arguments are required: --code, --working-dir, "
                             "--message (see --help)\n"),
])
def test_argument_errors_carry_one_prefix(tmp_path, args, message):
    out = cli(*args, socket=tmp_path / "none.sock")
    assert out.returncode == 2
    assert out.stderr.startswith(message), out.stderr
    assert out.stderr.count("jcode-mobile:") == 1


def test_version_prints_the_package_and_the_library_versions():
    out = cli("--version")
    assert out.returncode == 0, out.stderr
    library = HARNESS.parents[1] / "lib" / "libjcode_mobile.so"
    assert out.stdout == f"jcode-mobile 0.7.0 (source tree); library 0.7.0 (ABI 1) at {library}\n"


def test_a_missing_library_is_reported_with_how_to_build_it(tmp_path):
    missing = tmp_path / "libjcode_mobile.so"
    env = {**os.environ, "JCODE_MOBILE_LIB": str(missing)}
    expected = (f"jcode-mobile: the jcode mobile core library is missing: {missing} not found: run `make lib` in the "
                "repository (or set JCODE_MOBILE_LIB); an installed package bundles it when `pip install "
                "./harness/python` runs after `make lib`\n")
    for args in (["--version"], ["run", "--host", "127.0.0.1", "--code", CODE, "--working-dir", WORKING_DIR,
                                 "--message", "hi"], ["start"]):
        out = subprocess.run([sys.executable, "-m", "jcode_mobile", "--socket", str(tmp_path / "sim.sock")] + args,
                             cwd=HARNESS, capture_output=True, text=True, timeout=60, env=env)
        assert (out.returncode, out.stderr) == (8, expected), args
    assert not (tmp_path / "sim.sock").exists()


def test_a_simulator_started_from_a_scenario_says_no_real_server_is_behind_it(tmp_path):
    socket = tmp_path / "sim.sock"
    out = cli("start", "--scenario", "connected_chat", socket=socket)
    try:
        assert out.returncode == 0, out.stderr
        pid = json.loads(cli("status", socket=socket).stdout)["pid"]
        assert out.stdout == (f"simulator started: pid {pid}, screen chat, connection connected but simulated "
                              f"(no real server behind it: sends go nowhere), socket {socket}\n")
        status = json.loads(cli("status", socket=socket).stdout)
        assert (status["connection"], status["server"]) == (
            "connected", "none: the connection is the scenario's fixture; what the app sends goes nowhere")
    finally:
        cli("shutdown", socket=socket, timeout=15)


def test_status_says_a_real_server_is_behind_a_paired_simulator(gateway, sim):
    assert cli("status", socket=sim).returncode == 0
    assert json.loads(cli("status", socket=sim).stdout)["server"] == "none"
    pair(sim, gateway.port)
    assert cli("assert-screen", "chat", "--timeout", "10", socket=sim).returncode == 0
    status = json.loads(cli("status", socket=sim).stdout)
    assert (status["connection"], status["server"]) == (
        "connected", "real: the host opened a WebSocket to the paired server")


def test_simulator_md_names_only_documents_that_exist():
    import re

    repo = HARNESS.parents[1]
    named = set(re.findall(r"[\w./-]+\.md\b", (repo / "docs" / "SIMULATOR.md").read_text()))
    missing = sorted(n for n in named if not any((base / n).exists() for base in (repo, repo / "docs")))
    assert missing == []


# -- the run directory: this user's alone ----------------------------------------------------------


def cli_env(*args, env, timeout=60):
    return subprocess.run([sys.executable, "-m", "jcode_mobile"] + [str(a) for a in args], cwd=HARNESS,
                          capture_output=True, text=True, timeout=timeout, env=env)


def default_socket_env(runtime_dir):
    """The environment of a person without JCODE_MOBILE_SOCKET: the socket is
    ``$XDG_RUNTIME_DIR/jcode-mobile/sim.sock``."""
    env = {k: v for k, v in os.environ.items() if k not in ("JCODE_MOBILE_SOCKET", "XDG_RUNTIME_DIR")}
    env["XDG_RUNTIME_DIR"] = str(runtime_dir)
    return env


def test_a_run_directory_other_users_can_enter_is_refused_with_a_way_out(tmp_path):
    shared = tmp_path / "xdg" / "jcode-mobile"
    shared.mkdir(parents=True)
    shared.chmod(0o777)  # as another user leaves /tmp/jcode-mobile-<uid> for this one to find
    env = default_socket_env(tmp_path / "xdg")
    refusal = (f"jcode-mobile: refusing to use {shared}: its permissions 0777 let other users in (it must be 0700); "
               f"`chmod 700 {shared}`, or set XDG_RUNTIME_DIR (or JCODE_MOBILE_SOCKET, or --socket) to a directory "
               f"only you can use, or remove {shared} if it is yours to remove")
    out = cli_env("start", "--scenario", "onboarding", env=env)
    assert (out.returncode, one_line_error(out)) == (4, refusal)
    out = cli_env("set-field", "code", "123456", env=env)
    assert (out.returncode, one_line_error(out)) == (4, refusal)
    assert list(shared.iterdir()) == [], "no socket, log or saved state was made there"


@pytest.mark.skipif(os.getuid() != 0, reason="giving a directory to another user needs root")
def test_a_run_directory_another_user_made_first_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)  # nobody's, however private
    out = cli("start", "--scenario", "onboarding", socket=theirs / "sim.sock")
    assert out.returncode == 4
    assert one_line_error(out).startswith(f"jcode-mobile: refusing to use {theirs}: it belongs to uid 65534, "
                                          f"not to you (uid 0), who could read the saved state and take over the socket;")
    assert list(theirs.iterdir()) == []


def test_the_run_directory_is_made_0700_and_every_file_the_simulator_writes_is_0600(tmp_path):
    (tmp_path / "xdg").mkdir()
    env = default_socket_env(tmp_path / "xdg")
    run_dir = tmp_path / "xdg" / "jcode-mobile"
    trace = tmp_path / "trace.json"
    try:
        assert cli_env("start", "--scenario", "onboarding", env=env).returncode == 0
        assert cli_env("set-field", "draft", "a private thought", env=env).returncode == 0  # the snapshot is written
        assert cli_env("export-replay", trace, env=env).returncode == 0
    finally:
        cli_env("shutdown", env=env, timeout=15)
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o700
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in run_dir.iterdir()} == {
        "sim.log": 0o600, "sim.storage.json": 0o600}
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600


def test_a_symbolic_link_at_the_log_path_is_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("kept\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    (run_dir / "sim.log").symlink_to(victim)
    out = cli("start", "--scenario", "onboarding", socket=run_dir / "sim.sock")
    assert out.returncode == 4
    assert one_line_error(out) == f"jcode-mobile: refusing to write the log {run_dir / 'sim.log'}: it is a symbolic link"
    assert victim.read_text() == "kept\n"


def test_a_symbolic_link_at_the_state_path_is_not_followed(tmp_path):
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    (run_dir / "sim.storage.json").symlink_to(victim)
    socket = run_dir / "sim.sock"
    try:
        assert cli("start", "--scenario", "onboarding", socket=socket).returncode == 0
        assert cli("set-field", "draft", "a private thought", socket=socket).returncode == 0
        errors = json.loads(cli("status", socket=socket).stdout)["host_errors"]
    finally:
        cli("shutdown", socket=socket, timeout=15)
    assert victim.read_text() == "{}", "nothing was written through the link"
    assert any("sim.storage.json: cannot open" in e for e in errors), errors


# -- an empty message and a port out of range are refused at once ---------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize("message", ["", "   ", "\n\t"])
def test_run_refuses_an_empty_message_at_once_with_exit_2(gateway, message):
    # before: the message was sent as nothing and run waited out its whole timeout (120 s), exit 7
    out = cli("run", "--host", "127.0.0.1", "--port", gateway.port, "--code", CODE, "--working-dir", WORKING_DIR,
              "--message", message, timeout=20)
    assert out.returncode == 2
    assert out.stderr == "jcode-mobile: run: argument --message: must not be empty (see --help)\n"
    assert out.stdout == ""
    assert gateway.fake.devices == {}  # it never paired


@pytest.mark.timeout(60)
@pytest.mark.parametrize("port, message", [
    ("0", "must be from 1 to 65535"),
    ("65536", "must be from 1 to 65535"),
    ("99999", "must be from 1 to 65535"),
    ("-1", "must be from 1 to 65535"),
    ("7643x", "'7643x' is not a port number"),
])
def test_run_refuses_a_port_out_of_1_to_65535_with_exit_2(tmp_path, port, message):
    out = cli("run", "--host", "127.0.0.1", "--port", port, "--code", CODE, "--working-dir", WORKING_DIR,
              "--message", "hi", socket=tmp_path / "none.sock", timeout=20)
    assert out.returncode == 2
    assert out.stderr == f"jcode-mobile: run: argument --port: {message} (see --help)\n"
    assert out.stdout == ""
