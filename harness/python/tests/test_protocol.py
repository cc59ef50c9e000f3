"""The jcode gateway protocol (SPEC sections 5-8, docs/ABI.md), driven through
the ABI with raw server frames.

Every test starts from the ``connected_chat`` fixture and plays the server by
hand: server events arrive as ``websocket_event {"line": "..."}`` text frames
(one or more newline-separated JSON events) on the fixture's socket, and every
request the core sends is read back from the ``websocket_send`` effects of the
dispatch reports. Assertions are on the state and, where the behaviour is
visible, on the semantic tree.
"""

from __future__ import annotations

import base64
import json
from typing import Any, List, Optional

import pytest

from jcode_mobile import App, find_node

#: The fixture every test starts from.
SCENARIO = {"scenario": "connected_chat"}
#: What the fixture's transcript holds before a test adds anything.
FIXTURE_ENTRIES = 3
#: Request ids on the fixture's socket continue from here.
FIRST_REQUEST_ID = 3

#: A 1x1 PNG (the image the fake photo picker returns); its decoded size is what byte_count must report.
PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000105d2b58f0000000049454e44ae426082"
)
PNG_B64 = base64.b64encode(PNG_BYTES).decode("ascii")


# -- helpers ---------------------------------------------------------------------


def encode(event: Any) -> str:
    """One line of a frame: a dict is JSON-encoded, a str goes as is."""
    return event if isinstance(event, str) else json.dumps(event, separators=(",", ":"), ensure_ascii=False)


def sent(report: dict) -> List[dict]:
    """The parsed request lines of the report's websocket_send effects."""
    return [json.loads(e["line"]) for e in report["effects"] if e["type"] == "websocket_send"]


def effect_types(report: dict) -> List[str]:
    return [e["type"] for e in report["effects"]]


class Chat:
    """The ``connected_chat`` fixture, with a hand-played server."""

    def __init__(self) -> None:
        self.app = App(SCENARIO)
        connects = [e for e in self.app.state()["pending_effects"] if e["type"] == "websocket_connect"]
        assert len(connects) == 1, self.app.state()["pending_effects"]
        #: The effect id naming the fixture's open socket.
        self.socket: int = connects[0]["effect_id"]

    # inputs

    def act(self, action: dict) -> dict:
        return self.app.dispatch(action)

    def tap(self, node_id: str) -> dict:
        return self.app.dispatch({"type": "tap_node", "node_id": node_id})

    def frame(self, *events: Any) -> dict:
        """The server sends one text frame holding ``events``, newline-separated."""
        line = "\n".join(encode(e) for e in events)
        return self.app.platform_event({"type": "websocket_event", "effect_id": self.socket, "line": line})

    def start_turn(self, text: str = "Run the tests") -> int:
        """Send a message; returns the request id of its ``message`` line."""
        report = self.act({"type": "send_message", "text": text})
        lines = sent(report)
        assert len(lines) == 1 and lines[0]["type"] == "message" and lines[0]["content"] == text, lines
        assert self.state()["session"]["is_processing"] is True
        return lines[0]["id"]

    # outputs

    def state(self) -> dict:
        return self.app.state()

    def tree(self) -> dict:
        return self.app.tree()

    def node(self, node_id: str) -> Optional[dict]:
        return find_node(self.tree(), node_id)

    def transcript(self) -> List[dict]:
        return self.state()["transcript"]

    def session(self) -> dict:
        return self.state()["session"]

    def last_notes(self) -> List[str]:
        """The notes of the most recent log entry."""
        (entry,) = self.app.logs(1)["entries"]
        return entry["notes"]


@pytest.fixture
def chat():
    c = Chat()
    yield c
    c.app.close()


def child_ids(node: dict) -> List[str]:
    return [c["id"] for c in node["children"]]


# -- 1. streaming ----------------------------------------------------------------


def test_fixture_baseline(chat):
    """What the other tests rely on: a connected, idle chat with three entries and request ids from 3."""
    state = chat.state()
    assert state["connection"]["phase"] == "connected"
    assert len(state["transcript"]) == FIXTURE_ENTRIES
    assert state["session"]["is_processing"] is False
    assert chat.start_turn() == FIRST_REQUEST_ID


# -- 2. tools -----------------------------------------------------------------------


def tool_call(chat: Chat, tool_id: str) -> dict:
    calls = [c for e in chat.transcript() for c in e["tool_calls"] if c["id"] == tool_id]
    assert len(calls) == 1, calls
    return calls[0]


