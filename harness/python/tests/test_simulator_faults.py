"""Every fault the fake gateway can inject, end to end through the real host and core.

Each test runs the fake jcode gateway (:class:`RunningGateway`, real aiohttp on a
loopback port) and the app behind the real host (:class:`BackgroundHost`:
aiohttp HTTP + WebSocket), injects one fault and states, as a spec with
literal values, what a person sees. Reconnect timers run on a
:class:`VirtualClock`, so nothing waits out a backoff in real time; every wait
is bounded (``wait_for`` with a timeout, at most a few seconds) and an alarm
fails any test that still runs after ``TEST_DEADLINE_S``.

The last test drives the ``jcode-mobile`` CLI (a simulator process) against
``python -m jcode_mobile.gateway`` run as another process, through its
``/_fake/control`` endpoint.

Observed behaviour worth knowing (documented by the tests below, not hidden):

- ``duplicate``: jcode's stream has no sequence numbers, so a frame written
  twice is applied twice: streamed text, reasoning and tool input are doubled
  and a repeated ``tool_start`` adds a second card for the same tool call id.
  The real gateway (TCP) never duplicates a frame; a reconnect's history
  reload shows the turn correctly again.
- ``stall``: the core has no timeout of its own for a turn; a message the
  stalled server never acknowledges shows "processing" until the server
  answers, the connection drops, or the keep-alive (a ``ping`` every 20 s
  while connected in the foreground) finds its ``pong`` missing at the next
  tick and reconnects.
- ``http_status`` on ``/health``: the check shows the status and asks "is this
  the jcode gateway port?", not the server's error text (``/pair`` shows it).
- ``http_stall`` on ``/pair``: the phone gives up after ``http_timeout`` and
  keeps the code for a retry, but the server still finishes the abandoned
  request once it answers again, using the code; the retry then reads
  "Invalid or expired pairing code".
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import pytest

from jcode_mobile import App, find_node
from jcode_mobile.fake_gateway import Reply
from jcode_mobile.gateway import Faults, RunningGateway
from jcode_mobile.gateway.faults import OPCODE_TEXT, ws_frame
from jcode_mobile.host import BackgroundHost

from helpers import WORKING_DIR, connected, fill_pairing_form, pair_and_open, phase_is

HARNESS = Path(__file__).resolve().parents[1]

CODE = "482913"
DEVICE_ID = "device-faults-01"
HISTORY = [
    {"role": "user", "content": "Why does test_reconnect fail on CI?"},
    {"role": "assistant", "content": "It sleeps a fixed 100 ms and races the server."},
]
MESSAGE = "Make it wait for the connected event"
#: The reply, streamed as five text_delta events.
DELTAS = ["The test ", "now waits ", "for the ", "connected event ", "and passes."]
REPLY_TEXT = "".join(DELTAS)
#: What the server writes for a message: ack, one text_delta per chunk, message_end, done.
TURN_EVENTS = ["ack"] + ["text_delta"] * len(DELTAS) + ["message_end", "done"]
TOOL_REPLY = Reply(text="All 42 tests pass.", reasoning="Run the suite.",
                   tools=[{"id": "call_tests", "name": "bash", "input": {"command": "make test"},
                           "output": "42 passed"}])

#: No test may run longer than this (every wait inside is far shorter).
TEST_DEADLINE_S = 30
pytestmark = pytest.mark.timeout(TEST_DEADLINE_S)  # pytest-timeout fails a test still running then


# -- fixtures ---------------------------------------------------------------------------------



@pytest.fixture
def gateways(start_gateway) -> Callable[..., RunningGateway]:
    """``gateways(replies=[…], faults=Faults(…))`` starts a fake gateway (start_gateway: conftest.py)."""

    def start(replies: Optional[List[Reply]] = None, faults: Optional[Faults] = None) -> RunningGateway:
        return start_gateway(faults=faults, pair_code=CODE, history=HISTORY, other_sessions={},
                             replies=replies if replies is not None else [Reply(text=REPLY_TEXT, chunks=DELTAS)])

    return start


@pytest.fixture
def gateway(gateways) -> RunningGateway:
    return gateways()


@pytest.fixture
def host(hosts) -> BackgroundHost:
    return hosts(App({"device_id": DEVICE_ID}))  # hosts: conftest.py


# -- helpers ----------------------------------------------------------------------------------


def fill_form(host: BackgroundHost, gateway: RunningGateway) -> None:
    fill_pairing_form(host, server="127.0.0.1", port=str(gateway.port), code=CODE, device="Fault iPhone")




def pair(host: BackgroundHost, gateway: RunningGateway) -> dict:
    """Pair, connect, open the server's session (its history shown); returns the settled state."""
    pair_and_open(host, gateway, code=CODE, device="Fault iPhone", session=gateway.fake.main_session,
                  messages=len(HISTORY))
    assert host.settle(timeout=5)
    state = host.state()
    assert transcript(state) == [(m["role"], m["content"]) for m in HISTORY]
    return state


