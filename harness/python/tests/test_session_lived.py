"""A session as a person lives it against today's jcode, end to end: the core
behind the in-process :class:`Host`, :class:`FakeJcodeServer` playing the
server (and, where a rule needs one, a terminal client attached to the same
session as a bare :class:`FakeSocket`).

The rules are docs/PROTOCOL.md's "Answers", "A turn that never hangs",
"Resume: the history plus the live tail", "Interrupted turns" and "Turns and
the outbox". Each test names one rule and states what the person sees
(state, semantic tree) and what went on the wire as literals. Deterministic:
no sleeps, no threads; timers fire only when a test fires them, and an alarm
fails a test still running after ``TEST_DEADLINE_S``.
"""

from __future__ import annotations

import json
from typing import List, Tuple

import pytest

from jcode_mobile import App, find_node
from jcode_mobile.fake_gateway import FakeJcodeServer, FakeSocket, Host, Reply

from helpers import fill_pairing_form

SESSION = "session-fox"
OTHER = "session-owl"
HISTORY = [{"role": "user", "content": "Where were we?"}, {"role": "assistant", "content": "At the release."}]
SHOWN = [("user", "Where were we?"), ("assistant", "At the release.")]
TEST_DEADLINE_S = 10
pytestmark = pytest.mark.timeout(TEST_DEADLINE_S)  # pytest-timeout fails a test still running then
#: jcode's continuation after a reload (tool/selfdev/reload.rs, interrupted_session_continuation_message).
RELOAD_CONTINUATION = (
    "Your session was interrupted by a server reload while a tool was running. The tool was aborted and results "
    "may be incomplete. Continue exactly where you left off and do not ask the user what to do next.")
BUILD = {"id": "toolu_b", "name": "bash", "input": {"command": "cargo build"}, "output": "Finished dev"}



# -- helpers ----------------------------------------------------------------------------------


def chat(*replies: Reply, hold_frames: bool = False) -> Tuple[FakeJcodeServer, Host]:
    """Paired, connected, SESSION open and idle; ``replies`` answer the next messages."""
    server = FakeJcodeServer(history=HISTORY, other_sessions={OTHER: "Release notes"}, replies=list(replies))
    host = Host(App({"device_id": "phone-lived"}), server, hold_frames=hold_frames)
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    host.deliver_all()
    host.dispatch({"type": "resume_session", "session_id": SESSION})
    host.deliver_all()
    state = host.app.state()
    assert (state["session"]["id"], conversation(host), state["session"]["is_processing"]) == (SESSION, SHOWN, False)
    return server, host


def terminal(server: FakeJcodeServer) -> FakeSocket:
    """A terminal client attached to SESSION (as jcode's TUI is); its answers are dropped."""
    socket = server.open_socket("ws://devbox.local:7643/ws", "fixture-token")
    socket.send(json.dumps({"id": 1, "type": "subscribe", "working_dir": "/home/me/project",
                            "target_session_id": SESSION}))
    assert socket.subscribed and socket.session_id == SESSION
    return socket


def conversation(host: Host) -> List[tuple]:
    return [(entry["role"], entry["text"]) for entry in host.app.state()["transcript"]]


def lines(host: Host, since: int) -> List[str]:
    """The websocket_send lines since ``since`` (a :meth:`Host.mark`)."""
    return [effect["line"] for effect in host.effects_of("websocket_send", since)]


def histories(host: Host, since_step: int) -> List[dict]:
    """The ``history`` events delivered to the core after step ``since_step``."""
    return [s.input["event"] for s in host.steps[since_step:]
            if s.kind == "event" and s.input.get("type") == "websocket_event" and s.input["event"]["type"] == "history"]


def tick(host: Host) -> List[str]:
    """The keep-alive timer fires: the lines it sent."""
    since = host.mark()
    fired = host.fire_timers("keepalive")
    assert len(fired) == 1 and fired[0].startswith("keepalive."), fired
    return lines(host, since)


def label(host: Host, node_id: str) -> str:
    node = find_node(host.app.tree(), node_id)
    assert node is not None, f"no node {node_id}"
    return node["label"]


