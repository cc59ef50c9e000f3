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
from typing import Any, Dict, List, Optional

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


def visible(node: Optional[dict]) -> bool:
    return node is not None and node["visible"]


def child_ids(node: dict) -> List[str]:
    return [c["id"] for c in node["children"]]


def assistant_entries(transcript: List[dict]) -> List[dict]:
    return [e for e in transcript if e["role"] == "assistant"]


# -- 1. streaming ----------------------------------------------------------------


def test_fixture_baseline(chat):
    """What the other tests rely on: a connected, idle chat with three entries and request ids from 3."""
    state = chat.state()
    assert state["connection"]["phase"] == "connected"
    assert len(state["transcript"]) == FIXTURE_ENTRIES
    assert state["session"]["is_processing"] is False
    assert chat.start_turn() == FIRST_REQUEST_ID


def test_text_deltas_append_to_one_streaming_assistant_entry(chat):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Hel"}, {"type": "text_delta", "text": "lo"})
    transcript = chat.transcript()
    assert len(transcript) == FIXTURE_ENTRIES + 2  # the user message and one assistant entry
    entry = transcript[-1]
    assert (entry["role"], entry["text"], entry["is_streaming"]) == ("assistant", "Hello", True)

    chat.frame({"type": "text_delta", "text": ", world"})
    transcript = chat.transcript()
    assert len(transcript) == FIXTURE_ENTRIES + 2
    assert transcript[-1]["id"] == entry["id"]
    assert transcript[-1]["text"] == "Hello, world"
    node = chat.node(f"message.{entry['id']}")
    assert node is not None and node["role"] == "message" and node["value"] == "Hello, world"


def test_text_replace_replaces_the_streaming_text(chat):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Helo wrld"})
    entry_id = chat.transcript()[-1]["id"]
    chat.frame({"type": "text_replace", "text": "Hello world"})
    transcript = chat.transcript()
    assert len(transcript) == FIXTURE_ENTRIES + 2
    assert transcript[-1]["id"] == entry_id
    assert transcript[-1]["text"] == "Hello world"
    assert transcript[-1]["is_streaming"] is True
    chat.frame({"type": "text_delta", "text": "!"})
    assert chat.transcript()[-1]["text"] == "Hello world!"


def test_reasoning_is_kept_apart_from_text(chat):
    chat.start_turn()
    chat.frame({"type": "reasoning_delta", "text": "The test sleeps"}, {"type": "reasoning_delta", "text": " 100 ms."})
    entry = chat.transcript()[-1]
    assert (entry["role"], entry["text"], entry["reasoning"]) == ("assistant", "", "The test sleeps 100 ms.")
    assert entry["reasoning_secs"] is None
    assert chat.session()["is_reasoning"] is True

    chat.frame({"type": "reasoning_done", "duration_secs": 2.5})
    assert chat.session()["is_reasoning"] is False
    entry = chat.transcript()[-1]
    assert entry["reasoning_secs"] == 2.5

    chat.frame({"type": "text_delta", "text": "Found it."})
    transcript = chat.transcript()
    assert transcript[-1]["id"] == entry["id"]  # same entry: reasoning, then text
    assert transcript[-1]["text"] == "Found it."
    assert transcript[-1]["reasoning"] == "The test sleeps 100 ms."
    reasoning = chat.node(f"message.{entry['id']}.reasoning")
    assert reasoning is not None and reasoning["value"] == "The test sleeps 100 ms."


def test_message_end_closes_the_entry_and_the_next_delta_starts_a_new_one(chat):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "First."}, {"type": "message_end"})
    first = chat.transcript()[-1]
    assert (first["text"], first["is_streaming"]) == ("First.", False)

    chat.frame({"type": "text_delta", "text": "Second."})
    transcript = chat.transcript()
    assert len(transcript) == FIXTURE_ENTRIES + 3
    assert transcript[-2]["id"] == first["id"]
    assert (transcript[-2]["text"], transcript[-2]["is_streaming"]) == ("First.", False)
    assert transcript[-1]["id"] != first["id"]
    assert (transcript[-1]["role"], transcript[-1]["text"], transcript[-1]["is_streaming"]) == (
        "assistant", "Second.", True)