def transcript(state: dict) -> List[Tuple[str, str]]:
    return [(entry["role"], entry["text"]) for entry in state["transcript"]]


def reply_finished(state: dict) -> bool:
    last = state["transcript"][-1] if state["transcript"] else None
    return (not state["session"]["is_processing"] and last is not None and last["role"] == "assistant"
            and not last["is_streaming"])


def send_and_wait_reply(host: BackgroundHost, text: str = MESSAGE, timeout: float = 5) -> dict:
    host.dispatch({"type": "send_message", "text": text})
    host.wait_for(reply_finished, timeout=timeout)
    assert host.settle(timeout=5)
    return host.state()


def reconnect(host: BackgroundHost, delay_ms: int) -> dict:
    """Fire the pending reconnect timer on the virtual clock; wait until connected with history."""
    assert host.state()["connection"]["reconnect_delay_ms"] == delay_ms
    fired = host.advance(delay_ms)
    assert len(fired) == 1 and fired[0].startswith("reconnect."), fired
    host.wait_for(connected, timeout=5)
    assert host.settle(timeout=5)
    return host.state()


def frames_in(host: BackgroundHost) -> int:
    return host.call(lambda: host.host.frames_in)


def mark(host: BackgroundHost) -> int:
    """A position in the host's steps (see :func:`lines_since`, :func:`events_since`)."""
    return len(host.steps)


def events_since(host: BackgroundHost, since: int) -> List[dict]:
    """The platform events fed to the core since ``since``."""
    return [step.input for step in host.steps[since:] if step.kind == "event"]


def lines_since(host: BackgroundHost, since: int) -> List[str]:
    """The text frames the core received since ``since`` (websocket_event lines)."""
    return [e["line"] for e in events_since(host, since) if e["type"] == "websocket_event"]


def event_types(lines: List[str]) -> List[str]:
    return [json.loads(part)["type"] for line in lines for part in line.split("\n")]


def effect_types(host: BackgroundHost, since: int) -> List[str]:
    return [e["type"] for e in host.effects[since:]]


def log_notes_since(host: BackgroundHost, seq: int) -> List[str]:
    return [note for entry in host.logs()["entries"] if entry["seq"] >= seq for note in entry["notes"]]


def message_requests(gateway: RunningGateway) -> List[str]:
    return gateway.call(lambda fake: [r["content"] for r in fake.requests if r["type"] == "message"])


def last_subscribe_target(gateway: RunningGateway) -> Optional[str]:
    """The session the latest ``subscribe`` asked for (``target_session_id``)."""
    return gateway.call(lambda fake: fake.subscribes[-1]["target_session_id"])


def faults_in_force(gateway: RunningGateway) -> Faults:
    """A copy of the gateway's faults (their counters count down as they are used)."""
    return gateway.call(lambda fake: gateway.server.faults.replace())


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


# -- drop_after -------------------------------------------------------------------------------


def test_drop_after_cuts_the_stream_and_the_app_resumes_the_same_session(gateway, host):
    before = pair(host, gateway)
    # ack and two text deltas of the reply get through, then the connection ends without a close frame
    gateway.set_faults(drop_after=frames_in(host) + 3, drop_times=1)
    host.dispatch({"type": "send_message", "text": MESSAGE})
    host.wait_for(phase_is("reconnecting"), timeout=5)
    assert host.settle(timeout=5)
    state = host.state()
    assert state["connection"] == {"phase": "reconnecting", "attempt": 1, "reason": "Connection closed: connection lost",
                                   "socket_open": False, "reconnect_delay_ms": 1000}
    assert state["banners"]["status"] == "Connection lost, retrying in 1 s (attempt 1)"
    # what arrived stays on screen, no longer streaming; the turn no longer shows as running
    assert transcript(state)[-2:] == [("user", MESSAGE), ("assistant", "The test now waits ")]
    assert state["transcript"][-1]["is_streaming"] is False
    assert state["session"]["is_processing"] is False

    state = reconnect(host, 1000)
    assert state["session"]["id"] == before["session"]["id"] == gateway.fake.main_session
    assert last_subscribe_target(gateway) == gateway.fake.main_session
    # the history reload shows the whole turn, the person's message exactly once
    assert transcript(state) == [(m["role"], m["content"]) for m in HISTORY] + [
        ("user", MESSAGE), ("assistant", REPLY_TEXT)]
    assert [text for role, text in transcript(state) if role == "user"].count(MESSAGE) == 1
    assert state["outbox"] == []
    assert message_requests(gateway) == [MESSAGE]  # never sent twice
    assert host.errors == []