# -- 1: a turn across a reconnect ends ----------------------------------------------------------


def drop_mid_turn_and_take_the_messages_id_again() -> Tuple[FakeJcodeServer, Host]:
    """The phone's "Count to four" (id 5) streams "one two " while the terminal stays attached;
    the phone's socket drops and the turn runs on, owned by no connection; the phone reconnects
    and its keep-alive pings count 2, 3, 4, 5 on the new socket: the last takes the message's id."""
    server, host = chat(Reply(text="one two three four", hold_after=1))
    terminal(server)
    since = host.mark()
    host.dispatch({"type": "send_message", "text": "Count to four"})
    assert lines(host, since) == ['{"id":5,"type":"message","content":"Count to four"}']
    assert conversation(host)[-1] == ("assistant", "one two ")
    host.drop_connection()
    assert server.foreign_turns[SESSION].detached is True  # the terminal keeps it alive
    since = host.mark()
    host.fire_timers("reconnect")
    assert lines(host, since) == [
        '{"id":1,"type":"subscribe","working_dir":"/home/me/project","target_session_id":"session-fox",'
        '"client_instance_id":"phone-lived"}', '{"id":2,"type":"ping"}']
    assert [tick(host) for _ in range(3)] == [
        ['{"id":3,"type":"ping"}'], ['{"id":4,"type":"ping"}'], ['{"id":5,"type":"ping"}']]  # pong 5 came back
    assert host.app.state()["connection"]["phase"] == "connected"
    return server, host


def test_a_turn_across_a_reconnect_ends_with_its_done_even_after_a_ping_took_the_same_id():
    server, host = drop_mid_turn_and_take_the_messages_id_again()
    # the rest of the turn, fanned out to the session's clients: the phone's new socket too
    assert server.finish_turn() == [{"type": "text_delta", "text": "three four"},
                                    {"type": "message_end", "stop_reason": "end_turn"}, {"type": "done", "id": 5}]
    host.deliver_next()  # "three four": the phone shows the turn running
    state = host.app.state()
    assert (state["session"]["is_processing"], state["run_status"]["text"]) == (True, "jcode is writing…")
    # message_end, done 5 (not pong 5's: a turn's end), then the history the phone asks for a turn it joined mid-way
    assert host.deliver_all() == 4
    state = host.app.state()
    assert (state["session"]["is_processing"], state["run_status"], state["outbox"]) == (False, None, [])
    assert find_node(host.app.tree(), "chat.activity")["visible"] is False
    assert [role for role, _ in conversation(host)[3:]] == ["assistant"]  # one reply after the question


# jcode shows no activity for a turn no client owns (session_activity_snapshot reads the connections), so the
# reconnect's history looks idle; the turn's end is then joined mid-way, and its history shows it whole.
def test_a_turn_across_a_reconnect_ends_with_its_whole_reply_once():
    server, host = drop_mid_turn_and_take_the_messages_id_again()
    server.finish_turn()
    host.deliver_all()
    assert conversation(host) == SHOWN + [("user", "Count to four"), ("assistant", "one two three four")]


# -- 2: Continue after a server reload -------------------------------------------------------


