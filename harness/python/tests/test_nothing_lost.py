"""Nothing the person sends is lost, and nothing is sent twice: faults over real sockets.

Each test runs the fake jcode gateway (:class:`RunningGateway`, aiohttp on a free
loopback port) and the app behind the real host (:class:`BackgroundHost`) on a
:class:`VirtualClock` (reconnect and keep-alive timers fire only on
``advance``), injects a fault and ends with the same two checks for every
message the person sent:

- the gateway received it exactly once (the ``message`` requests the fake
  server recorded);
- the app shows it exactly once (its transcript, and the semantic tree's
  ``chat.messages``: a transcript entry or an ``outbox.<id>`` node).

Every wait is bounded and an alarm fails a test still running after
``TEST_DEADLINE_S``.

A reconnect that resumes a session gets two histories: one answers
``subscribe`` and one answers ``get_history``. The server reads requests in
order, so the core holds the outbox until the history answering ``get_history``
has arrived. An earlier core released it on the first history, and the
message then went missing from the view.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, List

import pytest

from jcode_mobile import find_node
from jcode_mobile.fake_gateway import FakeJcodeServer, Reply
from jcode_mobile.gateway import RunningGateway
from jcode_mobile.host import BackgroundHost, FileSecureStore, FileStorage

from helpers import WORKING_DIR, idle, pair_and_open, phase_is

CODE = "640127"
HISTORY = [
    {"role": "user", "content": "Why does test_reconnect fail on CI?"},
    {"role": "assistant", "content": "It sleeps a fixed 100 ms and races the server."},
]
DELTAS = ["The test ", "now waits ", "for the ", "connected event."]
TEST_DEADLINE_S = 30
pytestmark = pytest.mark.timeout(TEST_DEADLINE_S)  # pytest-timeout fails a test still running then
KEEPALIVE_MS = 20_000



# -- fixtures ---------------------------------------------------------------------------------



@pytest.fixture
def gateway() -> Iterator[RunningGateway]:
    fake = FakeJcodeServer(pair_code=CODE, history=HISTORY, other_sessions={},
                           replies=[Reply(text="".join(DELTAS), chunks=DELTAS)])
    with RunningGateway(fake) as running:
        yield running


@pytest.fixture
def host(hosts) -> BackgroundHost:
    return hosts()  # hosts: conftest.py


# -- helpers ----------------------------------------------------------------------------------





def pair(host: BackgroundHost, gateway: RunningGateway) -> dict:
    """Pair (the device creates its identity first), connect, open the server's session."""
    pair_and_open(host, gateway, code=CODE, device="Nothing-lost phone", session=gateway.fake.main_session,
                  messages=len(HISTORY))
    assert host.settle(timeout=5)
    return host.state()


def send(host: BackgroundHost, text: str) -> None:
    host.dispatch({"type": "send_message", "text": text})


def reconnect(host: BackgroundHost) -> dict:
    """Fire the pending reconnect timer; wait until the link is back and everything settled."""
    delay = host.state()["connection"]["reconnect_delay_ms"]
    assert delay is not None, host.state()["connection"]
    fired = host.advance(delay)
    assert any(t.startswith("reconnect.") for t in fired), fired
    return settle_idle(host)


def settle_idle(host: BackgroundHost, timeout: float = 5) -> dict:
    host.wait_for(idle, timeout=timeout)
    assert host.settle(quiet=0.2, timeout=5)
    state = host.state()
    assert idle(state), state["connection"]
    return state


def received(gateway: RunningGateway) -> List[str]:
    """The content of every ``message`` request the server read, in order."""
    return gateway.call(lambda fake: [r["content"] for r in fake.requests if r["type"] == "message"])


def shown(host: BackgroundHost, text: str) -> int:
    """How many times the conversation shows a message of the person with this text."""
    nodes = find_node(host.tree(), "chat.messages")["children"]
    return sum(1 for n in nodes if n["value"] == text and n["label"].startswith("You"))


def assert_each_sent_once(host: BackgroundHost, gateway: RunningGateway, texts: List[str]) -> None:
    """Every message the person sent reached the gateway exactly once and shows exactly once."""
    got = received(gateway)
    assert {t: got.count(t) for t in texts} == {t: 1 for t in texts}, got
    state = host.state()
    users = [e["text"] for e in state["transcript"] if e["role"] == "user"]
    assert {t: users.count(t) for t in texts} == {t: 1 for t in texts}, users
    assert {t: shown(host, t) for t in texts} == {t: 1 for t in texts}


