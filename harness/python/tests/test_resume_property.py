"""A property test of resume (issue 35, item 4): whatever happens to the
connection, the phone's transcript ends equal to the server's history.

With a seeded generator, a run drives the core (in-process :class:`Host`
against :class:`FakeJcodeServer` playing today's jcode) through a bounded
number of steps chosen at random from:

- ``send``: the person sends a message (when no turn shows as running); the
  server answers with a scripted turn: text, reasoning + text, or tools with
  a preamble, and half the time the turn is held mid-way (``hold_after``);
- ``finish``: the server sends the rest of the one held turn (a turn whose
  socket dropped while another client stayed is not possible here: the phone
  is the only client, so a drop aborts the turn, as jcode does);
- ``deliver``: some of the frames in flight reach the phone (frames are held:
  a drop loses what was not delivered);
- ``drop``: the network drops the socket (1006), sometimes followed at once by
  the reconnect timer;
- ``timers``: every pending timer fires (reconnect, keep-alive);
- ``switch``: the person opens the other session and comes back
  (``resume_session`` twice);
- ``reload``: the server reloads (``reloading``, every connection ends).

Then everything settles (bounded: frames delivered, held turns finished,
timers fired until the phone is connected and idle) and the phone's final
transcript (``/transcript``: user and assistant texts, tool call ids, in
order) is compared with the server's history rendered the same way: no entry
twice, none missing. Deterministic: no sleeps, no threads, bounded loops.
"""

from __future__ import annotations

import random
from typing import List, Tuple

import pytest

from jcode_mobile import App
from jcode_mobile.fake_gateway import FakeJcodeServer, Host, Reply

from helpers import fill_pairing_form

SESSION = "session-fox"
OTHER = "session-owl"
HISTORY = [{"role": "user", "content": "Where were we?"}, {"role": "assistant", "content": "At the release."}]
STEPS = 14
ACTIONS = ("send", "send", "finish", "deliver", "deliver", "drop", "timers", "switch", "reload")

Entry = Tuple[str, str]


def phone_entries(state: dict) -> List[Entry]:
    """The transcript as (role, text) for user/assistant texts and ("tool", id) per tool call."""
    entries: List[Entry] = []
    for entry in state["transcript"]:
        if entry["role"] not in ("user", "assistant"):
            continue
        if entry["text"]:
            entries.append((entry["role"], entry["text"]))
        entries += [("tool", call["id"]) for call in entry.get("tool_calls") or []]
    return entries


def server_entries(server: FakeJcodeServer, session_id: str) -> List[Entry]:
    """The session's history rows rendered the same way."""
    entries: List[Entry] = []
    for row in server.history_event(0, session_id)["messages"]:
        if row["role"] in ("user", "assistant") and row["content"]:
            entries.append((row["role"], row["content"]))
        elif row["role"] == "tool":
            entries.append(("tool", row["tool_data"]["id"]))
    return entries


def scripted_reply(rng: random.Random, n: int) -> Reply:
    kind = rng.choice(("text", "reasoning", "tools"))
    text = f"Answer {n}: " + " ".join(rng.choice(("alpha", "beta", "gamma", "delta")) for _ in range(rng.randint(2, 6)))
    options: dict = {"text": text}
    if kind == "reasoning":
        options["reasoning"] = f"Thinking about step {n}"
    if kind == "tools":
        count = rng.randint(1, 2)
        options["preamble"] = f"Running {count} tool(s) for {n}."
        options["tools"] = [{"id": f"toolu_{n}_{k}", "name": rng.choice(("bash", "read")),
                             "input": {"command": f"step {n}.{k}"}, "output": f"out {n}.{k}"} for k in range(count)]
    reply = Reply(**options)
    if rng.random() < 0.5:
        reply.hold_after = rng.randint(0, len(reply.events(0)) - 2)
    return reply


def running_turns(server: FakeJcodeServer) -> int:
    return sum(1 for s in server.open_sockets() if s.turn is not None) + len(server.foreign_turns)