def test_tool_call_lifecycle_succeeded(chat):
    chat.start_turn()
    chat.frame({"type": "tool_start", "id": "call_bash", "name": "bash"})
    entry = chat.transcript()[-1]
    assert entry["role"] == "assistant"
    assert entry["tool_calls"] == [
        {"id": "call_bash", "name": "bash", "input": "", "output": "", "status": "pending", "error": None}]
    bash = f"tool.{entry['id']}.call_bash"  # a tool card's id is scoped by its message
    card = chat.node(bash)
    assert card is not None and card["role"] == "tool_call"
    assert (card["label"], card["value"]) == ("bash", "Preparing")
    assert card["id"] in child_ids(chat.node(f"message.{entry['id']}"))

    chat.frame({"type": "tool_input", "delta": "{\"command\":"}, {"type": "tool_input", "delta": "\"cargo test\"}"})
    assert tool_call(chat, "call_bash")["input"] == "{\"command\":\"cargo test\"}"
    # The card, closed, shows the command; its input shows once opened.
    assert chat.node(f"{bash}.summary")["value"] == "cargo test"
    assert chat.node(f"{bash}.input") is None

    chat.frame({"type": "tool_exec", "id": "call_bash", "name": "bash"})
    assert tool_call(chat, "call_bash")["status"] == "running"
    assert chat.node(bash)["value"] == "Running"

    chat.frame({"type": "tool_done", "id": "call_bash", "name": "bash", "output": "2 passed"})
    call = tool_call(chat, "call_bash")
    assert (call["status"], call["output"], call["error"]) == ("succeeded", "2 passed", None)
    card = chat.node(bash)
    assert (card["label"], card["value"]) == ("bash", "Done")
    assert child_ids(card) == [f"{bash}.summary"]
    chat.app.dispatch({"type": "set_expanded", "node_id": bash, "expanded": True})
    assert chat.node(f"{bash}.output")["value"] == "2 passed"
    assert chat.node(f"{bash}.error") is None
    assert child_ids(chat.node(bash)) == [f"{bash}.summary", f"{bash}.input", f"{bash}.output"]


# -- 3. interrupts ------------------------------------------------------------------


def test_tapping_stop_sends_cancel(chat):
    rid = chat.start_turn()
    report = chat.tap("chat.interrupt")
    assert sent(report) == [{"id": rid + 1, "type": "cancel"}]


def queued_entries(chat: Chat) -> List[dict]:
    return [e for e in chat.transcript() if e["is_queued"]]


def test_injection_matches_the_queued_bubble_with_the_same_content(chat):
    rid = chat.start_turn()
    report = chat.act({"type": "queue_interrupt", "text": "first"})  # urgent defaults to false
    assert sent(report) == [{"id": rid + 1, "type": "soft_interrupt", "content": "first", "urgent": False}]
    chat.act({"type": "queue_interrupt", "text": "second", "urgent": False})
    ids = {e["text"]: e["id"] for e in queued_entries(chat)}
    assert list(ids) == ["first", "second"]
    chat.frame({"type": "soft_interrupt_injected", "content": "second", "point": "after_tool"})
    assert [(e["text"], e["is_queued"]) for e in chat.transcript()[-2:]] == [("second", False), ("first", True)]
    assert [s["content"] for s in chat.state()["soft_interrupts"]] == ["first"]
    assert chat.state()["soft_interrupts"][0]["entry_id"] == ids["first"]


# -- 4. sessions and models -----------------------------------------------------------


HISTORY_MESSAGES = [
    {"role": "user", "content": "Why does the test fail?"},
    {"role": "assistant", "content": ""},  # an empty placeholder: skipped
    {"role": "assistant", "content": "",
     "tool_data": {"id": "call_ls", "name": "ls", "input": "{\"path\":\".\"}", "output": "a.rs b.rs"}},
    {"role": "assistant", "content": "",
     "tool_data": {"id": "call_rm", "name": "bash", "input": "rm x", "output": "", "error": "denied"}},
    {"role": "assistant", "content": "", "tool_calls": ["grep", "read"]},
    {"role": "tool", "content": "raw tool result"},  # an unknown role: skipped
    {"role": "system", "content": "Context compacted"},
    {"role": "assistant", "content": "It races the server."},
]


