"""Rules of today's jcode server about turns, sockets and sessions (issue 35,
item 5), kept by FakeJcodeServer and tested on the fake directly: request ids
belong to their socket, ping/get_history answers, merged soft interrupts,
reload recovery, who sees a cancel, connection_phase, history.activity.

Each rule cites its jcode source next to the code in
jcode_mobile/fake_gateway.py. In memory, no sockets, no loops without a bound.
"""

import json

from jcode_mobile.fake_gateway import DEFAULT_HISTORY, RELOAD_CONTINUATION, FakeJcodeServer, Reply

URL = "ws://devbox.local:7643/ws"
TOKEN = "fixture-token"
WORKDIR = "/home/dev/app"
SESSION = "session-fox"
END_TURN = {"type": "message_end", "stop_reason": "end_turn"}
BUILD = {"id": "toolu_b", "name": "bash", "input": {"command": "cargo build"}, "output": "Finished dev"}


def line(**request) -> str:
    return json.dumps(request, separators=(",", ":"))


def attached(server: FakeJcodeServer, session: str = SESSION):
    """A connection subscribed to ``session``; its subscribe answers are dropped."""
    socket = server.open_socket(URL, TOKEN)
    answers = socket.send(line(id=1, type="subscribe", working_dir=WORKDIR, target_session_id=session))
    assert [a["type"] for a in answers] == ["ack", "history", "done", "session", "done"]
    return socket


def history_of(socket, rid: int = 90) -> dict:
    ack, history = socket.send(line(id=rid, type="get_history"))
    assert ack == {"type": "ack", "id": rid} and history["type"] == "history"
    return history


# -- 1: request ids belong to the socket ------------------------------------------------------


def test_a_dropped_phones_turn_goes_on_and_its_done_reaches_every_client_including_the_phones_new_socket():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    phone = attached(server)
    terminal = attached(server)
    assert phone.send(line(id=7, type="message", content="Count to four")) == [
        {"type": "ack", "id": 7}, {"type": "text_delta", "text": "one two "}]
    assert terminal.take_pushed() == [{"type": "text_delta", "text": "one two "}]  # the session fan-out

    phone.close()  # the phone's socket drops; the terminal stays: the turn goes on, owned by no connection
    assert server.sessions[SESSION]["was_interrupted"] is False
    assert server.foreign_turns[SESSION].detached is True and server.session_busy(SESSION)

    again = attached(server)  # the phone reconnects; its own ids start over
    assert again.send(line(id=7, type="ping")) == [{"type": "ack", "id": 7}, {"type": "pong", "id": 7}]
    rest = [{"type": "text_delta", "text": "three four"}, END_TURN, {"type": "done", "id": 7}]
    assert server.finish_turn() == rest
    # the done carries the id of the message on the dropped socket, to every client of the session
    assert again.take_pushed() == rest
    assert terminal.take_pushed() == rest
    assert history_of(again)["messages"] == DEFAULT_HISTORY + [
        {"role": "user", "content": "Count to four"}, {"role": "assistant", "content": "one two three four"}]
    assert not server.session_busy(SESSION)


def test_a_message_sent_while_a_detached_turn_runs_waits_for_it():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1), Reply(text="Yes.")])
    phone = attached(server)
    terminal = attached(server)
    phone.send(line(id=7, type="message", content="Count to four"))
    phone.close()
    again = attached(server)
    # acknowledged, then it waits for the session's agent, which the detached turn holds
    assert again.send(line(id=2, type="message", content="Done?")) == [{"type": "ack", "id": 2}]
    server.finish_turn()
    assert again.take_pushed() == [
        {"type": "text_delta", "text": "three four"}, END_TURN, {"type": "done", "id": 7},
        {"type": "text_delta", "text": "Yes."}, END_TURN, {"type": "done", "id": 2}]
    assert terminal.take_pushed()[-1] == {"type": "done", "id": 2}


