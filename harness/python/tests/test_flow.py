"""The whole flow through Host + FakeJcodeServer: pairing, connecting, the
history, sending a message and the streamed reply (parsed and raw frames)."""

import json

import pytest

from jcode_mobile import App, find_node
from jcode_mobile.fake_gateway import FakeJcodeServer, Host, Reply
from jcode_mobile.host.device import notification_opened

from helpers import fill_pairing_form, steps_with, without_effect_id

TOKEN = "tok-flow-0042"
HISTORY = [
    {"role": "user", "content": "Why does test_reconnect fail on CI?"},
    {"role": "assistant", "content": "It sleeps a fixed 100 ms and races the server."},
]
REPLY = Reply(text="All 42 tests pass now.", chunks=["All ", "42 tests ", "pass ", "now."])


def make_host(**host_options) -> Host:
    server = FakeJcodeServer(token=TOKEN, history=HISTORY, replies=[REPLY])
    return Host(App({"device_id": "device-under-test"}), server, **host_options)


def connect(host: Host) -> None:
    """Pair, then open the server's session with the history: today's jcode
    gives a newly paired phone a fresh, empty session of its own."""
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    host.dispatch({"type": "resume_session", "session_id": host.server.main_session})


def test_pairing_form_is_reflected_in_state_and_tree():
    host = make_host()
    fill_pairing_form(host)
    state = host.app.state()
    assert state["screen"] == "onboarding"
    assert state["pairing"]["host"] == "devbox.local"
    assert state["pairing"]["port"] == "7643"
    assert state["pairing"]["device_name"] == "Test iPhone"
    assert state["pairing"]["can_submit"] is True
    tree = host.app.tree()
    assert find_node(tree, "pair.host")["value"] == "devbox.local"
    assert find_node(tree, "pair.device_name")["value"] == "Test iPhone"
    assert find_node(tree, "pair.submit")["enabled"] is True
    # editing the form asks nothing of the host but to keep the device name (the snapshot)
    assert host.effects == [{
        "effect_id": 1, "type": "storage_write", "key": "snapshot",
        "value": {"version": 1, "device": {"device_id": "device-under-test", "device_name": "Test iPhone"},
                  "servers": [], "selected_server_id": None,
                  "composer": {"draft": "", "attachments": [], "next_attachment_id": 1},
                  "outbox": {"messages": [], "next_id": 1}},
    }]


