"""The tree's operations (jcode_mobile_tree_changes, the event stream's
``tree_changed``): a copy of the tree kept only from them
(:class:`jcode_mobile.tree_mirror.TreeMirror`) equals ``jcode_mobile_tree``
after every step of every scenario, of the journeys, of the demo and of
fuzzed sessions (seeded, reproducible) over long transcripts whose window
slides; bad handles and revisions get stable errors; a streamed delta costs
a few hundred bytes at 100 000 entries. Every answer is checked against the
runtime schema (conftest.py). Each test bounds its own run time."""

import json
import random
from collections import Counter
from typing import Any, List, Optional

import pytest

from jcode_mobile import App, JcodeMobileError, find_node, iter_nodes
from jcode_mobile import demo
from jcode_mobile.binding import take_json
from jcode_mobile.fake_gateway import FakeJcodeServer, Host, Reply
from jcode_mobile.journeys import APP_OPTIONS, JOURNEYS
from jcode_mobile.tree_mirror import TreeMirror, TreeMismatch

from helpers import all_scenarios, fill_pairing_form, tappable

TEST_DEADLINE_S = 90
pytestmark = pytest.mark.timeout(TEST_DEADLINE_S)  # pytest-timeout fails a test still running then



# -- a mirror checked after every call ------------------------------------------------------


def difference(a: Any, b: Any, path: str = "") -> Optional[str]:
    """Where two JSON values first differ (a path into them), or None."""
    if type(a) is not type(b):
        return f"{path or '/'}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}/{key}: only in the {'mirror' if key in a else 'tree'}"
            found = difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            ids = lambda xs: [x.get("id") if isinstance(x, dict) else x for x in xs]  # noqa: E731
            return f"{path}: {len(a)} items {ids(a)[:8]} != {len(b)} items {ids(b)[:8]}"
        for k, (x, y) in enumerate(zip(a, b)):
            found = difference(x, y, f"{path}/{x.get('id', k) if isinstance(x, dict) else k}")
            if found:
                return found
        return None
    return None if a == b else f"{path or '/'}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}"