def test_retry_rollback_drops_only_the_partial_entry(chat):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Committed."}, {"type": "message_end"})
    chat.frame({"type": "text_delta", "text": "Partial answ"})
    assert [e["text"] for e in chat.transcript()[-2:]] == ["Committed.", "Partial answ"]

    chat.frame({"type": "retry_rollback", "attempt": 1, "max": 3})
    transcript = chat.transcript()
    assert len(transcript) == FIXTURE_ENTRIES + 2
    assert transcript[-1]["text"] == "Committed."
    assert transcript[-1]["is_streaming"] is False
    assert all("Partial" not in e["text"] for e in transcript)
    assert chat.session()["status_detail"] == "Retrying (1/3)"
    assert chat.session()["is_processing"] is True

    chat.frame({"type": "text_delta", "text": "Fresh answer."})
    transcript = chat.transcript()
    assert len(transcript) == FIXTURE_ENTRIES + 3
    assert transcript[-1]["text"] == "Fresh answer."


def test_done_ends_the_turn(chat):
    rid = chat.start_turn()
    chat.frame({"type": "connection_phase", "phase": "streaming"}, {"type": "text_delta", "text": "All green."})
    assert chat.session()["server_phase"] == "streaming"
    assert visible(chat.node("chat.interrupt"))

    chat.frame({"type": "done", "id": rid})
    session = chat.session()
    assert session["is_processing"] is False
    assert session["server_phase"] is None
    entry = chat.transcript()[-1]
    assert (entry["text"], entry["is_streaming"]) == ("All green.", False)
    assert not visible(chat.node("chat.interrupt"))
    assert not visible(chat.node("chat.activity"))


def test_interrupted_ends_the_turn_with_a_notice(chat):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Working"})
    chat.frame({"type": "interrupted"})
    state = chat.state()
    assert state["session"]["is_processing"] is False
    assert state["transcript"][-1]["is_streaming"] is False
    assert [n["text"] for n in state["notices"]] == ["Interrupted"]
    notice = chat.node(f"notice.{state['notices'][0]['id']}")
    assert notice is not None and notice["label"] == "Interrupted"


def test_error_sets_the_error_banner(chat):
    rid = chat.start_turn()
    chat.frame({"type": "error", "id": rid, "message": "overloaded", "retry_after_secs": 15})
    error = chat.state()["banners"]["error"]
    assert error is not None
    assert error["message"] == "overloaded"
    assert error["retry_after_secs"] == 15
    assert error["text"] == "overloaded (retry in 15 s)"
    banner = chat.node("banner.error")
    assert visible(banner) and banner["label"] == "overloaded (retry in 15 s)"


def test_tokens_status_detail_and_connection_phase(chat):
    rid = chat.start_turn()
    chat.frame(
        {"type": "connection_phase", "phase": "calling_tool"},
        {"type": "status_detail", "detail": "cargo test"},
        {"type": "tokens", "input": 1200, "output": 34},
    )
    session = chat.session()
    assert session["server_phase"] == "calling_tool"
    assert session["status_detail"] == "cargo test"
    assert session["tokens"] == {"input": 1200, "output": 34}
    activity = chat.node("chat.activity")
    assert visible(activity) and activity["label"] == "cargo test"

    chat.frame({"type": "tokens", "input": 1500, "output": 80})
    assert chat.session()["tokens"] == {"input": 1500, "output": 80}

    chat.frame({"type": "done", "id": rid})
    session = chat.session()
    assert session["server_phase"] is None
    assert session["status_detail"] is None