def test_a_drop_in_a_fresh_empty_session_lands_in_another_fresh_session(gateway, host):
    """Today's jcode forgets a new session nothing was said in when its
    connection ends: the reconnect asks for it, gets a new empty one, and the
    app follows without an error (nothing was lost)."""
    fill_form(host, gateway)
    host.dispatch({"type": "submit_pairing"})
    fresh = host.wait_for(connected, timeout=5)["session"]["id"]
    assert host.settle(timeout=5)
    assert gateway.drop_connections() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    state = reconnect(host, 1000)
    assert last_subscribe_target(gateway) == fresh
    assert state["session"]["id"] != fresh
    assert state["session"]["id"] == gateway.call(lambda fake: fake.current_session)
    assert fresh not in [s["id"] for s in state["session"]["all_sessions"]]
    assert state["transcript"] == []
    assert state["banners"] == {"error": None, "status": None}
    assert host.errors == []


def test_drop_after_with_drop_times_drops_only_once(gateway, host):
    pair(host, gateway)
    gateway.set_faults(drop_after=frames_in(host) + 1, drop_times=1)
    host.dispatch({"type": "send_message", "text": MESSAGE})
    host.wait_for(phase_is("reconnecting"), timeout=5)
    reconnect(host, 1000)
    # the reconnection counts from 0 again but drop_times is used up: it stays
    assert faults_in_force(gateway).drop_times == 0
    state = send_and_wait_reply(host, "And now?")
    assert state["connection"]["phase"] == "connected"
    assert transcript(state)[-1] == ("assistant", "You said: And now?")
    assert host.errors == []


# -- reload -----------------------------------------------------------------------------------


def test_reload_announces_reloading_then_drops_and_the_app_comes_back_in_half_a_second(gateway, host):
    before = pair(host, gateway)
    since = mark(host)
    assert gateway.reload() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    assert host.settle(timeout=5)
    events = events_since(host, since)
    assert [(e["type"], e.get("line"), e.get("code")) for e in events] == [
        ("websocket_event", '{"type":"reloading"}', None), ("websocket_closed", None, 1006)]
    state = host.state()
    assert state["notices"] == [{"id": "n1", "kind": "info", "text": "Server is updating, reconnecting shortly"}]
    assert state["connection"]["reconnect_delay_ms"] == 500  # not the 1 s backoff
    assert state["banners"]["status"] == "Connection lost, retrying in 0.5 s (attempt 1)"

    state = reconnect(host, 500)
    assert state["session"]["id"] == before["session"]["id"] == gateway.fake.main_session
    assert transcript(state) == transcript(before)
    assert host.errors == []


# -- revoke_all_tokens --------------------------------------------------------------------------


REPAIR_REASON = "This device is no longer paired with the server. Re-pair to reconnect."


def test_revoked_token_gets_401_and_the_app_asks_to_pair_again_without_a_reconnect_loop(gateway, host):
    pair(host, gateway)
    assert gateway.revoke_all_tokens() == 1  # the fake also drops the open connection
    host.wait_for(phase_is("reconnecting"), timeout=5)
    since_effects = len(host.effects)
    since = mark(host)
    host.advance(1000)  # the reconnect attempt meets the revoked token
    host.wait_for(phase_is("failed"), timeout=5)
    assert host.settle(timeout=5)
    failures = [e for e in events_since(host, since) if e["type"] == "websocket_failed"]
    assert [(f["status"], f["error"]) for f in failures] == [
        (401, "the server refused the WebSocket upgrade with HTTP 401")]
    state = host.state()
    assert state["connection"] == {"phase": "failed", "attempt": 1, "reason": REPAIR_REASON, "socket_open": False,
                                   "reconnect_delay_ms": None}
    assert state["banners"]["status"] == REPAIR_REASON
    # the refused token is forgotten: it can never work again
    assert effect_types(host, since_effects) == ["websocket_connect", "secure_store_delete", "haptic"]
    assert host.effects[since_effects + 1]["key"] == f"jcode.token.127.0.0.1:{gateway.port}"
    assert host.call(lambda: host.host.secure_store.items()) == {}

    # no reconnect loop: minutes pass, nothing is scheduled, nothing connects
    since_effects = len(host.effects)
    for _ in range(3):
        assert host.advance(60_000) == []
    assert host.settle(timeout=5)
    assert effect_types(host, since_effects) == []
    assert host.call(lambda: host.host.clock.pending()) == {}

    tree = host.tree()
    repair, retry = find_node(tree, "connection.repair"), find_node(tree, "connection.retry")
    assert (repair["label"], repair["visible"], repair["enabled"]) == ("Pair again", True, True)
    assert retry["visible"] is False
    host.dispatch({"type": "tap_node", "node_id": "connection.repair"})
    assert host.state()["screen"] == "onboarding"
    assert host.errors == []