def test_the_last_client_leaving_a_detached_turn_aborts_it():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    phone = attached(server)
    terminal = attached(server)
    phone.send(line(id=7, type="message", content="Count to four"))
    phone.close()
    terminal.close()
    assert SESSION not in server.foreign_turns and server.sessions[SESSION]["was_interrupted"] is True
    assert server.sessions[SESSION]["messages"][-1] == {"role": "user", "content": "Count to four"}


# -- 2: ping is answered by pong only, get_history by history only ----------------------------


def test_ping_and_get_history_get_their_ack_then_one_answer_and_no_done_even_mid_turn():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    phone = attached(server)
    assert phone.send(line(id=3, type="ping")) == [{"type": "ack", "id": 3}, {"type": "pong", "id": 3}]
    history = phone.send(line(id=4, type="get_history"))
    assert [e["type"] for e in history] == ["ack", "history"] and history[1]["id"] == 4
    phone.send(line(id=5, type="message", content="Count to four"))
    assert phone.send(line(id=6, type="ping")) == [{"type": "ack", "id": 6}, {"type": "pong", "id": 6}]
    history = phone.send(line(id=7, type="get_history"))
    assert [e["type"] for e in history] == ["ack", "history"] and history[1]["id"] == 7
    assert history[1]["activity"] == {"is_processing": True}


def test_a_first_ping_gets_pong_without_ack_and_the_connection_ends():
    server = FakeJcodeServer()
    socket = server.open_socket(URL, TOKEN)
    assert socket.send(line(id=1, type="ping")) == [{"type": "pong", "id": 1}]
    assert socket.server_closed is True


# -- 3: consecutive soft interrupts of one source are injected as one -------------------------


def test_two_and_three_queued_interrupts_are_joined_by_a_blank_line():
    tool = {"id": "toolu_1", "name": "bash", "input": '{"command":"ls"}', "output": "README.md"}
    server = FakeJcodeServer(replies=[Reply(text="Done.", chunks=["Done."], tools=[tool], hold_after=4)])
    phone = attached(server)
    phone.send(line(id=4, type="message", content="list"))
    for n, text in enumerate(["one", "two", "three"]):
        assert phone.send(line(id=5 + n, type="soft_interrupt", content=text)) == [
            {"type": "ack", "id": 5 + n}, {"type": "ack", "id": 5 + n}]
    assert server.finish_turn()[:2] == [
        {"type": "tool_done", "id": "toolu_1", "name": "bash", "output": "README.md"},
        {"type": "soft_interrupt_injected", "content": "one\n\ntwo\n\nthree", "point": "D"},
    ]
    assert history_of(phone)["messages"][-2] == {"role": "user", "content": "one\n\ntwo\n\nthree"}


def test_interrupts_of_alternating_sources_are_injected_one_group_per_run():
    server = FakeJcodeServer(replies=[Reply(text="First.", chunks=["First."], hold_after=0),
                                      Reply(text="Second.", chunks=["Second."])])
    phone = attached(server)
    phone.send(line(id=4, type="message", content="go"))
    phone.send(line(id=5, type="soft_interrupt", content="a"))
    phone.send(line(id=6, type="soft_interrupt", content="b"))
    server.queue_soft_interrupt(SESSION, "bg done", source="background_task")
    phone.send(line(id=7, type="soft_interrupt", content="c"))
    injected = [e for e in server.finish_turn() if e["type"] == "soft_interrupt_injected"]
    assert injected == [
        {"type": "soft_interrupt_injected", "content": "a\n\nb", "point": "B"},
        {"type": "soft_interrupt_injected", "content": "bg done", "display_role": "background_task", "point": "B"},
        {"type": "soft_interrupt_injected", "content": "c", "point": "B"},
    ]


# -- 4: reload recovery stays pending until a message's system_reminder matches ---------------


RECOVERY = {"reconnect_notice": None, "continuation_message": RELOAD_CONTINUATION}