def test_continue_after_a_reload_sends_the_servers_continuation_as_system_reminder_and_delivers_the_recovery():
    server, host = chat(Reply(text="one two three four", hold_after=1))
    host.dispatch({"type": "send_message", "text": "Count to four"})
    assert host.reload_server() == [SESSION]
    host.fire_timers("reconnect")
    state = host.app.state()
    assert state["interrupted_turn"] == {"continuation": RELOAD_CONTINUATION, "reconnect_notice": None}
    assert conversation(host) == SHOWN + [("user", "Count to four")]  # the aborted turn left only the question
    assert label(host, "chat.interrupted") == "The last turn stopped before it finished."

    since = host.mark()
    host.dispatch({"type": "tap_node", "node_id": "chat.continue"})
    assert lines(host, since) == [json.dumps({"id": 3, "type": "message", "content": "",
                                              "system_reminder": RELOAD_CONTINUATION}, separators=(",", ":"))]
    state = host.app.state()
    assert (state["interrupted_turn"], state["outbox"], state["session"]["is_processing"]) == (None, [], False)
    # no bubble of the person's: the continuation is not their words (the fake answers "You said: ")
    assert conversation(host) == SHOWN + [("user", "Count to four"), ("assistant", "You said: ")]
    assert find_node(host.app.tree(), "chat.interrupted") is None

    # the next history (after another drop) no longer offers the recovery: nothing comes back
    step = len(host.steps)
    host.drop_connection()
    host.fire_timers("reconnect")
    (history,) = histories(host, step)
    assert ("reload_recovery" in history, history["was_interrupted"]) == (False, False)
    state = host.app.state()
    assert (state["interrupted_turn"], state["connection"]["phase"]) == (None, "connected")
    assert find_node(host.app.tree(), "chat.interrupted") is None


# -- 3: merged soft interrupts ---------------------------------------------------------------


def test_two_soft_interrupts_injected_merged_stay_two_user_messages_once_the_turn_ends():
    server, host = chat(Reply(text="First.", chunks=["First."], hold_after=1),
                        Reply(text="Both noted.", chunks=["Both noted."]))
    host.dispatch({"type": "send_message", "text": "go"})
    since = host.mark()
    host.dispatch({"type": "send_message", "text": "a"})  # while the turn runs: queued as soft interrupts
    host.dispatch({"type": "send_message", "text": "b"})
    assert lines(host, since) == ['{"id":6,"type":"soft_interrupt","content":"a","urgent":false}',
                                  '{"id":7,"type":"soft_interrupt","content":"b","urgent":false}']
    assert [q["content"] for q in host.app.state()["soft_interrupts"]] == ["a", "b"]
    # jcode joins consecutive interrupts of one source with a blank line into one injection
    assert server.finish_turn()[:3] == [
        {"type": "message_end", "stop_reason": "end_turn"},
        {"type": "soft_interrupt_injected", "content": "a\n\nb", "point": "B"},
        {"type": "text_delta", "text": "Both noted."}]
    host.run()
    state = host.app.state()
    assert conversation(host) == SHOWN + [("user", "go"), ("assistant", "First."), ("user", "a"), ("user", "b"),
                                          ("assistant", "Both noted.")]
    assert (state["soft_interrupts"], state["outbox"], state["session"]["is_processing"]) == ([], [], False)
    assert find_node(host.app.tree(), "chat.cancel_queued")["visible"] is False


# -- 4: a phase before any text --------------------------------------------------------------


def test_a_phase_seen_before_any_text_shows_a_running_turn_and_its_done_clears_it():
    server, host = chat()
    # the terminal's turn, joined before any text of it: only its provider phase so far
    assert server.start_foreign_turn(Reply(text="All green.", chunks=["All green."], hold_after=1,
                                           phases=["connecting", "waiting for response"]), session_id=SESSION) == [
        {"type": "connection_phase", "phase": "connecting"}]
    host.run()
    state = host.app.state()
    assert (state["session"]["is_processing"], state["session"]["server_phase"]) == (True, "connecting")
    assert state["run_status"]["kind"] == "working"
    assert label(host, "chat.activity") == "connecting"
    assert server.finish_foreign_turn(SESSION)[-1] == {"type": "done", "id": 41}  # the terminal's id
    host.run()
    state = host.app.state()
    assert (state["session"]["is_processing"], state["session"]["server_phase"], state["run_status"]) == (
        False, None, None)
    # the terminal's prompt, which no event carries, comes with the history asked at the turn's end
    assert conversation(host) == SHOWN + [("user", "Run the test suite"), ("assistant", "All green.")]


# -- 5: notices belong to their session ------------------------------------------------------