@pytest.mark.parametrize("total_tokens", [{"input": 48210, "output": 3120}], ids=["object"])
def test_history_replaces_the_transcript_and_takes_the_session_metadata(chat, total_tokens):
    old_ids = {e["id"] for e in chat.transcript()}
    chat.frame({
        "type": "history",
        "id": 2,
        "session_id": "session-fox",
        "messages": HISTORY_MESSAGES,
        "provider_name": "openai",
        "provider_model": "gpt-5",
        "available_models": ["gpt-5", "o3"],
        "all_sessions": [
            {"session_id": "session-fox", "display_title": "Deflake"},
            {"session_id": "session-bee", "display_title": "Bees"},
        ],
        "total_tokens": total_tokens,
        "server_version": "1.0.0",
        "display_title": "Deflake",
        "reasoning_effort": "high",
    })
    transcript = chat.transcript()
    assert [(e["role"], e["text"]) for e in transcript] == [
        ("user", "Why does the test fail?"),
        ("assistant", ""),
        ("assistant", ""),
        ("assistant", ""),
        ("system", "Context compacted"),
        ("assistant", "It races the server."),
    ]
    assert not ({e["id"] for e in transcript} & old_ids)
    assert all(not e["is_streaming"] and not e["is_queued"] for e in transcript)
    assert transcript[1]["tool_calls"] == [
        {"id": "call_ls", "name": "ls", "input": "{\"path\":\".\"}", "output": "a.rs b.rs",
         "status": "succeeded", "error": None}]
    assert transcript[2]["tool_calls"] == [
        {"id": "call_rm", "name": "bash", "input": "rm x", "output": "", "status": "failed", "error": "denied"}]
    assert [c["name"] for c in transcript[3]["tool_calls"]] == ["grep", "read"]
    assert len({c["id"] for c in transcript[3]["tool_calls"]}) == 2
    assert chat.node(f"tool.{transcript[1]['id']}.call_ls")["value"] == "Done"
    assert chat.node(f"tool.{transcript[2]['id']}.call_rm")["value"] == "Failed"

    session = chat.session()
    assert session["model"] == "gpt-5"
    assert session["provider"] == "openai"
    assert session["available_models"] == ["gpt-5", "o3"]
    assert [(s["id"], s["title"]) for s in session["all_sessions"]] == [("session-fox", "Deflake"), ("session-bee", "Bees")]
    assert session["total_tokens"] == {"input": 48210, "output": 3120, "cache_read_input": None, "cache_creation_input": None}
    assert session["server_version"] == "1.0.0"
    assert session["title"] == "Deflake"
    assert session["reasoning_effort"] == "high"
    assert session["history_loaded"] is True


# -- 5. approvals and input ------------------------------------------------------------

PERMISSION = {
    "type": "permission_request", "request_id": "perm-1", "session_id": "session-fox", "action": "bash",
    "detail": "cargo test -p jcode-mobile-core", "tier": "medium",
}


@pytest.mark.parametrize(
    "how, approved, remember",
    [
        ({"type": "respond_permission", "request_id": "perm-1", "approved": True}, True, False),
    ],
    ids=["action-approve"],
)
def test_respond_permission(chat, how, approved, remember):
    rid = chat.start_turn()
    chat.frame(PERMISSION)
    report = chat.act(how) if isinstance(how, dict) else chat.tap(how)
    assert sent(report) == [
        {"id": rid + 1, "type": "permission_response", "request_id": "perm-1", "approved": approved, "remember": remember}]
    assert chat.state()["permission_requests"] == []
    assert chat.node("permission.perm-1") is None


def test_several_permission_requests_are_kept_in_order(chat):
    rid = chat.start_turn()
    chat.frame(PERMISSION, {**PERMISSION, "request_id": "perm-2", "action": "write", "detail": "src/lib.rs"})
    chat.frame({**PERMISSION, "request_id": "perm-3", "action": "read", "detail": "README.md"})
    assert [r["request_id"] for r in chat.state()["permission_requests"]] == ["perm-1", "perm-2", "perm-3"]
    assert chat.node("permission.perm-1") is not None
    assert chat.node("permission.perm-2") is None  # one sheet at a time, oldest first

    report = chat.act({"type": "respond_permission", "request_id": "perm-2", "approved": False})
    assert sent(report)[0]["request_id"] == "perm-2"
    assert [r["request_id"] for r in chat.state()["permission_requests"]] == ["perm-1", "perm-3"]
    chat.tap("permission.perm-1.approve")
    assert [r["request_id"] for r in chat.state()["permission_requests"]] == ["perm-3"]
    assert chat.node("permission.perm-3") is not None
    report = chat.tap("permission.perm-3.deny")
    assert sent(report) == [
        {"id": rid + 3, "type": "permission_response", "request_id": "perm-3", "approved": False, "remember": False}]