# -- request_session_close ------------------------------------------------------------------------


CLOSE_REASON = "Stopped by coordinator: the swarm finished"


def test_session_close_request_closes_the_socket_shows_the_reason_and_stays_down(gateway, host):
    before = pair(host, gateway)
    since_effects = len(host.effects)
    assert gateway.request_session_close(CLOSE_REASON) == {"type": "session_close_requested", "reason": CLOSE_REASON}
    host.wait_for(phase_is("failed"), timeout=5)
    assert host.settle(timeout=5)
    # the app closes its end (1000) and stops the keep-alive
    assert effect_types(host, since_effects) == ["websocket_close", "cancel_timer"]
    assert host.effects[since_effects + 1]["timer_id"].startswith("keepalive.")
    state = host.state()
    assert state["connection"] == {"phase": "failed", "attempt": 0, "reason": CLOSE_REASON, "socket_open": False,
                                   "reconnect_delay_ms": None}
    assert state["banners"]["error"] == {"message": CLOSE_REASON, "retry_after_secs": None, "text": CLOSE_REASON}
    assert state["banners"]["status"] == CLOSE_REASON
    assert transcript(state) == transcript(before)  # the conversation stays readable
    wait_until(lambda: gateway.connections() == 0, 5, "the gateway to see the app's close")

    since_effects = len(host.effects)
    for _ in range(3):
        assert host.advance(60_000) == []
    assert effect_types(host, since_effects) == []  # never reconnects on its own

    retry = find_node(host.tree(), "connection.retry")
    assert (retry["label"], retry["visible"]) == ("Retry now", True)
    host.dispatch({"type": "tap_node", "node_id": "connection.retry"})  # the person decides to go back
    state = host.wait_for(connected, timeout=5)
    assert state["session"]["id"] == gateway.fake.main_session
    assert state["connection"]["reason"] is None
    assert host.errors == []


# -- garble_next / garble_every -------------------------------------------------------------------


def test_garbled_lines_are_dropped_with_a_note_and_the_reply_is_complete(gateway, host):
    pair(host, gateway)
    seq = host.logs()["next_seq"]
    since = mark(host)
    gateway.set_faults(garble_next=3)  # the ack and the first two deltas each follow a broken line
    state = send_and_wait_reply(host)
    lines = lines_since(host, since)
    # each broken line is the first half of the frame after it
    assert lines[:6] == ['{"type":"a', '{"type":"ack","id":5}',
                         '{"type":"text_delta"', '{"type":"text_delta","text":"The test "}',
                         '{"type":"text_delta"', '{"type":"text_delta","text":"now waits "}']
    assert log_notes_since(host, seq) == [
        "malformed line 1 dropped: unexpected end of input inside a string at byte 10",
        "malformed line 1 dropped: unexpected end of input inside an object at byte 20",
        "malformed line 1 dropped: unexpected end of input inside an object at byte 20",
    ]
    assert transcript(state)[-2:] == [("user", MESSAGE), ("assistant", REPLY_TEXT)]
    assert state["banners"]["error"] is None
    assert state["connection"]["phase"] == "connected"
    assert faults_in_force(gateway).garble_next == 0
    assert host.errors == []


def test_garbage_before_every_frame_of_a_whole_session_including_a_reconnect(gateways, host):
    gateway = gateways(faults=Faults(garble_every=1))
    pair(host, gateway)
    state = send_and_wait_reply(host)
    assert transcript(state)[-1] == ("assistant", REPLY_TEXT)
    gateway.drop_connections()
    host.wait_for(phase_is("reconnecting"), timeout=5)
    state = reconnect(host, 1000)
    assert state["session"]["id"] == gateway.fake.main_session
    assert transcript(state)[-2:] == [("user", MESSAGE), ("assistant", REPLY_TEXT)]
    notes = [n for e in host.logs()["entries"] for n in e["notes"] if n.startswith("malformed line 1 dropped")]
    assert len(notes) >= 10
    assert host.errors == []


# -- delay_ms ---------------------------------------------------------------------------------------


