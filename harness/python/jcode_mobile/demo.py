"""``make demo``: a whole session over real sockets, screen by screen.

    python -m jcode_mobile.demo [--width N] [--frame-delay-ms MS]

Starts the fake jcode gateway on a free loopback port and runs the app
through the real host (:class:`~jcode_mobile.host.RealHost`: HTTP and a
WebSocket, real timers): pairing, the history of an earlier session, a
streamed reply with reasoning and a tool card going from running to done,
an interrupt, a dropped connection and the reconnect. Each screen is printed
as it changes; beside it, the JSON that crossed the boundary since the last
screen (``>`` actions and platform events into the core, ``<`` effects out
of it), condensed, secrets masked. It ends with the commands to try the CLI.
Exits 0 when everything went as expected, 1 (with the reason) otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from .binding import App, JcodeMobileError, version
from .fake_gateway import FakeJcodeServer, Reply
from .gateway import RunningGateway
from .host import BackgroundHost, HostTimeout
from .render import render_screen

#: Fields that always hold a secret, and the inputs/effects whose ``value``/``input`` is one.
SECRET_FIELDS = frozenset({"code", "auth_token", "token"})
SECRET_VALUES = {"set_pair_code": "value", "secure_store_write": "value", "secure_store_read_finished": "value",
                 "respond_stdin": "input"}
MASK = "•••"

HISTORY = [
    {"role": "user", "content": "Why does test_reconnect fail on CI?"},
    {"role": "assistant", "content": "It sleeps a fixed 100 ms and races the server; I now wait for the connected event."},
]
REPLY = Reply(
    text="All 42 tests pass. The reconnect test took 0.3 s instead of timing out.",
    reasoning="The person wants the test suite run after the fix.",
    reasoning_secs=1.2,
    tools=[{"id": "call_test", "name": "bash", "input": '{"command":"make test"}', "output": "42 passed in 3.1s"}],
    tokens=(18234, 96),
)
#: The second turn stays running (so the interrupt meets it).
LONG_REPLY = Reply(
    text="Refactoring the reconnect module step by step, starting with the backoff table and then the timers.",
    tools=[{"id": "call_sleep", "name": "bash", "input": '{"command":"cargo build --release"}', "output": "ok"}],
    preamble="Building first.",
    hold_after=4,  # text, tool_start, tool_input, tool_exec: the tool stays running
)
DEVICE_ID = "demo-device-0001"
WORKING_DIR = "/home/demo/project"
PAIR_CODE = "123456"


class DemoFailure(Exception):
    """Something in the session did not go as scripted."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise DemoFailure(message)


