"""The fake backend and the host's effect execution on their own."""

import json

import pytest

from jcode_mobile import App
from jcode_mobile.fake_gateway import (
    FAKE_DEVICE_ID, FakeJcodeServer, Host, HostError, Reply, SocketRejected, Unreachable, split_words,
)

from helpers import fill_pairing_form


PAIR_BODY = {"code": "123456", "device_id": "d", "device_name": "n"}


def test_http_endpoints():
    server = FakeJcodeServer(token="t1")
    assert server.health("devbox.local", 7643).body == {"status": "ok", "version": "0.9.2", "gateway": True}
    with pytest.raises(Unreachable):
        server.health("box.invalid", 7643)
    wrong = server.pair("devbox.local", 7643, False, dict(PAIR_BODY, code="000000"))
    assert (wrong.status, wrong.body) == (401, {"error": "Invalid or expired pairing code"})
    partial = server.pair("devbox.local", 7643, False, {"code": "123456"})
    assert (partial.status, partial.body) == (400, {"error": "Invalid JSON: missing field `device_id` at line 1 column 17"})
    ok = server.pair("devbox.local", 7643, False, PAIR_BODY)
    assert (ok.status, ok.body) == (200, {"token": "t1", "server_name": "jcode", "server_version": "0.9.2"})


def test_socket_needs_a_token_it_issued():
    server = FakeJcodeServer(token="t1", accepted_tokens=())
    with pytest.raises(SocketRejected) as info:
        server.open_socket("ws://devbox.local:7643/ws", "t1")
    assert info.value.status == 401
    server.pair("devbox.local", 7643, False, PAIR_BODY)
    socket = server.open_socket("ws://devbox.local:7643/ws", "t1")
    fresh = "session_otter_1700000000001_0000000000000001"
    assert socket.send('{"id":1,"type":"subscribe","working_dir":"/home/dev/app"}') == [
        {"type": "ack", "id": 1}, {"type": "session", "session_id": fresh}, {"type": "done", "id": 1},
    ]
    ack, history = socket.send('{"id":2,"type":"get_history"}')
    assert ack == {"type": "ack", "id": 2}
    assert history["type"] == "history" and history["id"] == 2 and history["session_id"] == fresh
    assert history["messages"] == []
    assert history["all_sessions"] == ["session-fox", "session-owl", fresh]
    for key in ("provider_model", "available_models"):
        assert key in history
    assert "display_title" not in history
    events = socket.send(json.dumps({"id": 3, "type": "message", "content": "hi"}))
    assert events[0] == {"type": "ack", "id": 3} and events[-1] == {"type": "done", "id": 3}
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "You said: hi"
    assert len([e for e in events if e["type"] == "text_delta"]) > 1


def test_reply_event_order():
    reply = Reply(text="a b c", reasoning="why", tools=[{"id": "t", "name": "bash", "input": "{}", "output": "ok"}],
                  tokens=(1, 2))
    assert [e["type"] for e in reply.events(9)] == [
        "reasoning_delta", "reasoning_done", "tool_start", "tool_input", "tool_exec", "message_end", "tool_done",
        "text_delta", "text_delta", "message_end", "tokens", "done",
    ]
    assert split_words("one two three four five") == ["one two ", "three four ", "five"]


def test_rejected_token_stops_reconnecting():
    host = Host(server=FakeJcodeServer())
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    host.server.valid_tokens.clear()  # the server forgot this device
    host.drop_connection()
    host.fire_timers()
    state = host.app.state()
    assert state["connection"]["phase"] == "failed"
    assert state["connection"]["reason"] == "This device is no longer paired with the server. Re-pair to reconnect."
    assert host.timers == {}
    assert host.fire_timers() == []