@pytest.mark.parametrize(
    "events, stub_shown",
    [
        pytest.param([{"type": "text_delta", "text": ""}], False, id="empty-delta"),
        pytest.param(
            [{"type": "text_delta", "text": "draft"}, {"type": "text_replace", "text": ""}], True, id="replaced-by-nothing"),
        pytest.param(
            [{"type": "text_delta", "text": "Kept."}, {"type": "message_end"}, {"type": "text_delta", "text": ""}],
            False, id="after-message-end"),
    ],
)
def test_an_empty_assistant_stub_left_by_a_finished_turn_is_dropped(chat, events, stub_shown):
    rid = chat.start_turn("Check")
    before = chat.transcript()
    chat.frame(*events)
    if stub_shown:  # the entry emptied by text_replace is still the streaming entry while the turn runs
        stub = chat.transcript()[-1]
        assert (stub["role"], stub["text"], stub["is_streaming"]) == ("assistant", "", True)
    chat.frame({"type": "done", "id": rid})
    assert chat.session()["is_processing"] is False
    after = chat.transcript()
    assert all(e["text"] or e["reasoning"] or e["tool_calls"] for e in after), after
    assert [e["id"] for e in after[: len(before)]] == [e["id"] for e in before]
    kept = [e["text"] for e in after[len(before):]]
    assert kept == (["Kept."] if events[0]["text"] == "Kept." else [])
    assert after[len(before) - 1]["text"] == "Check"


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
    card = chat.node("tool.call_bash")
    assert card is not None and card["role"] == "tool_call"
    assert (card["label"], card["value"]) == ("bash", "Preparing")
    assert card["id"] in child_ids(chat.node(f"message.{entry['id']}"))

    chat.frame({"type": "tool_input", "delta": "{\"command\":"}, {"type": "tool_input", "delta": "\"cargo test\"}"})
    assert tool_call(chat, "call_bash")["input"] == "{\"command\":\"cargo test\"}"
    assert chat.node("tool.call_bash.input")["value"] == "{\"command\":\"cargo test\"}"

    chat.frame({"type": "tool_exec", "id": "call_bash", "name": "bash"})
    assert tool_call(chat, "call_bash")["status"] == "running"
    assert chat.node("tool.call_bash")["value"] == "Running"

    chat.frame({"type": "tool_done", "id": "call_bash", "name": "bash", "output": "2 passed"})
    call = tool_call(chat, "call_bash")
    assert (call["status"], call["output"], call["error"]) == ("succeeded", "2 passed", None)
    card = chat.node("tool.call_bash")
    assert (card["label"], card["value"]) == ("bash", "Done")
    assert chat.node("tool.call_bash.output")["value"] == "2 passed"
    assert chat.node("tool.call_bash.error") is None
    assert child_ids(card) == ["tool.call_bash.input", "tool.call_bash.output"]


def test_tool_call_failed(chat):
    chat.start_turn()
    chat.frame(
        {"type": "tool_start", "id": "call_apt", "name": "bash"},
        {"type": "tool_input", "delta": "apt install foo"},
        {"type": "tool_exec", "id": "call_apt", "name": "bash"},
        {"type": "tool_done", "id": "call_apt", "name": "bash", "output": "E: no such package", "error": "exit status 100"},
    )
    call = tool_call(chat, "call_apt")
    assert (call["status"], call["output"], call["error"]) == ("failed", "E: no such package", "exit status 100")
    card = chat.node("tool.call_apt")
    assert (card["label"], card["value"]) == ("bash", "Failed")
    error = chat.node("tool.call_apt.error")
    assert error is not None and error["value"] == "exit status 100"
    assert chat.node("tool.call_apt.output")["value"] == "E: no such package"


def test_tool_input_appends_to_the_latest_call_only(chat):
    chat.start_turn()
    chat.frame(
        {"type": "tool_start", "id": "call_a", "name": "read"},
        {"type": "tool_input", "delta": "a.txt"},
        {"type": "tool_start", "id": "call_b", "name": "write"},
        {"type": "tool_input", "delta": "b"},
        {"type": "tool_input", "delta": ".txt"},
    )
    assert tool_call(chat, "call_a")["input"] == "a.txt"
    assert tool_call(chat, "call_b")["input"] == "b.txt"
    entry = chat.transcript()[-1]
    assert [c["id"] for c in entry["tool_calls"]] == ["call_a", "call_b"]


@pytest.mark.parametrize(
    "event, status, tree_value",
    [
        ({"type": "tool_exec", "id": "call_new", "name": "grep"}, "running", "Running"),
        ({"type": "tool_done", "id": "call_new", "name": "grep", "output": "3 matches"}, "succeeded", "Done"),
        ({"type": "tool_done", "id": "call_new", "name": "grep", "output": "", "error": "bad regex"}, "failed", "Failed"),
    ],
    ids=["exec", "done", "done-error"],
)
def test_tool_exec_or_done_for_an_unknown_id_creates_the_call(chat, event, status, tree_value):
    chat.start_turn()
    chat.frame(event)
    entry = chat.transcript()[-1]
    assert entry["role"] == "assistant"
    call = tool_call(chat, "call_new")
    assert (call["name"], call["status"]) == ("grep", status)
    assert call["output"] == event.get("output", "")
    assert call["error"] == event.get("error")
    card = chat.node("tool.call_new")
    assert (card["label"], card["value"]) == ("grep", tree_value)