def test_pairing_effects_are_exact():
    host = make_host()
    fill_pairing_form(host)
    report = host.dispatch({"type": "submit_pairing"})

    # submit_pairing: one http_pair with the form's fields.
    assert [without_effect_id(e) for e in report["effects"]] == [
        {
            "type": "http_pair", "host": "devbox.local", "port": 7643, "use_tls": False, "code": "123456",
            "device_id": "device-under-test", "device_name": "Test iPhone",
        }
    ]
    assert host.server.pair_requests == [
        {"code": "123456", "device_id": "device-under-test", "device_name": "Test iPhone"}
    ]

    # pair_finished ok: store the token, connect, then persist the snapshot (last, once per call).
    (paired,) = steps_with(host, "pair_finished")
    assert paired.input == {
        "type": "pair_finished", "effect_id": report["effects"][0]["effect_id"], "ok": True,
        "token": TOKEN, "server_name": "jcode", "server_version": "0.9.2",
    }
    effects = paired.report["effects"]
    assert [e["type"] for e in effects] == [
        "secure_store_write", "websocket_connect", "haptic", "register_push_notifications", "storage_write",
    ]
    assert without_effect_id(effects[0]) == {
        "type": "secure_store_write", "key": "jcode.token.devbox.local:7643", "value": TOKEN,
    }
    assert without_effect_id(effects[1]) == {
        "type": "websocket_connect", "url": "ws://devbox.local:7643/ws", "auth_token": TOKEN,
    }
    assert without_effect_id(effects[2]) == {"type": "haptic", "style": "success"}
    assert without_effect_id(effects[4]) == {
        "type": "storage_write", "key": "snapshot",
        "value": {"version": 1, "device": {"device_id": "device-under-test", "device_name": "Test iPhone"},
                  "servers": [{"id": "devbox.local:7643", "name": "jcode", "host": "devbox.local", "port": 7643,
                               "use_tls": False, "server_version": "0.9.2", "working_dir": "/home/me/project",
                               "last_session_id": None}],
                  "selected_server_id": "devbox.local:7643",
                  "composer": {"draft": "", "attachments": [], "next_attachment_id": 1},
                  "outbox": {"messages": [], "next_id": 1}},
    }
    assert TOKEN not in json.dumps(effects[4])

    # websocket_opened: subscribe (id 1) then get_history (id 2), and the keep-alive starts.
    (opened,) = steps_with(host, "websocket_opened")
    assert opened.input["effect_id"] == effects[1]["effect_id"]
    lines = opened.report["effects"]
    assert [e["type"] for e in lines] == ["websocket_send", "websocket_send", "schedule_timer"]
    assert [json.loads(e["line"]) for e in lines[:2]] == [
        {"id": 1, "type": "subscribe", "working_dir": "/home/me/project", "client_instance_id": "device-under-test"},
        {"id": 2, "type": "get_history"},
    ]
    assert without_effect_id(lines[2]) == {
        "type": "schedule_timer", "timer_id": "keepalive.1", "after_ms": 20000, "purpose": "keepalive"}

    # Effect ids are unique and increasing across the whole session.
    ids = [e["effect_id"] for e in host.effects]
    assert ids == sorted(set(ids))
    assert host.keychain == {"jcode.token.devbox.local:7643": TOKEN}
    # the last snapshot names the session the server gave this phone
    assert host.storage["snapshot"]["servers"][0]["id"] == "devbox.local:7643"
    assert host.storage["snapshot"]["servers"][0]["last_session_id"] == host.app.state()["session"]["id"]
    assert "servers" not in host.storage  # the old key is gone


def test_connected_chat_shows_the_history():
    host = make_host()
    connect(host)
    state = host.app.state()
    assert state["screen"] == "chat"
    assert state["connection"]["phase"] == "connected"
    assert state["selected_server_id"] == "devbox.local:7643"
    session = state["session"]
    assert session["id"] == "session-fox"
    assert session["title"] is None  # today's history carries no title
    assert session["model"] == "claude-sonnet-4"
    assert session["available_models"] == ["claude-sonnet-4", "claude-opus-4", "gpt-5"]
    assert session["history_loaded"] is True and session["is_processing"] is False
    assert [(m["role"], m["text"]) for m in state["transcript"]] == [(m["role"], m["content"]) for m in HISTORY]
    assert state["banners"] == {"error": None, "status": None}

    tree = host.app.tree()
    # no title from the server: the session is named from its id (this fake's ids have no jcode name in them)
    assert tree["value"] == "chat" and tree["label"] == "session-fox"
    messages = find_node(tree, "chat.messages")["children"]
    assert [(n["id"], n["label"], n["value"]) for n in messages] == [
        ("message." + m["id"], "You" if m["role"] == "user" else "jcode", m["text"]) for m in state["transcript"]
    ]
    assert find_node(tree, "chat.send")["enabled"] is False  # empty draft
    assert find_node(tree, "chat.interrupt")["visible"] is False
    assert find_node(tree, "banner.error")["visible"] is False
    # The server saw exactly the opening requests.
    assert host.server.requests == [
        {"id": 1, "type": "subscribe", "working_dir": "/home/me/project", "client_instance_id": "device-under-test"},
        {"id": 2, "type": "get_history"},
        {"id": 3, "type": "resume_session", "session_id": "session-fox", "client_instance_id": "device-under-test"},
        {"id": 4, "type": "ping"},  # resume_session brings the history; the ping checks it came
    ]


