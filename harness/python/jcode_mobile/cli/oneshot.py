"""``jcode-mobile run``: one whole session in one process.

Pairs with a jcode gateway (the real server or the fake), connects, sends
one message, waits for the turn to finish and prints the transcript (the
final state as JSON with ``--json``). Every step goes through the core and a
real host, exactly as the phone app would do it. Exit status: 0 done, 2 the
pairing form refused an argument, 5 could not pair, 6 could not connect,
7 the turn did not finish (the timeout passed, the server answered with an
error, or the connection dropped or failed before the turn's end).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import time
from typing import List, Optional, Tuple

from ..binding import App
from ..host import HostTimeout, RealHost

EXIT_USAGE = 2
EXIT_PAIR = 5
EXIT_CONNECT = 6
EXIT_TURN = 7


class RunFailed(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def transcript_text(state: dict) -> str:
    """The conversation as plain text: one block per message, tool calls indented."""
    lines: List[str] = []
    speakers = {"user": "you", "assistant": "assistant"}
    for entry in state.get("transcript", []):
        speaker = speakers.get(entry["role"], entry["role"])
        if entry.get("reasoning"):
            lines.append(f"{speaker} (thinking): {entry['reasoning']}")
        for call in entry.get("tool_calls", []):
            detail = f" ({call['error']})" if call.get("error") else ""
            lines.append(f"  tool {call['name']}: {call['status']}{detail}")
        if entry.get("text"):
            lines.append(f"{speaker}: {entry['text']}")
    return "\n".join(lines)


def _banner(state: dict) -> Optional[str]:
    banner = (state.get("banners") or {}).get("error")
    return (banner.get("text") or banner.get("message")) if banner else None


async def _wait(host: RealHost, deadline: float, done, failed, what: str, status: int) -> dict:
    """Wait until ``done(state)``; raise RunFailed when ``failed(state)`` names a reason or time runs out."""
    while True:
        state = host.app.state()
        reason = failed(state)
        if reason:
            raise RunFailed(status, reason)
        if done(state):
            return state
        left = deadline - time.monotonic()
        if left <= 0:
            phase = state["connection"]["phase"]
            raise RunFailed(status, f"{what} within the timeout (screen {state['screen']}, connection {phase})")
        try:
            await host.wait_for(lambda s: done(s) or bool(failed(s)), timeout=min(left, 0.5))
        except HostTimeout:
            pass


async def _session(ns: argparse.Namespace) -> Tuple[dict, str]:
    deadline = time.monotonic() + ns.timeout
    device_id = ns.device_id or f"jcode-mobile-cli-{socket.gethostname()}"
    app = App({"device_id": device_id})
    host = RealHost(app, http_timeout=min(10.0, ns.timeout), connect_timeout=min(10.0, ns.timeout))
    await host.start()
    try:
        address = f"https://{ns.host}" if ns.tls else ns.host
        for kind, value in [("set_host", address), ("set_port", str(ns.port)), ("set_pair_code", ns.code),
                            ("set_device_name", ns.device_name), ("set_working_dir", ns.working_dir)]:
            host.dispatch({"type": kind, "value": value})
        errors = {k: v for k, v in app.state()["pairing"]["errors"].items() if v}
        if errors:
            raise RunFailed(EXIT_USAGE, "; ".join(f"{k}: {v}" for k, v in errors.items()))
        host.dispatch({"type": "submit_pairing"})

        def paired(state: dict) -> bool:
            return bool(state["servers"])

        def pair_failed(state: dict) -> Optional[str]:
            if state["pairing"]["is_submitting"] or state["servers"]:
                return None
            banner = _banner(state)
            return f"could not pair: {banner}" if banner else None

        await _wait(host, deadline, paired, pair_failed, "did not pair", EXIT_PAIR)

        def connected(state: dict) -> bool:
            return state["connection"]["phase"] == "connected" and state["session"]["history_loaded"]

        def connect_failed(state: dict) -> Optional[str]:
            connection = state["connection"]
            if connection["phase"] == "failed":
                return f"could not connect: {connection.get('reason') or _banner(state) or 'failed'}"
            return None

        await _wait(host, deadline, connected, connect_failed, "did not connect", EXIT_CONNECT)

        start = app.state()
        before = len(start["transcript"])
        banner_before = _banner(start)
        interrupted_before = start.get("interrupted_turn")
        report = host.dispatch({"type": "send_message", "text": ns.message})
        if not report.get("ok"):
            raise RunFailed(EXIT_TURN, f"the message was refused: {report.get('error')}")

        def finished(state: dict) -> bool:
            transcript = state["transcript"]
            # Sending marks the session processing at once; queued (offline) it waits in the outbox.
            return (not state["session"]["is_processing"] and not state["outbox"]
                    and len(transcript) > before
                    and not any(e["is_streaming"] or e["is_queued"] for e in transcript[before:]))

        def turn_failed(state: dict) -> Optional[str]:
            # Checked before `finished`: a turn the server ended with an error, or that a dropped
            # connection cut off, is not processing any more either, but it did not finish.
            banner = _banner(state)
            if banner and banner != banner_before and not state["session"]["is_processing"]:
                return f"the turn did not finish: the server answered with an error: {banner}"
            phase = state["connection"]["phase"]
            if phase == "failed":
                return (f"the turn did not finish: the connection to {ns.host} port {ns.port} failed: "
                        f"{state['connection'].get('reason')}")
            if phase != "connected" or state.get("interrupted_turn") != interrupted_before:
                return f"the turn did not finish: the connection to {ns.host} port {ns.port} dropped during it"
            return None

        state = await _wait(host, deadline, finished, turn_failed, "the turn did not finish", EXIT_TURN)
        return state, transcript_text(state)
    finally:
        await host.close()


def run_once(ns: argparse.Namespace) -> Tuple[int, str]:
    """Run the session; ``(0, output)`` or ``(status, reason)``."""
    try:
        state, text = asyncio.run(_session(ns))
    except RunFailed as problem:
        return problem.status, problem.message
    if ns.json:
        return 0, json.dumps(state, indent=2, ensure_ascii=False)
    return 0, text