def settle(host: Host, log: List[str]) -> None:
    """Deliver, finish held turns, fire timers, until connected and idle (bounded)."""
    for _ in range(20):
        host.deliver_all()
        if running_turns(host.server):
            log.append("settle: finish")
            host.server.finish_turn()
            continue
        state = host.app.state()
        # a message the core marked failed stays in the outbox, shown for the person to retry
        waiting = [m for m in state["outbox"] if m.get("delivery") != "failed"]
        if state["connection"]["phase"] == "connected" and not host.inbox and not waiting \
                and not state["session"]["is_processing"]:
            return
        log.append(f"settle: timers ({state['connection']['phase']})")
        host.fire_timers()
    raise AssertionError("the phone did not settle:\n" + "\n".join(log))


def run(seed: int) -> Tuple[List[Entry], List[Entry], List[str]]:
    rng = random.Random(seed)
    server = FakeJcodeServer(history=HISTORY, other_sessions={OTHER: "Release notes"})
    host = Host(App({"device_id": "phone-prop"}), server, hold_frames=True)
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    host.deliver_all()
    host.dispatch({"type": "resume_session", "session_id": SESSION})
    host.deliver_all()
    log: List[str] = []
    sent = 0
    for step in range(STEPS):
        action = rng.choice(ACTIONS)
        state = host.app.state()
        if action == "send":
            if state["session"]["is_processing"] or state["outbox"] or running_turns(server):
                continue
            sent += 1
            server.replies.append(scripted_reply(rng, sent))
            log.append(f"{step}: send m{sent} (hold_after={server.replies[-1].hold_after}, "
                       f"tools={len(server.replies[-1].tools)})")
            host.dispatch({"type": "send_message", "text": f"Message {sent}"})
        elif action == "finish":
            if running_turns(server) == 1:
                log.append(f"{step}: finish")
                server.finish_turn()
        elif action == "deliver":
            k = rng.randint(1, 4)
            log.append(f"{step}: deliver {k}")
            for _ in range(k):
                host.deliver_next()
        elif action == "drop":
            if host.socket_id is not None:
                at_once = rng.random() < 0.5
                log.append(f"{step}: drop{' + reconnect' if at_once else ''}")
                host.drop_connection()
                if at_once:
                    host.fire_timers()
        elif action == "timers":
            log.append(f"{step}: timers")
            host.fire_timers()
        elif action == "switch":
            if state["connection"]["phase"] == "connected":
                log.append(f"{step}: switch away and back")
                host.dispatch({"type": "resume_session", "session_id": OTHER})
                host.deliver_all()
                host.dispatch({"type": "resume_session", "session_id": SESSION})
        elif action == "reload":
            log.append(f"{step}: reload")
            host.reload_server()
    settle(host, log)
    shown = host.app.state()["session"]["id"]
    log.append(f"the phone shows {shown}")
    return phone_entries(host.app.state()), server_entries(server, shown), log, shown


def check(seed: int) -> None:
    phone, server, log, shown = run(seed)
    steps = f"seed {seed}\nsteps:\n" + "\n".join(log)
    assert phone == server, steps + f"\nphone:  {phone}\nserver: {server}"
    # the person's last choice was SESSION (every switch comes back to it)
    assert shown == SESSION, steps


#: Seeds that found core bugs, now fixed (each also has a Swift specification):
#: 5 and 21, a message lost with its socket sent into the session the person switched to
#: (SessionLivedTests.testAMessageWrittenInOneSessionIsNeverSentIntoAnother); 10 and 14, a switch
#: while the link came back refused (testASwitchWhileReconnectingIsResumedByTheReconnectsSubscribe);
#: 56 and 70, a turn left behind and switched back to hidden
#: (LeftBehindTurnTests.testSwitchingBackToTheSessionWhoseTurnWasLeftBehindShowsItsEventsAgain).
FOUND = [5, 10, 14, 21, 56, 70]


@pytest.mark.parametrize("seed", sorted(set(range(1, 31)) | set(FOUND)))
def test_the_phone_ends_with_the_servers_history(seed):
    check(seed)