def stream_reply_step_by_step(host: Host):
    """Send a message with frames held, then deliver them one at a time,
    checking the transcript after each; returns the delivered events."""
    host.hold_frames = True
    report = host.dispatch({"type": "send_message", "text": "Run the tests"})
    send, persist = report["effects"]
    assert without_effect_id(send) == {
        "type": "websocket_send", "line": json.dumps({"id": 5, "type": "message", "content": "Run the tests"}, separators=(",", ":"))}
    assert json.loads(send["line"]) == {"id": 5, "type": "message", "content": "Run the tests"}
    # the message stays in the outbox until the server acknowledges it: persisted as unconfirmed
    assert (persist["type"], persist["key"]) == ("storage_write", "snapshot")
    assert persist["value"]["outbox"] == {"messages": [{
        "id": "o1", "text": "Run the tests", "attachments": [], "delivery": "unconfirmed",
        "sent": {"session_id": "session-fox", "user_rows_before": 1}}], "next_id": 2}
    assert [(m["id"], m["delivery"]) for m in host.app.state()["outbox"]] == [("o1", "awaiting_ack")]
    state = host.app.state()
    assert state["transcript"][-1]["role"] == "user" and state["transcript"][-1]["text"] == "Run the tests"
    assert state["session"]["is_processing"] is True
    tree = host.app.tree()
    assert find_node(tree, "chat.interrupt")["visible"] is True
    assert find_node(tree, "chat.activity")["visible"] is True

    delivered = []
    text = ""
    while host.deliver_next():
        step = host.steps[-1]
        assert step.input["type"] == "websocket_event"
        delivered.append(step.input)
        state = host.app.state()
        last = state["transcript"][-1]
        events = [step.input["event"]] if "event" in step.input else [json.loads(l) for l in step.input["line"].split("\n")]
        if any(e["type"] == "done" for e in events):
            # its turn ended: the message leaves the outbox, and the snapshot says so
            (persist,) = step.report["effects"]
            assert (persist["type"], persist["key"]) == ("storage_write", "snapshot")
            assert persist["value"]["outbox"] == {"messages": [], "next_id": 2}
            assert state["outbox"] == []
        else:
            # acknowledged means received: it stays (the snapshot already says unconfirmed)
            assert step.report["effects"] == []
            if any(e["type"] == "ack" for e in events):
                assert [m["delivery"] for m in state["outbox"]] == ["received"]
        text += "".join(e["text"] for e in events if e["type"] == "text_delta")
        kinds = {e["type"] for e in events}
        if "done" in kinds:
            assert last["is_streaming"] is False
            assert state["session"]["is_processing"] is False
        elif kinds == {"ack"}:
            # The server acknowledged the message; nothing streamed yet.
            assert last["role"] == "user" and state["session"]["is_processing"] is True
            continue
        elif "message_end" in kinds:
            # The provider finished the visible message; the turn is still open.
            assert last["role"] == "assistant" and last["is_streaming"] is False
            assert state["session"]["is_processing"] is True
        else:
            assert last["role"] == "assistant" and last["is_streaming"] is True
            assert state["session"]["is_processing"] is True
            node = find_node(host.app.tree(), "message." + last["id"])
            assert (node["label"], node["variant"]) == ("jcode", "typing")
        assert last["text"] == text
    return delivered


def final_conversation(host: Host):
    return [(m["role"], m["text"], m["is_streaming"]) for m in host.app.state()["transcript"]]


EXPECTED_CONVERSATION = [
    ("user", HISTORY[0]["content"], False),
    ("assistant", HISTORY[1]["content"], False),
    ("user", "Run the tests", False),
    ("assistant", "All 42 tests pass now.", False),
]


def test_streamed_reply_parsed_events():
    host = make_host()
    connect(host)
    delivered = stream_reply_step_by_step(host)
    # Today's jcode acks the message, and ends the provider's message before the turn.
    assert [e["event"]["type"] for e in delivered] == ["ack"] + ["text_delta"] * 4 + ["message_end", "done"]
    assert delivered[-1]["event"] == {"type": "done", "id": 5}
    assert all(e["effect_id"] == host.socket_id for e in delivered)
    assert final_conversation(host) == EXPECTED_CONVERSATION
    tree = host.app.tree()
    last = host.app.state()["transcript"][-1]
    assert find_node(tree, "message." + last["id"])["label"] == "jcode"
    assert find_node(tree, "chat.activity")["visible"] is False
    assert host.server.requests[-1] == {"id": 5, "type": "message", "content": "Run the tests"}


