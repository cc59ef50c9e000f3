"""The rules of today's jcode server that FakeJcodeServer keeps, one test per
rule, driven on the fake directly (open_socket, send lines, read answers).

The jcode source each rule comes from is cited next to the rule in
jcode_mobile/fake_gateway.py. Everything here is in memory: no sockets, no
threads, no loops without a bound.
"""

import json

import pytest

from jcode_mobile.fake_gateway import (
    DEFAULT_HISTORY, DEFAULT_PORT, REQUEST_TYPES, FakeJcodeServer, Host, Reply, SocketRejected, compacted_rows,
    guardrail_notice,
)
from jcode_mobile.gateway import load_script

URL = "ws://devbox.local:7643/ws"
TOKEN = "fixture-token"
WORKDIR = "/home/dev/app"
FRESH = "session_otter_1700000000001_0000000000000001"  # the first brand-new session
FRESH2 = "session_heron_1700000000002_0000000000000002"
ALL_TYPES = ", ".join(f"`{name}`" for name in REQUEST_TYPES)


def line(**request) -> str:
    return json.dumps(request, separators=(",", ":"))


def subscribed(server: FakeJcodeServer, **extra):
    socket = server.open_socket(URL, TOKEN)
    answers = socket.send(line(id=1, type="subscribe", working_dir=WORKDIR, **extra))
    assert answers[0] == {"type": "ack", "id": 1} and answers[-1] == {"type": "done", "id": 1}
    return socket


# -- rule 1: the first request is a subscribe with an absolute working_dir ------------------------


def test_first_subscribe_without_working_dir_gets_one_error_and_the_connection_ends():
    server = FakeJcodeServer()
    socket = server.open_socket(URL, TOKEN)
    assert socket.send(line(id=1, type="subscribe")) == [
        {"type": "error", "id": 1, "message": "Subscribe requires the client's working directory"},
    ]
    assert socket.server_closed is True
    assert socket.send(line(id=2, type="get_history")) == []  # nobody reads any more
    assert socket.lost == [line(id=2, type="get_history")]
    assert server.subscribes == [
        {"working_dir": None, "client_instance_id": None, "target_session_id": None,
         "error": "Subscribe requires the client's working directory"},
    ]


def test_first_subscribe_with_blank_or_relative_working_dir_ends_the_connection():
    server = FakeJcodeServer()
    blank = server.open_socket(URL, TOKEN)
    assert blank.send(line(id=4, type="subscribe", working_dir="   ")) == [
        {"type": "error", "id": 4, "message": "Subscribe requires the client's working directory"},
    ]
    relative = server.open_socket(URL, TOKEN)
    assert relative.send(line(id=7, type="subscribe", working_dir="src/app")) == [
        {"type": "error", "id": 7, "message": "Subscribe working_dir must be an absolute path"},
    ]
    assert blank.server_closed and relative.server_closed


def test_first_request_other_than_subscribe_ends_the_connection():
    server = FakeJcodeServer()
    socket = server.open_socket(URL, TOKEN)
    assert socket.send(line(id=5, type="get_history")) == [
        {"type": "error", "id": 5,
         "message": "Client must Subscribe with a working_dir before sending stateful requests"},
    ]
    assert socket.server_closed is True
    pinged = server.open_socket(URL, TOKEN)  # a first ping is answered, then the connection ends too
    assert pinged.send(line(id=1, type="ping")) == [{"type": "pong", "id": 1}]
    assert pinged.server_closed is True


def test_later_subscribe_without_working_dir_gets_an_error_and_the_connection_stays():
    server = FakeJcodeServer()
    socket = subscribed(server)
    assert socket.send(line(id=2, type="subscribe", working_dir="relative")) == [
        {"type": "ack", "id": 2},
        {"type": "error", "id": 2, "message": "Subscribe working_dir must be an absolute path"},
    ]
    assert socket.server_closed is False
    assert socket.send(line(id=3, type="ping")) == [{"type": "ack", "id": 3}, {"type": "pong", "id": 3}]


class ScriptedApp:
    """Stands in for the core: answers websocket_opened with two sends."""

    def __init__(self, lines):
        self.lines = lines
        self.events = []

    def dispatch(self, action):
        return {"effects": [{"effect_id": 1, "type": "websocket_connect", "url": URL, "auth_token": TOKEN}]}

    def platform_event(self, event):
        self.events.append(event)
        if event["type"] == "websocket_opened":
            return {"effects": [{"effect_id": 2 + i, "type": "websocket_send", "line": l}
                                for i, l in enumerate(self.lines)]}
        return {"effects": []}


