"""A scripted session against the fake jcode backend (``make demo``).

    python -m jcode_mobile.demo

Pairs with the in-memory gateway, connects, loads the history, sends a
message and watches the reply stream in, printing every screen as text.
Exits 0 when everything went as expected, 1 (with a message) otherwise.
"""

from __future__ import annotations

import sys
from typing import Callable, List, Optional

from .binding import App, JcodeMobileError, version
from .fake_gateway import FakeJcodeServer, Host, HostError, Reply
from .render import render_screen


class DemoFailure(Exception):
    """Something in the session did not go as scripted."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise DemoFailure(message)


def describe(effect: dict) -> str:
    """One line per effect, without secrets (the demo prints no tokens or codes)."""
    kind = effect["type"]
    if kind == "http_pair":
        return f"http_pair        POST {effect['host']}:{effect['port']}/pair as {effect['device_name']!r}"
    if kind == "websocket_connect":
        return f"websocket_connect {effect['url']}"
    if kind == "websocket_send":
        return f"websocket_send   {effect['line']}"
    if kind in ("secure_store_write", "secure_store_read", "secure_store_delete", "storage_write"):
        return f"{kind:<16} {effect['key']}"
    if kind == "haptic":
        return f"haptic           {effect['style']}"
    return kind


class Demo:
    def __init__(self, out: Callable[[str], None] = print, server: Optional[FakeJcodeServer] = None):
        self.out = out
        self.step = 0
        history = [
            {"role": "user", "content": "Why does test_reconnect fail on CI?"},
            {"role": "assistant", "content": "It sleeps a fixed 100 ms and races the server; I now wait for the connected event."},
        ]
        self.reply = Reply(
            text="All 42 tests pass. The reconnect test took 0.3 s instead of timing out.",
            reasoning="The person wants the test suite run after the fix.",
            reasoning_secs=1.2,
            tools=[{"id": "call_test", "name": "bash", "input": '{"command":"make test"}', "output": "42 passed in 3.1s"}],
            tokens=(18234, 96),
        )
        self.server = server or FakeJcodeServer(history=history, replies=[self.reply])
        self.host = Host(App({"device_id": "demo-device-0001"}), self.server)
        self.app = self.host.app

    def screen(self, heading: str, root_id: Optional[str] = None) -> None:
        self.step += 1
        title = f"{self.step}. {heading}"
        self.out("")
        self.out(title)
        self.out("=" * len(title))
        self.out(render_screen(self.app.tree(), root_id))

    def effects(self, since: int) -> None:
        done = self.host.effects_since(since)
        if done:
            self.out("")
            self.out("host executed:")
            for effect in done:
                self.out("  " + describe(effect))

    def run(self) -> None:
        self.out(f"jcode mobile core {version()} — demo against a fake jcode gateway")
        state = self.app.state()
        expect(state["screen"] == "onboarding", f"first launch shows {state['screen']!r}, not the pairing form")
        self.screen("First launch")

        for kind, value in [
            ("set_host", "devbox.local"),
            ("set_port", "7643"),
            ("set_pair_code", "123456"),
            ("set_device_name", "Demo iPhone"),
            ("set_working_dir", "/home/demo/project"),
        ]:
            self.host.dispatch({"type": kind, "value": value})
        self.screen("Pairing form filled in")

        mark = self.host.mark()
        self.host.dispatch({"type": "tap_node", "node_id": "pair.submit"})
        self.effects(mark)
        state = self.app.state()
        expect(state["screen"] == "chat", f"after pairing the screen is {state['screen']!r}, not chat")
        expect(state["connection"]["phase"] == "connected", f"connection is {state['connection']['phase']!r}")
        expect(state["session"]["history_loaded"], "the history did not load")
        # Like today's jcode, the server gives a newly paired phone a fresh session.
        expect(state["transcript"] == [], f"expected a new, empty session, got {len(state['transcript'])} messages")
        self.screen("Paired and connected")

        # Hold the server's frames to watch the reply arrive one frame at a time.
        self.host.hold_frames = True
        self.host.dispatch({"type": "set_draft", "value": "Run the tests again"})
        mark = self.host.mark()
        self.host.dispatch({"type": "tap_node", "node_id": "chat.send"})
        self.effects(mark)
        sent = self.host.sent_requests(mark)
        expect(
            [r["type"] for r in sent] == ["message"] and sent[0]["content"] == "Run the tests again",
            f"expected one message request, sent {sent}",
        )
        self.screen("Message sent")

        frames = len(self.host.inbox)
        expect(frames > 3, f"expected a streamed reply, the server sent {frames} frames")
        # A few intermediate screens: reasoning done, the tool running, text half-way.
        show = {"reasoning_done": 1, "tool_exec": 1, "text_delta": 3}
        seen: dict = {}
        delivered = 0
        while self.host.deliver_next():
            delivered += 1
            kind = self.host.steps[-1].input["event"]["type"]
            seen[kind] = seen.get(kind, 0) + 1
            if show.get(kind) == seen[kind]:
                self.screen(f"Streaming: frame {delivered} of {frames} ({kind})", "chat.messages")
        expect(delivered == frames, f"delivered {delivered} of {frames} frames")

        state = self.app.state()
        last = state["transcript"][-1]
        expect(last["role"] == "assistant" and last["text"] == self.reply.text, f"the reply reads {last['text']!r}")
        expect(not last["is_streaming"] and not state["session"]["is_processing"], "the turn did not finish")
        self.screen("Reply complete")
        self.out("")
        self.out(f"ok: {len(self.host.effects)} effects executed, revision {self.app.revision}")


def main(argv: Optional[List[str]] = None) -> int:
    try:
        Demo().run()
    except (DemoFailure, JcodeMobileError, HostError, OSError) as problem:
        print(f"demo failed: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
