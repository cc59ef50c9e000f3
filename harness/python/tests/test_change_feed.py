"""The change feed (jcode_mobile_changes): a mirror kept only from the feed
equals the state after every step of long sessions, and one streamed delta
costs a few dozen bytes whatever the length of the conversation."""

import json

import pytest

from jcode_mobile import App
from jcode_mobile.fake_gateway import FakeJcodeServer, Host, Reply
from jcode_mobile.mirror import Mirror, apply_ops, parse_pointer

from helpers import fill_pairing_form


class MirroredApp(App):
    """An app whose every input is followed by a mirror update and a check."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mirror = Mirror(self)
        self.checked = 0

    def _check(self, report: dict) -> dict:
        state = self.mirror.update()
        assert state == self.state(), f"mirror differs after revision {self.mirror.revision}"
        self.checked += 1
        return report

    def dispatch(self, action):
        return self._check(super().dispatch(action))

    def platform_event(self, event):
        return self._check(super().platform_event(event))


def long_session(delivery: str, frame_events: int = 1) -> MirroredApp:
    replies = [
        Reply(
            text=f"Answer number {i}: " + "lorem ipsum dolor sit amet " * (i % 4 + 1),
            reasoning="thinking it over" if i % 2 else None,
            reasoning_secs=1.5 if i % 2 else None,
            tools=[{"id": f"call_{i}", "name": "bash", "input": '{"command":"make test"}', "output": "ok",
                    "error": None if i % 3 else "exit 1"}] if i % 3 != 1 else [],
            tokens=(100 * i, 10 * i),
        )
        for i in range(25)
    ]
    server = FakeJcodeServer(token="tok-mirror", replies=replies,
                             history=[{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "reply"}])
    app = MirroredApp({"device_id": "mirror-device"})
    host = Host(app, server, delivery=delivery, frame_events=frame_events)
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    for i in range(25):
        host.dispatch({"type": "set_draft", "value": f"question {i}"})
        host.dispatch({"type": "send_message"})
        if i % 7 == 3:
            host.dispatch({"type": "dismiss_error"} if app.state()["banners"]["error"] else {"type": "navigate", "screen": "settings"})
            host.dispatch({"type": "navigate", "screen": "chat"})
        if i % 9 == 5:
            host.drop_connection()
            host.dispatch({"type": "send_message", "text": f"offline {i}"})
            host.fire_timers("reconnect")
    return app


@pytest.mark.parametrize("delivery,frame_events", [("parsed", 1), ("raw", 1), ("raw", 5)])
def test_a_mirror_follows_a_long_session_step_by_step(delivery, frame_events):
    app = long_session(delivery, frame_events)
    assert app.checked > (150 if frame_events > 1 else 300), app.checked
    assert app.mirror.state == app.state()
    assert len([m for m in app.state()["transcript"] if m["role"] == "user"]) >= 25
    # Resyncs happen only when history replaces the transcript (pairing, reconnects) — never per delta.
    assert app.mirror.resyncs <= 3


def test_one_delta_is_a_few_dozen_bytes_at_any_length():
    sizes = {}
    for entries in (10, 1000, 5000):
        messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " * 8} for i in range(entries)]
        app = App({"scenario": "connected_empty_chat"})
        app.platform_event({"type": "websocket_event", "event": {"type": "history", "session_id": "s", "messages": messages}})
        app.dispatch({"type": "send_message", "text": "go"})
        app.platform_event({"type": "websocket_event", "event": {"type": "text_delta", "text": "Hello "}})
        before = app.state()["revision"]
        app.platform_event({"type": "websocket_event", "event": {"type": "text_delta", "text": "world!"}})
        answer = app.changes_bytes(before)
        sizes[entries] = len(answer)
        (record,) = json.loads(answer)["changes"]
        assert record["ops"] == [{"op": "append", "path": f"/transcript/{entries + 1}/text", "value": "world!"}]
    assert all(size < 256 for size in sizes.values()), sizes
    assert max(sizes.values()) - min(sizes.values()) <= 4, "the size does not grow with the transcript"


def test_a_revision_too_old_or_unknown_gets_the_whole_state():
    app = App({"scenario": "connected_chat"})
    for i in range(5000):
        app.dispatch({"type": "set_draft", "value": str(i)})
    old = app.changes(1)
    assert old["resync"] is True and old["state"] == app.state()
    assert app.changes(10**9)["resync"] is True
    current = app.state()["revision"]
    assert app.changes(current) == {"ok": True, "revision": current, "since": current, "changes": []}


@pytest.mark.parametrize("since, written", [
    (2**63, b'"since":9223372036854775808,'),
    (2**64 - 1, b'"since":18446744073709551615,'),
])
def test_since_is_echoed_exactly_as_passed_beyond_int64(since, written):
    app = App({"scenario": "connected_chat"})
    answer = app.changes_bytes(since)
    assert written in answer, answer[:120]
    parsed = json.loads(answer)
    assert parsed["since"] == since and parsed["resync"] is True and parsed["state"] == app.state()


def test_the_pairing_code_leaves_the_feed_once_used():
    app = App()
    mirror = Mirror(app)
    for action in ({"type": "set_host", "value": "devbox.local"}, {"type": "set_pair_code", "value": "731904"},
                   {"type": "set_device_name", "value": "Phone"}, {"type": "set_working_dir", "value": "/srv/app"}):
        app.dispatch(action)
    assert b"731904" in app.changes_bytes(0)
    app.dispatch({"type": "submit_pairing"})
    assert b"731904" not in app.changes_bytes(0)
    mirror.update()
    assert mirror.state == app.state() and mirror.resyncs == 1


@pytest.mark.parametrize("history", [
    # One image of 9 MB.
    {"type": "history", "session_id": "s1", "messages": [{"role": "user", "content": "look"}],
     "images": [{"media_type": "image/png", "data": "A" * 9_000_000, "anchor": {"kind": "user_prompt", "ordinal": 0}}]},
    # 10 MB of text in ten rows.
    {"type": "history", "session_id": "s1",
     "messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": "x" * 999_000} for i in range(10)]},
], ids=["9MB_image", "10MB_text"])
def test_keystrokes_after_a_history_past_the_feeds_budget_are_described(history):
    # Issue 36: past 8 MiB of history the feed answered "changes":[] from the
    # third keystroke on, and a mirror kept the draft "he".
    app = App({"scenario": "connected_chat"})
    mirror = Mirror(app)
    before_history = mirror.revision
    app.platform_event({"type": "websocket_event", "event": history})
    assert mirror.update() == app.state()
    answers = []
    draft = ""
    for letter in "hello":
        draft += letter
        since = mirror.revision
        app.dispatch({"type": "set_draft", "value": draft})
        answer = app.changes(since)
        answers.append(answer["changes"])
        assert mirror.update() == app.state()
        assert mirror.state["draft"] == draft
        assert app.changes(before_history)["resync"] is True, "the history's record is past the budget"
    r = before_history + 1
    assert answers == [
        [{"revision": r + 1, "ops": [{"op": "replace", "path": "/draft", "value": "h"}]}],
        [{"revision": r + 2, "ops": [{"op": "append", "path": "/draft", "value": "e"}]}],
        [{"revision": r + 3, "ops": [{"op": "append", "path": "/draft", "value": "l"}]}],
        [{"revision": r + 4, "ops": [{"op": "append", "path": "/draft", "value": "l"}]}],
        [{"revision": r + 5, "ops": [{"op": "append", "path": "/draft", "value": "o"}]}],
    ]
    assert mirror.state["draft"] == "hello" and mirror.resyncs == 0


def test_json_pointers_and_ops_follow_the_rfcs():
    assert parse_pointer("/a~1b/~0c/3") == ["a/b", "~c", 3]
    doc = {"a": [1, 2], "s": "x"}
    doc = apply_ops(doc, [{"op": "add", "path": "/a/2", "value": 3}, {"op": "append", "path": "/s", "value": "yz"},
                          {"op": "remove", "path": "/a/0"}, {"op": "replace", "path": "/b", "value": None}])
    assert doc == {"a": [2, 3], "s": "xyz", "b": None}