def test_host_sees_the_socket_closed_after_the_error_frame():
    app = ScriptedApp([line(id=1, type="subscribe"), line(id=2, type="get_history")])
    host = Host(app, FakeJcodeServer())
    host.dispatch({"type": "connect"})
    assert app.events == [
        {"type": "websocket_opened", "effect_id": 1},
        {"type": "websocket_event", "effect_id": 1,
         "event": {"type": "error", "id": 1, "message": "Subscribe requires the client's working directory"}},
        {"type": "websocket_closed", "effect_id": 1, "code": 1006, "reason": "connection closed by the server"},
    ]
    assert host.socket_id is None and host.sockets == {}


# -- rule 2: subscribe, resume_session and clear ---------------------------------------------------


def test_valid_subscribe_answers_ack_session_done_and_is_recorded():
    server = FakeJcodeServer()
    socket = server.open_socket(URL, TOKEN)
    assert socket.send(line(id=1, type="subscribe", working_dir=" /home/dev/app ", client_instance_id="ios-1")) == [
        {"type": "ack", "id": 1}, {"type": "session", "session_id": FRESH}, {"type": "done", "id": 1},
    ]
    assert server.subscribes == [
        {"working_dir": " /home/dev/app ", "client_instance_id": "ios-1", "target_session_id": None, "error": None},
    ]
    assert (socket.working_dir, socket.client_instance_id, socket.session_id) == (WORKDIR, "ios-1", FRESH)


def test_subscribe_to_an_existing_session_sends_its_history_then_session():
    server = FakeJcodeServer()
    socket = server.open_socket(URL, TOKEN)
    answers = socket.send(line(id=1, type="subscribe", working_dir=WORKDIR, target_session_id="session-fox"))
    assert [a["type"] for a in answers] == ["ack", "history", "done", "session", "done"]
    assert answers[1]["id"] == 1 and answers[1]["session_id"] == "session-fox"
    assert answers[1]["messages"] == DEFAULT_HISTORY
    assert answers[3] == {"type": "session", "session_id": "session-fox"}
    assert FRESH not in server.sessions  # the unused brand-new session is gone


def test_resume_session_answers_history_then_done():
    server = FakeJcodeServer()
    socket = subscribed(server)
    ack, history, done = socket.send(line(id=2, type="resume_session", session_id="session-owl",
                                          client_instance_id="ios-1"))
    assert ack == {"type": "ack", "id": 2} and done == {"type": "done", "id": 2}
    assert history == {
        "type": "history", "id": 2, "session_id": "session-owl", "messages": [],
        "provider_name": "anthropic", "provider_model": "claude-sonnet-4",
        "available_models": ["claude-sonnet-4", "claude-opus-4", "gpt-5"],
        "all_sessions": ["session-fox", "session-owl"], "client_count": 1, "is_canary": False,
        "server_version": "0.9.2", "server_name": "devbox", "server_icon": "🔥", "server_has_update": False,
        "was_interrupted": False, "reasoning_effort": "medium", "compaction_mode": "reactive",
    }
    assert socket.send(line(id=3, type="resume_session", session_id="session-nope")) == [
        {"type": "ack", "id": 3},
        {"type": "error", "id": 3, "message": "Failed to restore session: No such file or directory (os error 2)"},
    ]


def test_clear_answers_a_new_session_then_done():
    server = FakeJcodeServer()
    socket = subscribed(server, target_session_id="session-fox")
    assert socket.send(line(id=2, type="clear")) == [
        {"type": "ack", "id": 2}, {"type": "session", "session_id": FRESH2}, {"type": "done", "id": 2},
    ]
    assert server.sessions["session-fox"]["messages"] == DEFAULT_HISTORY  # the old one can be resumed
    assert server.sessions[FRESH2]["working_dir"] == WORKDIR


# -- rule 3: the WebSocket upgrade --------------------------------------------------------------------


def test_upgrade_with_unknown_or_revoked_token_is_refused_with_401_before_the_socket_opens():
    server = FakeJcodeServer(token="a" * 64, accepted_tokens=())
    refusals = []
    for token in ("b" * 64, "not-hex", ""):
        with pytest.raises(SocketRejected) as info:
            server.open_socket(URL, token)
        refusals.append((info.value.status, str(info.value)))
    with pytest.raises(SocketRejected) as info:
        server.open_socket(URL)
    refusals.append((info.value.status, str(info.value)))
    assert refusals == [
        (401, "Unknown or revoked auth token; re-pair this device"),
        (401, "Malformed auth token"),
        (401, "Authorization must be 'Bearer <token>'"),
        (401, "Missing Authorization header or token query parameter"),
    ]
    server.pair("devbox.local", 7643, False, {"code": "123456", "device_id": "d1", "device_name": "Phone"})
    assert server.open_socket(URL, "a" * 64).open
    server.revoke_device("d1")
    with pytest.raises(SocketRejected) as info:
        server.open_socket(URL, "a" * 64)
    assert (info.value.status, str(info.value)) == (401, "Unknown or revoked auth token; re-pair this device")
    assert len(server.sockets) == 1  # refused upgrades never made a socket