def test_delayed_frames_arrive_in_order_the_reply_grows_then_completes(gateway, host):
    pair(host, gateway)
    gateway.set_faults(delay_ms=40)
    since = mark(host)
    started = time.monotonic()
    host.dispatch({"type": "send_message", "text": MESSAGE})
    streaming = host.wait_for(lambda s: s["transcript"][-1]["role"] == "assistant" and s["transcript"][-1]["is_streaming"],
                              timeout=5)
    assert REPLY_TEXT.startswith(streaming["transcript"][-1]["text"])
    assert streaming["transcript"][-1]["text"] != REPLY_TEXT
    assert streaming["session"]["is_processing"] is True
    host.wait_for(reply_finished, timeout=5)
    elapsed = time.monotonic() - started
    assert host.settle(timeout=5)
    lines = lines_since(host, since)
    assert event_types(lines) == TURN_EVENTS
    assert [json.loads(line)["text"] for line in lines if '"text_delta"' in line] == DELTAS
    assert elapsed >= 0.04 * len(TURN_EVENTS)  # each of the 8 frames waited 40 ms
    assert transcript(host.state())[-1] == ("assistant", REPLY_TEXT)
    assert host.errors == []


# -- duplicate --------------------------------------------------------------------------------------


def test_duplicate_frames_double_the_streamed_text_a_known_limitation(gateway, host):
    """jcode's events carry no sequence number, so the core cannot tell a
    repeated text_delta from a new one: the text is doubled. Acks and the
    second done are harmless. A reconnect's history reload shows the turn once."""
    pair(host, gateway)
    gateway.set_faults(duplicate=True)
    since = mark(host)
    state = send_and_wait_reply(host)
    assert event_types(lines_since(host, since)) == [t for t in TURN_EVENTS for _ in (0, 1)]
    doubled = "".join(delta + delta for delta in DELTAS)
    assert doubled == "The test The test now waits now waits for the for the connected event connected event and passes.and passes."
    assert transcript(state)[-2:] == [("user", MESSAGE), ("assistant", doubled)]
    assert state["session"]["is_processing"] is False
    assert state["connection"]["phase"] == "connected"

    gateway.set_faults(duplicate=False)
    gateway.drop_connections()
    host.wait_for(phase_is("reconnecting"), timeout=5)
    state = reconnect(host, 1000)
    assert transcript(state)[-2:] == [("user", MESSAGE), ("assistant", REPLY_TEXT)]
    assert host.errors == []


def test_duplicate_tool_events_keep_one_card_per_tool_call(gateways, host):
    """A repeated tool_start with the same id adds no second card; the
    streamed input, reasoning and text still double (events carry no
    sequence numbers), until a history reload."""
    gateway = gateways(replies=[TOOL_REPLY])
    pair(host, gateway)
    gateway.set_faults(duplicate=True)
    state = send_and_wait_reply(host)
    tool_entry, answer = state["transcript"][-2], state["transcript"][-1]
    assert [(c["id"], c["status"], c["input"]) for c in tool_entry["tool_calls"]] == [
        ("call_tests", "succeeded", '{"command":"make test"}{"command":"make test"}')]
    assert tool_entry["reasoning"] == "Run the suite.Run the suite."
    assert answer["text"] == "All 42 All 42 tests pass.tests pass."
    assert state["session"]["is_processing"] is False

    gateway.set_faults(duplicate=False)
    gateway.drop_connections()
    host.wait_for(phase_is("reconnecting"), timeout=5)
    state = reconnect(host, 1000)
    tool_entry, answer = state["transcript"][-2], state["transcript"][-1]
    assert [(c["id"], c["status"]) for c in tool_entry["tool_calls"]] == [("call_tests", "succeeded")]
    assert answer["text"] == "All 42 tests pass."
    assert host.errors == []


# -- split --------------------------------------------------------------------------------------------


def test_fragmented_frames_are_reassembled_for_a_whole_session(gateways, host):
    gateway = gateways(faults=Faults(split=True, split_pause_ms=10))
    pair(host, gateway)  # pairing answers, subscribe, history: all fragmented
    since, frames_before = mark(host), frames_in(host)
    state = send_and_wait_reply(host)
    lines = lines_since(host, since)
    # one text message per event: the fragments and the partial TCP writes never reach the core
    assert event_types(lines) == TURN_EVENTS
    assert frames_in(host) - frames_before == len(TURN_EVENTS)
    assert transcript(state)[-2:] == [("user", MESSAGE), ("assistant", REPLY_TEXT)]
    assert host.errors == []


# -- coalesce -----------------------------------------------------------------------------------------