def test_streamed_reply_raw_lines_one_event_per_frame():
    host = make_host(delivery="raw")
    connect(host)
    assert host.app.state()["screen"] == "chat"  # subscribe/history also went through raw frames
    assert all("line" in s.input for s in steps_with(host, "websocket_event"))
    delivered = stream_reply_step_by_step(host)
    assert len(delivered) == 7 and all("\n" not in e["line"] for e in delivered)
    assert final_conversation(host) == EXPECTED_CONVERSATION


def test_streamed_reply_raw_frames_with_several_events():
    host = make_host(delivery="raw", frame_events=3)
    connect(host)
    delivered = stream_reply_step_by_step(host)
    # 7 events (ack, 4 deltas, message_end, done) in frames of 3.
    assert [len(e["line"].split("\n")) for e in delivered] == [3, 3, 1]
    assert final_conversation(host) == EXPECTED_CONVERSATION


def test_one_raw_frame_applies_every_event_and_skips_a_malformed_line():
    host = make_host()
    connect(host)
    host.hold_frames = True
    host.dispatch({"type": "send_message", "text": "hi"})
    host.inbox.clear()  # the test plays the server by hand
    frame = "\n".join([
        json.dumps({"type": "text_delta", "text": "Hel"}),
        "",
        "{not json",
        json.dumps({"type": "no_such_event", "x": 1}),
        json.dumps({"type": "text_delta", "text": "lo"}),
        json.dumps({"type": "done", "id": 5}),
    ])
    before = host.app.revision
    report = host.app.platform_event({"type": "websocket_event", "effect_id": host.socket_id, "line": frame})
    assert report["ok"] is True and report["revision"] > before
    state = host.app.state()
    assert state["transcript"][-1]["text"] == "Hello"
    assert state["transcript"][-1]["is_streaming"] is False
    assert state["session"]["is_processing"] is False
    notes = host.app.logs(1)["entries"][0]["notes"]
    assert any("line 3" in n for n in notes), notes  # the malformed line is logged by number
    assert any("no_such_event" in n for n in notes), notes


def test_frames_from_a_replaced_socket_are_ignored():
    host = make_host()
    connect(host)
    old = host.socket_id
    before = host.app.state()
    report = host.app.platform_event(
        {"type": "websocket_event", "effect_id": old + 1000, "event": {"type": "text_delta", "text": "ghost"}})
    assert report["effects"] == []
    assert host.app.state() == before


def test_reconnect_after_a_drop_resumes_the_session():
    host = make_host()
    connect(host)
    mark = host.mark()
    host.drop_connection(code=1006, reason="network lost")
    state = host.app.state()
    assert state["connection"]["phase"] == "reconnecting"
    assert state["connection"]["attempt"] == 1
    (timer,) = host.effects_of("schedule_timer", mark)
    assert without_effect_id(timer) == {"type": "schedule_timer", "timer_id": timer["timer_id"], "after_ms": 1000, "purpose": "reconnect"}
    assert list(host.timers) == [timer["timer_id"]]
    assert find_node(host.app.tree(), "connection.retry")["visible"] is True

    mark = host.mark()
    assert host.fire_timers() == [timer["timer_id"]]
    (connect_effect,) = host.effects_of("websocket_connect", mark)
    assert connect_effect["url"] == "ws://devbox.local:7643/ws" and connect_effect["auth_token"] == TOKEN
    assert host.sent_requests(mark) == [
        {"id": 1, "type": "subscribe", "working_dir": "/home/me/project", "target_session_id": "session-fox",
         "client_instance_id": "device-under-test"},
        {"id": 2, "type": "ping"},  # the subscribe brings the history; the pong checks it came
    ]
    state = host.app.state()
    assert state["connection"]["phase"] == "connected" and state["connection"]["attempt"] == 0
    assert [(m["role"], m["text"]) for m in state["transcript"]] == [(m["role"], m["content"]) for m in HISTORY]