def test_upgrade_path_must_be_ws():
    server = FakeJcodeServer()
    with pytest.raises(SocketRejected) as info:
        server.open_socket("ws://devbox.local:7643/socket", TOKEN)
    assert (info.value.status, str(info.value)) == (404, "WebSocket endpoint not found")
    with pytest.raises(SocketRejected) as info:  # 404 comes before the token is looked at
        server.open_socket("ws://devbox.local:7643/", "unknown")
    assert info.value.status == 404
    assert server.open_socket("ws://devbox.local:7643/ws?token=fixture-token").open  # token in the query


# -- rule 4: session_close_requested ------------------------------------------------------------------


def test_session_close_requested_is_pushed_and_the_socket_stays_open():
    server = FakeJcodeServer()
    socket = subscribed(server)
    event = server.request_session_close("Stopped by coordinator session-owl")
    assert event == {"type": "session_close_requested", "reason": "Stopped by coordinator session-owl"}
    assert socket.take_pushed() == [event]
    assert socket.server_closed is False and socket.open is True
    assert socket.send(line(id=2, type="ping")) == [{"type": "ack", "id": 2}, {"type": "pong", "id": 2}]


def test_host_delivers_pushed_events_as_frames_on_the_open_socket():
    app = ScriptedApp([line(id=1, type="subscribe", working_dir=WORKDIR)])
    host = Host(app, FakeJcodeServer())
    host.dispatch({"type": "connect"})
    host.server.request_session_close("Idle spawned worker reaped after 600s of inactivity")
    host.run()
    assert [e.get("event", {}).get("type") for e in app.events] == [None, "ack", "session", "done",
                                                                     "session_close_requested"]
    assert host.socket_id == 1 and host.sockets[1].open


# -- rule 5: history rows ---------------------------------------------------------------------------


def test_history_rows_are_rendered_like_the_real_server():
    server = FakeJcodeServer()
    socket = subscribed(server)
    _, history, _ = socket.send(line(id=2, type="resume_session", session_id="session-fox"))
    assert [m["role"] for m in history["messages"]] == [
        "user", "assistant", "tool", "assistant", "tool", "tool", "background_task", "assistant",
    ]
    assert history["messages"][1] == {"role": "assistant", "content": "I'll run it a few times to reproduce it.",
                                      "tool_calls": ["bash"]}
    assert history["messages"][5] == {
        "role": "tool", "content": "def session_cookie(jar=SHARED_JAR):\n    return jar.get('session')",
        "tool_data": {"id": "toolu_03", "name": "read", "input": {"file_path": "tests/conftest.py"}},
    }
    assert history["messages"][6]["content"].startswith("**Background task** `bg-7f2c` · `bash` · ✓ completed")
    assert history["total_tokens"] == [18234, 1290]
    assert history["token_usage_totals"] == {
        "messages_with_token_usage": 3, "input_tokens": 18234, "output_tokens": 1290,
        "cache_reported_input_tokens": 18234, "cache_read_input_tokens": 12288, "cache_creation_input_tokens": 2048,
    }
    assert history["was_interrupted"] is False and "images" not in history


def test_a_turn_leaves_tool_rows_images_and_token_totals():
    server = FakeJcodeServer(replies=[Reply(
        preamble="Running the tests.", text="All green.", stop_reason="end_turn", tokens=(100, 20),
        cache_read_input=64, tools=[{"id": "toolu_9", "name": "bash", "input": '{"command":"make test","intent":'
                                     '"Run the suite"}', "output": "42 passed"}],
    )])
    server.sessions["session-owl"]["was_interrupted"] = True
    socket = subscribed(server, target_session_id="session-owl")
    socket.send(line(id=2, type="message", content="Run the tests", images=[["image/png", "iVBORw0KGgo="]]))
    _, history, _ = socket.send(line(id=3, type="resume_session", session_id="session-owl"))
    assert history["messages"] == [
        {"role": "user", "content": "Run the tests"},
        {"role": "assistant", "content": "Running the tests.", "tool_calls": ["bash"]},
        {"role": "tool", "content": "42 passed", "tool_data": {
            "id": "toolu_9", "name": "bash", "input": {"command": "make test", "intent": "Run the suite"},
            "intent": "Run the suite"}},
        {"role": "assistant", "content": "All green."},
    ]
    assert history["images"] == [{"media_type": "image/png", "data": "iVBORw0KGgo=", "label": None,
                                  "source": {"kind": "user_input"}, "anchor": {"kind": "user_prompt", "ordinal": 0}}]
    assert history["total_tokens"] == [100, 20]
    assert history["token_usage_totals"]["cache_read_input_tokens"] == 64
    assert history["was_interrupted"] is False  # reported once, by the subscribe's resume