def test_coalesced_events_share_frames_and_the_reply_is_intact(gateway, host):
    pair(host, gateway)
    gateway.set_faults(coalesce=3)
    since, frames_before = mark(host), frames_in(host)
    state = send_and_wait_reply(host)
    lines = lines_since(host, since)
    assert [len(line.split("\n")) for line in lines] == [3, 3, 2]  # 8 events
    assert frames_in(host) - frames_before == 3
    assert event_types(lines) == TURN_EVENTS
    assert transcript(state)[-2:] == [("user", MESSAGE), ("assistant", REPLY_TEXT)]
    assert host.errors == []


# -- http_stall / stall -------------------------------------------------------------------------------


def test_pairing_against_a_stalled_gateway_times_out_with_a_clear_banner(gateway, hosts):
    host = hosts(App({"device_id": DEVICE_ID}), http_timeout=0.5)
    fill_form(host, gateway)
    gateway.set_faults(http_stall=True)
    started = time.monotonic()
    host.dispatch({"type": "submit_pairing"})
    state = host.wait_for(lambda s: s["banners"]["error"] is not None, timeout=5)
    elapsed = time.monotonic() - started
    address = f"127.0.0.1:{gateway.port}"
    assert state["banners"]["error"]["message"] == (
        f"Could not reach {address} (no answer from {address} within 0.5 s). Check that jcode is running there "
        "with the gateway enabled and that this device is on the same network.")
    assert 0.5 <= elapsed < 3
    assert state["screen"] == "onboarding"
    assert state["pairing"]["is_submitting"] is False
    assert state["pairing"]["has_held_code"] is True  # the code was not used: tap Pair again
    assert state["connection"]["phase"] == "disconnected"

    host.dispatch({"type": "check_server"})
    state = host.wait_for(lambda s: s["pairing"]["health"]["status"] != "checking", timeout=5)
    assert state["pairing"]["health"] == {"status": "unreachable",
                                          "message": f"Could not reach {address}. Is jcode running with the gateway enabled?"}

    # Lifting the stall lets the abandoned /pair finish on the server: it used the code, for nobody.
    gateway.set_faults(http_stall=False)
    wait_until(lambda: gateway.call(lambda fake: len(fake.pair_requests)) == 1, 5, "the stalled /pair to finish")
    assert gateway.call(lambda fake: sorted(fake.pair_codes)) == []
    host.dispatch({"type": "submit_pairing"})  # the held code goes out again, and is refused
    state = host.wait_for(lambda s: not s["pairing"]["is_submitting"], timeout=5)
    assert state["banners"]["error"]["message"] == "Invalid or expired pairing code"
    assert state["pairing"]["has_held_code"] is False

    gateway.call(lambda fake: fake.pair_codes.add("551177"))  # `jcode pair` again on the server
    host.dispatch({"type": "set_pair_code", "value": "551177"})
    host.dispatch({"type": "submit_pairing"})
    host.wait_for(connected, timeout=5)
    assert host.errors == []


def test_a_stalled_socket_keeps_the_message_processing_and_lifting_it_delivers_the_answer(gateway, host):
    pair(host, gateway)
    gateway.set_faults(stall=True)
    since = mark(host)
    host.dispatch({"type": "send_message", "text": MESSAGE})
    assert host.settle(quiet=0.3, timeout=5)  # the line was written; 300 ms pass with no answer
    state = host.state()
    assert lines_since(host, since) == []
    assert message_requests(gateway) == []  # the server has not read it
    assert transcript(state)[-1] == ("user", MESSAGE)
    assert state["session"]["is_processing"] is True
    # it was sent, not queued: it stays in the outbox (shown once, as its transcript entry) until acknowledged
    assert [(m["text"], m["delivery"]) for m in state["outbox"]] == [(MESSAGE, "awaiting_ack")]
    assert state["connection"]["phase"] == "connected"
    # no client-side turn timeout: short of a keep-alive interval later the app still waits
    # (a stall longer than that is caught by the keep-alive: test_nothing_lost.py)
    host.advance(19_000)
    state = host.state()
    assert (state["connection"]["phase"], state["session"]["is_processing"]) == ("connected", True)
    assert gateway.connections() == 1

    gateway.set_faults(stall=False)  # the held frame is answered
    host.wait_for(reply_finished, timeout=5)
    assert host.settle(timeout=5)
    assert event_types(lines_since(host, since)) == TURN_EVENTS
    assert transcript(host.state())[-2:] == [("user", MESSAGE), ("assistant", REPLY_TEXT)]
    assert message_requests(gateway) == [MESSAGE]
    assert host.errors == []