# -- 3. interrupts ------------------------------------------------------------------


def test_interrupt_sends_cancel(chat):
    rid = chat.start_turn()
    report = chat.act({"type": "interrupt"})
    assert sent(report) == [{"id": rid + 1, "type": "cancel"}]


def test_tapping_stop_sends_cancel(chat):
    rid = chat.start_turn()
    report = chat.tap("chat.interrupt")
    assert sent(report) == [{"id": rid + 1, "type": "cancel"}]


def queued_entries(chat: Chat) -> List[dict]:
    return [e for e in chat.transcript() if e["is_queued"]]


def test_queue_interrupt_shows_a_queued_bubble_and_sends_a_soft_interrupt(chat):
    rid = chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Working on it"})
    report = chat.act({"type": "queue_interrupt", "text": "Also check the docs", "urgent": True})
    assert sent(report) == [{"id": rid + 1, "type": "soft_interrupt", "content": "Also check the docs", "urgent": True}]
    state = chat.state()
    bubble = state["transcript"][-1]
    assert (bubble["role"], bubble["text"], bubble["is_queued"]) == ("user", "Also check the docs", True)
    assert state["soft_interrupts"] == [{"entry_id": bubble["id"], "content": "Also check the docs", "urgent": True}]
    assert visible(chat.node("chat.queued"))
    assert visible(chat.node("chat.cancel_queued"))

    # More output of the same entry, and then a new entry, go above the queued bubble.
    chat.frame({"type": "text_delta", "text": "..."}, {"type": "message_end"}, {"type": "text_delta", "text": "Next step"})
    transcript = chat.transcript()
    assert transcript[-1]["id"] == bubble["id"] and transcript[-1]["is_queued"] is True
    assert [e["text"] for e in transcript[-3:-1]] == ["Working on it...", "Next step"]
    assert [e["role"] for e in transcript[-3:-1]] == ["assistant", "assistant"]
    message_ids = child_ids(chat.node("chat.messages"))
    assert message_ids[-1] == f"message.{bubble['id']}"

    # The agent receives it: it becomes an ordinary message and later output follows it.
    chat.frame({"type": "soft_interrupt_injected", "content": "Also check the docs", "point": "after_tool"})
    state = chat.state()
    assert state["soft_interrupts"] == []
    assert queued_entries(chat) == []
    unqueued = [e for e in state["transcript"] if e["id"] == bubble["id"]]
    assert len(unqueued) == 1 and unqueued[0]["is_queued"] is False and unqueued[0]["text"] == "Also check the docs"
    assert not visible(chat.node("chat.queued"))

    chat.frame({"type": "text_delta", "text": "Checked the docs too."})
    transcript = chat.transcript()
    assert transcript[-2]["id"] == bubble["id"]
    assert (transcript[-1]["role"], transcript[-1]["text"]) == ("assistant", "Checked the docs too.")
    assert len([e for e in transcript if e["text"] == "Also check the docs"]) == 1


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


@pytest.mark.parametrize(
    "display_role, role",
    [(None, "user"), ("user", "user"), ("system", "system")],
    ids=["no-role", "user", "system"],
)
def test_injected_content_from_another_client_is_appended(chat, display_role, role):
    chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Working"})
    event = {"type": "soft_interrupt_injected", "content": "Sent from the laptop", "point": "after_tool"}
    if display_role is not None:
        event["display_role"] = display_role
    chat.frame(event)
    transcript = chat.transcript()
    assert len(transcript) == FIXTURE_ENTRIES + 3
    added = transcript[-1]
    assert (added["role"], added["text"], added["is_queued"]) == (role, "Sent from the laptop", False)
    assert transcript[-2]["text"] == "Working"
    assert chat.state()["soft_interrupts"] == []