# -- rule 6: unknown request types ------------------------------------------------------------------


def test_unknown_request_type_is_an_invalid_request_with_id_0_and_the_connection_stays():
    server = FakeJcodeServer()
    socket = server.open_socket(URL, TOKEN)
    first = '{"type":"hello","id":1}'  # before subscribe too: answered, the connection stays
    assert socket.send(first) == [{"type": "error", "id": 0, "message":
                                   f"Invalid request: unknown variant `hello`, expected one of {ALL_TYPES} "
                                   "at line 1 column 15"}]
    assert socket.server_closed is False
    socket.send(line(id=1, type="subscribe", working_dir=WORKDIR))
    permission = '{"id":7,"type":"permission_response","request_id":"perm-1","allow":true}'
    assert socket.send(permission) == [{"type": "error", "id": 0, "message":
                                        f"Invalid request: unknown variant `permission_response`, expected one of "
                                        f"{ALL_TYPES} at line 1 column 36"}]
    assert socket.send(line(id=8, type="message")) == [
        {"type": "error", "id": 0, "message": "Invalid request: missing field `content`"},
    ]
    assert socket.send(line(id=9, type="ping")) == [{"type": "ack", "id": 9}, {"type": "pong", "id": 9}]
    assert "permission_response" not in REQUEST_TYPES and len(REQUEST_TYPES) == 77


# -- rule 7: message, errors, cancel, soft interrupts -------------------------------------------------


def test_message_while_idle_streams_the_reply_and_ends_with_done_of_its_id():
    server = FakeJcodeServer(replies=[Reply(text="Hello there", chunks=["Hello ", "there"])])
    socket = subscribed(server)
    assert socket.send(line(id=4, type="message", content="hi")) == [
        {"type": "ack", "id": 4},
        {"type": "text_delta", "text": "Hello "},
        {"type": "text_delta", "text": "there"},
        {"type": "message_end", "stop_reason": "end_turn"},
        {"type": "done", "id": 4},
    ]


def test_an_error_about_a_request_carries_its_id():
    server = FakeJcodeServer(replies=[Reply(text="slow", hold_after=0)])
    socket = subscribed(server)
    assert socket.send(line(id=4, type="message", content="first")) == [{"type": "ack", "id": 4}]
    assert socket.send(line(id=5, type="message", content="second")) == [
        {"type": "ack", "id": 5}, {"type": "error", "id": 5, "message": "Already processing a message"},
    ]
    assert socket.send(line(id=6, type="clear")) == [
        {"type": "ack", "id": 6},
        {"type": "error", "id": 6, "retry_after_secs": 1, "message":
         "Cannot handle clear while the session is busy. Try again after the current turn finishes."},
    ]


def test_cancel_answers_interrupted_then_done_with_the_running_message_id():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    socket = subscribed(server)
    assert socket.send(line(id=4, type="message", content="count")) == [
        {"type": "ack", "id": 4}, {"type": "text_delta", "text": "one two "},
    ]
    assert socket.send(line(id=5, type="cancel")) == [
        {"type": "ack", "id": 5}, {"type": "interrupted"}, {"type": "done", "id": 4},
    ]
    assert socket.send(line(id=6, type="cancel")) == [{"type": "ack", "id": 6}, {"type": "interrupted"}]
    with pytest.raises(RuntimeError):
        server.finish_turn(socket)


def test_soft_interrupt_is_injected_after_the_tools_ran():
    tool = {"id": "toolu_1", "name": "bash", "input": '{"command":"ls"}', "output": "README.md"}
    server = FakeJcodeServer(replies=[Reply(text="Done.", chunks=["Done."], tools=[tool], hold_after=4)])
    socket = subscribed(server)
    assert socket.send(line(id=4, type="message", content="list")) == [
        {"type": "ack", "id": 4},
        {"type": "tool_start", "id": "toolu_1", "name": "bash"},
        {"type": "tool_input", "delta": '{"command":"ls"}'},
        {"type": "tool_exec", "id": "toolu_1", "name": "bash"},
        {"type": "message_end", "stop_reason": "tool_use"},
    ]
    assert socket.send(line(id=5, type="soft_interrupt", content="also show hidden files",
                            images=[], urgent=False)) == [{"type": "ack", "id": 5}, {"type": "ack", "id": 5}]
    assert server.finish_turn() == [
        {"type": "tool_done", "id": "toolu_1", "name": "bash", "output": "README.md"},
        {"type": "soft_interrupt_injected", "content": "also show hidden files", "point": "D"},
        {"type": "text_delta", "text": "Done."},
        {"type": "message_end", "stop_reason": "end_turn"},
        {"type": "done", "id": 4},
    ]
    assert socket.take_pushed()[1]["point"] == "D"
    _, history = socket.send(line(id=6, type="get_history"))
    assert [m["role"] for m in history["messages"]] == ["user", "tool", "user", "assistant"]