def effects_of(host: BackgroundHost, effect_type: str, since: int = 0) -> List[dict]:
    return [e for e in host.effects[since:] if e["type"] == effect_type]


# -- drops ------------------------------------------------------------------------------------


def test_a_drop_mid_stream_loses_nothing_and_sends_nothing_twice(gateway, host):
    pair(host, gateway)
    gateway.call(lambda fake: fake.replies.insert(0, Reply(text="Half of it, then", chunks=["Half ", "of it, ", "then"],
                                                        hold_after=2)))
    send(host, "Fix the flaky test")
    host.wait_for(lambda s: s["transcript"][-1]["text"] == "Half of it, ", timeout=5)  # the ack and two deltas
    # acknowledged: received, and it stays until its turn is seen ending (or a history holds it)
    assert [m["delivery"] for m in host.state()["outbox"]] == ["received"]
    assert gateway.drop_connections() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    state = reconnect(host)
    assert state["session"]["id"] == gateway.fake.main_session
    send(host, "And the other one")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Fix the flaky test", "And the other one"])


def test_a_drop_after_the_message_arrived_but_before_its_ack_does_not_send_it_again(gateway, host):
    pair(host, gateway)
    gateway.set_faults(drop_on_request="message", drop_times=1)
    send(host, "Did this arrive?")
    host.wait_for(phase_is("reconnecting"), timeout=5)
    state = host.state()
    # the server read it, the app cannot know: it stays, unconfirmed, shown once
    assert [(m["text"], m["delivery"]) for m in state["outbox"]] == [("Did this arrive?", "unconfirmed")]
    assert received(gateway) == ["Did this arrive?"]
    assert shown(host, "Did this arrive?") == 1
    assert host.stored_snapshot()["outbox"]["messages"][0]["delivery"] == "unconfirmed"
    state = reconnect(host)  # the history shows it: it leaves the outbox without going again
    assert [e["text"] for e in state["transcript"]][-2:] == ["Did this arrive?", "".join(DELTAS)]
    assert_each_sent_once(host, gateway, ["Did this arrive?"])


def test_a_reload_mid_turn_loses_nothing(gateway, host):
    pair(host, gateway)
    gateway.call(lambda fake: fake.replies.insert(0, Reply(text="Working on it", chunks=["Working ", "on it"],
                                                        hold_after=1)))
    send(host, "Refactor the module")
    host.wait_for(lambda s: s["transcript"][-1]["text"] == "Working ", timeout=5)
    assert gateway.reload() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    assert host.state()["connection"]["reconnect_delay_ms"] == 500
    reconnect(host)
    send(host, "Then run the tests")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Refactor the module", "Then run the tests"])


# -- the server says no -----------------------------------------------------------------------


def test_a_revoked_token_asks_to_pair_again_forgets_the_token_and_keeps_what_was_typed(gateway, host):
    pair(host, gateway)
    send(host, "Before the revoke")
    settle_idle(host)
    key = f"jcode.token.127.0.0.1:{gateway.port}"
    assert gateway.revoke_all_tokens() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    send(host, "Typed while it was down")  # waits in the outbox
    since = len(host.effects)
    host.advance(1000)
    host.wait_for(phase_is("failed"), timeout=5)
    assert host.settle(timeout=5)
    assert [e["key"] for e in effects_of(host, "secure_store_delete", since)] == [key]
    assert host.call(lambda: host.host.secure_store.items()) == {}
    repair = find_node(host.tree(), "connection.repair")
    assert (repair["label"], repair["visible"], repair["enabled"]) == ("Pair again", True, True)
    state = host.state()
    assert [(m["text"], m["delivery"]) for m in state["outbox"]] == [("Typed while it was down", "waiting")]
    assert shown(host, "Typed while it was down") == 1
    assert received(gateway) == ["Before the revoke"]
    # pairing again with a new code reconnects to the same server: the outbox goes, once
    gateway.call(lambda fake: fake.pair_codes.add("771204"))
    host.dispatch({"type": "tap_node", "node_id": "connection.repair"})
    assert host.state()["screen"] == "onboarding"
    for kind, value in [("set_host", "127.0.0.1"), ("set_port", str(gateway.port)), ("set_pair_code", "771204"),
                        ("set_working_dir", WORKING_DIR)]:
        host.dispatch({"type": kind, "value": value})
    host.dispatch({"type": "submit_pairing"})
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Before the revoke", "Typed while it was down"])