def mask(value: Any) -> Any:
    """A copy with every secret replaced by •••."""
    if isinstance(value, dict):
        secret = SECRET_VALUES.get(value.get("type"))
        return {k: (MASK if (k in SECRET_FIELDS or k == secret) and isinstance(v, str) else mask(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v) for v in value]
    return value


def condense(value: Any, width: int) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= width else text[: width - 1] + "…"


def boundary_lines(kind: str, payload: Any, report: dict, width: int) -> List[str]:
    """What one call moved across the boundary: the input, then each effect."""
    if isinstance(payload, dict) and payload.get("type") == "websocket_event" and "line" in payload:
        # a frame of server events: show the events themselves, not the escaped text
        shown: Any = {"type": "websocket_event", "line": [_parse(line) for line in payload["line"].split("\n")]}
    else:
        shown = payload
    lines = ["> " + condense(mask(shown), width - 2)]
    for effect in report.get("effects", []) if isinstance(report, dict) else []:
        lines.append("< " + condense(mask(effect), width - 2))
    return lines


def _parse(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return line


class Demo:
    def __init__(self, out: Callable[[str], None] = print, *, width: int = 132, frame_delay_ms: int = 120,
                 server: Optional[FakeJcodeServer] = None):
        self.out = out
        self.width = width
        self.left = 46
        self.step = 0
        self.server = server or FakeJcodeServer(pair_code=PAIR_CODE, history=HISTORY, replies=[REPLY, LONG_REPLY])
        self.gateway = RunningGateway(self.server)
        self.frame_delay_ms = frame_delay_ms
        self._lock = threading.Lock()
        self._crossed: List[str] = []
        self._watch: Dict[str, str] = {}
        self._pending_screens: List[str] = []
        self.host: Optional[BackgroundHost] = None
        self.calls = 0

    # -- output ---------------------------------------------------------------

    def observe(self, kind: str, call: dict) -> None:
        """Called by the host (on its thread) for every call into the core: ``{"input", "report"}``."""
        payload, report = call["input"], call["report"]
        right = self.width - self.left - 3
        with self._lock:
            self.calls += 1
            self._crossed.extend(boundary_lines(kind, payload, report, right))
            if kind == "event" and isinstance(payload, dict) and payload.get("type") == "websocket_event":
                for line in str(payload.get("line", "")).split("\n"):
                    event_type = _parse(line).get("type") if isinstance(_parse(line), dict) else None
                    heading = self._watch.pop(event_type, None) if event_type else None
                    if heading is not None:
                        # the frame that makes this screen worth showing: draw it now, on the host's thread
                        self._show(heading, render_screen(self.host.host.app.tree()) if self.host else "")

    def watch(self, event_type: str, heading: str) -> None:
        """Show the screen right after the first frame carrying ``event_type``."""
        with self._lock:
            self._watch[event_type] = heading

    def screen(self, heading: str) -> None:
        assert self.host is not None
        screen = render_screen(self.host.tree())  # outside the lock: the host's thread may be in observe()
        with self._lock:
            self._show(heading, screen)

    def _show(self, heading: str, screen: str) -> None:
        self.step += 1
        title = f"{self.step}. {heading}"
        crossed, self._crossed = self._crossed, []
        right = self.width - self.left - 3
        if len(crossed) > 14:
            crossed = crossed[:6] + [f"… {len(crossed) - 12} more …"] + crossed[-6:]
        left_lines = screen.split("\n")
        self.out("")
        self.out(title)
        self.out("=" * len(title))
        self.out(f"{'screen':<{self.left}} | {'crossed the boundary (> into the core, < effects out)'[:right]}")
        self.out(f"{'-' * self.left}-+-{'-' * right}")
        for i in range(max(len(left_lines), len(crossed))):
            left = left_lines[i] if i < len(left_lines) else ""
            if len(left) > self.left:
                left = left[: self.left - 1] + "…"
            self.out(f"{left:<{self.left}} | {crossed[i] if i < len(crossed) else ''}".rstrip())

    # -- the session ------------------------------------------------------------

    def wait(self, predicate: Callable[[dict], bool], what: str, timeout: float = 15.0) -> dict:
        assert self.host is not None
        try:
            return self.host.wait_for(predicate, timeout)
        except HostTimeout as problem:
            raise DemoFailure(f"{what}: {problem}") from None

    def run(self) -> None:
        self.gateway.start()
        try:
            self._run()
        finally:
            if self.host is not None:
                self.host.close()
            self.gateway.stop()

    def _run(self) -> None:
        port = self.gateway.port
        self.out(f"jcode mobile core {version()} — demo over real sockets")
        self.out(f"fake jcode gateway listening on http://127.0.0.1:{port} (pairing code {PAIR_CODE})")
        self.host = BackgroundHost(App({"device_id": DEVICE_ID}), observer=self.observe)
        host = self.host
        state = host.state()
        expect(state["screen"] == "onboarding", f"first launch shows {state['screen']!r}, not the pairing form")
        self.screen("First launch")

        for kind, value in [("set_host", "127.0.0.1"), ("set_port", str(port)), ("set_pair_code", PAIR_CODE),
                            ("set_device_name", "Demo iPhone"), ("set_working_dir", WORKING_DIR)]:
            host.dispatch({"type": kind, "value": value})
        self.screen("Pairing form filled in")

        host.dispatch({"type": "tap_node", "node_id": "pair.submit"})
        state = self.wait(lambda s: (s["screen"] == "chat" and s["connection"]["phase"] == "connected"
                                     and s["session"]["history_loaded"]) or bool(s["banners"]["error"]),
                          "pairing did not reach a connected chat")
        banner = state["banners"]["error"]
        expect(banner is None, f"pairing failed: {banner and banner['text']}")
        # Like today's jcode, the server gives a newly paired phone a fresh session.
        expect(state["transcript"] == [], f"expected a new, empty session, got {len(state['transcript'])} messages")
        self.screen("Paired: a new session over the WebSocket")

        host.dispatch({"type": "resume_session", "session_id": self.server.main_session})
        state = self.wait(lambda s: s["session"]["id"] == self.server.main_session and len(s["transcript"]) >= 2
                          and s["session"]["history_loaded"], "the earlier session's history did not load")
        host.settle()  # the resume's answers have all arrived
        self.screen("History of an earlier session")

        self.gateway.set_faults(delay_ms=self.frame_delay_ms)  # slow the stream down to watch it
        self.watch("reasoning_done", "Streaming: reasoning done")
        self.watch("tool_exec", "Streaming: the tool card is running")
        self.watch("tool_done", "Streaming: the tool finished")
        host.dispatch({"type": "set_draft", "value": "Run the tests again"})
        host.dispatch({"type": "tap_node", "node_id": "chat.send"})
        state = self.wait(lambda s: not s["session"]["is_processing"] and s["transcript"][-1]["text"] == REPLY.text
                          and not s["transcript"][-1]["is_streaming"], "the reply did not finish", timeout=30)
        last = state["transcript"][-1]
        expect(last["text"] == REPLY.text, f"the reply reads {last['text']!r}")
        tools = [c for e in state["transcript"] for c in e["tool_calls"] if c["id"] == "call_test"]
        expect(len(tools) == 1 and tools[0]["status"] == "succeeded", f"the tool card is {tools}")
        self.screen("Reply complete")

        host.dispatch({"type": "send_message", "text": "Now refactor the reconnect module"})
        self.wait(lambda s: any(c["id"] == "call_sleep" and c["status"] == "running"
                                for e in s["transcript"] for c in e["tool_calls"]),
                  "the second turn's tool did not start", timeout=30)
        self.screen("A long turn is running")
        host.dispatch({"type": "tap_node", "node_id": "chat.interrupt"})
        state = self.wait(lambda s: not s["session"]["is_processing"], "the interrupt did not stop the turn")
        self.screen("Interrupted")
        self.gateway.set_faults(delay_ms=0)

        self.gateway.drop_connections()
        state = self.wait(lambda s: s["connection"]["phase"] != "connected", "the dropped connection went unnoticed")
        self.screen(f"Connection dropped ({state['connection']['phase']})")
        state = self.wait(lambda s: s["connection"]["phase"] == "connected" and s["session"]["history_loaded"],
                          "the app did not reconnect", timeout=30)
        expect(state["session"]["id"] == self.server.main_session,
               f"after the reconnect the session is {state['session']['id']!r}")
        self.screen("Reconnected: the same session, history reloaded")

        executed = len(host.effects)
        host.close()
        self.out("")
        self.out(f"ok: {executed} effects executed over real sockets, {self.calls} calls into the core")
        self.out("")
        self.out("Try the CLI against a fake gateway (two terminals; `pip install ./harness/python` gives the")
        self.out("`jcode-mobile` command, or use `python3 -m jcode_mobile` from harness/python):")
        self.out("  python3 -m jcode_mobile.gateway --port 7643 --code 123456")
        self.out("  jcode-mobile start --scenario onboarding")
        self.out("  jcode-mobile set-field host 127.0.0.1")
        self.out("  jcode-mobile set-field port 7643")
        self.out("  jcode-mobile set-field code 123456")
        self.out("  jcode-mobile set-field device_name 'My laptop'")
        self.out(f"  jcode-mobile set-field working_dir {WORKING_DIR}")
        self.out("  jcode-mobile tap pair.submit && jcode-mobile assert-screen chat --timeout 5")
        self.out("  jcode-mobile set-field draft 'Run the tests' && jcode-mobile tap chat.send")
        self.out("  jcode-mobile render")
        self.out("  jcode-mobile export-replay /tmp/session.json && jcode-mobile replay /tmp/session.json")
        self.out("  jcode-mobile shutdown")
        self.out("or in one shot: jcode-mobile run --host 127.0.0.1 --port 7643 --code 123456 \\")
        self.out(f"      --working-dir {WORKING_DIR} --message 'Run the tests'")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jcode_mobile.demo")
    parser.add_argument("--width", type=int, default=132)
    parser.add_argument("--frame-delay-ms", type=int, default=120)
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        Demo(width=max(90, args.width), frame_delay_ms=max(0, args.frame_delay_ms)).run()
    except (DemoFailure, JcodeMobileError, OSError) as problem:
        print(f"demo failed: {problem}", file=sys.stderr)
        return 1
    print(f"({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