def test_urgent_soft_interrupt_skips_the_remaining_tools():
    tools = [{"id": f"toolu_{n}", "name": "bash", "input": "{}", "output": f"out {n}"} for n in (1, 2, 3)]
    server = FakeJcodeServer(replies=[Reply(text="Stopped.", chunks=["Stopped."], tools=tools, hold_after=10)])
    socket = subscribed(server)
    sent = socket.send(line(id=4, type="message", content="run three"))
    assert sent[-1] == {"type": "message_end", "stop_reason": "tool_use"}  # the 3 calls streamed, none ran yet
    socket.send(line(id=5, type="soft_interrupt", content="stop", urgent=True))
    assert server.finish_turn(socket) == [
        {"type": "tool_done", "id": "toolu_1", "name": "bash", "output": "out 1"},
        {"type": "soft_interrupt_injected", "content": "stop", "point": "C", "tools_skipped": 2},
        {"type": "text_delta", "text": "Stopped."},
        {"type": "message_end", "stop_reason": "end_turn"},
        {"type": "done", "id": 4},
    ]


def test_soft_interrupts_after_a_reply_without_tools_are_joined_and_answered():
    server = FakeJcodeServer(replies=[Reply(text="First.", chunks=["First."], hold_after=0),
                                      Reply(text="Second.", chunks=["Second."])])
    socket = subscribed(server)
    socket.send(line(id=4, type="message", content="go"))
    socket.send(line(id=5, type="soft_interrupt", content="and this"))
    socket.send(line(id=6, type="soft_interrupt", content="and that"))
    server.queue_soft_interrupt(socket.session_id, "bg-1 finished", source="background_task")
    assert server.finish_turn() == [
        {"type": "text_delta", "text": "First."},
        {"type": "message_end", "stop_reason": "end_turn"},
        {"type": "soft_interrupt_injected", "content": "and this\n\nand that", "point": "B"},
        {"type": "soft_interrupt_injected", "content": "bg-1 finished", "display_role": "background_task",
         "point": "B"},
        {"type": "text_delta", "text": "Second."},
        {"type": "message_end", "stop_reason": "end_turn"},
        {"type": "done", "id": 4},
    ]
    _, history = socket.send(line(id=7, type="get_history"))
    assert [(m["role"], m["content"]) for m in history["messages"]] == [
        ("user", "go"), ("assistant", "First."), ("user", "and this\n\nand that"),
        ("background_task", "bg-1 finished"), ("assistant", "Second."),
    ]


# -- rule 8: tokens, stop_reason, provider_guardrail, notification -------------------------------------


def test_tokens_carry_cache_fields_and_message_end_carries_the_stop_reason():
    reply = Reply(text="cut", chunks=["cut"], stop_reason="max_tokens", tokens=(1200, 4096),
                  cache_read_input=1024, cache_creation_input=128)
    assert reply.events(3) == [
        {"type": "text_delta", "text": "cut"},
        {"type": "message_end", "stop_reason": "max_tokens"},
        {"type": "tokens", "input": 1200, "output": 4096, "cache_read_input": 1024, "cache_creation_input": 128},
        {"type": "done", "id": 3},
    ]
    assert Reply(text="x", chunks=["x"], stop_reason=None).events(1) == [
        {"type": "text_delta", "text": "x"}, {"type": "message_end"}, {"type": "done", "id": 1},
    ]


def test_provider_guardrail_ends_a_turn_without_text():
    server = FakeJcodeServer(replies=[Reply.refusal()])
    socket = subscribed(server)
    notice = ("Provider guardrail stopped the response (stop_reason: refusal). The model declined to answer this "
              "request. Rephrasing, narrowing the request, or providing more context may help.")
    assert guardrail_notice("refusal") == notice
    assert socket.send(line(id=4, type="message", content="?")) == [
        {"type": "ack", "id": 4},
        {"type": "message_end", "stop_reason": "refusal"},
        {"type": "provider_guardrail", "stop_reason": "refusal", "message": notice},
        {"type": "done", "id": 4},
    ]