# -- http_status --------------------------------------------------------------------------------------


def test_health_check_answered_500_shows_the_status(gateway, host):
    fill_form(host, gateway)
    gateway.set_faults(http_status=500)
    host.dispatch({"type": "check_server"})
    state = host.wait_for(lambda s: s["pairing"]["health"]["status"] != "checking", timeout=5)
    assert state["pairing"]["health"] == {
        "status": "failed", "message": f"127.0.0.1:{gateway.port} answered HTTP 500: is this the jcode gateway port?"}
    assert state["banners"]["error"] is None
    assert host.errors == []


def test_pairing_answered_500_shows_the_servers_error_and_keeps_the_code(gateway, host):
    fill_form(host, gateway)
    gateway.set_faults(http_status=500)
    host.dispatch({"type": "submit_pairing"})
    state = host.wait_for(lambda s: s["banners"]["error"] is not None, timeout=5)
    assert state["banners"]["error"]["message"] == (
        f"The server at 127.0.0.1:{gateway.port} answered HTTP 500: Internal Server Error. Try again.")
    assert state["screen"] == "onboarding"
    assert state["connection"]["phase"] == "disconnected"
    assert state["pairing"]["has_held_code"] is True
    assert gateway.call(lambda fake: sorted(fake.pair_codes)) == [CODE]  # the server never saw it

    gateway.set_faults(http_status=None)
    host.dispatch({"type": "submit_pairing"})
    host.wait_for(connected, timeout=5)
    assert host.errors == []


# -- a connection that breaks mid-frame, and garbage on the wire ---------------------------------------


def test_a_connection_dropped_inside_a_fragmented_frame_is_survived(gateway, host):
    before = pair(host, gateway)
    frames_before = frames_in(host)
    # each half frame waits 300 ms before the rest: the drop lands inside the ack's first frame
    gateway.set_faults(split=True, split_pause_ms=300)
    host.dispatch({"type": "send_message", "text": MESSAGE})
    wait_until(lambda: message_requests(gateway) == [MESSAGE], 5, "the gateway to read the message")
    time.sleep(0.1)
    assert gateway.drop_connections() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    assert host.settle(timeout=5)
    assert frames_in(host) == frames_before  # no half frame ever reached the core
    state = host.state()
    assert state["connection"]["reason"] == "Connection closed: connection lost"
    assert host.errors == []

    gateway.set_faults(split=False)
    state = reconnect(host, 1000)
    assert state["session"]["id"] == before["session"]["id"]
    assert transcript(state)[-2:] == [("user", MESSAGE), ("assistant", REPLY_TEXT)]  # from the history
    assert transcript(send_and_wait_reply(host, "Thanks"))[-1] == ("assistant", "You said: Thanks")
    assert host.errors == []


def write_raw(gateway: RunningGateway, data: bytes) -> None:
    """Raw bytes on every open connection (not necessarily a valid WebSocket message)."""
    assert gateway.send_raw(data) == 1


@pytest.mark.parametrize("frame, reason", [
    (ws_frame(b"\xff\xfe not UTF-8", opcode=OPCODE_TEXT, fin=True), "Connection closed: Invalid UTF-8 text message"),
    (ws_frame(b"??", opcode=0x3, fin=True), "Connection closed: Unexpected opcode=3"),
], ids=["invalid-utf8", "reserved-opcode"])
def test_a_protocol_violation_closes_the_socket_and_the_app_reconnects(gateway, host, frame, reason):
    pair(host, gateway)
    write_raw(gateway, frame)
    state = host.wait_for(phase_is("reconnecting"), timeout=5)
    assert state["connection"]["reason"] == reason
    state = reconnect(host, 1000)
    assert state["session"]["id"] == gateway.fake.main_session
    assert transcript(send_and_wait_reply(host))[-1] == ("assistant", REPLY_TEXT)
    assert host.errors == []


def test_text_that_is_not_json_and_a_binary_frame_are_ignored(gateway, host):
    pair(host, gateway)
    seq = host.logs()["next_seq"]
    write_raw(gateway, ws_frame(b"hello, this is not json", opcode=OPCODE_TEXT, fin=True)
              + ws_frame(b"\x00\x01", opcode=0x2, fin=True))
    wait_until(lambda: len(host.errors) == 1, 5, "the host to see the binary frame")
    assert host.settle(timeout=5)
    assert [n for n in log_notes_since(host, seq) if n.startswith("malformed")] == [
        "malformed line 1 dropped: unexpected character 'h': expected a value at byte 0"]
    state = host.state()
    assert state["connection"]["phase"] == "connected"
    assert host.errors == [f"binary frame of 2 bytes on socket {host.call(lambda: host.host.socket_id)} ignored"]
    assert transcript(send_and_wait_reply(host))[-1] == ("assistant", REPLY_TEXT)