class TreeMirroredApp(App):
    """An app whose tree mirror is brought up to date from jcode_mobile_tree_changes after every
    call into the core, then compared with jcode_mobile_tree. With ``collect`` (calls made on
    another thread, as the real host does) a difference is kept in :attr:`mismatches`, not raised."""

    def __init__(self, *args: Any, collect: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.mirror = TreeMirror(self)
        self.collect = collect
        self.mismatches: List[str] = []
        self.checked = 0
        #: How many operations of each kind the mirror applied.
        self.ops: Counter = Counter()
        #: Every window the message list had, in order (when it changed).
        self.windows: List[dict] = []
        self.largest_answer = 0

    def check(self, what: str) -> None:
        problem = None
        try:
            self.mirror.update()
        except TreeMismatch as mismatch:
            problem = f"after {what}: {mismatch}"
        else:
            self.ops.update(op["op"] for op in self.mirror.last_ops)
            self.largest_answer = max(self.largest_answer, self.mirror.last_answer_bytes)
            answer = self.tree_raw()
            if self.mirror.revision != answer["revision"]:
                problem = f"after {what}: the mirror is of revision {self.mirror.revision}, the tree of {answer['revision']}"
            elif self.mirror.tree != answer["tree"]:
                problem = (f"after {what}: the mirror of revision {self.mirror.revision} differs from the tree at "
                           f"{difference(self.mirror.tree, answer['tree'])}")
            listing = self.mirror.node("chat.messages")
            window = listing.get("window") if listing else None
            if window and (not self.windows or self.windows[-1] != window):
                self.windows.append(dict(window))
        if problem is not None:
            if not self.collect:
                raise AssertionError(problem)
            self.mismatches.append(problem)
        self.checked += 1

    def dispatch_raw(self, action):
        report = super().dispatch_raw(action)
        self.check(f"action {json.dumps(action)[:160]}")
        return report

    def platform_event_raw(self, event):
        report = super().platform_event_raw(event)
        self.check(f"event {json.dumps(event)[:160]}")
        return report


def server_event(app: App, event: dict) -> dict:
    """One server event over the app's WebSocket."""
    return app.platform_event({"type": "websocket_event", "event": event})


def history(count: int, *, tools_every: int = 7, seed: int = 0) -> List[dict]:
    """``count`` history rows as today's server renders them: prompts, answers of varied length,
    tool rows (``tool_data``: the call, ``content``: its output), now and then a system row."""
    rng = random.Random(seed)
    rows: List[dict] = []
    for i in range(count):
        if i % 2 == 0:
            rows.append({"role": "user", "content": f"Question {i}: " + "why does it fail? " * rng.randint(1, 4)})
        elif i % tools_every == 0:
            call = {"id": f"call_h{i % 5}", "name": "bash", "input": {"command": f"make test-{i}"}}
            rows.append({"role": "tool", "content": "ok\n" * rng.randint(1, 6), "tool_data": call})
        elif i % 31 == 0:
            rows.append({"role": "system", "content": f"Context compacted ({i})"})
        else:
            rows.append({"role": "assistant", "content": f"Answer {i}. " + "lorem ipsum dolor sit amet " * rng.randint(0, 12)})
    return rows


SESSIONS = [{"session_id": f"session-{name}", "display_title": name.title()} for name in ("fox", "owl", "bee", "elk", "yak")]


def history_event(count: int, *, sessions: Optional[List[dict]] = None, **options: Any) -> dict:
    event = {"type": "history", "session_id": "session-fuzz", "messages": history(count, **options)}
    if sessions is not None:
        event["all_sessions"] = sessions
    return event


def listing(tree: dict) -> dict:
    found = find_node(tree, "chat.messages")
    assert found is not None
    return found


# -- the tree mirror on its own -------------------------------------------------------------


def small_tree() -> dict:
    def node(node_id: str, *children: dict, **fields: Any) -> dict:
        return {"id": node_id, "label": "", "value": None, "children": list(children), **fields}
    return node("root", node("a", node("a.1"), node("a.2")), node("b"), node("c", node("c.1")))


def test_the_tree_mirror_applies_each_kind_of_operation_by_id():
    mirror = TreeMirror(tree=small_tree(), revision=4)
    mirror.apply([
        {"op": "splice", "parent": "root", "index": 1, "remove": ["b"],
         "insert": [{"id": "d", "label": "", "value": None, "children": [{"id": "d.1", "children": []}]}]},
        {"op": "move", "id": "c", "parent": "root", "index": 0},
        {"op": "update", "id": "a.2", "set": {"label": "two", "window": {"start": 0, "end": 1, "total": 1}}},
        {"op": "append", "id": "a.2", "field": "value", "text": "x"},
        {"op": "append", "id": "a.2", "field": "value", "text": "é🙂"},
        {"op": "update", "id": "a.2", "set": {"window": None}},
    ])
    assert [n["id"] for n in iter_nodes(mirror.tree)] == ["root", "c", "c.1", "a", "a.1", "a.2", "d", "d.1"]
    assert mirror.node("a.2") == {"id": "a.2", "label": "two", "value": "xé🙂", "children": []}
    assert "b" not in mirror and mirror.parent("d.1") == "d" and len(mirror) == 8
    assert mirror.revision == 4 and mirror.applied == 6


def test_the_tree_mirror_keeps_a_nodes_first_spans_and_goes_on_with_the_new_ones():
    tree = small_tree()
    tree["children"][0]["children"][0].update(value="a b c", spans=[
        {"text": "a ", "styles": []}, {"text": "b", "styles": ["bold"]}, {"text": " c", "styles": []}])
    mirror = TreeMirror(tree=tree, revision=2)
    mirror.apply([
        {"op": "spans", "id": "a.1", "keep": 2, "spans": [{"text": " cd ", "styles": []}, {"text": "e", "styles": ["italic"]}]},
    ])
    assert mirror.node("a.1")["value"] == "a b cd e" and mirror.node("a.1")["accessibility_value"] == "a b cd e"
    assert mirror.node("a.1")["spans"] == [
        {"text": "a ", "styles": []}, {"text": "b", "styles": ["bold"]},
        {"text": " cd ", "styles": []}, {"text": "e", "styles": ["italic"]}]
    with pytest.raises(TreeMismatch, match="spans keeping 5 of 4"):
        mirror.apply([{"op": "spans", "id": "a.1", "keep": 5, "spans": []}])


def test_a_long_styled_paragraph_streams_as_its_last_runs_and_a_mirror_follows():
    """A reply of one long paragraph with emphasis, bold, code and links, streamed 1 to 8 bytes per
    delta: once its first runs are final, a delta sends the runs after the last checkpoint only
    (a "spans" operation), never the paragraph's spans whole; each answer stays under 4 KiB."""
    app = App({"scenario": "connected_empty_chat"})
    app.dispatch({"type": "send_message", "text": "explain"})
    mirror = TreeMirror(app)
    reply = "".join(f"Step {i} is *important* and **bold {i}** with `code` and [a link](https://x.y/{i}). "
                    for i in range(1, 81))
    rng = random.Random(36)
    at, kinds, largest = 0, Counter(), 0
    while at < len(reply):
        size = rng.randint(1, 8)
        server_event(app, {"type": "text_delta", "text": reply[at:at + size]})
        at += size
        answer = app.tree_changes_bytes(mirror.revision)
        if at > len(reply) // 2:
            largest = max(largest, len(answer))
        for op in json.loads(answer)["ops"]:
            kinds[op["op"]] += 1
            assert not (op["op"] == "update" and "spans" in op["set"] and len(op["set"]["spans"]) > 40), op["id"]
        mirror.update()
    assert mirror.tree == app.tree() and mirror.resyncs == 0
    assert kinds["spans"] > 100, kinds
    assert largest <= 4 * 1024, largest
    paragraph = next(n for n in iter_nodes(app.tree()) if n.get("role") == "paragraph" and len(n.get("spans") or []) > 600)
    assert len(paragraph["spans"]) == 641, "80 times plain, italic, plain, bold, plain, code, plain, link; then '.'"
    app.close()


@pytest.mark.parametrize("op, problem", [
    ({"op": "splice", "parent": "nowhere", "index": 0, "remove": [], "insert": []}, "no node 'nowhere'"),
    ({"op": "splice", "parent": "a", "index": 0, "remove": ["a.2"], "insert": []}, "removes 'a.2' where 'a.1' is"),
    ({"op": "splice", "parent": "a", "index": 1, "remove": ["a.2", "a.3"], "insert": []}, "removing 2 of 2"),
    ({"op": "splice", "parent": "a", "index": 3, "remove": [], "insert": []}, "splice at 3"),
    ({"op": "splice", "parent": "a", "index": 0, "remove": [], "insert": [{"id": "c.1", "children": []}]},
     "already in the tree"),
    ({"op": "move", "id": "c.1", "parent": "a", "index": 0}, "not a child of 'a'"),
    ({"op": "move", "id": "a.1", "parent": "a", "index": 2}, "move to 2"),
    ({"op": "update", "id": "ghost", "set": {"label": "x"}}, "no node 'ghost'"),
    ({"op": "update", "id": "a", "set": {"children": []}}, "not a node's own fields"),
    ({"op": "append", "id": "a", "field": "bounds", "text": "x"}, "not a string field"),
    ({"op": "spans", "id": "a", "keep": 1, "spans": []}, "spans keeping 1 of None"),
    ({"op": "rotate", "id": "a"}, "unknown operation"),
])
def test_the_tree_mirror_refuses_an_operation_that_does_not_fit_and_keeps_its_copy(op, problem):
    mirror = TreeMirror(tree=small_tree(), revision=1)
    with pytest.raises(TreeMismatch) as refused:
        mirror.apply([op])
    assert problem in str(refused.value)
    assert mirror.tree == small_tree() and len(mirror) == 7


def test_the_tree_mirror_refuses_an_answer_from_another_revision():
    mirror = TreeMirror(tree=small_tree(), revision=3)
    with pytest.raises(TreeMismatch):
        mirror.apply_answer({"ok": True, "revision": 6, "since": 5, "ops": []})
    assert not mirror.apply_event({"type": "tree_changed", "seq": 1, "revision": 6, "since": 5, "ops": []})
    assert not mirror.apply_event({"type": "tree_changed", "seq": 2, "revision": 7, "resync": True})
    assert mirror.revision == 3


# -- every scenario, every journey, the demo ------------------------------------------------------


@pytest.mark.parametrize("name", all_scenarios())
def test_a_mirror_follows_every_step_from_every_scenario(name):
    """Each tappable node is tapped (the scenario reloaded after each tap), then the screens are
    walked, the list scrolled, a reply streamed and the next scenario loaded."""
    scenarios = all_scenarios()
    app = TreeMirroredApp({"scenario": name})
    targets = [n["id"] for n in tappable(app.tree())]
    assert targets, "every screen has something to tap"
    for node_id in targets:
        app.dispatch({"type": "tap_node", "node_id": node_id})
        app.dispatch({"type": "load_scenario", "scenario": name})
    for screen in ("settings", "sessions", "model_picker", "chat", "onboarding", "chat"):
        app.dispatch({"type": "navigate", "screen": screen})
    app.dispatch({"type": "set_draft", "value": "Run the tests"})
    for scroll in ({"type": "scroll_messages", "offset": 0}, {"type": "scroll_to_message", "index": 1},
                   {"type": "scroll_to_message", "index": 10**6}, {"type": "scroll_messages", "offset": 10**9}):
        app.dispatch(scroll)
    server_event(app, {"type": "text_delta", "text": "Looking "})
    server_event(app, {"type": "text_delta", "text": "into it"})
    server_event(app, {"type": "tool_start", "id": "call_walk", "name": "bash"})
    server_event(app, {"type": "tool_done", "id": "call_walk", "name": "bash", "output": "ok"})
    server_event(app, {"type": "message_end"})
    app.dispatch({"type": "load_scenario", "scenario": scenarios[(scenarios.index(name) + 1) % len(scenarios)]})
    assert app.checked == 2 * len(targets) + 17
    assert app.mirror.resyncs == 0
    app.close()


@pytest.mark.parametrize("name", list(JOURNEYS))
def test_a_mirror_follows_every_step_of_a_journey(name):
    journey = JOURNEYS[name]
    app = TreeMirroredApp(APP_OPTIONS)
    host = Host(app, journey.server())
    journey.drive(host)
    assert app.checked == len(host.steps) > 10
    assert app.mirror.resyncs == 0
    assert app.ops["splice"] > 0 and app.ops["update"] > 0


def conversation_replies(turns: int) -> List[Reply]:
    return [
        Reply(
            text=f"Answer number {i}: " + "lorem ipsum dolor sit amet " * (i % 4 + 1),
            reasoning="thinking it over" if i % 2 else None,
            reasoning_secs=1.5 if i % 2 else None,
            tools=[{"id": f"call_{i % 3}", "name": "bash", "input": '{"command":"make test"}', "output": "ok",
                    "error": None if i % 3 else "exit 1"}] if i % 3 != 1 else [],
            tokens=(100 * i, 10 * i),
        )
        for i in range(turns)
    ]


@pytest.mark.parametrize("delivery, frame_events", [("parsed", 1), ("raw", 5)])
def test_a_mirror_follows_a_long_conversation_with_drops_and_reconnects(delivery, frame_events):
    """15 turns (reasoning, tool calls whose ids repeat across turns, answers) over a 40-entry
    history, with screens visited, the connection dropped and messages sent offline."""
    server = FakeJcodeServer(token="tok-tree", replies=conversation_replies(15), history=history(40))
    app = TreeMirroredApp({"device_id": "tree-device"})
    host = Host(app, server, delivery=delivery, frame_events=frame_events)
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    host.dispatch({"type": "resume_session", "session_id": server.main_session})
    for i in range(15):
        host.dispatch({"type": "set_draft", "value": f"question {i}"})
        host.dispatch({"type": "send_message"})
        if i % 7 == 3:
            host.dispatch({"type": "navigate", "screen": "settings"})
            host.dispatch({"type": "navigate", "screen": "chat"})
            host.dispatch({"type": "scroll_messages", "offset": 0})
        if i % 9 == 5:
            host.drop_connection()
            host.dispatch({"type": "send_message", "text": f"offline {i}"})
            host.fire_timers("reconnect")
    assert app.checked == len(host.steps) > 100
    assert app.mirror.resyncs == 0
    assert {"splice", "update", "append"} <= set(app.ops)
    # call ids repeat across turns; their cards' ids never do (the mirror refuses an id twice)
    calls = [c["id"] for e in app.state()["transcript"] for c in e["tool_calls"]]
    assert len(calls) > len(set(calls))


def test_a_mirror_follows_every_call_of_the_demo_over_real_sockets(monkeypatch):
    """The demo (`make demo`) with its app's tree mirrored; calls come from the host's thread."""
    apps: List[TreeMirroredApp] = []

    def mirrored_app(options=None, **kwargs):
        apps.append(TreeMirroredApp(options, collect=True, **kwargs))
        return apps[-1]

    monkeypatch.setattr(demo, "App", mirrored_app)
    lines: List[str] = []
    demo.Demo(out=lines.append, frame_delay_ms=0).run()
    (app,) = apps
    assert app.mismatches == []
    assert app.checked > 50
    assert app.mirror.resyncs == 0
    assert app.ops["append"] > 0, "the streamed replies arrive as appends"


def test_rows_that_change_places_move_by_id():
    app = TreeMirroredApp({"scenario": "connected_empty_chat"})
    server_event(app, history_event(2, sessions=SESSIONS[:4]))
    app.dispatch({"type": "navigate", "screen": "sessions"})
    fox, owl, bee, elk = SESSIONS[:4]
    server_event(app, history_event(2, sessions=[elk, fox, bee, owl]))
    moves = [op for op in app.mirror.last_ops if op["op"] == "move"]
    assert moves == [{"op": "move", "id": "session.session-elk", "parent": "sessions.list", "index": 0},
                     {"op": "move", "id": "session.session-bee", "parent": "sessions.list", "index": 2}]
    rows = [n["id"] for n in app.mirror.node("sessions.list")["children"]]
    assert rows[:4] == ["session.session-elk", "session.session-fox", "session.session-bee", "session.session-owl"]
    assert app.mirror.resyncs == 0


# -- long transcripts: the window slides ------------------------------------------------------------


def test_a_2000_entry_history_slides_the_window_from_the_top_through_the_middle_to_the_end():
    app = TreeMirroredApp({"scenario": "connected_empty_chat"})
    server_event(app, history_event(2000))
    end = listing(app.tree())
    assert end["window"]["total"] == 2000 and end["window"]["end"] == 2000 and end["window"]["start"] > 1900
    assert end["scroll"]["offset"] == end["scroll"]["max_offset"] > 100_000

    app.dispatch({"type": "scroll_messages", "offset": 0})  # the top
    top = listing(app.tree())
    assert top["window"]["start"] == 0 and top["scroll"]["offset"] == 0
    assert top["children"][0]["bounds"]["y"] == 0  # the content's top (rows are in the list's content coordinates)

    # screen by screen down: the window slides (rows leave at the top, arrive at the bottom); the
    # rows that stay only move (their bounds), so an answer is the size of a screen, not of the list
    starts = [0]
    for k in range(1, 41):
        before = [n["id"] for n in listing(app.mirror.tree)["children"]]
        app.dispatch({"type": "scroll_messages", "offset": k * top["bounds"]["height"]})
        after = [n["id"] for n in listing(app.mirror.tree)["children"]]
        kept = [i for i in before if i in after]
        assert kept == before[len(before) - len(kept):] == after[:len(kept)], (before, after)
        assert {op["op"] for op in app.mirror.last_ops} <= {"update", "splice"}
        assert app.mirror.last_answer_bytes < 24 * 1024
        starts.append(listing(app.mirror.tree)["window"]["start"])
    assert starts == sorted(starts) and starts[-1] > 150  # 40 screens of about 570 points: some 190 rows

    app.dispatch({"type": "scroll_to_message", "index": 1000})  # the middle
    middle = listing(app.tree())
    assert middle["window"]["start"] < 1000 < middle["window"]["end"]
    entry = app.state()["transcript"][1000]["id"]
    row = find_node(middle, f"message.{entry}")
    frame, box, offset = middle["bounds"], row["bounds"], middle["scroll"]["offset"]
    assert box["y"] + box["height"] > offset and box["y"] < offset + frame["height"] // 2, "row 1000 is in view"

    app.dispatch({"type": "scroll_to_message", "index": 1999})  # the end, following new messages
    last = listing(app.tree())
    assert last["window"]["end"] == 2000 and last["scroll"]["offset"] == last["scroll"]["max_offset"]
    app.dispatch({"type": "send_message", "text": "and now?"})
    server_event(app, {"type": "text_delta", "text": "Still "})
    revision = app.mirror.revision
    server_event(app, {"type": "text_delta", "text": "here."})
    streaming = app.state()["transcript"][-1]["id"]
    assert app.tree_changes(revision)["ops"] == [
        {"op": "append", "id": f"message.{streaming}", "field": "value", "text": "here."},
        # the paragraph's text left the blank after "Still" out until more text came
        {"op": "append", "id": f"message.{streaming}.md.0", "field": "value", "text": " here."},
        {"op": "append", "id": f"message.{streaming}.md.0", "field": "accessibility_value", "text": " here."},
    ]
    assert listing(app.tree())["window"]["end"] == 2002
    assert app.mirror.resyncs == 0
    assert len({w["start"] for w in app.windows}) > 40


@pytest.mark.parametrize("index", [500, 1000, 1500])
def test_scroll_to_message_puts_the_row_at_the_top_of_a_windowed_list(index):
    app = App({"scenario": "connected_empty_chat"})
    server_event(app, history_event(2000))
    app.dispatch({"type": "scroll_to_message", "index": index})
    tree = app.tree()
    row = find_node(tree, f"message.{app.state()['transcript'][index]['id']}")
    # in the list's content coordinates: at the scroll offset is at the list's top on the screen
    assert row["bounds"]["y"] == listing(tree)["scroll"]["offset"]
    app.close()


# -- fuzzed sessions -------------------------------------------------------------------------------

TEXTS = ["Hello ", "world", ". ", "é", "日本語の文 ", "🙂", "\n", "`make test`", "x" * 300, "line one\nline two\n", " "]
TOOL_NAMES = ["bash", "read", "grep", "edit"]
#: Taps the fuzzer leaves out: they end the session it plays in (or start pairing over).
NOT_TAPPED = ("settings.disconnect", "settings.forget", "settings.add_server", ".forget", "pair.")


class SessionFuzzer:
    """Random (seeded, reproducible) user actions and server events for one app whose socket is
    connected: streamed replies with reasoning and tool calls, histories of up to 2 000 entries,
    scrolling, taps, screens, the network coming and going. :attr:`log` says what it did."""

    def __init__(self, app: App, seed: int):
        self.app = app
        self.rng = random.Random(seed)
        self.seed = seed
        self.calls: List[str] = []
        self.serial = 0
        self.request_id = 1
        self.log: List[str] = []
        self.histories = 0
        self.moves = [
            (24, self.text_delta), (3, self.text_replace), (4, self.reasoning), (4, self.tool_start),
            (5, self.tool_input), (2, self.tool_exec), (4, self.tool_done), (3, self.message_end), (3, self.done),
            (4, self.send_message), (2, self.history), (8, self.scroll_messages), (8, self.scroll_to_message),
            (5, self.tap), (3, self.navigate), (2, self.set_draft), (3, self.status), (1, self.network),
            (1, self.interrupted), (1, self.retry_rollback), (1, self.lifecycle), (2, self.tap_xy),
        ]
        self.weights = [w for w, _ in self.moves]

    def step(self) -> None:
        (move,) = self.rng.choices([m for _, m in self.moves], weights=self.weights)
        move()

    # -- what it sends

    def event(self, event: dict) -> None:
        self.log.append(json.dumps(event)[:120])
        report = server_event(self.app, event)
        self.note_requests(report)

    def action(self, action: dict) -> None:
        self.log.append(json.dumps(action)[:120])
        report = self.app.dispatch(action)
        self.note_requests(report)

    def note_requests(self, report: dict) -> None:
        for effect in report["effects"]:
            if effect["type"] == "websocket_send":
                self.request_id = json.loads(effect["line"]).get("id", self.request_id)

    def tree(self) -> dict:
        return self.app.mirror.tree if isinstance(self.app, TreeMirroredApp) else self.app.tree()

    # -- the moves

    def text_delta(self) -> None:
        self.event({"type": "text_delta", "text": "".join(self.rng.choices(TEXTS, k=self.rng.randint(1, 3)))})

    def text_replace(self) -> None:
        self.event({"type": "text_replace", "text": self.rng.choice(TEXTS) * self.rng.randint(1, 3)})

    def reasoning(self) -> None:
        if self.rng.random() < 0.7:
            self.event({"type": "reasoning_delta", "text": self.rng.choice(TEXTS)})
        else:
            self.event({"type": "reasoning_done", "duration_secs": round(self.rng.uniform(0.1, 9), 1)})

    def tool_start(self) -> None:
        # now and then an id used before (an earlier turn's, or this message's own)
        if self.calls and self.rng.random() < 0.2:
            call = self.rng.choice(self.calls)
        else:
            self.serial += 1
            call = f"call_{self.serial}"
        self.calls.append(call)
        self.event({"type": "tool_start", "id": call, "name": self.rng.choice(TOOL_NAMES)})

    def tool_input(self) -> None:
        self.event({"type": "tool_input", "delta": self.rng.choice(['{"command":', '"make test"', "}", " -v", "é"])})

    def tool_exec(self) -> None:
        if self.calls:
            self.event({"type": "tool_exec", "id": self.calls[-1], "name": "bash"})

    def tool_done(self) -> None:
        if self.calls:
            done = {"type": "tool_done", "id": self.rng.choice(self.calls), "name": "bash",
                    "output": self.rng.choice(["ok", "42 passed", "x" * 500, "line\n" * 20])}
            if self.rng.random() < 0.3:
                done["error"] = "exit 1"
            self.event(done)

    def message_end(self) -> None:
        self.event({"type": "message_end"})

    def done(self) -> None:
        self.event({"type": "done", "id": self.request_id})
        self.calls = self.calls[-3:]

    def send_message(self) -> None:
        self.action({"type": "send_message", "text": f"prompt {len(self.log)} " + self.rng.choice(TEXTS)})

    def history(self) -> None:
        self.histories += 1
        count = self.rng.choice([0, 3, 40, 64, 65, 300, 2000])
        self.log.append(f"history of {count} entries")
        # the server's sessions, some of them, in another order (the sessions screen's rows move)
        sessions = self.rng.sample(SESSIONS, self.rng.randint(0, len(SESSIONS)))
        report = server_event(self.app, history_event(count, tools_every=self.rng.choice([3, 7]), seed=self.rng.random(),
                                                      sessions=sessions))
        self.note_requests(report)

    def scroll_messages(self) -> None:
        scroll = (listing(self.tree()) if find_node(self.tree(), "chat.messages") else {}).get("scroll")
        most = scroll["max_offset"] if scroll else 1000
        offset = self.rng.choice([0, most, most // 2, self.rng.randint(0, most + 400), 10**9])
        self.action({"type": "scroll_messages", "offset": offset})

    def scroll_to_message(self) -> None:
        node = find_node(self.tree(), "chat.messages")
        total = node["window"]["total"] if node and node.get("window") else 10
        index = self.rng.choice([0, total // 2, max(0, total - 1), total, self.rng.randint(0, total + 5)])
        self.action({"type": "scroll_to_message", "index": index})

    def tap(self) -> None:
        targets = [n["id"] for n in tappable(self.tree()) if not any(x in n["id"] for x in NOT_TAPPED)]
        if targets:
            self.action({"type": "tap_node", "node_id": self.rng.choice(targets)})

    def tap_xy(self) -> None:
        if self.tree().get("value") == "chat":  # elsewhere a tap could forget the server
            self.action({"type": "tap_xy", "x": self.rng.uniform(0, 390), "y": self.rng.uniform(100, 740)})

    def navigate(self) -> None:
        screen = self.rng.choice(["chat", "chat", "chat", "sessions", "sessions", "settings", "model_picker", "onboarding"])
        self.action({"type": "navigate", "screen": screen})

    def set_draft(self) -> None:
        self.action({"type": "set_draft", "value": self.rng.choice(["", "draft", "a longer draft " * 10])})

    def status(self) -> None:
        self.event(self.rng.choice([
            {"type": "tokens", "input": self.rng.randint(0, 10**6), "output": self.rng.randint(0, 10**4)},
            {"type": "status_detail", "detail": self.rng.choice(["Reading files", "Running tests"])},
            {"type": "notification", "from_name": "owl", "message": "The build is green"},
            {"type": "error", "id": self.request_id, "message": "Rate limited"},
            {"type": "compaction", "trigger": "auto", "tokens_saved": 1200},
            {"type": "soft_interrupt_injected", "content": "also check the docs", "point": "after_tool"},
        ]))

    def network(self) -> None:
        reachable = self.rng.random() < 0.5
        self.log.append(f"reachable {reachable}")
        self.app.platform_event({"type": "network_reachability_changed", "reachable": reachable})

    def interrupted(self) -> None:
        self.event({"type": "interrupted"})

    def retry_rollback(self) -> None:
        self.event({"type": "retry_rollback", "attempt": 1, "max": 3})

    def lifecycle(self) -> None:
        kind = self.rng.choice(["app_background", "app_foreground"])
        self.log.append(kind)
        self.app.platform_event({"type": kind})


FUZZ_SEEDS = range(6)
FUZZ_STEPS = 200


@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_a_mirror_follows_a_fuzzed_session_step_by_step(seed):
    """Random inputs over a long transcript; after every call the mirror equals the tree. A second
    mirror catches up every few steps (several revisions in one answer)."""
    app = TreeMirroredApp({"scenario": "connected_empty_chat"})
    server_event(app, history_event(2000 if seed % 2 else 300, seed=seed))
    fuzzer = SessionFuzzer(app, seed)
    lazy = TreeMirror(app)
    catch_up = fuzzer.rng.randint(1, 30)
    for step in range(FUZZ_STEPS):
        try:
            fuzzer.step()
            if step == catch_up:
                lazy.update()
                assert lazy.tree == app.tree(), difference(lazy.tree, app.tree())
                catch_up += fuzzer.rng.randint(1, 30)
        except AssertionError as problem:
            raise AssertionError(f"seed {seed}, step {step} ({fuzzer.log[-1] if fuzzer.log else '-'}): "
                                 f"{problem}") from None
    assert app.checked == len(fuzzer.log) + 1  # every call into the core, and the first history
    assert app.mirror.resyncs == 0 and lazy.resyncs == 0
    assert {"splice", "update", "append"} <= set(app.ops), app.ops
    assert len(app.windows) > 10, "the window moved"


# -- the event stream's tree kind -------------------------------------------------------------------


def drain(subscription) -> List[dict]:
    events = []
    while True:
        event = subscription.next(timeout=0)
        if event is None:
            return events
        events.append(event)


def test_tree_changed_events_keep_a_mirror_equal_to_the_tree_through_a_fuzzed_session():
    app = App({"scenario": "connected_empty_chat"})
    with app.subscribe(kinds=["tree"], capacity=65536, timeout=0) as subscription:
        subscribed = subscription.next(timeout=1)
        assert subscribed["type"] == "subscribed"
        answer = app.tree_raw()
        assert answer["revision"] == subscribed["revision"]
        mirror = TreeMirror(tree=answer["tree"], revision=answer["revision"])
        server_event(app, history_event(2000, seed=7))
        fuzzer = SessionFuzzer(app, 7)
        kinds = Counter()
        for step in range(200):
            if step:
                fuzzer.step()
            for event in drain(subscription):
                kinds[event["type"]] += 1
                assert event["type"] == "tree_changed", event
                assert mirror.apply_event(event), f"step {step}: {json.dumps(event)[:200]} (mirror at {mirror.revision})"
            tree = app.tree_raw()
            assert mirror.revision == tree["revision"]
            assert mirror.tree == tree["tree"], f"step {step}: {difference(mirror.tree, tree['tree'])}"
    assert kinds["tree_changed"] > 150 and mirror.resyncs == 0
    app.close()


def test_the_default_kinds_leave_tree_changed_out_and_tree_alone_brings_only_it():
    with App({"scenario": "connected_empty_chat"}) as app:
        with app.events(timeout=0.2) as everything, app.events(timeout=0.2, kinds=["tree"]) as tree_only:
            app.dispatch({"type": "set_draft", "value": "hello"})
            app.dispatch({"type": "send_message"})
            server_event(app, {"type": "text_delta", "text": "Hi"})
            defaults = [e["type"] for e in everything]
            trees = list(tree_only)
        assert "tree_changed" not in defaults and "state_changed" in defaults
        assert [e["type"] for e in trees] == ["subscribed"] + ["tree_changed"] * 3
        revisions = [e["revision"] for e in trees]
        assert [e["since"] for e in trees[1:]] == revisions[:-1]
        # the reply's first row comes in whole
        assert any(op["op"] == "splice" and op["insert"] for op in trees[-1]["ops"]), trees[-1]["ops"]


def test_a_subscriber_that_lost_tree_events_catches_up_from_tree_changes():
    with App({"scenario": "connected_empty_chat"}) as app:
        with app.subscribe(kinds=["tree"], capacity=3, timeout=0.2) as slow:
            start = slow.next(timeout=1)
            mirror = TreeMirror(app, tree=app.tree(), revision=start["revision"])
            for i in range(10):
                app.dispatch({"type": "set_draft", "value": f"d{i}"})
            events = list(slow)
        assert [e["type"] for e in events] == ["tree_changed"] * 3 + ["events_lost"]
        for event in events[:3]:
            assert mirror.apply_event(event)
        assert mirror.node("chat.draft")["value"] == "d2"
        mirror.update()  # the lost revisions, from the feed
        assert mirror.tree == app.tree() and mirror.resyncs == 0
        assert mirror.node("chat.draft")["value"] == "d9"


def test_a_callback_subscriber_gets_tree_changed_too():
    with App({"scenario": "connected_empty_chat"}) as app:
        mirror = TreeMirror(app)
        seen: List[dict] = []
        with app.on_event(seen.append, kinds=["tree"]) as subscription:
            app.dispatch({"type": "send_message", "text": "go"})
            for text in ("Hello", " there"):
                server_event(app, {"type": "text_delta", "text": text})
        assert subscription.errors == []
        changes = [e for e in seen if e["type"] == "tree_changed"]
        assert len(changes) == 3
        for event in changes:
            assert mirror.apply_event(event)
        assert mirror.tree == app.tree()
        assert mirror.last_ops[0]["op"] == "append"


# -- bad inputs --------------------------------------------------------------------------------------


def test_tree_changes_with_a_null_a_freed_or_a_foreign_handle_is_a_stable_error(lib):
    fn = lib.jcode_mobile_tree_changes
    null = take_json(lib, fn(None, 0))
    assert null["ok"] is False and null["error"]["code"] == "null_argument" and null["error"]["field"] == "app"
    app = App({"scenario": "connected_chat"})
    with app.subscribe() as subscription:
        foreign = take_json(lib, fn(subscription.handle, 0))
    assert foreign["error"]["code"] == "invalid_handle" and foreign["error"]["field"] == "app"
    app.close()
    freed = app.tree_changes_raw(0)
    assert freed["ok"] is False and freed["error"]["code"] == "invalid_handle"
    with pytest.raises(JcodeMobileError) as refused:
        app.tree_changes(0)
    assert refused.value.code == "invalid_handle"


@pytest.mark.parametrize("ahead", [1, 1000, 2**63, 2**64 - 1])
def test_a_revision_from_the_future_is_invalid_field_since_revision(ahead):
    with App({"scenario": "connected_chat"}) as app:
        app.dispatch({"type": "set_draft", "value": "x"})
        since = min(app.revision + ahead, 2**64 - 1)
        answer = app.tree_changes_raw(since)
        assert answer["ok"] is False
        assert (answer["error"]["code"], answer["error"]["field"]) == ("invalid_field", "since_revision")
        assert str(since) in answer["error"]["message"]
        assert app.tree_changes(app.revision)["ops"] == []  # the app still answers


def test_the_current_revision_gets_no_ops_and_a_revision_never_handed_out_the_whole_tree():
    with App({"scenario": "connected_chat"}) as app:
        first = app.tree_raw()
        assert first["revision"] == 0
        for value in ("a", "ab", "abc"):
            app.dispatch({"type": "set_draft", "value": value})
        assert app.tree_changes(3) == {"ok": True, "revision": 3, "since": 3, "ops": []}
        # revisions 1 and 2 were never built: no tree was handed out there
        for since in (1, 2):
            answer = app.tree_changes(since)
            assert answer["resync"] is True and answer["since"] == since and answer["revision"] == 3
            assert answer["tree"] == app.tree()
        # revision 0 was: its operations lead to revision 3
        answer = app.tree_changes(0)
        assert answer["since"] == 0 and answer["revision"] == 3
        mirror = TreeMirror(tree=first["tree"], revision=0)
        mirror.apply_answer(answer)
        assert mirror.tree == app.tree() and mirror.node("chat.draft")["value"] == "abc"


def test_a_revision_too_old_to_describe_gets_the_whole_tree():
    with App({"scenario": "connected_chat"}) as app:
        app.tree()
        for i in range(300):  # each built: 300 steps, more than the feed keeps
            revision = app.dispatch({"type": "set_draft", "value": str(i)})["revision"]
            assert app.tree_changes(revision)["ops"] == []
        answer = app.tree_changes(0)
        assert answer["resync"] is True and answer["revision"] == revision and answer["tree"] == app.tree()
        recent = app.tree_changes(revision - 10)
        assert "resync" not in recent and len(recent["ops"]) >= 10


# -- sizes at scale ----------------------------------------------------------------------------------


def test_sizes_at_100_000_entries_the_tree_follows_the_screen_and_a_delta_is_small():
    """Sizes are deterministic (no timing is asserted): the tree of a 100 000-entry conversation is
    at most 256 KiB, wherever it is scrolled, and a streamed delta's operations at most 4 KiB."""
    app = App({"scenario": "connected_empty_chat"})
    server_event(app, history_event(100_000))
    mirror = TreeMirror(app)
    sizes = {"end": len(app.tree_bytes())}
    for where, action in [("top", {"type": "scroll_messages", "offset": 0}),
                          ("middle", {"type": "scroll_to_message", "index": 50_000}),
                          ("end", {"type": "scroll_to_message", "index": 99_999})]:
        app.dispatch(action)
        sizes[where] = max(sizes.get(where, 0), len(app.tree_bytes()))
        mirror.update()
        assert mirror.tree == app.tree()
    assert all(size <= 256 * 1024 for size in sizes.values()), sizes
    assert listing(mirror.tree)["window"]["total"] == 100_000

    app.dispatch({"type": "send_message", "text": "one more"})
    server_event(app, {"type": "text_delta", "text": "Hello "})
    mirror.update()
    delta_sizes = []
    for text in ("world", ", and ", "good night 🙂"):
        server_event(app, {"type": "text_delta", "text": text})
        answer = app.tree_changes_bytes(mirror.revision)
        delta_sizes.append(len(answer))
        ops = json.loads(answer)["ops"]
        # The message's text grows, and so does its markdown's paragraph (its value and what a screen
        # reader reads): the block's text has no trailing space, so its append carries the one before.
        message, block = ops[0]["id"], ops[1]["id"]
        assert block == message + ".md.0"
        assert [(op["op"], op["id"], op["field"]) for op in ops] == [
            ("append", message, "value"), ("append", block, "value"), ("append", block, "accessibility_value")]
        assert ops[0]["text"] == text and ops[1]["text"] == ops[2]["text"] and ops[1]["text"].strip() == text.strip()
        mirror.update()
    assert mirror.tree == app.tree() and mirror.resyncs == 0
    assert max(delta_sizes) <= 4 * 1024, delta_sizes
    app.close()