def test_done_drains_what_is_still_queued(chat):
    rid = chat.start_turn()
    chat.act({"type": "queue_interrupt", "text": "one"})
    chat.act({"type": "queue_interrupt", "text": "two", "urgent": True})
    assert [e["text"] for e in queued_entries(chat)] == ["one", "two"]
    chat.frame({"type": "text_delta", "text": "Done."}, {"type": "done", "id": rid})
    state = chat.state()
    assert state["soft_interrupts"] == []
    assert all(e["is_queued"] is False for e in state["transcript"])
    assert [e["text"] for e in state["transcript"][-3:]] == ["Done.", "one", "two"]
    assert not visible(chat.node("chat.queued"))


@pytest.mark.parametrize("how", ["action", "tap"])
def test_cancel_queued_interrupts(chat, how):
    rid = chat.start_turn()
    chat.frame({"type": "text_delta", "text": "Working"})
    chat.act({"type": "queue_interrupt", "text": "one"})
    chat.act({"type": "queue_interrupt", "text": "two"})
    report = chat.act({"type": "cancel_queued_interrupts"}) if how == "action" else chat.tap("chat.cancel_queued")
    assert sent(report) == [{"id": rid + 3, "type": "cancel_soft_interrupts"}]
    state = chat.state()
    assert state["soft_interrupts"] == []
    assert queued_entries(chat) == []
    assert all(e["text"] not in ("one", "two") for e in state["transcript"])
    assert state["transcript"][-1]["text"] == "Working"
    assert not visible(chat.node("chat.queued"))


# -- 4. sessions and models -----------------------------------------------------------


def session_titles(chat: Chat) -> Dict[str, Optional[str]]:
    return {s["id"]: s["title"] for s in chat.session()["all_sessions"]}


def test_session_event_attaches_to_that_session(chat):
    chat.frame({"type": "session", "session_id": "session-owl"})
    session = chat.session()
    assert session["id"] == "session-owl"
    assert session["title"] == "Release notes"


def test_state_event_sets_processing(chat):
    chat.frame({"type": "state", "id": 1, "session_id": "session-fox", "message_count": 3, "is_processing": True})
    assert chat.session()["is_processing"] is True
    assert visible(chat.node("chat.interrupt"))
    chat.frame({"type": "state", "session_id": "session-fox", "message_count": 3, "is_processing": False})
    assert chat.session()["is_processing"] is False
    assert chat.session()["id"] == "session-fox"


def test_session_renamed_other_session(chat):
    chat.frame({"type": "session_renamed", "session_id": "session-owl", "display_title": "Ship 1.0"})
    assert session_titles(chat) == {"session-fox": "Fix the flaky test", "session-owl": "Ship 1.0"}
    assert chat.session()["title"] == "Fix the flaky test"
    assert chat.node("chat.header")["label"] == "Fix the flaky test"


def test_session_renamed_current_session(chat):
    chat.frame({"type": "session_renamed", "session_id": "session-fox", "display_title": "Deflake reconnect"})
    assert session_titles(chat) == {"session-fox": "Deflake reconnect", "session-owl": "Release notes"}
    assert chat.session()["title"] == "Deflake reconnect"
    assert chat.node("chat.header")["label"] == "Deflake reconnect"


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


@pytest.mark.parametrize(
    "total_tokens", [[48210, 3120], {"input": 48210, "output": 3120}], ids=["pair", "object"])
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
    assert chat.node("tool.call_ls")["value"] == "Done"
    assert chat.node("tool.call_rm")["value"] == "Failed"

    session = chat.session()
    assert session["model"] == "gpt-5"
    assert session["provider"] == "openai"
    assert session["available_models"] == ["gpt-5", "o3"]
    assert [(s["id"], s["title"]) for s in session["all_sessions"]] == [("session-fox", "Deflake"), ("session-bee", "Bees")]
    assert session["total_tokens"] == {"input": 48210, "output": 3120}
    assert session["server_version"] == "1.0.0"
    assert session["title"] == "Deflake"
    assert session["reasoning_effort"] == "high"
    assert session["history_loaded"] is True