def test_reload_recovery_is_in_every_history_until_a_matching_system_reminder_is_accepted():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    phone = attached(server)
    phone.send(line(id=2, type="message", content="Count to four"))
    ended = server.reload()
    assert ended == [phone] and phone.server_closed
    assert phone.take_pushed()[-1] == {"type": "reloading"}

    again = server.open_socket(URL, TOKEN)
    answers = again.send(line(id=1, type="subscribe", working_dir=WORKDIR, target_session_id=SESSION))
    assert answers[1]["was_interrupted"] is True and answers[1]["reload_recovery"] == RECOVERY
    assert history_of(again, 2)["reload_recovery"] == RECOVERY  # a history does not deliver it
    # the continuation as content does not count
    again.send(line(id=3, type="message", content=RELOAD_CONTINUATION))
    assert history_of(again, 4)["reload_recovery"] == RECOVERY
    # nor a different reminder
    again.send(line(id=5, type="message", content="", system_reminder="Continue."))
    assert history_of(again, 6)["reload_recovery"] == RECOVERY
    # jcode's TUI: content "" with the continuation as system_reminder: delivered
    assert again.send(line(id=7, type="message", content="", system_reminder=RELOAD_CONTINUATION)) == [
        {"type": "ack", "id": 7}, {"type": "text_delta", "text": "You said: "}, END_TURN, {"type": "done", "id": 7}]
    history = history_of(again, 8)
    assert "reload_recovery" not in history
    # an empty message leaves no user row; the reminder is never stored
    assert [(m["role"], m["content"]) for m in history["messages"][len(DEFAULT_HISTORY):]] == [
        ("user", "Count to four"),
        ("user", RELOAD_CONTINUATION), ("assistant", "You said: " + RELOAD_CONTINUATION),
        ("assistant", "You said: "),
        ("assistant", "You said: "),
    ]


def test_a_reload_without_a_running_turn_leaves_no_recovery():
    server = FakeJcodeServer()
    phone = attached(server)
    server.reload()
    again = server.open_socket(URL, TOKEN)
    answers = again.send(line(id=1, type="subscribe", working_dir=WORKDIR, target_session_id=SESSION))
    assert "reload_recovery" not in answers[1] and answers[1]["was_interrupted"] is False
    assert phone.server_closed


def test_a_no_reply_message_does_not_deliver_the_recovery():
    server = FakeJcodeServer(replies=[Reply(text="one two", hold_after=1)])
    phone = attached(server)
    phone.send(line(id=2, type="message", content="Go"))
    server.reload()
    again = attached(server)
    assert again.send(line(id=2, type="message", content="", system_reminder=RELOAD_CONTINUATION,
                           no_reply=True)) == [{"type": "ack", "id": 2}, {"type": "context_message_added", "id": 2}]
    assert history_of(again)["reload_recovery"] == RECOVERY


# -- 5: interrupted goes only to the connection that sent cancel ------------------------------


def test_cancel_answers_only_the_canceller_and_an_aborted_turn_sends_nothing_to_the_others():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    phone = attached(server)
    terminal = attached(server)
    phone.send(line(id=4, type="message", content="Count to four"))
    assert terminal.take_pushed() == [{"type": "text_delta", "text": "one two "}]
    assert phone.send(line(id=5, type="cancel")) == [
        {"type": "ack", "id": 5}, {"type": "interrupted"}, {"type": "done", "id": 4}]
    assert terminal.take_pushed() == []  # the aborted task sent nothing more
    assert not server.session_busy(SESSION)


def test_a_turn_that_stops_cooperatively_fans_out_its_own_done_then_the_canceller_gets_interrupted():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1, cancel="cooperative")])
    phone = attached(server)
    terminal = attached(server)
    phone.send(line(id=4, type="message", content="Count to four"))
    terminal.take_pushed()
    assert phone.send(line(id=5, type="cancel")) == [
        {"type": "ack", "id": 5}, {"type": "done", "id": 4}, {"type": "interrupted"}, {"type": "done", "id": 4}]
    assert terminal.take_pushed() == [{"type": "done", "id": 4}]