def test_a_close_request_stays_down_until_retried_and_the_outbox_then_goes_once(gateway, host):
    pair(host, gateway)
    send(host, "First")
    settle_idle(host)
    gateway.request_session_close("Stopped by coordinator")
    host.wait_for(phase_is("failed"), timeout=5)
    send(host, "Second, while closed")
    assert host.advance(60_000) == []  # stays down: no reconnect, no keep-alive
    state = host.state()
    assert [(m["text"], m["delivery"]) for m in state["outbox"]] == [("Second, while closed", "waiting")]
    assert received(gateway) == ["First"]
    host.dispatch({"type": "tap_node", "node_id": "connection.retry"})
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["First", "Second, while closed"])


# -- a noisy wire -----------------------------------------------------------------------------


def test_garbled_lines_lose_nothing(gateway, host):
    pair(host, gateway)
    gateway.set_faults(garble_next=4)
    send(host, "Through the noise")
    settle_idle(host)
    assert host.state()["transcript"][-1]["text"] == "".join(DELTAS)
    send(host, "Still there?")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Through the noise", "Still there?"])


def test_duplicated_events_do_not_send_or_show_a_message_twice(gateway, host):
    pair(host, gateway)
    gateway.set_faults(duplicate=True)
    send(host, "Once only")
    settle_idle(host)
    send(host, "And once more")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Once only", "And once more"])


def test_late_events_of_an_earlier_turn_neither_end_the_next_turn_nor_repeat_a_message(gateway, host):
    pair(host, gateway)
    send(host, "First")
    settle_idle(host)
    first_id = gateway.call(lambda fake: [r["id"] for r in fake.requests if r["type"] == "message"][-1])
    gateway.call(lambda fake: fake.replies.append(Reply(text="Second answer", chunks=["Second ", "answer"], hold_after=1)))
    send(host, "Second")
    host.wait_for(lambda s: [m["delivery"] for m in s["outbox"]] == ["received"] and s["session"]["is_processing"], timeout=5)
    # Out of order: the first turn's ack and done again, while the second turn streams.
    gateway.push([{"type": "ack", "id": first_id}, {"type": "done", "id": first_id}])
    assert host.settle(timeout=5)
    assert host.state()["session"]["is_processing"] is True
    gateway.finish_turn()
    settle_idle(host)
    assert host.state()["transcript"][-1]["text"] == "Second answer"
    send(host, "Third")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["First", "Second", "Third"])


# -- the phone's life -------------------------------------------------------------------------


def test_reachability_flapping_with_messages_typed_offline(gateway, host):
    pair(host, gateway)
    texts = []
    for i in range(3):
        host.platform_event({"type": "network_reachability_changed", "reachable": False})
        assert gateway.drop_connections() == 1  # the network is gone: so is the socket
        host.wait_for(phase_is("offline"), timeout=5)
        text = f"Typed offline {i}"
        texts.append(text)
        send(host, text)
        assert host.state()["outbox"][-1]["delivery"] == "waiting"
        host.platform_event({"type": "network_reachability_changed", "reachable": False})  # flaps
        host.platform_event({"type": "network_reachability_changed", "reachable": True})  # back: at once
        settle_idle(host)
    assert_each_sent_once(host, gateway, texts)