def test_model_changed_ok(chat):
    report = chat.act({"type": "set_model", "model": "gpt-5"})
    assert sent(report) == [{"id": FIRST_REQUEST_ID, "type": "set_model", "model": "gpt-5"}]
    assert chat.session()["pending_model"] == "gpt-5"
    chat.frame({"type": "model_changed", "id": FIRST_REQUEST_ID, "model": "gpt-5"})
    session = chat.session()
    assert (session["model"], session["pending_model"]) == ("gpt-5", None)
    assert chat.state()["banners"]["error"] is None
    assert chat.node("nav.model_picker")["label"] == "gpt-5"


def test_model_changed_with_error_keeps_the_model(chat):
    chat.act({"type": "set_model", "model": "gpt-9"})
    chat.frame({"type": "model_changed", "id": FIRST_REQUEST_ID, "model": "gpt-9", "error": "unknown model"})
    session = chat.session()
    assert (session["model"], session["pending_model"]) == ("claude-sonnet-4", None)
    error = chat.state()["banners"]["error"]
    assert error is not None and "unknown model" in error["text"]
    assert visible(chat.node("banner.error"))


def test_reasoning_effort_changed_ok(chat):
    report = chat.act({"type": "set_reasoning_effort", "effort": "high"})
    assert sent(report) == [{"id": FIRST_REQUEST_ID, "type": "set_reasoning_effort", "effort": "high"}]
    chat.frame({"type": "reasoning_effort_changed", "id": FIRST_REQUEST_ID, "effort": "high"})
    assert chat.session()["reasoning_effort"] == "high"
    assert chat.state()["banners"]["error"] is None


def test_reasoning_effort_changed_with_error_keeps_the_effort(chat):
    chat.act({"type": "set_reasoning_effort", "effort": "extreme"})
    chat.frame({"type": "reasoning_effort_changed", "id": FIRST_REQUEST_ID, "error": "unsupported effort"})
    assert chat.session()["reasoning_effort"] == "medium"
    error = chat.state()["banners"]["error"]
    assert error is not None and "unsupported effort" in error["text"]


def test_available_models_updated(chat):
    chat.frame({"type": "available_models_updated", "available_models": ["gpt-5", "o3"], "provider_model": "o3"})
    session = chat.session()
    assert (session["available_models"], session["model"]) == (["gpt-5", "o3"], "o3")
    chat.act({"type": "navigate", "screen": "model_picker"})
    assert chat.node("model.gpt-5") is not None and chat.node("model.o3") is not None
    assert chat.node("model.claude-sonnet-4") is None


def test_compact_success_adds_a_notice(chat):
    report = chat.act({"type": "compact"})
    assert sent(report) == [{"id": FIRST_REQUEST_ID, "type": "compact"}]
    assert chat.session()["is_compacting"] is True
    chat.frame({"type": "compact_result", "id": FIRST_REQUEST_ID, "message": "Saved 12000 tokens", "success": True})
    state = chat.state()
    assert state["session"]["is_compacting"] is False
    assert [n["text"] for n in state["notices"]] == ["Saved 12000 tokens"]
    assert state["banners"]["error"] is None


def test_compact_failure_shows_a_banner(chat):
    chat.act({"type": "compact"})
    chat.frame({"type": "compact_result", "id": FIRST_REQUEST_ID, "message": "Nothing to compact", "success": False})
    state = chat.state()
    assert state["session"]["is_compacting"] is False
    assert state["banners"]["error"]["text"] == "Nothing to compact"
    assert state["notices"] == []


@pytest.mark.parametrize(
    "trigger, saved, notices",
    [
        ("hard_compact", 12000, ["Context compacted (12000 tokens saved)"]),
        ("auto", 512, ["Context compacted (512 tokens saved)"]),
        ("background", 12000, []),
    ],
)
def test_compaction_notice(chat, trigger, saved, notices):
    chat.frame({"type": "compaction", "trigger": trigger, "tokens_saved": saved})
    assert [n["text"] for n in chat.state()["notices"]] == notices
    chat.frame({"type": "compaction", "trigger": "hard_compact", "tokens_saved": 7})
    assert [n["text"] for n in chat.state()["notices"]] == notices + ["Context compacted (7 tokens saved)"]


def test_notification_adds_a_notice(chat):
    chat.frame({"type": "notification", "from_name": "build-agent", "message": "Build green"})
    (notice,) = chat.state()["notices"]
    assert notice["text"] == "build-agent: Build green"
    assert notice["kind"] == "notification"
    node = chat.node(f"notice.{notice['id']}")
    assert node is not None and node["label"] == "build-agent: Build green"