def test_the_interrupted_notice_does_not_follow_a_switch_to_another_session():
    server, host = chat(Reply(text="one two three four", hold_after=1))
    host.dispatch({"type": "send_message", "text": "Count to four"})
    since = host.mark()
    host.dispatch({"type": "tap_node", "node_id": "chat.interrupt"})
    assert lines(host, since) == ['{"id":6,"type":"cancel"}']
    assert host.app.state()["notices"] == [{"id": "n1", "kind": "info", "text": "Interrupted"}]
    assert [(n["label"], n["variant"]) for n in find_node(host.app.tree(), "chat.notices")["children"]] == [
        ("Interrupted", "info")]
    host.dispatch({"type": "resume_session", "session_id": OTHER})
    state = host.app.state()
    assert (state["session"]["id"], state["notices"], state["transcript"]) == (OTHER, [], [])
    assert find_node(host.app.tree(), "chat.notices")["children"] == []


# -- 6: a long silent tool -------------------------------------------------------------------


def test_a_ten_minute_silent_build_is_checked_once_per_quiet_spell_and_ends_when_it_finishes():
    server, host = chat(Reply(text="Built.", chunks=["Built."], tools=[BUILD], hold_after=3), hold_frames=True)
    host.dispatch({"type": "send_message", "text": "Build it"})  # message id 5
    host.deliver_all()  # tool_start, tool_input {"command":"cargo build"}, tool_exec; then nothing
    assert host.app.state()["run_status"] == {"kind": "running_tool", "tool": "bash", "summary": "cargo build",
                                              "elapsed_secs": 0, "text": "Running cargo build"}
    assert tick(host) == ['{"id":6,"type":"ping"}']
    host.deliver_all()  # its pong
    assert host.app.state()["run_status"]["text"] == "Running cargo build · 20 s"
    assert label(host, "chat.activity") == "Running cargo build · 20 s"

    # 40 s quiet: one check goes out with the ping
    step = len(host.steps)
    assert tick(host) == ['{"id":7,"type":"ping"}', '{"id":8,"type":"get_history"}']
    assert host.app.state()["run_status"]["text"] == "Checking on jcode…"
    host.deliver_all()
    (history,) = histories(host, step)
    assert history["activity"] == {"is_processing": True, "current_tool_name": "bash"}  # still running
    assert host.app.state()["run_status"]["text"] == "Running cargo build · 40 s"

    checks = [2]
    for n in range(3, 31):
        if len(tick(host)) == 2:
            checks.append(n)
        host.deliver_all()
    assert checks == [2, 6, 14, 30]  # at 40, 120, 280 and 600 s: never called stuck
    state = host.app.state()
    assert state["run_status"] == {"kind": "running_tool", "tool": "bash", "summary": "cargo build",
                                   "elapsed_secs": 600, "text": "Running cargo build · 10 min"}
    assert label(host, "chat.activity") == "Running cargo build · 10 min"
    assert [call["id"] for e in state["transcript"] for call in e["tool_calls"] or []] == ["toolu_b"]  # once

    assert server.finish_turn()[-1] == {"type": "done", "id": 5}
    host.deliver_all()
    state = host.app.state()
    assert (state["session"]["is_processing"], state["run_status"], state["outbox"]) == (False, None, [])
    assert conversation(host)[-1] == ("assistant", "Built.")
    assert [(c["id"], c["status"], c["output"]) for e in state["transcript"] for c in e["tool_calls"] or []] == [
        ("toolu_b", "succeeded", "Finished dev")]


# -- 7: a secret echoed by the server --------------------------------------------------------


def test_the_auth_token_echoed_in_a_server_error_is_shown_redacted():
    server, host = chat()
    assert host.keychain == {"jcode.token.devbox.local:7643": "tok-fake-0001"}  # what pairing gave the phone
    host.server_push({"type": "error", "id": 0,
                      "message": "Gateway auth failed for Bearer tok-fake-0001: device revoked?"})
    state = host.app.state()
    assert state["banners"]["error"]["message"] == "Gateway auth failed for Bearer [redacted]: device revoked?"
    assert label(host, "banner.error") == "Gateway auth failed for Bearer [redacted]: device revoked?"
    assert "tok-fake-0001" not in json.dumps(host.app.tree())
    assert "tok-fake-0001" not in json.dumps(state)