def test_notification_has_from_session_kind_and_message():
    server = FakeJcodeServer()
    socket = subscribed(server)
    server.notify("fox edited src/app.py", from_session="session-fox", from_name="fox", kind="file_conflict",
                  path="src/app.py", operation="edited")
    assert socket.take_pushed() == [{
        "type": "notification", "from_session": "session-fox", "from_name": "fox",
        "notification_type": {"kind": "file_conflict", "path": "src/app.py", "operation": "edited"},
        "message": "fox edited src/app.py",
    }]
    with pytest.raises(ValueError):
        server.notification_event("x", kind="shared_context", key="k")  # a shared_context needs a value


# -- rule 9: pairing, health, the port ----------------------------------------------------------------


def test_pairing_health_and_the_default_port():
    server = FakeJcodeServer(token="t-first")
    assert DEFAULT_PORT == 7643
    body = {"code": "123456", "device_id": "dev-1", "device_name": "Phone", "apns_token": None}
    answers = [
        server.pair("devbox.local", 7643, False, dict(body, code="999999")),
        server.pair("devbox.local", 7643, False, '{"code": "123456", '),
        server.pair("devbox.local", 7643, False, '{"code":123456,"device_id":"d","device_name":"n"}'),
        server.pair("devbox.local", 7643, False, body),
        server.pair("devbox.local", 7643, False, body),  # the code was used
        server.health("devbox.local", 7643),
        server.http("GET", "devbox.local", 7643, "/nowhere"),
    ]
    # serde_json's wording of a syntax error is only approximated: check the status and the prefix
    assert answers[1].status == 400 and answers[1].body["error"].startswith("Invalid JSON: ")
    answers[1].body = {}
    assert [(a.status, a.body) for a in answers] == [
        (401, {"error": "Invalid or expired pairing code"}),
        (400, {}),
        (400, {"error": "Invalid JSON: invalid type: integer `123456`, expected a string at line 1 column 14"}),
        (200, {"token": "t-first", "server_name": "jcode", "server_version": "0.9.2"}),
        (401, {"error": "Invalid or expired pairing code"}),
        (200, {"status": "ok", "version": "0.9.2", "gateway": True}),
        (404, {"error": "Not found"}),
    ]
    server.pair_codes.add("222222")  # a new code from `jcode pair`; the same device pairs again
    again = server.pair("devbox.local", 7643, False, dict(body, code="222222"))
    assert again.status == 200 and len(again.body["token"]) == 64 and again.body["token"] != "t-first"
    assert server.valid_tokens == {"fixture-token", again.body["token"]}  # the old token was revoked


# -- rules of a session as today's jcode lives it (issue 24) ----------------------------------------------
#
# Each rule has a switch a test over real sockets can pull too: the control endpoint's
# foreign_turn / finish_foreign_turn, set_rules {reload_starting}, compact_session, and the
# script keys compacted / images / image_heavy (see jcode_mobile.gateway).

END_TURN = {"type": "message_end", "stop_reason": "end_turn"}


def test_a_turn_another_client_started_streams_to_the_phone_and_ends_with_that_clients_done_id():
    server = FakeJcodeServer()
    phone = subscribed(server, target_session_id="session-fox")
    elsewhere = subscribed(server)  # a connection on another session sees none of it
    assert server.start_foreign_turn(Reply(text="All green.", chunks=["All green."]), content="Run the tests",
                                     session_id="session-fox", request_id=41) == [
        {"type": "text_delta", "text": "All green."}, END_TURN, {"type": "done", "id": 41},
    ]
    assert phone.take_pushed() == [
        {"type": "text_delta", "text": "All green."}, END_TURN, {"type": "done", "id": 41},
    ]
    assert elsewhere.take_pushed() == []
    assert server.sessions["session-fox"]["messages"][-2:] == [
        {"role": "user", "content": "Run the tests"}, {"role": "assistant", "content": "All green."},
    ]


def test_a_held_foreign_turn_keeps_the_session_busy_until_it_finishes():
    server = FakeJcodeServer()
    phone = subscribed(server, target_session_id="session-fox")
    server.start_foreign_turn(Reply(text="one two three four", hold_after=1), session_id="session-fox", request_id=41)
    assert phone.take_pushed() == [{"type": "text_delta", "text": "one two "}]
    assert server.session_busy("session-fox") is True
    _, history = phone.send(line(id=2, type="get_history"))
    assert history["activity"] == {"is_processing": True}
    assert server.finish_foreign_turn() == [
        {"type": "text_delta", "text": "three four"}, END_TURN, {"type": "done", "id": 41},
    ]
    assert phone.take_pushed() == [
        {"type": "text_delta", "text": "three four"}, END_TURN, {"type": "done", "id": 41},
    ]
    assert server.session_busy("session-fox") is False
    with pytest.raises(RuntimeError):
        server.finish_foreign_turn()