def test_background_and_foreground_mid_turn(gateway, host):
    pair(host, gateway)
    gateway.call(lambda fake: fake.replies.insert(0, Reply(text="Slow answer", chunks=["Slow ", "answer"],
                                                        hold_after=1)))
    send(host, "Take your time")
    host.wait_for(lambda s: s["transcript"][-1]["text"] == "Slow ", timeout=5)
    since = len(host.effects)
    host.platform_event({"type": "app_background"})
    cancelled = [e["timer_id"] for e in effects_of(host, "cancel_timer", since)]
    assert len(cancelled) == 1 and cancelled[0].startswith("keepalive.")
    assert host.advance(5 * KEEPALIVE_MS) == []  # no timers in the background; the socket stays open
    assert host.state()["connection"]["phase"] == "connected" and gateway.connections() == 1
    gateway.finish_turn()  # the turn ends while in the background
    host.wait_for(lambda s: not s["session"]["is_processing"], timeout=5)
    since = len(host.effects)
    host.platform_event({"type": "app_foreground"})  # pinged at once, keep-alive again
    sends = [json.loads(e["line"]) for e in effects_of(host, "websocket_send", since)]
    assert [r["type"] for r in sends] == ["ping"]
    assert [e["purpose"] for e in effects_of(host, "schedule_timer", since)] == ["keepalive"]
    settle_idle(host)
    send(host, "Back in front")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Take your time", "Back in front"])


def test_a_drop_while_in_the_background_reconnects_when_in_front_again(gateway, host):
    pair(host, gateway)
    send(host, "Before sleeping")
    settle_idle(host)
    host.platform_event({"type": "app_background"})
    assert gateway.drop_connections() == 1
    host.wait_for(phase_is("reconnecting"), timeout=5)
    assert host.advance(60_000) == []  # nothing reconnects in the background
    since = len(host.effects)
    host.platform_event({"type": "app_foreground"})
    assert [e["type"] for e in host.effects[since:]][:1] == ["websocket_connect"]  # at once
    settle_idle(host)
    send(host, "Awake")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Before sleeping", "Awake"])


def test_keepalive_detects_a_server_that_stopped_answering(gateway, host):
    pair(host, gateway)
    send(host, "Before the stall")
    settle_idle(host)
    gateway.set_faults(stall=True)
    since = len(host.effects)
    # first tick: a ping goes out (the stalled server holds it)
    fired = host.advance(KEEPALIVE_MS)
    assert len(fired) == 1 and fired[0].startswith("keepalive."), fired
    pings = [json.loads(e["line"]) for e in effects_of(host, "websocket_send", since)]
    assert [p["type"] for p in pings] == ["ping"]
    assert host.state()["connection"]["phase"] == "connected"
    # second tick: still no pong: the link is dead, whatever the socket says
    fired = host.advance(KEEPALIVE_MS)
    assert len(fired) == 1 and fired[0].startswith("keepalive."), fired
    state = host.wait_for(phase_is("reconnecting"), timeout=5)
    assert state["connection"]["reason"] == "The server stopped answering"
    assert [e["type"] for e in effects_of(host, "websocket_close", since)] == ["websocket_close"]
    gateway.set_faults(stall=False)
    reconnect(host)
    send(host, "After the stall")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Before the stall", "After the stall"])


def test_keepalive_pings_are_answered_and_keep_the_link(gateway, host):
    pair(host, gateway)
    for _ in range(3):
        fired = host.advance(KEEPALIVE_MS)
        assert len(fired) == 1 and fired[0].startswith("keepalive.")
        host.settle(quiet=0.1, timeout=5)
        assert host.state()["connection"]["phase"] == "connected"
    # three keep-alive pings, after the one that checked the resume's history came
    assert gateway.call(lambda fake: sum(1 for r in fake.requests if r["type"] == "ping")) == 1 + 3
    send(host, "Still connected")
    settle_idle(host)
    assert_each_sent_once(host, gateway, ["Still connected"])


# -- killed and restarted ---------------------------------------------------------------------


def stores(tmp_path: Path):
    return FileStorage(tmp_path / "storage.json"), FileSecureStore(tmp_path / "secure.json")


def kill(host: BackgroundHost) -> None:
    """The app dies: its host stops and the app handle is freed; only the stores remain."""
    app = host.host.app
    host.close()
    app.close()


