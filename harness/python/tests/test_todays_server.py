"""The core against the fake gateway playing today's jcode rules (see
jcode_mobile/fake_gateway.py, each rule citing its jcode source)."""

import json

from jcode_mobile import App, find_node
from jcode_mobile.fake_gateway import FakeJcodeServer, Host

from helpers import WORKING_DIR, fill_pairing_form


def paired_host(**server_options) -> Host:
    host = Host(App({"device_id": "phone-7"}), FakeJcodeServer(**server_options))
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    return host


def test_every_connection_subscribes_with_the_working_directory_and_the_install_id():
    host = paired_host()
    assert host.server.subscribes[0]["working_dir"] == WORKING_DIR
    assert host.server.subscribes[0]["client_instance_id"] == "phone-7"
    assert host.server.subscribes[0]["error"] is None
    state = host.app.state()
    assert state["connection"]["phase"] == "connected" and state["session"]["history_loaded"] is True
    assert state["servers"][0]["working_dir"] == WORKING_DIR


def test_the_history_of_todays_server_shows_tool_results_and_background_tasks():
    host = paired_host()
    host.dispatch({"type": "resume_session", "session_id": host.server.main_session})
    transcript = host.app.state()["transcript"]
    roles = [entry["role"] for entry in transcript]
    assert roles == ["user", "assistant", "assistant", "background_task", "assistant"]
    first_call = transcript[1]["tool_calls"][0]
    assert first_call["id"] == "toolu_01" and first_call["status"] == "succeeded"
    assert first_call["input"] == '{"command":"for i in 1 2 3 4 5; do pytest tests/test_login.py -q; done"}'
    assert first_call["output"].startswith("5 runs: 4 passed, 1 failed")
    assert [call["id"] for call in transcript[2]["tool_calls"]] == ["toolu_02", "toolu_03"]
    assert "212 passed" in transcript[3]["text"]
    node = find_node(host.app.tree(), "message." + transcript[3]["id"])
    assert node["label"] == "Background task"


def test_a_session_close_request_closes_the_socket_and_waits_for_the_person():
    host = paired_host()
    mark = host.mark()
    host.server.request_session_close("Stopped by coordinator")
    host.run()
    state = host.app.state()
    effects = host.effects_since(mark)
    # the socket closes and the keep-alive stops with it
    assert [e["type"] for e in effects] == ["websocket_close", "cancel_timer"]
    assert effects[1]["timer_id"].startswith("keepalive.")
    assert state["connection"]["phase"] == "failed"
    assert state["connection"]["reason"] == "Stopped by coordinator"
    assert state["banners"]["error"]["message"] == "Stopped by coordinator"
    assert host.timers == {}
    assert find_node(host.app.tree(), "connection.retry")["visible"] is True
    # The person reconnects: a new subscribe, with the same working directory.
    host.dispatch({"type": "tap_node", "node_id": "connection.retry"})
    assert host.app.state()["connection"]["phase"] == "connected"
    assert len(host.server.subscribes) == 2 and host.server.subscribes[1]["working_dir"] == WORKING_DIR


def test_a_permission_response_is_never_sent_to_a_server_that_did_not_ask():
    host = paired_host()
    host.server_push({"type": "permission_request", "request_id": "perm-9", "action": "bash", "detail": "rm -rf build"})
    host.drop_connection()
    host.fire_timers()
    assert host.app.state()["connection"]["phase"] == "connected"
    mark = host.mark()
    host.dispatch({"type": "respond_permission", "request_id": "perm-9", "approved": True})
    assert host.sent_requests(mark) == []
    assert host.app.state()["permission_requests"] == []
    assert "ended with the previous connection" in host.app.state()["banners"]["error"]["message"]


def test_an_error_about_an_unreadable_request_leaves_the_turn_running():
    host = paired_host()
    host.hold_frames = True
    host.dispatch({"type": "send_message", "text": "Run the tests"})
    host.inbox.clear()  # the test plays the server by hand
    frame = "\n".join([
        json.dumps({"type": "text_delta", "text": "Running"}),
        json.dumps({"type": "error", "id": 0, "message": "Invalid request: unknown variant `teleport`"}),
        json.dumps({"type": "text_delta", "text": " them now."}),
    ])
    host.app.platform_event({"type": "websocket_event", "effect_id": host.socket_id, "line": frame})
    state = host.app.state()
    assert state["session"]["is_processing"] is True
    assert state["transcript"][-1]["text"] == "Running them now." and state["transcript"][-1]["is_streaming"] is True
    assert state["banners"]["error"]["message"] == "Invalid request: unknown variant `teleport`"