def test_a_message_during_another_clients_turn_waits_for_it_and_holds_the_connections_later_lines():
    server = FakeJcodeServer(replies=[Reply(text="Second.", chunks=["Second."])])
    phone = subscribed(server, target_session_id="session-fox")
    server.start_foreign_turn(Reply(text="First.", chunks=["First."], hold_after=0), session_id="session-fox")
    assert phone.send(line(id=2, type="message", content="And the docs?")) == [{"type": "ack", "id": 2}]
    assert phone.send(line(id=3, type="ping")) == []  # read, not acknowledged: the loop waits
    server.finish_foreign_turn()
    assert phone.take_pushed() == [
        {"type": "text_delta", "text": "First."}, END_TURN, {"type": "done", "id": 41},
        {"type": "text_delta", "text": "Second."}, END_TURN, {"type": "done", "id": 2},
        {"type": "ack", "id": 3}, {"type": "pong", "id": 3},
    ]
    assert server.sessions["session-fox"]["messages"][-4:] == [
        {"role": "user", "content": "Run the test suite"}, {"role": "assistant", "content": "First."},
        {"role": "user", "content": "And the docs?"}, {"role": "assistant", "content": "Second."},
    ]


BUSY_CLEAR = {"type": "error", "id": 3, "retry_after_secs": 1, "message":
              "Cannot handle clear while the session is busy. Try again after the current turn finishes."}
BUSY_RENAME = {"type": "error", "id": 4, "retry_after_secs": 1, "message":
               "Cannot handle rename_session while the session is busy. Try again after the current turn finishes."}


def test_clear_and_rename_are_refused_while_a_turn_runs_in_the_session_whoever_started_it():
    own = FakeJcodeServer(replies=[Reply(text="slow", hold_after=0)])
    phone = subscribed(own, target_session_id="session-fox")
    phone.send(line(id=2, type="message", content="go"))
    assert phone.send(line(id=3, type="clear")) == [{"type": "ack", "id": 3}, BUSY_CLEAR]
    assert phone.send(line(id=4, type="rename_session", title="Flaky login")) == [{"type": "ack", "id": 4}, BUSY_RENAME]
    assert own.sessions["session-fox"]["title"] == "Fix the flaky test"  # nothing changed

    foreign = FakeJcodeServer()
    phone = subscribed(foreign, target_session_id="session-fox")
    foreign.start_foreign_turn(Reply(text="slow", hold_after=0), session_id="session-fox")
    assert phone.send(line(id=3, type="clear")) == [{"type": "ack", "id": 3}, BUSY_CLEAR]
    assert phone.send(line(id=4, type="rename_session", title="Flaky login")) == [{"type": "ack", "id": 4}, BUSY_RENAME]
    foreign.finish_foreign_turn()
    assert phone.send(line(id=5, type="rename_session", title="Flaky login")) == [
        {"type": "ack", "id": 5},
        {"type": "session_renamed", "session_id": "session-fox", "title": "Flaky login", "display_title": "Flaky login"},
        {"type": "done", "id": 5},
    ]


def test_a_message_while_a_reload_is_starting_is_acked_then_answered_reloading_and_not_run():
    server = FakeJcodeServer()
    phone = subscribed(server, target_session_id="session-fox")
    server.reload_starting = True
    assert phone.send(line(id=2, type="message", content="Ship it")) == [
        {"type": "ack", "id": 2}, {"type": "reloading"},
    ]
    assert server.sessions["session-fox"]["messages"] == DEFAULT_HISTORY  # not stored
    assert phone.turn is None
    server.reload_starting = False
    answers = phone.send(line(id=3, type="message", content="Ship it"))
    assert answers[0] == {"type": "ack", "id": 3} and answers[-1] == {"type": "done", "id": 3}


def test_the_last_client_dropping_mid_turn_aborts_it_and_the_next_resume_says_was_interrupted():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    phone = subscribed(server, target_session_id="session-fox")
    phone.send(line(id=2, type="message", content="Count to four"))
    phone.close()  # the phone is locked: its socket drops
    assert server.sessions["session-fox"]["was_interrupted"] is True
    with pytest.raises(RuntimeError):
        server.finish_turn()  # the turn was aborted
    again = server.open_socket(URL, TOKEN)
    answers = again.send(line(id=1, type="subscribe", working_dir=WORKDIR, target_session_id="session-fox"))
    history = answers[1]
    assert history["was_interrupted"] is True
    assert history["messages"] == DEFAULT_HISTORY + [{"role": "user", "content": "Count to four"}]
    _, later, _ = again.send(line(id=2, type="resume_session", session_id="session-fox"))
    assert later["was_interrupted"] is False  # reported once


