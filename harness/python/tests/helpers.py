"""Helpers shared by the tests."""

import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List

from jcode_mobile import iter_nodes
from jcode_mobile.fake_gateway import Host

REPO = Path(__file__).resolve().parents[3]
HEADER = REPO / "include" / "jcode_mobile.h"
SCENARIO_SWIFT = REPO / "Sources" / "JcodeMobileCore" / "Scenarios" / "Scenario.swift"

#: The named fixtures SPEC.md section 4 promises.
SPEC_SCENARIOS = [
    "onboarding", "pairing_ready", "connected_chat", "pairing_invalid_code", "server_unreachable",
    "connected_empty_chat", "chat_streaming", "tool_approval_required", "tool_failed", "network_reconnect",
    "offline_queued_message", "long_running_task", "stdin_request_pending", "model_switch_failed",
    "push_tool_approval_opened",
]


def header_macros() -> Dict[str, str]:
    """Every ``#define NAME value`` of the public header (continuation lines joined)."""
    text = HEADER.read_text().replace("\\\n", " ")
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^#define\s+(\w+)[ \t]+(.+)$", text, re.M)}


def header_int(name: str) -> int:
    """An integer macro such as ``(16 * 1024 * 1024)``: only digits, *, +, parentheses."""
    expr = header_macros()[name]
    if not re.fullmatch(r"[\d\s*+()]+", expr):
        raise ValueError(f"{name} is not a plain integer expression: {expr}")
    return int(eval(expr, {"__builtins__": {}}))  # digits and operators only (checked above)


def swift_scenarios() -> List[str]:
    """The scenario names declared in Scenario.swift (`case x` or `case x = "y"`)."""
    text = SCENARIO_SWIFT.read_text()
    body = text[text.index("enum Scenario"):]
    body = body[: body.index("public var summary")]
    names = []
    for m in re.finditer(r'^\s*case\s+(\w+)(?:\s*=\s*"([^"]+)")?\s*$', body, re.M):
        names.append(m.group(2) or m.group(1))
    return names


def all_scenarios() -> List[str]:
    names = list(SPEC_SCENARIOS)
    names += [n for n in swift_scenarios() if n not in names]
    return names


WORKING_DIR = "/home/me/project"


def fill_pairing_form(host: Host, *, server="devbox.local", port="7643", code="123456", device="Test iPhone",
                      working_dir=WORKING_DIR):
    for kind, value in [("set_host", server), ("set_port", port), ("set_pair_code", code), ("set_device_name", device),
                        ("set_working_dir", working_dir)]:
        host.dispatch({"type": kind, "value": value})


def without_effect_id(effect: dict) -> dict:
    return {k: v for k, v in effect.items() if k != "effect_id"}


def steps_with(host: Host, event_type: str):
    """The recorded steps whose input is a platform event of ``event_type``."""
    return [s for s in host.steps if s.kind == "event" and s.input.get("type") == event_type]


def dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def tappable(tree) -> List[dict]:
    """Visible (with all ancestors), enabled nodes that support "tap"."""
    return [n for n in iter_nodes(tree, visible_only=True) if n["enabled"] and "tap" in n["supported_actions"]]


# -- a host and the fake gateway on loopback --------------------------------------------------


def connected(state: dict) -> bool:
    """On the chat, connected, the session's history loaded."""
    return (state["screen"] == "chat" and state["connection"]["phase"] == "connected"
            and state["session"]["history_loaded"])


def idle(state: dict) -> bool:
    """Connected, history loaded, no turn running, nothing left in the outbox."""
    return connected(state) and not state["session"]["is_processing"] and state["outbox"] == []


def phase_is(phase: str) -> Callable[[dict], bool]:
    def check(state: dict) -> bool:
        return state["connection"]["phase"] == phase
    check.__name__ = f"phase_is_{phase}"
    return check


def pair_and_open(host: Any, gateway: Any, *, code: str, device: str, session: str, messages: int,
                  timeout: float = 5) -> None:
    """Pair ``host`` (a BackgroundHost) with ``gateway`` (a RunningGateway on 127.0.0.1), wait until
    connected, open ``session`` and wait until its ``messages`` entries show."""
    fill_pairing_form(host, server="127.0.0.1", port=str(gateway.port), code=code, device=device)
    host.dispatch({"type": "submit_pairing"})
    host.wait_for(connected, timeout=5)
    host.dispatch({"type": "resume_session", "session_id": session})
    host.wait_for(lambda s: connected(s) and s["session"]["id"] == session and len(s["transcript"]) == messages,
                  timeout=timeout)