def test_device_effects_are_answered():
    host = Host(App({"scenario": "connected_chat"}), qr_payload=None, speech_text="Run the linter")
    host.dispatch({"type": "start_voice_input"})
    assert host.app.state()["draft"] == "Run the linter"
    host.dispatch({"type": "attach_image"})
    (attachment,) = host.app.state()["attachments"]
    assert attachment["media_type"] == "image/png"
    # each answer changed the composer, which the snapshot keeps
    assert [e["type"] for e in host.effects] == [
        "request_speech_transcript", "storage_write", "request_image_picker", "storage_write"]
    assert host.storage["snapshot"]["composer"]["draft"] == "Run the linter"
    assert [a["media_type"] for a in host.storage["snapshot"]["composer"]["attachments"]] == ["image/png"]


def test_create_device_id_is_answered_before_pairing():
    host = Host()  # no device_id option: the core asks the device for one
    assert host.app.state()["lifecycle"]["device_id"] is None  # no shared default identity
    for kind, value in [("set_host", "devbox.local"), ("set_pair_code", "123456"), ("set_device_name", "Me"),
                        ("set_working_dir", "/home/me/project")]:
        host.dispatch({"type": kind, "value": value})
    report = host.dispatch({"type": "submit_pairing"})
    assert [e["type"] for e in report["effects"]] == ["create_device_id"]
    (created,) = [s for s in host.steps if s.input.get("type") == "device_id_created"]
    assert created.input == {"type": "device_id_created", "effect_id": report["effects"][0]["effect_id"],
                             "device_id": FAKE_DEVICE_ID}
    assert created.report["effects"][0]["type"] == "http_pair"
    assert created.report["effects"][0]["device_id"] == FAKE_DEVICE_ID
    assert host.server.pair_requests[0]["device_id"] == FAKE_DEVICE_ID
    assert host.storage["snapshot"]["device"]["device_id"] == FAKE_DEVICE_ID
    assert host.app.state()["screen"] == "chat"


def test_qr_scan_pairs_in_one_go():
    host = Host(qr_payload="jcode://pair?host=devbox.local&port=7643&code=123456")
    host.dispatch({"type": "set_device_name", "value": "Scanner"})
    host.dispatch({"type": "set_working_dir", "value": "/home/scanner/project"})
    host.dispatch({"type": "scan_qr"})
    state = host.app.state()
    assert state["screen"] == "chat" and state["connection"]["phase"] == "connected"
    assert host.server.pair_requests[0]["device_name"] == "Scanner"


def test_check_server_uses_health():
    host = Host(App({"scenario": "pairing_ready"}))
    host.dispatch({"type": "check_server"})
    assert host.server.health_checks == [("devbox.local", 7643, False)]
    health = host.app.state()["pairing"]["health"]
    assert health["status"] == "reachable"
    assert health["message"].startswith("jcode 0.9.2 is running at devbox.local")


def test_server_push_and_on_frame_callback():
    seen = []
    host = Host(on_frame=lambda h, event: seen.append(event["event"]["type"]))
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    # Today's jcode acks every request; subscribe is answered by session and done.
    assert seen == ["ack", "session", "done", "ack", "history"]
    host.server_push({"type": "notification", "from_name": "ci", "message": "build green"})
    assert seen[-1] == "notification"
    assert host.app.state()["notices"][-1]["text"] == "ci: build green"


def test_unknown_effect_is_a_host_error():
    host = Host()
    with pytest.raises(HostError):
        host._execute({"effect_id": 1, "type": "teleport"})


def test_session_actions_round_trip():
    host = Host()
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    host.dispatch({"type": "set_model", "model": "gpt-5"})
    assert host.app.state()["session"]["model"] == "gpt-5"
    host.dispatch({"type": "set_model", "model": "no-such-model"})
    assert host.app.state()["banners"]["error"]["text"] == "Couldn't switch model: unknown model"
    host.dispatch({"type": "rename_session", "title": "Renamed"})
    assert host.app.state()["session"]["title"] == "Renamed"
    host.dispatch({"type": "resume_session", "session_id": "session-owl"})
    state = host.app.state()
    # The real history names no title: the session keeps the one the app knew, if any.
    assert state["session"]["id"] == "session-owl"
    assert state["session"]["history_loaded"] is True