def test_reloading_adds_a_notice_and_reconnects_shortly(chat):
    chat.frame({"type": "reloading", "new_socket": "/tmp/jcode.sock"})
    assert [n["text"] for n in chat.state()["notices"]] == ["Server is updating, reconnecting shortly"]
    report = chat.app.platform_event({"type": "websocket_closed", "effect_id": chat.socket, "code": 1012})
    timers = [e for e in report["effects"] if e["type"] == "schedule_timer"]
    assert len(timers) == 1 and timers[0]["after_ms"] == 500 and timers[0]["purpose"] == "reconnect"


def test_session_close_requested_stops_reconnecting(chat):
    chat.frame({"type": "session_close_requested", "reason": "Session closed from the desktop"})
    assert chat.state()["banners"]["error"]["text"] == "Session closed from the desktop"
    report = chat.app.platform_event({"type": "websocket_closed", "effect_id": chat.socket, "code": 1000})
    assert "schedule_timer" not in effect_types(report)
    assert "websocket_connect" not in effect_types(report)
    connection = chat.state()["connection"]
    assert connection["phase"] == "failed"
    assert connection["reconnect_delay_ms"] is None
    assert connection["socket_open"] is False


def test_resume_session_sends_resume_and_get_history(chat):
    report = chat.act({"type": "resume_session", "session_id": "session-owl"})
    assert sent(report) == [
        {"id": FIRST_REQUEST_ID, "type": "resume_session", "session_id": "session-owl"},
        {"id": FIRST_REQUEST_ID + 1, "type": "get_history"},
    ]
    chat.frame(
        {"type": "session", "session_id": "session-owl"},
        {"type": "history", "id": FIRST_REQUEST_ID + 1, "session_id": "session-owl",
         "messages": [{"role": "user", "content": "Draft the notes"}]},
    )
    assert chat.session()["id"] == "session-owl"
    assert chat.session()["title"] == "Release notes"
    assert [(e["role"], e["text"]) for e in chat.transcript()] == [("user", "Draft the notes")]


def test_rename_session_is_optimistic(chat):
    report = chat.act({"type": "rename_session", "title": "Deflake reconnect"})
    assert sent(report) == [{"id": FIRST_REQUEST_ID, "type": "rename_session", "title": "Deflake reconnect"}]
    assert chat.session()["title"] == "Deflake reconnect"
    assert session_titles(chat)["session-fox"] == "Deflake reconnect"


def test_clear_conversation_is_optimistic(chat):
    report = chat.act({"type": "clear_conversation"})
    assert sent(report) == [{"id": FIRST_REQUEST_ID, "type": "clear"}]
    assert chat.transcript() == []
    assert child_ids(chat.node("chat.messages")) == []


@pytest.mark.parametrize("how", ["action", "tap"])
def test_dismiss_error(chat, how):
    chat.frame({"type": "error", "message": "overloaded"})
    assert chat.state()["banners"]["error"]["text"] == "overloaded"
    if how == "action":
        chat.act({"type": "dismiss_error"})
    else:
        chat.tap("banner.error.dismiss")
    assert chat.state()["banners"]["error"] is None
    assert not visible(chat.node("banner.error"))


@pytest.mark.parametrize("how", ["action", "tap"])
def test_dismiss_notice(chat, how):
    chat.frame({"type": "notification", "from_name": "a", "message": "first"}, {"type": "notification", "message": "second"})
    first, second = chat.state()["notices"]
    if how == "action":
        chat.act({"type": "dismiss_notice", "notice_id": first["id"]})
    else:
        chat.tap(f"notice.{first['id']}.dismiss")
    assert chat.state()["notices"] == [second]
    assert chat.node(f"notice.{first['id']}") is None
    assert chat.node(f"notice.{second['id']}") is not None


@pytest.mark.parametrize("screen", ["sessions", "model_picker", "settings"])
def test_navigate(chat, screen):
    chat.act({"type": "navigate", "screen": screen})
    assert chat.state()["screen"] == screen
    assert chat.tree()["value"] == screen
    chat.act({"type": "navigate", "screen": "chat"})
    assert chat.state()["screen"] == "chat"