def test_a_client_dropping_mid_turn_while_another_is_attached_leaves_the_turn_running():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    phone = subscribed(server, target_session_id="session-fox")
    terminal = subscribed(server, target_session_id="session-fox")
    phone.send(line(id=2, type="message", content="Count to four"))
    phone.close()
    assert server.sessions["session-fox"]["was_interrupted"] is False
    assert server.finish_turn() == [{"type": "text_delta", "text": "three four"}, END_TURN, {"type": "done", "id": 2}]
    # the terminal saw the whole turn: the phone's message's events go out on the session fan-out
    assert terminal.take_pushed() == [{"type": "text_delta", "text": "one two "},
                                      {"type": "text_delta", "text": "three four"}, END_TURN, {"type": "done", "id": 2}]
    assert server.sessions["session-fox"]["messages"][-1] == {"role": "assistant", "content": "one two three four"}


LIVE = [{"role": "user", "content": "And now?"}, {"role": "assistant", "content": "Now it ships."}]


def test_a_compacted_history_starts_with_the_marker_row_and_shows_64_compacted_rows():
    server = FakeJcodeServer(compacted=compacted_rows(45), history=LIVE)  # 90 compacted rows, 45 turns
    phone = subscribed(server)
    _, history, _ = phone.send(line(id=2, type="resume_session", session_id="session-fox"))
    assert history["messages"][0] == {"role": "system", "content":
                                      "Earlier conversation compacted - 26 older historical messages hidden. "
                                      "Showing 64 of 90 compacted messages. Scroll to the top to load more."}
    assert history["messages"][1] == {"role": "user", "content": "Old question 14 about the release"}
    assert len(history["messages"]) == 1 + 64 + 2 and history["messages"][-2:] == LIVE


def test_get_compacted_history_answers_the_window_asked_for():
    server = FakeJcodeServer(compacted=compacted_rows(45), history=LIVE)
    phone = subscribed(server, target_session_id="session-fox")
    assert phone.send(line(id=3, type="get_compacted_history", visible_messages=0)) == [
        {"type": "ack", "id": 3},
        {"type": "compacted_history", "id": 3, "session_id": "session-fox", "messages": [
            {"role": "system", "content": "Earlier conversation compacted - 90 historical messages hidden from the UI. "
                                          "Scroll to the top to load older history."}] + LIVE,
         "compacted_total": 90, "compacted_visible": 0, "compacted_remaining": 90, "compacted_hidden_prompts": 45},
    ]
    _, wider = phone.send(line(id=4, type="get_compacted_history", visible_messages=65))
    # 65 rows would start on an answer: the window moves back to that turn's question
    assert {k: wider[k] for k in ("compacted_total", "compacted_visible", "compacted_remaining",
                                  "compacted_hidden_prompts")} == {
        "compacted_total": 90, "compacted_visible": 66, "compacted_remaining": 24, "compacted_hidden_prompts": 12}
    assert wider["messages"][1] == {"role": "user", "content": "Old question 13 about the release"}
    _, everything = phone.send(line(id=5, type="get_compacted_history", visible_messages=500))
    assert everything["messages"][0]["content"] == (
        "Earlier conversation compacted - showing all 90 compacted historical messages. "
        "Redraw may be slower while this view is open.")
    assert len(everything["messages"]) == 1 + 90 + 2
    assert phone.send(line(id=6, type="get_compacted_history")) == [
        {"type": "error", "id": 0, "message": "Invalid request: missing field `visible_messages`"},
    ]


def test_compact_session_moves_the_rows_into_the_compacted_prefix():
    server = FakeJcodeServer()
    server.compact_session("session-fox", keep_last=1)  # a short prefix is shown whole
    phone = subscribed(server)
    _, history, _ = phone.send(line(id=2, type="resume_session", session_id="session-fox"))
    assert history["messages"] == [
        {"role": "system", "content": "Earlier conversation compacted - showing all 7 compacted historical messages. "
                                      "Redraw may be slower while this view is open."},
    ] + DEFAULT_HISTORY


def test_an_image_heavy_history_is_three_times_the_cores_input_limit():
    server = load_script({"image_heavy": {}}).build()
    phone = subscribed(server)
    _, history, _ = phone.send(line(id=2, type="resume_session", session_id="session-fox"))
    assert len(history["messages"]) == 24 * 4 and len(history["images"]) == 48
    assert history["images"][2]["anchor"] == {"kind": "user_prompt", "ordinal": 1}
    assert history["images"][3]["source"] == {"kind": "tool_result", "tool_name": "read"}
    assert history["images"][3]["anchor"] == {"kind": "tool_call", "id": "toolu_img_002"}
    frame = len(json.dumps(history, separators=(",", ":")).encode())
    assert 3 * 16 * 1024 * 1024 < frame < 3 * 16 * 1024 * 1024 + 64 * 1024  # JCODE_MOBILE_MAX_INPUT_BYTES = 16 MiB