def test_respond_stdin_sends_the_answer_and_never_logs_it(chat):
    secret = "correct-horse-battery-staple-4711"
    rid = chat.start_turn()
    chat.frame({"type": "stdin_request", "request_id": "stdin-1", "prompt": "[sudo] password:",
                "is_password": True, "tool_call_id": "call_apt"})
    report = chat.act({"type": "respond_stdin", "request_id": "stdin-1", "input": secret})
    assert sent(report) == [{"id": rid + 1, "type": "stdin_response", "request_id": "stdin-1", "input": secret}]
    assert chat.state()["stdin_requests"] == []
    assert chat.node("stdin.stdin-1.input") is None
    entries = chat.app.logs(0)["entries"]
    (answer,) = [e for e in entries if e["type"] == "respond_stdin"]  # the transition is logged...
    assert answer["payload"]["request_id"] == "stdin-1"
    assert answer["payload"]["input"] == "[redacted]"  # ...without the answer
    assert [e["type"] for e in answer["effects"]] == ["websocket_send"]
    assert secret not in json.dumps(entries, ensure_ascii=False)
    assert secret not in json.dumps(chat.state()) and secret not in json.dumps(chat.tree())


# -- 6. attachments ---------------------------------------------------------------------


def attach(chat: Chat, data_b64: str = PNG_B64, media_type: str = "image/png") -> dict:
    report = chat.act({"type": "attach_image"})
    assert effect_types(report) == ["request_image_picker"]
    chat.app.platform_event({"type": "image_attachment_selected", "media_type": media_type, "data_base64": data_b64})
    return chat.state()["attachments"][-1]


def test_attach_image_and_send_it(chat):
    attachment = attach(chat)
    assert attachment["media_type"] == "image/png"
    assert attachment["byte_count"] == len(PNG_BYTES)
    assert set(attachment) == {"id", "media_type", "byte_count"}
    assert PNG_B64 not in json.dumps(chat.state())
    assert PNG_B64 not in json.dumps(chat.tree())
    assert chat.node(f"attachment.{attachment['id']}") is not None

    report = chat.act({"type": "send_message", "text": "What is this?"})
    assert sent(report) == [
        {"id": FIRST_REQUEST_ID, "type": "message", "content": "What is this?", "images": [["image/png", PNG_B64]]}]
    state = chat.state()
    assert state["attachments"] == []
    assert state["transcript"][-1]["text"] == "What is this?"
    assert state["transcript"][-1]["image_count"] == 1


# -- 7. forward compatibility -----------------------------------------------------------


def test_an_unknown_event_type_changes_nothing_and_is_noted(chat):
    chat.start_turn()
    before = chat.state()
    report = chat.frame({"type": "future_event", "text": "Hello", "id": 3})
    assert report["revision"] == before["revision"]
    assert chat.state() == before
    notes = chat.last_notes()
    assert any("future_event" in n for n in notes), notes


def test_an_unknown_event_type_does_not_stop_the_rest_of_the_frame(chat):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "A"}, {"type": "future_event"}, {"type": "text_delta", "text": "B"})
    assert chat.transcript()[-1]["text"] == "AB"
    assert any("future_event" in n for n in chat.last_notes())


EXTRA = {"future_field": {"nested": [1, 2, 3]}, "schema": 2}

EXTRA_FIELD_CASES = [
    [{"type": "text_delta", "text": "Hello"}],
    [{"type": "tool_start", "id": "call_x", "name": "bash"},
     {"type": "tool_done", "id": "call_x", "name": "bash", "output": "ok"}],
    [{"type": "reasoning_delta", "text": "hmm"}, {"type": "reasoning_done", "duration_secs": 1.5}],
    [{"type": "notification", "from_name": "ci", "message": "green"}],
    [PERMISSION],
    [{"type": "tokens", "input": 5, "output": 6}, {"type": "status_detail", "detail": "thinking"}],
    [{"type": "text_delta", "text": "x"}, {"type": "done", "id": FIRST_REQUEST_ID}],
]


@pytest.mark.parametrize("events", EXTRA_FIELD_CASES, ids=lambda evs: "+".join(e["type"] for e in evs))
def test_unknown_extra_fields_change_nothing_else(events):
    """The same events with and without unknown fields leave identical states."""
    plain, extended, untouched = Chat(), Chat(), Chat()
    try:
        for c in (plain, extended, untouched):
            c.start_turn()
        plain.frame(*events)
        extended.frame(*[{**e, **EXTRA} for e in events])
        assert extended.state() == plain.state()
        assert extended.tree() == plain.tree()
        assert plain.state() != untouched.state()  # the events did apply
        assert not any("malformed" in n or "dropped" in n for n in extended.last_notes())
    finally:
        for c in (plain, extended, untouched):
            c.app.close()


