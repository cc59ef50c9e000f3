"""Today's jcode server rules, played by the fake gateway over real sockets.

Each test runs the fake jcode gateway (:class:`RunningGateway`: aiohttp on a
free loopback port) and the app behind the real host (:class:`BackgroundHost`)
on a :class:`VirtualClock` (reconnect and keep-alive timers fire only on
``advance``), pulls one switch of a rule the fake keeps (each cites its jcode
source in jcode_mobile/fake_gateway.py; tested in memory in
test_fake_gateway_rules.py) through the fake-only control endpoint
``POST /_fake/control``, as another process would, and checks two things as
literals: what the person sees (state and semantic tree) and what the server
received (the requests the fake recorded, its session's history).

The core's side of each rule is docs/PROTOCOL.md ("The session", "Interrupted
turns", "Older history", "Turns and the outbox", "One history per connect")
and docs/LIFECYCLE.md. Every wait is bounded and an alarm fails a test still
running after ``TEST_DEADLINE_S``.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Callable, List, Tuple

import pytest

from jcode_mobile import App, find_node
from jcode_mobile.fake_gateway import Reply, compacted_rows, image_heavy_history
from jcode_mobile.gateway import RunningGateway
from jcode_mobile.gateway.server import CONTROL_PATH
from jcode_mobile.host import BackgroundHost

from helpers import WORKING_DIR, idle, pair_and_open, phase_is

CODE = "583920"
DEVICE = "phone-rules-1"
SESSION = "session-fox"
HISTORY = [
    {"role": "user", "content": "The login test fails about one run in five. Can you find out why?"},
    {"role": "assistant", "content": "The fixture shares one cookie jar between tests; I made it per test."},
]
TEST_DEADLINE_S = 40
pytestmark = pytest.mark.timeout(TEST_DEADLINE_S)  # pytest-timeout fails a test still running then
#: The system entry of docs/LIMITS.md, "A history too large".
TOO_LARGE = ("This conversation could not be loaded: it is too large for the phone (over 16 MiB, mostly images). "
             "Earlier messages are not shown; new ones are. Compacting the conversation or starting a new one "
             "makes it fit.")
#: What Continue sends when the server gave no continuation of its own (the app's words).
CONTINUATION = ("Your last turn was cut off before it finished (the app's connection dropped or the server "
                "restarted); a tool that was running was stopped and its result may be incomplete. Carry on from "
                "where you stopped, without asking me what to do next.")


# -- fixtures ---------------------------------------------------------------------------------



@pytest.fixture
def gateways(start_gateway) -> Callable[..., RunningGateway]:
    """Start a gateway around a FakeJcodeServer built with these options (start_gateway: conftest.py)."""

    def start(**options) -> RunningGateway:
        return start_gateway(**{"pair_code": CODE, "session_id": SESSION, "history": HISTORY, "other_sessions": {},
                                **options})

    return start


@pytest.fixture
def host(hosts) -> BackgroundHost:
    return hosts(App({"device_id": DEVICE}))  # hosts: conftest.py


# -- helpers ----------------------------------------------------------------------------------


def control(gateway: RunningGateway, **command) -> dict:
    """One command to the fake's control endpoint, over HTTP (as another process would)."""
    request = urllib.request.Request(gateway.url + CONTROL_PATH, data=json.dumps(command).encode("utf-8"),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        answer = json.loads(response.read())
    assert answer["ok"] is True, answer
    return answer





def settle_idle(host: BackgroundHost, timeout: float = 5) -> dict:
    host.wait_for(idle, timeout=timeout)
    assert host.settle(quiet=0.2, timeout=5)
    state = host.state()
    assert idle(state), (state["connection"], state["session"]["is_processing"], state["outbox"])
    return state


def open_session(host: BackgroundHost, gateway: RunningGateway, messages: int) -> dict:
    """Pair, connect, open the server's session SESSION (``messages`` entries shown)."""
    pair_and_open(host, gateway, code=CODE, device="Rules phone", session=SESSION, messages=messages, timeout=10)
    return settle_idle(host)


def reconnect(host: BackgroundHost) -> None:
    """Fire the pending reconnect timer."""
    delay = host.state()["connection"]["reconnect_delay_ms"]
    assert delay is not None, host.state()["connection"]
    fired = host.advance(delay)
    assert any(t.startswith("reconnect.") for t in fired), fired


def mark(gateway: RunningGateway) -> int:
    """How many requests the server has read so far."""
    return gateway.call(lambda fake: len(fake.requests))


def requests_since(gateway: RunningGateway, since: int) -> List[dict]:
    """The requests the server read after ``since`` (pings left out: the keep-alive is not the point)."""
    return gateway.call(lambda fake: [r for r in fake.requests[since:] if r["type"] != "ping"])


def server_rows(gateway: RunningGateway, session_id: str = SESSION) -> List[dict]:
    """The server's history of the session (its rendered rows)."""
    return gateway.call(lambda fake: json.loads(json.dumps(fake.sessions[session_id]["messages"])))


def conversation(state: dict) -> List[tuple]:
    return [(entry["role"], entry["text"]) for entry in state["transcript"]]


def node(host: BackgroundHost, node_id: str) -> dict:
    found = find_node(host.tree(), node_id)
    assert found is not None, f"no node {node_id}"
    return found


# -- a turn started in the terminal -----------------------------------------------------------


def test_a_turn_started_in_the_terminal_streams_on_the_phone_and_ends_on_its_foreign_done(gateways, host):
    gateway = gateways()
    open_session(host, gateway, messages=2)
    since = mark(gateway)
    answer = control(gateway, command="foreign_turn", content="Run the test suite", request_id=41,
                     reply={"text": "All 212 tests pass.", "chunks": ["All 212 ", "tests pass."], "hold_after": 1})
    assert answer["events"] == [{"type": "text_delta", "text": "All 212 "}]
    state = host.wait_for(lambda s: s["transcript"][-1]["text"] == "All 212 ", timeout=5)
    # the phone shows the terminal's turn running: its first delta, the spinner, Stop
    assert state["session"]["is_processing"] is True
    assert (node(host, "message." + state["transcript"][-1]["id"])["variant"], node(host, "chat.activity")["label"]) == (
        "typing", "jcode is writing…")

    # the terminal's turn ends with its own done (id 41, foreign to the phone): so does the phone's
    assert control(gateway, command="finish_foreign_turn")["events"] == [
        {"type": "text_delta", "text": "tests pass."}, {"type": "message_end", "stop_reason": "end_turn"},
        {"type": "done", "id": 41}]
    host.wait_for(lambda s: not s["session"]["is_processing"], timeout=5)
    state = settle_idle(host)
    # a turn the phone did not start is shown whole once it ends: its history brings the terminal's prompt
    assert conversation(state)[-2:] == [("user", "Run the test suite"), ("assistant", "All 212 tests pass.")]
    assert state["transcript"][-1]["is_streaming"] is False
    assert node(host, "chat.activity")["visible"] is False
    assert requests_since(gateway, since) == [{"id": 5, "type": "get_history"}]  # the phone watched, then asked

    # the next message goes out as a plain message (an idle server only queues a soft interrupt)
    host.dispatch({"type": "send_message", "text": "And the docs?"})
    state = settle_idle(host)
    assert requests_since(gateway, since)[1:] == [{"id": 6, "type": "message", "content": "And the docs?"}]
    assert conversation(state)[-2:] == [("user", "And the docs?"), ("assistant", "You said: And the docs?")]
    assert server_rows(gateway)[2:] == [
        {"role": "user", "content": "Run the test suite"}, {"role": "assistant", "content": "All 212 tests pass."},
        {"role": "user", "content": "And the docs?"}, {"role": "assistant", "content": "You said: And the docs?"}]


# -- clear and rename refused while busy ------------------------------------------------------


BUSY = "Cannot handle {} while the session is busy. Try again after the current turn finishes."


def error_banner_is(message: str) -> Callable[[dict], bool]:
    def check(state: dict) -> bool:
        return state["banners"]["error"] is not None and state["banners"]["error"]["message"] == message
    return check


def test_clear_and_rename_are_refused_while_busy_and_their_controls_are_off_while_a_turn_runs(gateways, host):
    gateway = gateways()
    open_session(host, gateway, messages=2)
    host.dispatch({"type": "navigate", "screen": "settings"})
    host.dispatch({"type": "set_rename_draft", "value": "Flaky login"})
    assert [(node(host, i)["label"], node(host, i)["enabled"]) for i in ("settings.rename", "settings.clear")] == [
        ("Rename session", True), ("Clear conversation", True)]

    # a turn the phone sees running: both controls are off (the server would refuse)
    control(gateway, command="foreign_turn", content="Run the test suite", request_id=41,
            reply={"text": "All 212 tests pass.", "chunks": ["All 212 ", "tests pass."], "hold_after": 1})
    host.wait_for(lambda s: s["session"]["is_processing"], timeout=5)
    assert [(node(host, i)["label"], node(host, i)["enabled"]) for i in ("settings.rename", "settings.clear")] == [
        ("Rename session", False), ("Clear conversation", False)]
    control(gateway, command="finish_foreign_turn")
    # the turn's history, asked at its end (the phone did not start it), brings the terminal's prompt
    state = host.wait_for(lambda s: not s["session"]["is_processing"] and ("user", "Run the test suite") in conversation(s),
                          timeout=5)
    assert [(node(host, i)["label"], node(host, i)["enabled"]) for i in ("settings.rename", "settings.clear")] == [
        ("Rename session", True), ("Clear conversation", True)]
    shown = conversation(state)
    assert shown[-1] == ("assistant", "All 212 tests pass.")

    # the terminal has just started another turn, and nothing of it reached the phone yet:
    # the server is busy, the phone cannot know; the server refuses, and nothing changes
    since = mark(gateway)
    control(gateway, command="foreign_turn", content="Now the docs", request_id=42,
            reply={"text": "Docs build.", "hold_after": 0})
    host.dispatch({"type": "tap_node", "node_id": "settings.rename"})
    state = host.wait_for(error_banner_is(BUSY.format("rename_session")), timeout=5)
    assert state["banners"]["error"]["text"] == BUSY.format("rename_session") + " (retry in 1 s)"
    assert (state["session"]["title"], state["session"]["pending_rename"]) == (None, None)
    assert node(host, "settings.rename_field")["value"] == "Flaky login"  # what was typed stays
    assert node(host, "banner.error")["label"] == BUSY.format("rename_session") + " (retry in 1 s)"

    host.dispatch({"type": "tap_node", "node_id": "settings.clear"})
    state = host.wait_for(error_banner_is(BUSY.format("clear")), timeout=5)
    assert (state["session"]["id"], state["session"]["is_clearing"]) == (SESSION, False)
    assert conversation(state) == shown  # the chat is not emptied
    assert node(host, "banner.error")["label"] == BUSY.format("clear") + " (retry in 1 s)"
    assert requests_since(gateway, since) == [{"id": 6, "type": "rename_session", "title": "Flaky login"},
                                              {"id": 7, "type": "clear"}]
    assert gateway.call(lambda fake: (fake.sessions[SESSION]["title"], fake.current_session)) == (
        "Fix the flaky test", SESSION)  # its title unchanged (the phone never learnt it: no session_renamed came)
    host.dispatch({"type": "navigate", "screen": "chat"})  # the chat: as it was, its title too
    assert node(host, "chat.header")["label"] == "session-fox"
    assert [(n["label"], n["value"]) for n in node(host, "chat.messages")["children"]] == [
        ("You", HISTORY[0]["content"]), ("jcode", HISTORY[1]["content"]), ("You", "Run the test suite"),
        ("jcode", "All 212 tests pass.")]
    assert node(host, "banner.error")["label"] == BUSY.format("clear") + " (retry in 1 s)"

    # once the turn is over the server takes the rename
    control(gateway, command="finish_foreign_turn")
    host.wait_for(lambda s: s["transcript"][-1]["text"] == "Docs build." and not s["session"]["is_processing"],
                  timeout=5)
    host.dispatch({"type": "navigate", "screen": "settings"})
    host.dispatch({"type": "tap_node", "node_id": "settings.rename"})
    state = host.wait_for(lambda s: s["session"]["title"] == "Flaky login" and s["session"]["pending_rename"] is None,
                          timeout=5)
    # the docs turn (the terminal's) is shown whole by its history, asked at its end; then the rename
    assert requests_since(gateway, since)[2:] == [{"id": 8, "type": "get_history"},
                                                  {"id": 9, "type": "rename_session", "title": "Flaky login"}]
    host.dispatch({"type": "navigate", "screen": "chat"})
    assert node(host, "chat.header")["label"] == "Flaky login"


# -- reloading after ack ----------------------------------------------------------------------


def test_a_message_answered_reloading_after_its_ack_goes_again_once_after_the_reconnect(gateways, host):
    gateway = gateways()
    open_session(host, gateway, messages=2)
    assert control(gateway, command="set_rules", rules={"reload_starting": True})["rules"] == {"reload_starting": True}
    since = mark(gateway)
    host.dispatch({"type": "send_message", "text": "Ship the release"})
    # acknowledged, then "reloading": received is not taken; whether it arrived, the next history says
    state = host.wait_for(lambda s: [m["delivery"] for m in s["outbox"]] == ["unconfirmed"], timeout=5)
    assert [(m["text"], m["delivery"]) for m in state["outbox"]] == [("Ship the release", "unconfirmed")]
    assert [(n["label"], n["variant"]) for n in node(host, "chat.notices")["children"]] == [
        ("Server is updating, reconnecting shortly", "info")]
    assert [(n["label"], n["value"]) for n in node(host, "chat.messages")["children"]][-1] == ("You", "Ship the release")
    assert requests_since(gateway, since) == [{"id": 5, "type": "message", "content": "Ship the release"}]
    assert server_rows(gateway) == HISTORY  # not taken

    # the server restarts: every connection drops; the phone reconnects, the history lacks the message
    assert control(gateway, command="reload")["dropped"] == 1
    state = host.wait_for(phase_is("reconnecting"), timeout=5)
    assert state["connection"]["reconnect_delay_ms"] == 500
    reconnect(host)
    state = settle_idle(host)
    assert requests_since(gateway, since) == [
        {"id": 5, "type": "message", "content": "Ship the release"},
        {"id": 1, "type": "subscribe", "working_dir": WORKING_DIR, "target_session_id": SESSION,
         "client_instance_id": DEVICE},
        {"id": 3, "type": "message", "content": "Ship the release"},  # again, once
    ]
    assert server_rows(gateway) == HISTORY + [
        {"role": "user", "content": "Ship the release"}, {"role": "assistant", "content": "You said: Ship the release"}]
    assert conversation(state) == [("user", HISTORY[0]["content"]), ("assistant", HISTORY[1]["content"]),
                                   ("user", "Ship the release"), ("assistant", "You said: Ship the release")]
    assert node(host, "chat.notices")["children"] == []  # the update is over


# -- the last client drops mid-turn -----------------------------------------------------------


def test_after_the_last_client_dropped_mid_turn_the_chat_offers_continue_which_sends_one_message(gateways, host):
    gateway = gateways(replies=[Reply(text="Step one done, step two", chunks=["Step one done, ", "step two"],
                                      hold_after=1)])
    open_session(host, gateway, messages=2)
    since = mark(gateway)
    host.dispatch({"type": "send_message", "text": "Migrate the database"})
    host.wait_for(lambda s: s["transcript"][-1]["text"] == "Step one done, ", timeout=5)
    # the phone is locked, its socket drops: the last client of the session is gone, the server aborts the turn
    host.platform_event({"type": "app_background"})
    assert gateway.drop_connections() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    assert gateway.call(lambda fake: fake.sessions[SESSION]["was_interrupted"]) is True
    host.platform_event({"type": "app_foreground"})
    state = settle_idle(host)  # back in front: it reconnects at once

    # the history says was_interrupted: the chat offers to continue
    assert state["interrupted_turn"] == {"continuation": CONTINUATION, "reconnect_notice": None}
    assert conversation(state) == [("user", HISTORY[0]["content"]), ("assistant", HISTORY[1]["content"]),
                                   ("user", "Migrate the database")]  # the aborted turn left only the question
    banner = node(host, "chat.interrupted")
    assert (banner["label"], banner["visible"]) == ("The last turn stopped before it finished.", True)
    assert [(n["id"], n["label"], n["enabled"]) for n in banner["children"]] == [
        ("chat.continue", "Continue", True), ("chat.interrupted.dismiss", "Dismiss", True)]
    assert requests_since(gateway, since) == [
        {"id": 5, "type": "message", "content": "Migrate the database"},
        {"id": 1, "type": "subscribe", "working_dir": WORKING_DIR, "target_session_id": SESSION,
         "client_instance_id": DEVICE},
    ]

    # Continue sends one message; the banner goes
    host.dispatch({"type": "tap_node", "node_id": "chat.continue"})
    state = settle_idle(host)
    # as jcode's TUI sends it: an empty content, the continuation as system_reminder (reload_recovery.rs)
    assert requests_since(gateway, since)[2:] == [
        {"id": 3, "type": "message", "content": "", "system_reminder": CONTINUATION}]
    assert state["interrupted_turn"] is None
    assert find_node(host.tree(), "chat.interrupted") is None
    # not the person's words: no user bubble for it, and no user row on the server
    assert conversation(state)[2:] == [("user", "Migrate the database"), ("assistant", "You said: ")]
    assert server_rows(gateway)[2:] == [
        {"role": "user", "content": "Migrate the database"}, {"role": "assistant", "content": "You said: "}]


# -- older history after compaction -----------------------------------------------------------


def load_older_from_the_top(gateways, host) -> Tuple[dict, dict]:
    """Opens a compacted conversation, scrolls to the top and taps "Load earlier messages": the
    bounds of the row the person was reading (the first message) before the tap, and the state after."""
    gateway = gateways(compacted=compacted_rows(100))  # 200 compacted rows; a history shows the last 64
    state = open_session(host, gateway, messages=64 + 2)
    # the compaction marker row is read, not shown: the list starts with the button
    assert state["older_history"] == {"total": 200, "visible": 64, "remaining": 136, "requested": None}
    assert conversation(state)[0] == ("user", "Old question 69 about the release")
    host.dispatch({"type": "scroll_messages", "offset": 0})  # the person scrolls to the top
    rows = node(host, "chat.messages")["children"]
    assert [(n["id"], n["label"], n["value"], n["enabled"]) for n in rows[:2]] == [
        ("chat.load_older", "Load earlier messages", "136 hidden", True),
        (rows[1]["id"], "You", "Old question 69 about the release", True)]
    listed = node(host, "chat.messages")
    reading = screen_y(listed, rows[1])
    assert rows[1]["bounds"] == {"x": 16, "y": 52, "width": 358, "height": 56}  # under the button, in the list's content
    assert reading == 215  # on the screen: under the 47-point safe area and the header

    since = mark(gateway)

    def tap_and_look():  # on the host's thread: no frame of the answer can come in between
        host.host.dispatch({"type": "tap_node", "node_id": "chat.load_older"})
        return find_node(host.host.app.tree(), "chat.load_older")

    # (once the older rows are in, the list keeps the reading place: the button leaves the window)
    button = host.call(tap_and_look)
    assert (button["label"], button["enabled"]) == ("Loading earlier messages…", False)
    state = host.wait_for(lambda s: s["older_history"]["requested"] is None and len(s["transcript"]) == 128 + 2,
                          timeout=5)
    assert requests_since(gateway, since) == [{"id": 5, "type": "get_compacted_history", "visible_messages": 128}]
    return reading, state


def screen_y(listed: dict, row: dict) -> int:
    """Where a row of the message list is on the screen: the list's rows are
    in its content coordinates (the list's y minus its offset, plus theirs)."""
    return listed["bounds"]["y"] - listed["scroll"]["offset"] + row["bounds"]["y"]


def test_a_compacted_conversation_loads_older_messages_at_the_top_on_request(gateways, host):
    _, state = load_older_from_the_top(gateways, host)
    # 64 older rows are put before the ones shown
    assert state["older_history"] == {"total": 200, "visible": 128, "remaining": 72, "requested": None}
    assert conversation(state)[:2] == [("user", "Old question 37 about the release"),
                                       ("assistant", "Old answer 37 about the release.")]
    assert conversation(state)[64:66] == [("user", "Old question 69 about the release"),
                                          ("assistant", "Old answer 69 about the release.")]
    assert conversation(state)[-2:] == [("user", HISTORY[0]["content"]), ("assistant", HISTORY[1]["content"])]
    # the list is windowed (the rows near the viewport): the button and 130 messages in all
    assert node(host, "chat.messages")["window"]["total"] == 1 + 128 + 2
    host.dispatch({"type": "scroll_messages", "offset": 0})  # at the top: the button says what is left
    rows = node(host, "chat.messages")["children"]
    assert [(n["label"], n["value"], n["enabled"]) for n in rows[:2]] == [
        ("Load earlier messages", "72 hidden", True), ("You", "Old question 37 about the release", True)]


def test_loading_older_messages_keeps_the_row_being_read_where_it_was(gateways, host):
    reading, _ = load_older_from_the_top(gateways, host)
    listed = node(host, "chat.messages")
    assert [screen_y(listed, n) for n in listed["children"] if n["value"] == "Old question 69 about the release"] == [reading]


# -- a history over the input limit -----------------------------------------------------------


def test_an_image_heavy_history_over_the_input_limit_leaves_the_chat_usable(gateways, host):
    gateway = gateways()
    open_session(host, gateway, messages=2)
    # meanwhile, in the terminal, the session grew screenshot by screenshot: its history is now a frame
    # of about 48 MiB, three times the core's input limit (the fake's image_heavy history)
    messages, images = image_heavy_history()
    gateway.call(lambda fake: fake.sessions[SESSION].update(messages=HISTORY + messages, images=images))
    since = mark(gateway)
    assert gateway.drop_connections() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    host.dispatch({"type": "send_message", "text": "Are the screenshots all in?"})  # waits for the link
    assert [(m["text"], m["delivery"]) for m in host.state()["outbox"]] == [("Are the screenshots all in?", "waiting")]
    reconnect(host)
    # the history answering the subscribe, then the one answering get_history: both refused whole by the core
    state = settle_idle(host, timeout=20)
    assert host.errors == ["the core refused a websocket_event event (too_large)"] * 2
    assert requests_since(gateway, since) == [
        {"id": 1, "type": "subscribe", "working_dir": WORKING_DIR, "target_session_id": SESSION,
         "client_instance_id": DEVICE},
        {"id": 3, "type": "get_history"},
        {"id": 5, "type": "message", "content": "Are the screenshots all in?"},  # the outbox flushed
    ]
    # not stuck on "Loading conversation…": what was shown stays, a system entry says why, the turn ran
    assert find_node(host.tree(), "chat.loading") is None
    assert state["session"]["history_loaded"] is True
    assert conversation(state) == [
        ("user", HISTORY[0]["content"]), ("assistant", HISTORY[1]["content"]), ("system", TOO_LARGE),
        ("user", "Are the screenshots all in?"), ("assistant", "You said: Are the screenshots all in?")]

    # a message typed now goes at once, once
    host.dispatch({"type": "send_message", "text": "Shrink the screenshots"})
    state = settle_idle(host)
    assert requests_since(gateway, since)[3:] == [{"id": 6, "type": "message", "content": "Shrink the screenshots"}]
    assert conversation(state)[-2:] == [("user", "Shrink the screenshots"),
                                        ("assistant", "You said: Shrink the screenshots")]
    assert server_rows(gateway)[-4:] == [
        {"role": "user", "content": "Are the screenshots all in?"},
        {"role": "assistant", "content": "You said: Are the screenshots all in?"},
        {"role": "user", "content": "Shrink the screenshots"},
        {"role": "assistant", "content": "You said: Shrink the screenshots"}]


def test_opening_an_image_heavy_session_from_the_list_leaves_the_chat_usable(gateways, host):
    gateway = gateways()
    messages, images = image_heavy_history()  # the fake's image_heavy session: a history frame of about 48 MiB
    gateway.call(lambda fake: fake.sessions[SESSION].update(messages=messages, images=images))
    for kind, value in [("set_host", "127.0.0.1"), ("set_port", str(gateway.port)), ("set_pair_code", CODE),
                        ("set_device_name", "Rules phone"), ("set_working_dir", WORKING_DIR)]:
        host.dispatch({"type": kind, "value": value})
    host.dispatch({"type": "submit_pairing"})
    settle_idle(host)
    since = mark(gateway)
    host.dispatch({"type": "resume_session", "session_id": SESSION})  # from the session list
    host.dispatch({"type": "send_message", "text": "Shrink the screenshots"})
    state = settle_idle(host, timeout=10)
    assert find_node(host.tree(), "chat.loading") is None
    assert conversation(state) == [("system", TOO_LARGE), ("user", "Shrink the screenshots"),
                                   ("assistant", "You said: Shrink the screenshots")]
    # resume_session (3) brings no history the core can take; its check ping (4) is answered first, so
    # get_history (5) asks again; when that ping (6) is answered first too, the chat goes on and the message goes
    assert requests_since(gateway, since) == [
        {"id": 3, "type": "resume_session", "session_id": SESSION, "client_instance_id": "phone-rules-1"},
        {"id": 5, "type": "get_history"},
        {"id": 7, "type": "message", "content": "Shrink the screenshots"}]


# -- in the background ------------------------------------------------------------------------


def test_a_terminal_turn_that_ends_while_the_app_is_in_the_background_asks_for_one_notification(gateways, host):
    gateway = gateways()
    open_session(host, gateway, messages=2)
    host.platform_event({"type": "app_background"})
    since = len(host.effects)
    control(gateway, command="foreign_turn", content="Run the test suite", request_id=41,
            reply={"text": "All 212 tests pass.", "chunks": ["All ", "212 tests ", "pass."]})
    state = host.wait_for(lambda s: conversation(s)[-1] == ("assistant", "All 212 tests pass.")
                          and not s["session"]["is_processing"], timeout=5)
    assert host.settle(quiet=0.2)
    shown = [{k: v for k, v in e.items() if k != "effect_id"} for e in host.effects[since:]
             if e["type"] == "show_local_notification"]
    assert shown == [{"type": "show_local_notification", "title": "jcode", "body": "The agent finished",
                      "session_id": SESSION}]
    assert host.call(lambda: host.host.notifications) == [
        {"title": "jcode", "body": "The agent finished", "session_id": SESSION}]
    # opened: the app comes to the front in that chat
    host.platform_event({"type": "app_foreground"})
    host.platform_event({"type": "push_notification_opened", "payload": {"session_id": SESSION}})
    state = settle_idle(host)
    assert (state["screen"], state["session"]["id"]) == ("chat", SESSION)
    assert [e["type"] for e in host.effects[since:]].count("show_local_notification") == 1