def test_a_cancel_from_a_client_that_does_not_own_the_turn_gets_interrupted_only():
    server = FakeJcodeServer(replies=[Reply(text="one two three four", hold_after=1)])
    phone = attached(server)
    terminal = attached(server)
    phone.send(line(id=4, type="message", content="Count to four"))
    assert terminal.send(line(id=9, type="cancel")) == [{"type": "ack", "id": 9}, {"type": "interrupted"}]
    assert phone.take_pushed() == []


# -- 6: connection_phase comes only inside a turn ---------------------------------------------


def test_a_held_terminal_turn_can_show_a_connection_phase_before_any_text():
    server = FakeJcodeServer()
    phone = attached(server)
    reply = Reply(text="All green.", chunks=["All green."], phases=["connecting", "waiting for response"],
                  hold_after=1)
    assert server.start_foreign_turn(reply, session_id=SESSION) == [
        {"type": "connection_phase", "phase": "connecting"}]
    assert phone.take_pushed() == [{"type": "connection_phase", "phase": "connecting"}]
    joining = attached(server)  # a phone joining now has seen nothing of the turn yet
    assert server.finish_foreign_turn(SESSION) == [
        {"type": "connection_phase", "phase": "waiting for response"}, {"type": "text_delta", "text": "All green."},
        END_TURN, {"type": "done", "id": 41}]
    assert joining.take_pushed()[0] == {"type": "connection_phase", "phase": "waiting for response"}


def test_a_phones_turn_sends_its_phases_first():
    server = FakeJcodeServer(replies=[Reply(text="Hi.", chunks=["Hi."], phases=["retrying (1/3)"])])
    phone = attached(server)
    assert phone.send(line(id=2, type="message", content="hello")) == [
        {"type": "ack", "id": 2}, {"type": "connection_phase", "phase": "retrying (1/3)"},
        {"type": "text_delta", "text": "Hi."}, END_TURN, {"type": "done", "id": 2}]


# -- 7: history.activity says what runs now -----------------------------------------------------


def test_activity_names_a_long_running_bash_tool_until_it_is_done():
    server = FakeJcodeServer(replies=[Reply(text="Built.", chunks=["Built."], tools=[BUILD], hold_after=3)])
    phone = attached(server)
    assert "activity" not in history_of(phone)
    assert phone.send(line(id=2, type="message", content="Build it")) == [
        {"type": "ack", "id": 2}, {"type": "tool_start", "id": "toolu_b", "name": "bash"},
        {"type": "tool_input", "delta": '{"command":"cargo build"}'},
        {"type": "tool_exec", "id": "toolu_b", "name": "bash"}]
    assert history_of(phone)["activity"] == {"is_processing": True, "current_tool_name": "bash"}
    other = attached(server)  # any client of the session asks: the same answer
    assert history_of(other)["activity"] == {"is_processing": True, "current_tool_name": "bash"}
    server.finish_turn()
    assert "activity" not in history_of(phone) and "activity" not in history_of(other)


def test_activity_of_a_terminal_turn_names_its_tool():
    server = FakeJcodeServer()
    phone = attached(server)
    server.start_foreign_turn(Reply(text="Built.", tools=[BUILD], hold_after=3), session_id=SESSION)
    assert history_of(phone)["activity"] == {"is_processing": True, "current_tool_name": "bash"}
    server.finish_foreign_turn(SESSION)
    assert "activity" not in history_of(phone)


def test_a_detached_turn_shows_as_activity_only_once_a_tool_start_reached_an_attached_client():
    server = FakeJcodeServer(replies=[Reply(text="Built.", tools=[BUILD], preamble="Building now.", hold_after=1),
                                      Reply(text="one two", hold_after=1)])
    phone = attached(server)
    terminal = attached(server)
    phone.send(line(id=2, type="message", content="Build it"))  # "Building " only so far
    phone.close()
    again = attached(server)
    # the connection table knows no processing client: jcode's history says nothing of the turn
    assert "activity" not in history_of(again)
    server.finish_turn()
    assert "activity" not in history_of(again)
    assert terminal.take_pushed()[-1] == {"type": "done", "id": 2}
