"""The main journeys through the app, each a function that drives a host.

A :class:`Journey` names a session a person has with the app (pair and open
the chat, get a streamed reply, interrupt a turn, survive a dropped
connection, answer a password prompt) and knows the fake server it runs
against. It drives the in-memory :class:`~jcode_mobile.fake_gateway.Host`,
so a run is deterministic: the golden traces in
``tests/golden/traces/NAME.json`` are these journeys recorded.

    python -m jcode_mobile.journeys                     # list them
    python -m jcode_mobile.journeys stdin_password -o t.json   # record one

    host = JOURNEYS["pairing_to_chat"].run()            # drive, then look around
    trace = JOURNEYS["pairing_to_chat"].record()        # the same, recorded

Each drive function checks that the session got where it says and raises
:class:`JourneyFailed` otherwise. The secrets the journeys use
(:data:`PAIR_CODE`, :data:`AUTH_TOKEN`, :data:`SUDO_PASSWORD`) reach the fake
server and the host, never a trace.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from .binding import App
from .fake_gateway import FakeJcodeServer, Host, Reply
from .trace import Recorder, Trace, record_host

__all__ = [
    "PAIR_CODE",
    "AUTH_TOKEN",
    "SUDO_PASSWORD",
    "APP_OPTIONS",
    "HISTORY",
    "JourneyFailed",
    "Journey",
    "JOURNEYS",
    "pair_and_open_history",
    "pairing_to_chat",
    "streamed_reply_with_tool",
    "interrupt_running_turn",
    "reconnect_after_drop",
    "stdin_password",
]

#: The pairing code `jcode pair` showed (secret).
PAIR_CODE = "482915"
#: The token the server issues for it: 64 hex digits, as today's jcode (secret).
AUTH_TOKEN = "5f2b8c0e9a7d41368e2af0c1d3a59e7426b1c8d0f3e5a7b9c2d4e6f8a0b1c3d5"
#: What the person types at a tool's password prompt (secret).
SUDO_PASSWORD = "correct horse battery staple"

#: How the app is created: a stable device id (sent with http_pair and subscribe).
APP_OPTIONS: Dict[str, Any] = {"device_id": "device-journeys-01"}
HOST = "devbox.local"
PORT = "7643"
DEVICE_NAME = "Test iPhone"
WORKING_DIR = "/home/me/project"

#: The session on the server the journeys open (kept short: it is in every trace).
HISTORY: List[dict] = [
    {"role": "user", "content": "Why does test_reconnect fail on CI?"},
    {"role": "assistant", "content": "It sleeps a fixed 100 ms and races the server."},
]


class JourneyFailed(AssertionError):
    """A journey did not get where it says."""


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise JourneyFailed(message)


def _state(host: Host) -> dict:
    return host.app.state()


# -- the journeys ---------------------------------------------------------------------


def pair_and_open_history(host: Host) -> None:
    """Fill the pairing form, pair (the core stores the token and connects
    into a fresh session, as today's jcode gives a new phone), then open the
    server's session with its history."""
    for kind, value in [("set_host", HOST), ("set_port", PORT), ("set_pair_code", PAIR_CODE),
                        ("set_device_name", DEVICE_NAME), ("set_working_dir", WORKING_DIR)]:
        host.dispatch({"type": kind, "value": value})
    host.dispatch({"type": "submit_pairing"})
    _expect(_state(host)["connection"]["phase"] == "connected", "pairing did not connect")
    host.dispatch({"type": "resume_session", "session_id": host.server.main_session})
    state = _state(host)
    _expect(state["screen"] == "chat", f"expected the chat screen, got {state['screen']!r}")
    _expect(state["session"]["id"] == host.server.main_session, "the server's session is not open")
    _expect([m["text"] for m in state["transcript"]] == [m["content"] for m in HISTORY], "the history is not shown")


def pairing_to_chat(host: Host) -> None:
    """(a) Pairing → history → chat screen."""
    pair_and_open_history(host)


def streamed_reply_with_tool(host: Host) -> None:
    """(b) A message whose reply streams reasoning, a tool call that runs
    (``tool_exec``) and finishes (``tool_done``), then the answer."""
    pair_and_open_history(host)
    host.dispatch({"type": "send_message", "text": "Run the tests"})
    state = _state(host)
    _expect(state["session"]["is_processing"] is False, "the turn did not end")
    tool_entry, answer = state["transcript"][-2], state["transcript"][-1]
    _expect(tool_entry["reasoning"] == "The person wants the suite run after the fix.", "no reasoning shown")
    _expect([(c["name"], c["status"]) for c in tool_entry["tool_calls"]] == [("bash", "succeeded")],
            "the tool did not finish")
    _expect(answer["text"] == "All 42 tests pass.", f"unexpected answer {answer['text']!r}")


def interrupt_running_turn(host: Host) -> None:
    """(c) The reply stops mid-stream (the turn keeps running); the person
    interrupts; the server confirms with ``interrupted`` and ends the turn."""
    pair_and_open_history(host)
    host.dispatch({"type": "send_message", "text": "Read every test file and summarise them"})
    _expect(_state(host)["session"]["is_processing"] is True, "the turn is not running")
    host.dispatch({"type": "interrupt"})
    state = _state(host)
    _expect(state["session"]["is_processing"] is False, "the interrupt did not end the turn")
    _expect(state["transcript"][-1]["text"] == "I'll read them one ", "the partial reply is not kept")


def reconnect_after_drop(host: Host) -> None:
    """(d) The network drops the socket; the reconnect timer fires; the core
    reconnects and subscribes back into the same session."""
    pair_and_open_history(host)
    host.drop_connection(code=1006, reason="network lost")
    _expect(_state(host)["connection"]["phase"] == "reconnecting", "the drop was not noticed")
    _expect(host.fire_timers("reconnect") != [], "no reconnect timer was scheduled")
    state = _state(host)
    _expect(state["connection"]["phase"] == "connected", "did not reconnect")
    _expect(state["session"]["id"] == host.server.main_session, "the session was not resumed")


def stdin_password(host: Host) -> None:
    """(e) A running tool asks for a password (``stdin_request``,
    ``is_password``); the person answers; the turn then finishes."""
    pair_and_open_history(host)
    host.dispatch({"type": "send_message", "text": "Install libssl-dev"})
    socket = host.sockets[host.socket_id]
    host.server.request_stdin("[sudo] password for me: ", request_id="stdin-1", is_password=True, socket=socket)
    host.run()
    _expect([r["request_id"] for r in _state(host)["stdin_requests"]] == ["stdin-1"], "the prompt is not shown")
    host.dispatch({"type": "respond_stdin", "request_id": "stdin-1", "input": SUDO_PASSWORD})
    _expect(host.server.stdin_inputs == [("stdin-1", SUDO_PASSWORD)], "the server did not get the answer")
    host.finish_turn()
    state = _state(host)
    _expect(state["stdin_requests"] == [] and state["session"]["is_processing"] is False, "the turn did not finish")


# -- the registry --------------------------------------------------------------------


@dataclass(frozen=True)
class Journey:
    """A journey: what it does, the replies its server scripts, how it drives."""

    name: str
    summary: str
    drive: Callable[[Host], None]
    replies: Callable[[], List[Reply]] = list

    def server(self) -> FakeJcodeServer:
        """A fresh fake server for one run."""
        return FakeJcodeServer(pair_code=PAIR_CODE, token=AUTH_TOKEN, history=HISTORY, other_sessions={},
                               replies=self.replies())

    def host(self, *, library: Optional[ctypes.CDLL] = None, recorder: Optional[Any] = None) -> Host:
        """A fresh host (``App(APP_OPTIONS)``, :meth:`server`) not driven yet."""
        return Host(App(APP_OPTIONS, library=library), self.server(), recorder=recorder)

    def run(self, *, library: Optional[ctypes.CDLL] = None) -> Host:
        """Drive a fresh host through the journey and return it."""
        host = self.host(library=library)
        self.drive(host)
        return host

    def record(self, *, library: Optional[ctypes.CDLL] = None) -> Trace:
        """Drive a fresh host through the journey, recording it; the trace."""
        host = self.host(library=library)
        recorder: Recorder = record_host(host)
        self.drive(host)
        return recorder.finish(host.app)


def _tool_reply() -> List[Reply]:
    return [Reply(
        text="All 42 tests pass.",
        reasoning="The person wants the suite run after the fix.",
        reasoning_secs=1.5,
        tools=[{"id": "call_tests", "name": "bash", "input": {"command": "make test"}, "output": "42 passed in 3.1s"}],
        tokens=(1200, 48),
    )]


def _held_reply() -> List[Reply]:
    # two chunks ("I'll read ", "them one ") go out, then the turn keeps running
    return [Reply(text="I'll read them one by one and report back.", hold_after=2)]


def _sudo_reply() -> List[Reply]:
    # tool_start, tool_input, tool_exec go out: the tool is running when it asks
    return [Reply(
        text="libssl-dev is installed.",
        tools=[{"id": "call_sudo", "name": "bash", "input": {"command": "sudo apt-get install -y libssl-dev"},
                "output": "Setting up libssl-dev (3.0.13) ..."}],
        hold_after=3,
    )]


#: Every journey by name, in the order of the brief (a)…(e).
JOURNEYS: Dict[str, Journey] = {
    j.name: j
    for j in [
        Journey("pairing_to_chat", "pair with a code, open the server's session, see its history", pairing_to_chat),
        Journey("streamed_reply_with_tool", "a reply streams reasoning, a tool call running then done, the answer",
                streamed_reply_with_tool, _tool_reply),
        Journey("interrupt_running_turn", "interrupt a turn while its reply streams", interrupt_running_turn,
                _held_reply),
        Journey("reconnect_after_drop", "the connection drops, the reconnect timer fires, the session resumes",
                reconnect_after_drop),
        Journey("stdin_password", "a running tool asks for a password, the person answers, the turn ends",
                stdin_password, _sudo_reply),
    ]
}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """List the journeys, or record one (``-o FILE`` saves the trace)."""
    parser = argparse.ArgumentParser(prog="python -m jcode_mobile.journeys", description="record a journey as a trace")
    parser.add_argument("name", nargs="?", choices=sorted(JOURNEYS), help="the journey to record")
    parser.add_argument("-o", "--output", type=Path, help="save the trace there")
    args = parser.parse_args(argv)
    if args.name is None:
        for journey in JOURNEYS.values():
            print(f"{journey.name:<26} {journey.summary}")
        return 0
    try:
        trace = JOURNEYS[args.name].record()
    except JourneyFailed as problem:
        print(f"{args.name}: {problem}", file=sys.stderr)
        return 1
    screen = trace.final["state"].get("screen")
    print(f"{args.name}: {len(trace.steps)} steps, ends on the {screen} screen")
    if args.output is not None:
        trace.save(args.output)
        print(f"saved {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