# -- 5. approvals and input ------------------------------------------------------------

PERMISSION = {
    "type": "permission_request", "request_id": "perm-1", "session_id": "session-fox", "action": "bash",
    "detail": "cargo test -p jcode-mobile-core", "tier": "medium",
}


def test_permission_request_shows_the_sheet(chat):
    chat.start_turn()
    chat.frame(PERMISSION)
    assert chat.state()["permission_requests"] == [
        {"request_id": "perm-1", "session_id": "session-fox", "action": "bash",
         "detail": "cargo test -p jcode-mobile-core", "tier": "medium"}]
    sheet = chat.node("permission.perm-1")
    assert sheet is not None and sheet["role"] == "sheet" and sheet["visible"]
    for button in ("approve", "deny", "always"):
        node = chat.node(f"permission.perm-1.{button}")
        assert node is not None and node["role"] == "button" and "tap" in node["supported_actions"], button
        assert node["id"] in child_ids(sheet)


@pytest.mark.parametrize(
    "how, approved, remember",
    [
        ({"type": "respond_permission", "request_id": "perm-1", "approved": True}, True, False),
        ({"type": "respond_permission", "request_id": "perm-1", "approved": False, "remember": False}, False, False),
        ({"type": "respond_permission", "request_id": "perm-1", "approved": True, "remember": True}, True, True),
        ("permission.perm-1.approve", True, False),
        ("permission.perm-1.deny", False, False),
        ("permission.perm-1.always", True, True),
    ],
    ids=["action-approve", "action-deny", "action-always", "tap-approve", "tap-deny", "tap-always"],
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


@pytest.mark.parametrize("is_password, role", [(True, "secure_field"), (False, "text_field")])
def test_stdin_request_is_shown_masked_when_it_is_a_password(chat, is_password, role):
    chat.start_turn()
    chat.frame({"type": "stdin_request", "request_id": "stdin-1", "prompt": "[sudo] password:",
                "is_password": is_password, "tool_call_id": "call_apt"})
    assert chat.state()["stdin_requests"] == [
        {"request_id": "stdin-1", "prompt": "[sudo] password:", "is_password": is_password, "tool_call_id": "call_apt"}]
    field = chat.node("stdin.stdin-1.input")
    assert field is not None and field["role"] == role and field["visible"]
    assert field["label"] == "[sudo] password:"


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


# -- 6. attachments and voice ------------------------------------------------------------


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


def test_remove_attachment(chat):
    other = base64.b64encode(b"\x89PNG-second-image").decode("ascii")
    first = attach(chat)
    second = attach(chat, other)
    assert [a["id"] for a in chat.state()["attachments"]] == [first["id"], second["id"]]
    chat.act({"type": "remove_attachment", "attachment_id": first["id"]})
    assert [a["id"] for a in chat.state()["attachments"]] == [second["id"]]
    assert chat.node(f"attachment.{first['id']}") is None
    report = chat.act({"type": "send_message", "text": "Only the second"})
    assert sent(report)[0]["images"] == [["image/png", other]]


def test_voice_input_fills_the_draft_and_can_be_sent(chat):
    report = chat.act({"type": "start_voice_input"})
    assert effect_types(report) == ["request_speech_transcript"]
    assert chat.state()["voice"]["is_listening"] is True

    chat.app.platform_event({"type": "speech_transcript", "text": "Run the", "is_final": False})
    state = chat.state()
    assert (state["draft"], state["voice"]["is_listening"]) == ("Run the", True)
    assert chat.node("chat.draft")["value"] == "Run the"

    chat.app.platform_event({"type": "speech_transcript", "text": "Run the tests", "is_final": True})
    state = chat.state()
    assert (state["draft"], state["voice"]["is_listening"]) == ("Run the tests", False)

    report = chat.act({"type": "send_message"})
    assert sent(report) == [{"id": FIRST_REQUEST_ID, "type": "message", "content": "Run the tests"}]
    assert chat.state()["draft"] == ""


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
        {"type": "error", "message": "slow down"},  # no id, no retry_after_secs
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
    assert state["banners"]["error"] == {"message": "slow down", "retry_after_secs": None, "text": "slow down"}


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