def test_message_sent_while_offline_waits_in_the_outbox():
    host = make_host()
    connect(host)
    host.app.platform_event({"type": "network_reachability_changed", "reachable": False})
    host.drop_connection()
    assert host.app.state()["connection"]["phase"] == "offline"
    mark = host.mark()
    host.dispatch({"type": "send_message", "text": "later"})
    assert host.effects_of("websocket_send", mark) == []
    state = host.app.state()
    assert [m["text"] for m in state["outbox"]] == ["later"]
    assert find_node(host.app.tree(), "outbox." + state["outbox"][0]["id"])["variant"] == "waiting"

    host.platform_event({"type": "network_reachability_changed", "reachable": True})
    state = host.app.state()
    assert state["connection"]["phase"] == "connected"
    assert state["outbox"] == []
    assert [r["type"] for r in host.sent_requests(mark)] == ["subscribe", "ping", "message"]
    assert host.sent_requests(mark)[-1]["content"] == "later"
    assert state["transcript"][-1]["role"] == "assistant" and state["transcript"][-1]["is_streaming"] is False


def test_reply_with_reasoning_and_a_tool_call():
    reply = Reply(
        text="Fixed.", reasoning="Look at the test first.", reasoning_secs=2.5,
        tools=[{"id": "call_1", "name": "bash", "input": '{"command":"make test"}', "output": "", "error": "exit 2"}],
    )
    server = FakeJcodeServer(replies=[reply])
    host = Host(server=server)
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    host.dispatch({"type": "send_message", "text": "fix it"})
    transcript = host.app.state()["transcript"]
    tool_entry, text_entry = transcript[-2], transcript[-1]
    assert tool_entry["reasoning"] == "Look at the test first." and tool_entry["reasoning_secs"] == 2.5
    (call,) = tool_entry["tool_calls"]
    assert (call["id"], call["name"], call["input"], call["status"], call["error"]) == (
        "call_1", "bash", '{"command":"make test"}', "failed", "exit 2")
    assert text_entry["text"] == "Fixed."
    tree = host.app.tree()
    card = find_node(tree, f"tool.{tool_entry['id']}.call_1")  # tool card ids are scoped by message
    assert (card["role"], card["label"], card["value"]) == ("tool_call", "bash", "Failed")
    assert find_node(tree, f"tool.{tool_entry['id']}.call_1.error")["value"] == "exit 2"
    assert find_node(tree, f"message.{tool_entry['id']}.reasoning")["label"] == "Thought for 2.5 s"


def test_a_turn_that_ends_in_the_background_shows_one_local_notification_and_opening_it_lands_in_its_chat():
    host = make_host()
    connect(host)
    session = host.server.main_session
    host.hold_frames = True  # the reply arrives after the app left the screen
    host.dispatch({"type": "send_message", "text": "Run the tests"})
    host.dispatch({"type": "navigate", "screen": "sessions"})
    host.platform_event({"type": "app_background"})
    host.deliver_all()
    assert host.app.state()["session"]["is_processing"] is False
    assert host.notifications == [{"title": "jcode", "body": "The agent finished", "session_id": session}]
    (shown,) = [without_effect_id(e) for e in host.effects if e["type"] == "show_local_notification"]
    assert shown == {"type": "show_local_notification", "title": "jcode", "body": "The agent finished", "session_id": session}

    host.platform_event({"type": "app_foreground"})
    host.deliver_all()
    host.platform_event(notification_opened(host.notifications[0]))
    assert host.app.state()["screen"] == "chat"
    assert host.app.state()["session"]["id"] == session
    assert [e["type"] for e in host.effects].count("show_local_notification") == 1, "none in the foreground"


def test_a_turn_that_ends_in_the_foreground_shows_no_notification():
    host = make_host()
    connect(host)
    host.dispatch({"type": "send_message", "text": "Run the tests"})
    assert host.app.state()["session"]["is_processing"] is False
    assert host.notifications == []