def test_restart_from_the_snapshot_reconnects_to_the_same_server_and_session_with_the_draft(gateway, hosts,
                                                                                             tmp_path):
    storage, secure = stores(tmp_path)
    first = hosts(storage=storage, secure_store=secure)  # no device_id: the host creates one (a uuid4)
    pair(first, gateway)
    send(first, "Before the restart")
    settle_idle(first)
    first.dispatch({"type": "set_draft", "value": "Half a thought"})
    session_id = first.state()["session"]["id"]
    device_id = first.state()["lifecycle"]["device_id"]
    assert len(device_id) == 36 and first.call(lambda: first.host.device.device_ids_created) == [device_id]
    kill(first)

    saved = storage.read("snapshot")
    assert saved["device"]["device_id"] == device_id
    assert saved["selected_server_id"] == f"127.0.0.1:{gateway.port}"
    assert saved["servers"][0]["last_session_id"] == session_id
    assert saved["composer"]["draft"] == "Half a thought"

    second = hosts(storage=storage, secure_store=secure, restore=True)
    state = settle_idle(second)
    assert second.call(lambda: second.host.restored) is True
    assert effects_of(second, "http_pair") == [] and effects_of(second, "create_device_id") == []
    assert [e["key"] for e in effects_of(second, "secure_store_read")] == [f"jcode.token.127.0.0.1:{gateway.port}"]
    assert state["selected_server_id"] == f"127.0.0.1:{gateway.port}"
    assert state["session"]["id"] == session_id
    assert state["lifecycle"]["device_id"] == device_id
    assert state["draft"] == "Half a thought"
    assert gateway.call(lambda fake: len(fake.pair_requests)) == 1
    assert_each_sent_once(second, gateway, ["Before the restart"])


def test_killed_with_messages_typed_offline_restarts_and_sends_each_once(gateway, hosts, tmp_path):
    storage, secure = stores(tmp_path)
    first = hosts(storage=storage, secure_store=secure)
    pair(first, gateway)
    send(first, "Sent before going offline")
    settle_idle(first)
    first.platform_event({"type": "network_reachability_changed", "reachable": False})
    assert gateway.drop_connections() == 1
    first.wait_for(phase_is("offline"), timeout=5)
    send(first, "Typed offline 1")
    send(first, "Typed offline 2")
    first.dispatch({"type": "set_draft", "value": "Not sent yet"})
    session_id = first.state()["session"]["id"]
    kill(first)

    saved = storage.read("snapshot")
    assert [(m["text"], m["delivery"]) for m in saved["outbox"]["messages"]] == [
        ("Typed offline 1", "waiting"), ("Typed offline 2", "waiting")]

    second = hosts(storage=storage, secure_store=secure, restore=True, foreground_at_start=False)
    state = second.state()  # restored, not in front yet: nothing moves
    assert (state["screen"], state["connection"]["phase"]) == ("chat", "connecting")
    assert [m["text"] for m in state["outbox"]] == ["Typed offline 1", "Typed offline 2"]
    assert state["draft"] == "Not sent yet"
    assert {t: shown(second, t) for t in ("Typed offline 1", "Typed offline 2")} == {
        "Typed offline 1": 1, "Typed offline 2": 1}
    second.platform_event({"type": "app_foreground"})  # what iOS reports at launch
    state = settle_idle(second, timeout=10)
    assert state["session"]["id"] == session_id
    assert state["draft"] == "Not sent yet"
    assert effects_of(second, "http_pair") == []
    assert_each_sent_once(second, gateway, ["Sent before going offline", "Typed offline 1", "Typed offline 2"])


def test_done_when_pair_chat_free_restore_same_server_session_draft_and_outbox(gateway, hosts, tmp_path):
    """The issue's "done when": pair → chat → free the app → a new app from the last snapshot is
    connected to the same server and session, with the draft and the outbox intact, without pairing again."""
    storage, secure = stores(tmp_path)
    first = hosts(storage=storage, secure_store=secure)
    pair(first, gateway)
    send(first, "Hello")
    settle_idle(first)
    first.platform_event({"type": "network_reachability_changed", "reachable": False})
    gateway.drop_connections()
    first.wait_for(phase_is("offline"), timeout=5)
    send(first, "Queued")
    first.dispatch({"type": "set_draft", "value": "Draft"})
    session_id = first.state()["session"]["id"]
    last = first.snapshot()
    assert last == storage.read("snapshot")
    kill(first)

    second = hosts(storage=storage, secure_store=secure, restore=True, foreground_at_start=False)
    assert second.snapshot() == last  # intact, as saved
    second.platform_event({"type": "app_foreground"})
    state = settle_idle(second, timeout=10)
    assert (state["selected_server_id"], state["session"]["id"]) == (f"127.0.0.1:{gateway.port}", session_id)
    assert state["draft"] == "Draft"
    assert effects_of(second, "http_pair") == []
    assert_each_sent_once(second, gateway, ["Hello", "Queued"])