def test_unknown_extra_fields_are_kept_in_the_log(chat):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Hello", "future_field": {"nested": [1, 2]}})
    assert chat.transcript()[-1]["text"] == "Hello"
    (entry,) = chat.app.logs(1)["entries"]
    assert entry["type"] == "websocket_event"
    assert entry["notes"] == []
    # The frame is logged as it came, unknown field included.
    assert "future_field" in entry["payload"]["line"], entry


def test_missing_optional_fields_take_their_defaults(chat):
    chat.start_turn()
    chat.frame(
        {"type": "reasoning_delta", "text": "hmm"},
        {"type": "reasoning_done"},  # no duration_secs
        {"type": "tool_start", "id": "call_x", "name": "bash"},
        {"type": "tool_done", "id": "call_x", "name": "bash"},  # no output, no error
        {"type": "permission_request", "request_id": "perm-9", "action": "bash"},  # no session, detail, tier
        {"type": "stdin_request", "request_id": "stdin-9", "prompt": "Name?"},  # no is_password, tool_call_id
        {"type": "notification", "message": "Heads up"},  # no from_name
        {"type": "available_models_updated", "available_models": ["claude-sonnet-4", "o3"]},  # no provider_model
    )
    state = chat.state()
    entry = state["transcript"][-1]
    assert entry["reasoning"] == "hmm" and entry["reasoning_secs"] is None
    assert state["session"]["is_reasoning"] is False
    assert entry["tool_calls"] == [
        {"id": "call_x", "name": "bash", "input": "", "output": "", "status": "succeeded", "error": None}]
    (perm,) = state["permission_requests"]
    assert (perm["request_id"], perm["action"], perm["detail"], perm["tier"]) == ("perm-9", "bash", "", "")
    assert perm.get("session_id") is None
    (stdin,) = state["stdin_requests"]
    assert (stdin["request_id"], stdin["prompt"], stdin["is_password"]) == ("stdin-9", "Name?", False)
    assert stdin.get("tool_call_id") is None
    assert chat.node("stdin.stdin-9.input")["role"] == "text_field"
    assert [n["text"] for n in state["notices"]] == ["Heads up"]
    assert state["session"]["available_models"] == ["claude-sonnet-4", "o3"]
    assert state["session"]["model"] == "claude-sonnet-4"
    chat.frame({"type": "error", "message": "slow down"})  # no id, no retry_after_secs: it ends the turn
    state = chat.state()
    assert state["banners"]["error"] == {"message": "slow down", "retry_after_secs": None, "text": "slow down"}
    assert state["session"]["is_processing"] is False
    assert state["permission_requests"] == [] and state["stdin_requests"] == []  # no tool waits any more


def test_done_without_an_id_ends_the_turn(chat):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Bye"}, {"type": "done"})
    assert chat.session()["is_processing"] is False
    assert chat.transcript()[-1]["is_streaming"] is False


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("not json", id="not-json"),
        pytest.param("{\"type\":\"text_delta\",\"text\":", id="truncated"),
        pytest.param("[1,2,3]", id="not-an-object"),
        pytest.param("{\"text\":\"no type\"}", id="no-type"),
        pytest.param({"type": "text_delta"}, id="missing-required"),
        pytest.param({"type": "text_delta", "text": 5}, id="wrong-type"),
        pytest.param({"type": "tool_start", "id": "call_x"}, id="tool-start-without-name"),
        pytest.param({"type": "retry_rollback", "attempt": 1}, id="retry-without-max"),
    ],
)
def test_a_malformed_line_is_dropped_and_the_rest_of_the_frame_applies(chat, bad):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Hel"})
    before = chat.state()
    chat.frame({"type": "text_delta", "text": "lo"}, bad, {"type": "text_delta", "text": "!"})
    after = chat.state()
    assert after["transcript"][-1]["text"] == "Hello!"
    assert after["transcript"][-1]["tool_calls"] == []
    assert after["session"]["status_detail"] is None
    assert len(after["transcript"]) == len(before["transcript"])
    notes = chat.last_notes()
    assert len(notes) == 1, notes
    assert "malformed" in notes[0] or "dropped" in notes[0], notes


def test_a_frame_of_only_malformed_lines_changes_nothing(chat):
    chat.start_turn()
    before = chat.state()
    report = chat.frame("garbage", {"type": "tokens", "input": "many"})
    assert report["revision"] == before["revision"]
    assert chat.state() == before
    assert len(chat.last_notes()) == 2