# -- through the CLI, against the gateway as a process -----------------------------------------------


def cli(socket: Path, *args, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jcode_mobile", "--socket", str(socket)] + [str(a) for a in args],
                          cwd=HARNESS, capture_output=True, text=True, timeout=timeout)


def cli_state(socket: Path) -> dict:
    out = cli(socket, "state")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


class GatewayProcess:
    """``python -m jcode_mobile.gateway --port 0`` in a subprocess; its output lines are collected."""

    def __init__(self, code: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jcode_mobile.gateway", "--port", "0", "--code", code],
            cwd=HARNESS, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines: "queue.Queue[str]" = queue.Queue()
        self.output: List[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        first = self.lines.get(timeout=10)
        match = re.fullmatch(r"jcode fake gateway listening on http://127\.0\.0\.1:(\d+) \(pairing code (\d+)\)", first)
        assert match is not None, first
        self.port = int(match.group(1))
        assert match.group(2) == code

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))
            self.lines.put(line.rstrip("\n"))

    def control(self, command: dict) -> dict:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/_fake/control",
                                         data=json.dumps(command).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read())

    def stop(self) -> int:
        self.process.terminate()
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(timeout=5)
        self._reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()
        return code


def test_cli_simulator_survives_a_network_drop_of_a_gateway_process(tmp_path):
    socket = tmp_path / "x.sock"
    gateway = GatewayProcess(CODE)
    started = False
    try:
        out = cli(socket, "start", "--scenario", "onboarding")
        assert out.returncode == 0, out.stderr
        started = True
        for name, value in [("host", "127.0.0.1"), ("port", gateway.port), ("code", CODE),
                            ("device_name", "CLI phone"), ("working_dir", WORKING_DIR)]:
            out = cli(socket, "set-field", name, value)
            assert out.returncode == 0, out.stderr
        out = cli(socket, "tap", "pair.submit")
        assert out.returncode == 0, out.stderr
        out = cli(socket, "assert-screen", "chat", "--timeout", "10")
        assert out.returncode == 0, out.stderr

        deadline = time.monotonic() + 10
        state = cli_state(socket)
        while not (state["connection"]["phase"] == "connected" and state["session"]["history_loaded"]):
            assert time.monotonic() < deadline, state["connection"]
            time.sleep(0.1)
            state = cli_state(socket)
        # say something, so the session is worth keeping (jcode forgets an empty new one)
        assert cli(socket, "set-field", "draft", "Run the tests").returncode == 0
        out = cli(socket, "tap", "chat.send")
        assert out.returncode == 0, out.stderr
        out = cli(socket, "assert-text", "You said: Run the tests", "--timeout", "10")
        assert out.returncode == 0, out.stderr
        session = cli_state(socket)["session"]["id"]
        assert gateway.control({"command": "state"})["connections"] == 1

        assert gateway.control({"command": "drop_connections"}) == {"ok": True, "dropped": 1}

        out = cli(socket, "assert-screen", "chat", "--timeout", "10")
        assert out.returncode == 0, out.stderr
        # the simulator's real clock fires the 1 s reconnect timer
        deadline = time.monotonic() + 10
        state = cli_state(socket)
        while not (state["connection"]["phase"] == "connected" and state["session"]["history_loaded"]
                   and any(e["type"] == "timer_fired" for e in json.loads(cli(socket, "log").stdout)["entries"])):
            assert time.monotonic() < deadline, state["connection"]
            time.sleep(0.1)
            state = cli_state(socket)
        assert state["session"]["id"] == session
        assert state["connection"]["attempt"] == 0
        assert [(e["role"], e["text"]) for e in state["transcript"]] == [
            ("user", "Run the tests"), ("assistant", "You said: Run the tests")]
        entries = json.loads(cli(socket, "log").stdout)["entries"]
        closed = [e["payload"] for e in entries if e["type"] == "websocket_closed"]
        assert [(c["code"], c["reason"]) for c in closed] == [(1006, "connection lost")]
        assert cli(socket, "assert-no-error").returncode == 0
        assert gateway.control({"command": "state"})["connections"] == 1
        wait_until(lambda: any(line.startswith("WS #2 open") for line in gateway.output), 5,
                   "the gateway to log the second connection")
        assert "drop: 1 connection(s) dropped" in gateway.output
    finally:
        if started:
            cli(socket, "shutdown", timeout=15)
        assert gateway.stop() == 0
