"""A fake jcode backend and a host that executes the core's effects.

The core never performs I/O: it returns effects (``http_pair``,
``websocket_connect``, ``websocket_send``…) and learns their outcome from
platform events. This module plays the other side, in memory:

- :class:`FakeJcodeServer` is a jcode gateway that keeps the rules of today's
  jcode server (github.com/1jehuang/jcode). Every rule carries a
  ``# jcode: <file> (<item>)`` comment naming where the real server states it.
  In short, a client meets:

  * ``GET /health`` → ``{status, version, gateway: true}``; ``POST /pair``
    with ``{code, device_id, device_name, apns_token?}`` → 200
    ``{token, server_name: "jcode", server_version}``, 400 ``Invalid JSON: …``
    for a body that is not that object, 401 for an unknown or already used
    code; anything else 404 ``{"error": "Not found"}``.
  * The WebSocket upgrade is only at ``/ws`` (404 before anything else) and
    needs a token the server issued (401 before the socket opens).
  * The first request on a connection must be ``subscribe`` with a non-empty
    absolute ``working_dir``; otherwise the server writes one ``error`` frame
    quoting that request's id and ends the connection
    (:attr:`FakeSocket.server_closed`). A first ``ping`` is answered with
    ``pong`` and also ends the connection.
  * Every request after that is first acknowledged with
    ``{"type":"ack","id":N}``; a line that is not a request (unknown type,
    missing field, bad JSON) gets ``{"type":"error","id":0,"message":"Invalid
    request: …"}`` and the connection stays.
  * A connection starts in a brand-new, empty session; ``subscribe`` with a
    ``target_session_id`` of an existing session, or ``resume_session``,
    attaches an existing one (whose history the server then sends).
  * ``message`` streams a scripted :class:`Reply` (which can pause with
    ``hold_after`` so ``cancel`` and ``soft_interrupt`` meet a running turn)
    and ends with ``done {id}``.

- :class:`Host` owns an :class:`~jcode_mobile.App` and a server and does
  what an iOS host would: it executes every effect, answers with platform
  events quoting the ``effect_id``, keeps the Keychain and storage as dicts,
  records timers, and delivers server frames parsed (``{"event":…}``) or raw
  (``{"line":…}``, several events per frame if asked). When the server ends a
  connection, the host delivers the frames sent before and then reports
  ``websocket_closed`` with code 1006 (no close frame).

    host = Host()
    host.dispatch({"type": "set_host", "value": "devbox.local"})
    ...
    host.dispatch({"type": "submit_pairing"})   # pairs, connects
    host.dispatch({"type": "send_message", "text": "hi"})  # reply streamed in

Every effect executed is kept in ``host.effects`` and every call into the
core in ``host.steps``, for assertions.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from .binding import App, JSONInput

__all__ = [
    "DEFAULT_PORT",
    "DEFAULT_HISTORY",
    "RELOAD_CONTINUATION",
    "REQUEST_TYPES",
    "Unreachable",
    "SocketRejected",
    "HTTPResponse",
    "Reply",
    "FakeSocket",
    "FakeJcodeServer",
    "Step",
    "HostError",
    "Host",
    "DEFAULT_VISIBLE_COMPACTED",
    "compacted_marker",
    "compacted_rows",
    "compacted_window",
    "decode_request",
    "guardrail_notice",
    "image_heavy_history",
    "split_words",
]

# jcode: crates/jcode-base/src/gateway.rs (DEFAULT_PORT)
DEFAULT_PORT = 7643

# jcode: crates/jcode-protocol/src/wire.rs (enum Request): the tag of every
# request the server decodes, in declaration order. serde lists them in this
# order when it rejects an unknown tag.
REQUEST_TYPES: Tuple[str, ...] = (
    "message", "cancel", "background_tool", "soft_interrupt", "cancel_soft_interrupts", "clear", "rewind",
    "rewind_undo", "ping", "state", "debug_command", "client_debug_command", "client_debug_response",
    "subscribe", "get_history", "get_model_catalog", "get_compacted_history", "reload", "resume_session",
    "resume_all_sessions", "notify_session", "transcript", "input_shell", "cycle_model", "refresh_models",
    "set_model", "set_route", "set_subagent_model", "run_subagent", "set_reasoning_effort", "set_service_tier",
    "set_transport", "set_premium_mode", "set_feature", "set_compaction_mode", "rename_session", "split",
    "transfer", "compact", "trigger_memory_extraction", "notify_auth_changed", "switch_anthropic_account",
    "switch_openai_account", "stdin_response", "agent_register", "agent_task", "agent_capabilities",
    "agent_context", "comm_share", "comm_read", "comm_message", "comm_list", "comm_list_channels",
    "comm_channel_members", "comm_propose_plan", "comm_approve_plan", "comm_reject_plan", "comm_seed_graph",
    "comm_expand_node", "comm_complete_node", "comm_inject_gap", "comm_spawn", "comm_list_models", "comm_stop",
    "comm_assign_role", "comm_summary", "comm_status", "comm_report", "comm_read_context", "comm_resync_plan",
    "comm_plan_status", "comm_assign_task", "comm_assign_next", "comm_task_control", "comm_subscribe_channel",
    "comm_unsubscribe_channel", "comm_await_members",
)

# jcode: crates/jcode-protocol/src/lib.rs (Request::is_lightweight_control_request):
# ping and the swarm comm_* requests. As a connection's first request they are
# answered and the connection then ends (client_lifecycle.rs, handle_client).
LIGHTWEIGHT_REQUEST_TYPES = frozenset({"ping"} | {t for t in REQUEST_TYPES if t.startswith("comm_")})

# The fields the fake checks, per request it implements: (name, kind, required),
# in the order wire.rs declares them (serde reports the first missing one in
# that order). Every request carries ``id: u64``.
# jcode: crates/jcode-protocol/src/wire.rs (enum Request)
_FIELDS: Dict[str, Tuple[Tuple[str, str, bool], ...]] = {
    "message": (("id", "u64", True), ("content", "str", True), ("images", "pairs", False),
                ("system_reminder", "ostr", False), ("active_skill", "ostr", False), ("no_reply", "bool", False)),
    "soft_interrupt": (("id", "u64", True), ("content", "str", True), ("images", "pairs", False),
                       ("urgent", "bool", False)),
    "subscribe": (("id", "u64", True), ("working_dir", "ostr", False), ("selfdev", "obool", False),
                  ("target_session_id", "ostr", False), ("client_instance_id", "ostr", False),
                  ("client_has_local_history", "bool", False), ("allow_session_takeover", "bool", False),
                  ("terminal_env", "pairs", False)),
    "resume_session": (("id", "u64", True), ("session_id", "str", True), ("client_instance_id", "ostr", False),
                       ("client_has_local_history", "bool", False), ("allow_session_takeover", "bool", False)),
    "set_model": (("id", "u64", True), ("model", "str", True)),
    "set_reasoning_effort": (("id", "u64", True), ("effort", "str", True), ("target_session_id", "ostr", False)),
    "rename_session": (("id", "u64", True), ("title", "ostr", False)),
    "stdin_response": (("id", "u64", True), ("request_id", "str", True), ("input", "str", True)),
    "get_compacted_history": (("id", "u64", True), ("visible_messages", "usize", True)),
}
_ID_ONLY: Tuple[Tuple[str, str, bool], ...] = (("id", "u64", True),)


class Unreachable(Exception):
    """Nothing answers at that address (the host maps it to ok:false without status)."""


class SocketRejected(Exception):
    """The gateway refused the WebSocket upgrade with an HTTP status (401: bad token, 404: not /ws)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class HTTPResponse:
    """What an HTTP request to the fake gateway returned."""

    status: int
    body: Dict[str, Any]


def split_words(text: str, words_per_chunk: int = 2) -> List[str]:
    """``text`` cut into chunks of a few words (spaces kept), as a model streams."""
    words = re.findall(r"\S+\s*|\s+", text)
    return ["".join(words[i : i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)] or [text]


# -- serde's wording ------------------------------------------------------------
#
# The real server answers an undecodable line with the serde_json error text.
# These helpers word the cases the fake meets the way serde does: unknown tags
# (with serde_json's line/column), missing fields and wrong types (no position:
# the variant's fields are decoded from a buffered copy). Syntax errors are
# approximated from Python's json messages.


def _unexpected(value: Any) -> str:
    """How serde names a JSON value in "invalid type: …" messages."""
    if value is None:
        return "unit value"
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value!r}`"
    if isinstance(value, str):
        return "string " + json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "sequence"
    return "map"


def _field_problem(value: Any, kind: str) -> Optional[str]:
    """serde's complaint about ``value`` for a field of ``kind`` (None: fine)."""
    if kind in ("u64", "usize"):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"invalid type: {_unexpected(value)}, expected {kind}"
        if value < 0:
            return f"invalid value: integer `{value}`, expected {kind}"
        return None
    if kind in ("str", "ostr"):
        if value is None and kind == "ostr":
            return None
        return None if isinstance(value, str) else f"invalid type: {_unexpected(value)}, expected a string"
    if kind in ("bool", "obool"):
        if value is None and kind == "obool":
            return None
        return None if isinstance(value, bool) else f"invalid type: {_unexpected(value)}, expected a boolean"
    if kind == "pairs":
        if not isinstance(value, list):
            return f"invalid type: {_unexpected(value)}, expected a sequence"
        for item in value:
            if not isinstance(item, list):
                return f"invalid type: {_unexpected(item)}, expected a tuple of size 2"
            if len(item) != 2:
                return f"invalid length {len(item)}, expected a tuple of size 2"
            for part in item:
                if not isinstance(part, str):
                    return f"invalid type: {_unexpected(part)}, expected a string"
        return None
    raise ValueError(kind)


_PYTHON_TO_SERDE = [
    ("Expecting value", "expected value"),
    ("Expecting property name enclosed in double quotes", "key must be a string"),
    ("Expecting ':' delimiter", "expected `:`"),
    ("Expecting ',' delimiter", "expected `,` or `}`"),
    ("Extra data", "trailing characters"),
    ("Unterminated string", "EOF while parsing a string"),
    ("Invalid control character", "control character (\\u0000-\\u001F) found while parsing a string"),
]


def _syntax_error(problem: json.JSONDecodeError) -> str:
    text = next((serde for py, serde in _PYTHON_TO_SERDE if problem.msg.startswith(py)), problem.msg)
    return f"{text} at line {problem.lineno} column {problem.colno}"


def _top_level_value_end(text: str, key: str) -> Optional[int]:
    """Offset just past the value of ``key`` in the top-level object ``text``
    (the first occurrence), or None. serde_json reports an error found while
    reading that value at this column."""
    decoder = json.JSONDecoder()
    n = len(text)

    def skip(i: int) -> int:
        while i < n and text[i] in " \t\r\n":
            i += 1
        return i

    try:
        i = skip(0)
        if i >= n or text[i] != "{":
            return None
        i = skip(i + 1)
        while i < n and text[i] == '"':
            name, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = skip(i)
            if i >= n or text[i] != ":":
                return None
            _, end = decoder.raw_decode(text, skip(i + 1))
            if name == key:
                return end
            i = skip(end)
            if i < n and text[i] == ",":
                i = skip(i + 1)
    except ValueError:
        return None
    return None


def decode_request(line: str) -> Tuple[Optional[dict], Optional[str]]:
    """Decode one request line as the real server does: ``(request, None)`` or
    ``(None, message)`` where ``message`` is the serde_json error text the
    server quotes after "Invalid request: ".

    jcode: crates/jcode-protocol/src/lib.rs (decode_request): serde's
    internally tagged ``Request`` enum, plus the legacy
    ``{"type":"set_route","model":…}`` shape read as ``set_model``.
    """
    text = line if line.endswith("\n") else line + "\n"
    if not text.strip():
        return None, "EOF while parsing a value at line 2 column 0"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as problem:
        return None, _syntax_error(problem)
    if not isinstance(value, dict):
        end = len(text.rstrip())
        expected = "expected internally tagged enum Request"
        return None, f"invalid type: {_unexpected(value)}, {expected} at line 1 column {end}"
    if "type" not in value:
        return None, f"missing field `type` at line 1 column {len(text.rstrip())}"
    kind = value["type"]
    end = _top_level_value_end(text, "type") or len(text.rstrip())
    if not isinstance(kind, str):
        return None, f"invalid type: {_unexpected(kind)}, expected variant identifier at line 1 column {end}"
    if kind not in REQUEST_TYPES:
        expected = ", ".join(f"`{name}`" for name in REQUEST_TYPES)
        return None, f"unknown variant `{kind}`, expected one of {expected} at line 1 column {end}"
    if kind == "set_route" and "selection" not in value and isinstance(value.get("model"), str):
        # jcode: crates/jcode-protocol/src/lib.rs (decode_legacy_set_route_model)
        rid = value.get("id")
        rid = rid if isinstance(rid, int) and not isinstance(rid, bool) and rid >= 0 else 0
        return {"type": "set_model", "id": rid, "model": value["model"]}, None
    fields = _FIELDS.get(kind, _ID_ONLY)
    kinds = {name: field_kind for name, field_kind, _ in fields}
    for name, field_value in value.items():  # serde checks values in the order they arrive
        if name in kinds:
            problem = _field_problem(field_value, kinds[name])
            if problem:
                return None, problem
    for name, _, required in fields:  # then missing fields, in declaration order
        if required and name not in value:
            return None, f"missing field `{name}`"
    return value, None


def _working_dir_problem(working_dir: Any) -> Optional[str]:
    """Why a subscribe's working_dir is refused (None: accepted).

    jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (required_subscribe_working_dir)
    """
    text = working_dir.strip() if isinstance(working_dir, str) else ""
    if not text:
        return "Subscribe requires the client's working directory"
    if not text.startswith("/"):  # Path::is_absolute on the Unix server
        return "Subscribe working_dir must be an absolute path"
    return None


def _is_hex_token(token: str) -> bool:
    # jcode: crates/jcode-base/src/gateway/auth.rs (is_valid_hex_token): 64 hex digits
    return len(token) == 64 and all(c in "0123456789abcdefABCDEF" for c in token)


def guardrail_notice(stop_reason: Optional[str], *, had_reasoning: bool = False) -> str:
    """The ``provider_guardrail`` message the server words for a turn that
    ended without visible text.

    jcode: crates/jcode-app-core/src/agent/response_recovery.rs
    (provider_guardrail_notice, is_guardrail_stop_reason)
    """
    label = (stop_reason or "").strip() or "unknown"
    lowered = label.lower()
    if lowered in ("refusal", "content_filter", "safety") or "guardrail" in lowered or "policy_violation" in lowered:
        return (
            f"Provider guardrail stopped the response (stop_reason: {label}). The model declined to answer this "
            "request. Rephrasing, narrowing the request, or providing more context may help."
        )
    hint = " after producing only internal reasoning" if had_reasoning else ""
    return (
        f"The model ended its turn without any visible output{hint} (stop_reason: {label}). The provider returned "
        "an empty response; this is usually a transient upstream failure rather than a content filter. Retrying "
        "the request may help."
    )


def _tool_input_object(raw: Any) -> Any:
    """The ``input`` of a rendered tool call: the streamed JSON as an object.

    jcode: crates/jcode-message-types/src/lib.rs (ToolCall::parse_streamed_input_to_object):
    empty → {}, a JSON object as is, other JSON → {}, invalid JSON → null.
    """
    if isinstance(raw, dict):
        return dict(raw)
    text = (raw or "").strip() if isinstance(raw, str) else ""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else {}


def _tool_data(tool: Dict[str, Any]) -> dict:
    """``tool_data`` of a history row: jcode's ToolCall {id, name, input, intent?}.

    jcode: crates/jcode-message-types/src/lib.rs (ToolCall, ToolCall::intent_from_input)
    """
    data = {"id": tool["id"], "name": tool["name"], "input": _tool_input_object(tool.get("input", ""))}
    intent = data["input"].get("intent") if isinstance(data["input"], dict) else None
    if isinstance(intent, str) and intent.strip():
        data["intent"] = intent.strip()
    return data


def _background_task_text(task_id: str, tool: str, seconds: float, exit_code: int, output: str) -> str:
    # jcode: crates/jcode-app-core/src/message_notifications.rs (format_background_task_notification_markdown)
    return (
        f"**Background task** `{task_id}` · `{tool}` · ✓ completed · {seconds:.1f}s · exit {exit_code}"
        f"\n\n```text\n{output}\n```\n\n_Full output:_ `bg action=\"output\" task_id=\"{task_id}\"`"
    )


#: The scripted session's history, rendered as the real server renders stored
#: messages: one row per visible text, role user/assistant (an assistant row
#: lists the names of the tools it called in ``tool_calls``), one ``tool`` row
#: per tool result (content = the output, ``tool_data`` = the call), and
#: ``background_task`` rows for background-task reports.
#: jcode: crates/jcode-base/src/session/render.rs (render_messages_and_images_with_compacted_history)
#: jcode: crates/jcode-protocol/src/lib.rs (HistoryMessage)
DEFAULT_HISTORY: List[dict] = [
    {"role": "user", "content": "The login test fails about one run in five. Can you find out why?"},
    {"role": "assistant", "content": "I'll run it a few times to reproduce it.", "tool_calls": ["bash"]},
    {
        "role": "tool",
        "content": "5 runs: 4 passed, 1 failed (test_login: timeout waiting for the session cookie)",
        "tool_data": {"id": "toolu_01", "name": "bash",
                      "input": {"command": "for i in 1 2 3 4 5; do pytest tests/test_login.py -q; done"}},
    },
    {"role": "assistant", "content": "It times out waiting for the session cookie. I'll run the whole suite in "
                                     "the background while I read the fixture.", "tool_calls": ["bash", "read"]},
    {
        "role": "tool",
        "content": "Started background task bg-7f2c",
        "tool_data": {"id": "toolu_02", "name": "bash", "input": {"command": "pytest -q", "run_in_background": True}},
    },
    {
        "role": "tool",
        "content": "def session_cookie(jar=SHARED_JAR):\n    return jar.get('session')",
        "tool_data": {"id": "toolu_03", "name": "read", "input": {"file_path": "tests/conftest.py"}},
    },
    {"role": "background_task", "content": _background_task_text("bg-7f2c", "bash", 41.3, 0, "212 passed in 41.02s")},
    {"role": "assistant", "content": "The fixture shares one cookie jar between tests; I made it per test. "
                                     "The suite passes."},
]

#: The continuation a reload recovery directive carries for a session whose turn a reload
#: interrupted (no selfdev reload context).
#: jcode: crates/jcode-app-core/src/tool/selfdev/reload.rs (ReloadContext::interrupted_session_continuation_message)
RELOAD_CONTINUATION = (
    "Your session was interrupted by a server reload while a tool was running. The tool was aborted and results "
    "may be incomplete. Continue exactly where you left off and do not ask the user what to do next."
)

#: Token usage persisted with the scripted session (sent as ``total_tokens``
#: and ``token_usage_totals``).
#: jcode: crates/jcode-protocol/src/lib.rs (TokenUsageTotals)
DEFAULT_TOKEN_USAGE: Dict[str, int] = {
    "messages_with_token_usage": 3,
    "input_tokens": 18234,
    "output_tokens": 1290,
    "cache_reported_input_tokens": 18234,
    "cache_read_input_tokens": 12288,
    "cache_creation_input_tokens": 2048,
}

#: How many compacted rows a ``history`` shows before the live ones.
#: jcode: crates/jcode-base/src/session/render.rs (DEFAULT_VISIBLE_COMPACTED_HISTORY_MESSAGES)
DEFAULT_VISIBLE_COMPACTED = 64


def compacted_window(prefix: Sequence[dict], requested: int) -> Tuple[int, Dict[str, int]]:
    """Where the shown part of a compacted prefix starts, and the counts
    ``compacted_history`` reports, for ``requested`` visible rows.

    jcode: crates/jcode-base/src/session/render.rs (compacted_history_render_window): a prefix
    shorter than 80 rows or with at most 5 user turns is shown whole; otherwise the last
    ``requested`` rows, the start moved back to the user row that begins that turn. Every row
    of the fake's prefix is a rendered row; a user row starts a turn.
    """
    total = len(prefix)
    turns = sum(1 for row in prefix if row.get("role") == "user")
    visible = total if total < 80 or turns <= 5 else min(requested, total)
    if visible == 0:
        start = total
    elif visible == total:
        start = 0
    else:
        start = total - visible
        boundary = start
        while boundary > 0 and prefix[boundary].get("role") != "user":
            boundary -= 1
        if prefix[boundary].get("role") == "user":
            start = boundary
    visible = total - start
    return start, {"total": total, "visible": visible, "remaining": total - visible,
                   "hidden_prompts": sum(1 for row in prefix[:start] if row.get("role") == "user")}


def compacted_marker(counts: Dict[str, int]) -> dict:
    """The ``system`` row a compacted history starts with.

    jcode: crates/jcode-base/src/session/render.rs (render_messages_and_images_with_compacted_history):
    three wordings, for all shown, none shown ("… Scroll to the top to load older history.") and some shown.
    """
    total, visible, remaining = counts["total"], counts["visible"], counts["remaining"]
    if remaining == 0:
        text = (f"Earlier conversation compacted - showing all {total} compacted historical messages. "
                "Redraw may be slower while this view is open.")
    elif visible == 0:
        text = (f"Earlier conversation compacted - {remaining} historical messages hidden from the UI. "
                "Scroll to the top to load older history.")
    else:
        text = (f"Earlier conversation compacted - {remaining} older historical messages hidden. "
                f"Showing {visible} of {total} compacted messages. Scroll to the top to load more.")
    return {"role": "system", "content": text}


def compacted_rows(turns: int, *, topic: str = "the release") -> List[dict]:
    """A compacted prefix of ``turns`` user/assistant pairs (rendered rows)."""
    rows: List[dict] = []
    for n in range(1, turns + 1):
        rows.append({"role": "user", "content": f"Old question {n} about {topic}"})
        rows.append({"role": "assistant", "content": f"Old answer {n} about {topic}."})
    return rows


def image_heavy_history(turns: int = 24, image_bytes: int = 768 * 1024) -> Tuple[List[dict], List[dict]]:
    """``(messages, images)`` of a session where every turn attached a screenshot
    and a tool read one back: ``2 * turns`` images of ``image_bytes`` bytes each
    (base64 in the history, so a third larger). The defaults make a ``history``
    frame of about 48 MiB, three times the core's 16 MiB input limit.

    jcode: crates/jcode-base/src/session/render.rs (image_anchor_for_message,
    image_source_for_message): a user's image is anchored to its prompt's
    ordinal (source ``user_input``), a tool's to its call id (source
    ``tool_result`` with the tool's name); every image travels in
    ``history.images``, in full, with every history.
    """
    messages: List[dict] = []
    images: List[dict] = []
    for n in range(turns):
        pixels = base64.b64encode(_image_payload(n, image_bytes)).decode("ascii")
        messages.append({"role": "user", "content": f"Screenshot {n + 1}: does the layout look right?"})
        messages.append({"role": "assistant", "content": "Let me look at the rendered page too.", "tool_calls": ["read"]})
        tool_id = f"toolu_img_{n + 1:03d}"
        messages.append({"role": "tool", "content": f"[image: shots/page-{n + 1}.png]",
                         "tool_data": {"id": tool_id, "name": "read", "input": {"file_path": f"shots/page-{n + 1}.png"}}})
        messages.append({"role": "assistant", "content": f"Page {n + 1} matches the screenshot."})
        images.append({"media_type": "image/png", "data": pixels, "label": None,
                       "source": {"kind": "user_input"}, "anchor": {"kind": "user_prompt", "ordinal": n}})
        images.append({"media_type": "image/png", "data": pixels, "label": f"shots/page-{n + 1}.png",
                       "source": {"kind": "tool_result", "tool_name": "read"}, "anchor": {"kind": "tool_call", "id": tool_id}})
    return messages, images


def _image_payload(seed: int, size: int) -> bytes:
    """``size`` deterministic bytes starting with the PNG signature."""
    signature = b"\x89PNG\r\n\x1a\n"
    block = hashlib.sha256(f"image-{seed}".encode()).digest()
    body = (block * (size // len(block) + 1))[: max(0, size - len(signature))]
    return signature + body


@dataclass
class Reply:
    """A scripted assistant turn: what the fake server streams after ``message``.

    Order on the wire, as the real server streams a turn (jcode:
    crates/jcode-app-core/src/agent/turn_streaming_mpsc.rs):

    - when the turn calls tools, a first provider response: ``reasoning_delta``…
      ``reasoning_done``, the ``preamble`` as ``text_delta``s, per tool
      ``tool_start``/``tool_input``/``tool_exec``, ``message_end``
      (``stop_reason`` "tool_use"), then per tool ``tool_done`` as it runs;
    - the final response: (reasoning, when there were no tools), ``text_delta``
      per chunk, ``message_end`` with ``stop_reason``, ``tokens`` (when any
      usage is set), ``provider_guardrail`` (when ``guardrail`` is set) and
      finally ``done {id}`` with the message's request id.

    ``hold_after``: stream only that many events and keep the turn running
    (``cancel`` then meets it; :meth:`FakeJcodeServer.finish_turn` sends the
    rest). A turn held silent for a long time while a tool runs is a reply
    with a tool and ``hold_after`` counting up to its ``tool_exec``, e.g.
    ``Reply(text="Built.", tools=[{"id": "toolu_b", "name": "bash", "input":
    {"command": "cargo build"}, "output": "Finished"}], hold_after=3)``:
    ``tool_start``, ``tool_input``, ``tool_exec`` go out, then nothing until
    ``finish_turn`` (meanwhile a ``history`` says ``activity {is_processing:
    true, current_tool_name: "bash"}``).

    ``phases``: ``connection_phase {phase}`` events the turn sends before
    anything else (jcode: crates/jcode-app-core/src/agent/turn_streaming_mpsc.rs
    forwards the provider's ConnectionPhase stream events, worded by
    crates/jcode-message-types/src/lib.rs (impl Display for ConnectionPhase):
    "connecting", "waiting for response", "streaming", "retrying (1/3)"…). They
    only ever come inside a turn, so a client joining a held turn may see one first.

    ``cancel``: how the turn meets a ``cancel`` (jcode:
    crates/jcode-app-core/src/server/client_lifecycle.rs, cancel_processing_message):
    "abort" (default), the task did not stop within 500 ms and is aborted, so
    nothing of it reaches any client; "cooperative", the task stops in time and
    its own terminal ``done {id}`` goes out on the session fan-out, to every
    client of the session (the cancelling one included) before that
    connection's ``interrupted``, ``done {id}``.
    """

    text: str = "Done."
    #: The deltas to send; default: ``text`` cut by :func:`split_words` (none for "").
    chunks: Optional[List[str]] = None
    reasoning: Optional[str] = None
    reasoning_secs: Optional[float] = None
    #: Tool calls: ``{"id","name","input"(JSON text or dict),"output","error"?}``.
    tools: List[Dict[str, Any]] = field(default_factory=list)
    #: ``(input, output)`` token usage, sent as ``tokens`` before ``done``.
    tokens: Optional[Tuple[int, int]] = None
    #: Text the model writes before calling its tools (the history row that
    #: carries ``tool_calls``).
    preamble: Optional[str] = None
    #: The provider's stop reason on the final ``message_end`` (None: omitted).
    stop_reason: Optional[str] = "end_turn"
    cache_read_input: Optional[int] = None
    cache_creation_input: Optional[int] = None
    #: A ``provider_guardrail`` message ending the turn (see :func:`guardrail_notice`).
    guardrail: Optional[str] = None
    hold_after: Optional[int] = None
    phases: List[str] = field(default_factory=list)
    cancel: str = "abort"

    @classmethod
    def refusal(cls, stop_reason: str = "refusal", **options: Any) -> "Reply":
        """A turn the provider ends without text: ``message_end {stop_reason}``,
        ``provider_guardrail {stop_reason, message}``, ``done``."""
        options.setdefault("text", "")
        notice = guardrail_notice(stop_reason, had_reasoning=bool(options.get("reasoning")))
        return cls(stop_reason=stop_reason, guardrail=notice, **options)

    def deltas(self) -> List[str]:
        if self.chunks is not None:
            return list(self.chunks)
        return split_words(self.text) if self.text else []

    def _reasoning_events(self) -> List[dict]:
        if not self.reasoning:
            return []
        events: List[dict] = [{"type": "reasoning_delta", "text": part} for part in split_words(self.reasoning, 4)]
        done: dict = {"type": "reasoning_done"}
        if self.reasoning_secs is not None:
            done["duration_secs"] = self.reasoning_secs
        events.append(done)
        return events

    def phase_events(self) -> List[dict]:
        # jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::ConnectionPhase {phase})
        return [{"type": "connection_phase", "phase": phase} for phase in self.phases]

    def call_events(self) -> List[dict]:
        """The first provider response of a tool turn (up to its message_end); [] without tools."""
        if not self.tools:
            return []
        events = self.phase_events() + self._reasoning_events()
        events += [{"type": "text_delta", "text": part} for part in split_words(self.preamble)] if self.preamble else []
        for tool in self.tools:
            events.append({"type": "tool_start", "id": tool["id"], "name": tool["name"]})
            raw = tool.get("input", "")
            delta = json.dumps(raw, separators=(",", ":")) if isinstance(raw, dict) else raw
            if delta:
                events.append({"type": "tool_input", "delta": delta})
            events.append({"type": "tool_exec", "id": tool["id"], "name": tool["name"]})
        end: dict = {"type": "message_end"}
        if self.stop_reason is not None:
            # jcode: crates/jcode-provider-anthropic-runtime/src/lib.rs (message_delta → MessageEnd):
            # Anthropic ends a response that calls tools with stop_reason "tool_use"
            end["stop_reason"] = "tool_use"
        events.append(end)
        return events

    def tool_done_event(self, tool: Dict[str, Any]) -> dict:
        # jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::ToolDone)
        done = {"type": "tool_done", "id": tool["id"], "name": tool["name"], "output": tool.get("output", "")}
        if tool.get("error") is not None:
            done["error"] = tool["error"]
        return done

    def final_events(self) -> List[dict]:
        """The last provider response: text, message_end, tokens."""
        events = [] if self.tools else self.phase_events() + self._reasoning_events()
        events += [{"type": "text_delta", "text": chunk} for chunk in self.deltas()]
        # jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::MessageEnd {stop_reason?})
        end: dict = {"type": "message_end"}
        if self.stop_reason is not None:
            end["stop_reason"] = self.stop_reason
        events.append(end)
        usage = self.usage_event()
        if usage is not None:
            events.append(usage)
        return events

    def usage_event(self) -> Optional[dict]:
        # jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::TokenUsage, tag "tokens"); sent when
        # any usage is known (turn_streaming_mpsc.rs), cache fields only when reported
        if self.tokens is None and self.cache_read_input is None and self.cache_creation_input is None:
            return None
        inp, out = self.tokens if self.tokens is not None else (0, 0)
        event: dict = {"type": "tokens", "input": inp, "output": out}
        if self.cache_read_input is not None:
            event["cache_read_input"] = self.cache_read_input
        if self.cache_creation_input is not None:
            event["cache_creation_input"] = self.cache_creation_input
        return event

    def guardrail_event(self) -> Optional[dict]:
        # jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::ProviderGuardrail {stop_reason?, message})
        if self.guardrail is None:
            return None
        event: dict = {"type": "provider_guardrail"}
        if self.stop_reason is not None:
            event["stop_reason"] = self.stop_reason
        event["message"] = self.guardrail
        return event

    def events(self, request_id: int) -> List[dict]:
        """The whole stream of this turn, ending with ``done {request_id}``."""
        events = self.call_events() + [self.tool_done_event(tool) for tool in self.tools] + self.final_events()
        guardrail = self.guardrail_event()
        if guardrail is not None:
            events.append(guardrail)
        events.append({"type": "done", "id": request_id})
        return events

    def rows(self) -> List[dict]:
        """The history rows this turn leaves (after the user's row)."""
        rows: List[dict] = []
        if self.tools:
            if self.preamble:
                rows.append({"role": "assistant", "content": self.preamble,
                             "tool_calls": [tool["name"] for tool in self.tools]})
            rows += [_tool_row(tool) for tool in self.tools]
        text = "".join(self.deltas())
        if text:
            rows.append({"role": "assistant", "content": text})
        return rows


def _tool_row(tool: Dict[str, Any], content: Optional[str] = None) -> dict:
    # jcode: crates/jcode-base/src/session/render.rs: a tool result renders as
    # {role: "tool", content: <the output>, tool_data: <the call>}
    return {"role": "tool", "content": tool.get("output", "") if content is None else content,
            "tool_data": _tool_data(tool)}


@dataclass
class _Turn:
    """A message turn still running on a connection."""

    request_id: int
    reply: Reply
    sent: int = 0
    #: The turn was started by a ``message`` on a connection of the fake (its stream is
    #: :meth:`FakeJcodeServer._plan`); False for :meth:`FakeJcodeServer.start_foreign_turn`.
    planned: bool = False
    #: Its connection dropped while another client stayed attached: it runs on, owned by
    #: no connection (kept in ``FakeJcodeServer.foreign_turns``).
    detached: bool = False
    #: The session whose agent runs it (a connection that resumes another session meanwhile
    #: leaves the turn in this one).
    session_id: Optional[str] = None


@dataclass
class _Interrupt:
    content: str
    images: List[List[str]]
    urgent: bool
    source: str  # "user", "system", "background_task"


class FakeSocket:
    """One WebSocket connection to the fake gateway.

    ``send(text)`` delivers a text frame (the gateway splits it into lines,
    one request each) and returns the events the server writes in answer.
    Events the server sends on its own (:meth:`FakeJcodeServer.push`, the rest
    of a held turn) go to ``listener(events)`` when set (the :class:`Host` sets
    it), else into ``outbox``.
    """

    def __init__(self, server: "FakeJcodeServer", url: str, token: str):
        self.server = server
        self.url = url
        self.token = token
        #: False once the client closed it.
        self.open = True
        #: True once the server ended the connection (after a refused first request).
        self.server_closed = False
        #: Request lines received on this connection, parsed (those that decoded).
        self.received: List[dict] = []
        #: Lines sent after the server ended the connection (never read).
        self.lost: List[str] = []
        #: Events pushed while no listener was set.
        self.outbox: List[dict] = []
        self.listener: Optional[Callable[[List[dict]], None]] = None
        #: Set by the first valid subscribe.
        self.subscribed = False
        self.session_id: Optional[str] = None
        self.working_dir: Optional[str] = None
        self.client_instance_id: Optional[str] = None
        self.turn: Optional[_Turn] = None
        #: A ``message`` waiting for the session's agent, busy with another client's turn; the
        #: lines that arrived meanwhile (read, not answered, not even acknowledged).
        self.waiting: Optional[dict] = None
        self.held: List[str] = []
        #: What the server's connection table says of this connection, kept as jcode's
        #: per-client event forwarder keeps it from the events it writes (see :meth:`_forwarded`);
        #: ``history.activity`` is built from these.
        self.is_processing = False
        self.current_tool_name: Optional[str] = None

    def send(self, text: str) -> List[dict]:
        """Deliver one text frame; returns the server events it causes, in order."""
        if not self.open:
            raise RuntimeError("send on a closed fake socket")
        answers = self.server._receive(self, text)
        self._forwarded(answers)
        return answers

    def _forwarded(self, events: Sequence[dict]) -> None:
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (handle_client, the per-client
        # event forwarder): tool_start sets the connection's is_processing and current_tool_name,
        # tool_done clears the tool, done / error / interrupted clear both
        for event in events:
            kind = event.get("type")
            if kind == "tool_start":
                self.is_processing, self.current_tool_name = True, event.get("name")
            elif kind == "tool_done":
                self.current_tool_name = None
            elif kind in ("done", "error", "interrupted"):
                self.is_processing, self.current_tool_name = False, None

    def push(self, events: Sequence[dict]) -> None:
        """The server writes ``events`` on its own."""
        if not events or not self.open or self.server_closed:
            return
        self._forwarded(events)
        if self.listener is not None:
            self.listener(list(events))
        else:
            self.outbox.extend(events)

    def take_pushed(self) -> List[dict]:
        """The events pushed since the last call (when no listener is set)."""
        pushed, self.outbox = self.outbox, []
        return pushed

    def close(self) -> None:
        """The client closes the connection."""
        if self.open:
            self.open = False
            turn, self.turn = self.turn, None
            self.server._detach(self, turn)


def _ack(rid: int) -> dict:
    # jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::Ack)
    return {"type": "ack", "id": rid}


def _done(rid: int) -> dict:
    return {"type": "done", "id": rid}


def _error(rid: int, message: str, retry_after_secs: Optional[int] = None) -> dict:
    # jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::Error {id, message, retry_after_secs?})
    event: dict = {"type": "error", "id": rid, "message": message}
    if retry_after_secs is not None:
        event["retry_after_secs"] = retry_after_secs
    return event


_FRESH_NAMES = ("otter", "heron", "lynx", "wren", "moth", "newt", "ibis", "vole")


class FakeJcodeServer:
    """An in-memory jcode gateway that keeps today's server's rules.

    Pairing: the codes in ``pair_codes`` (initially ``pair_code``, "123456")
    are single use, as in jcode, unless ``reusable_pair_code`` keeps
    ``pair_code`` valid for any number of pairings (a fake-only convenience:
    ``python -m jcode_mobile.gateway`` uses it so a walkthrough can pair the
    one-shot ``run`` and then the simulator with one code). Each refused
    pairing leaves its reason in ``last_pair_refusal`` (never the code). The
    first pairing returns ``token``, later ones a fresh 64-hex token. Re-pairing a device id revokes that device's older token.
    A host ending in ``.invalid`` (or a port other than ``port``) is
    unreachable. The WebSocket accepts tokens it issued (plus
    ``accepted_tokens``), the set ``valid_tokens``.

    Sessions: ``sessions`` maps a session id to its rendered history; the
    scripted one is ``session_id`` (``history``, default
    :data:`DEFAULT_HISTORY`, with ``images`` and a ``compacted`` prefix) plus
    ``other_sessions``. Each connection starts in a brand-new session.

    Rules a test switches on (each cites its jcode source where it is kept):
    :meth:`start_foreign_turn` / :meth:`finish_foreign_turn` (a turn of another
    client, fanned out with its foreign ``done`` id), :attr:`reload_starting`
    (``message`` → ``ack``, ``reloading``), :meth:`session_busy` (``clear`` and
    ``rename_session`` refused while any turn runs in the session), the last
    connection closing mid-turn (the turn is aborted, the session resumes with
    ``was_interrupted``), :meth:`compact_session` / ``compacted`` (the history
    starts with the compaction marker row; ``get_compacted_history``), and
    :func:`image_heavy_history` (a history far over the core's input limit).

    Replies to ``message`` come from ``replies`` (a queue of :class:`Reply`)
    and, when it is empty, from ``default_reply(content)``.
    """

    def __init__(
        self,
        *,
        pair_code: str = "123456",
        token: str = "tok-fake-0001",
        server_name: str = "devbox",
        server_icon: str = "🔥",
        version: str = "0.9.2",
        port: int = DEFAULT_PORT,
        session_id: str = "session-fox",
        display_title: str = "Fix the flaky test",
        provider_name: str = "anthropic",
        provider_model: str = "claude-sonnet-4",
        available_models: Tuple[str, ...] = ("claude-sonnet-4", "claude-opus-4", "gpt-5"),
        history: Optional[List[dict]] = None,
        token_usage: Optional[Dict[str, int]] = None,
        other_sessions: Optional[Dict[str, str]] = None,
        accepted_tokens: Tuple[str, ...] = ("fixture-token",),
        compacted: Optional[List[dict]] = None,
        images: Optional[List[dict]] = None,
        replies: Optional[List[Reply]] = None,
        default_reply: Optional[Callable[[str], Reply]] = None,
        reusable_pair_code: bool = False,
    ):
        self.pair_code = pair_code
        #: Pairing codes not used yet (a code works once).
        self.pair_codes = {pair_code}
        #: ``pair_code`` stays valid after a pairing (fake-only; jcode's codes work once).
        self.reusable_pair_code = reusable_pair_code
        #: Codes already used by a pairing (so a refusal can say why).
        self.used_pair_codes: set = set()
        #: Why the latest refused ``POST /pair`` was refused, in words (None: none refused yet).
        self.last_pair_refusal: Optional[str] = None
        self.token = token
        #: Reported in history as ``server_name`` (``/pair`` always says "jcode").
        self.server_name = server_name
        self.server_icon = server_icon
        self.version = version
        self.port = port
        self.provider_name = provider_name
        self.provider_model = provider_model
        self.available_models = list(available_models)
        self.reasoning_effort: Optional[str] = "medium"
        #: The scripted session.
        self.main_session = session_id
        #: session id -> {"title", "messages", "images", "usage", "was_interrupted", "working_dir"}
        self.sessions: Dict[str, dict] = {}
        scripted_usage = token_usage if token_usage is not None else (DEFAULT_TOKEN_USAGE if history is None else None)
        self.add_session(session_id, display_title, DEFAULT_HISTORY if history is None else history,
                         token_usage=scripted_usage, compacted=compacted, images=images)
        for sid, title in (other_sessions if other_sessions is not None else {"session-owl": "Release notes"}).items():
            if sid not in self.sessions:
                self.add_session(sid, title, [])
        #: The session of the most recent connection (initially the scripted one).
        self.current_session = session_id
        self.valid_tokens = set(accepted_tokens)
        #: token -> {"id", "name", "apns_token"} for tokens issued by /pair.
        self.devices: Dict[str, dict] = {}
        self.replies: Deque[Reply] = deque(replies or [])
        self.default_reply = default_reply or (lambda content: Reply(text=f"You said: {content}"))
        #: Bodies of every POST /pair, every request line (all connections), every socket.
        self.pair_requests: List[dict] = []
        self.health_checks: List[Tuple[str, int, bool]] = []
        self.requests: List[dict] = []
        self.sockets: List[FakeSocket] = []
        #: Every subscribe seen: {"working_dir", "client_instance_id", "target_session_id", "error"}.
        self.subscribes: List[dict] = []
        #: (request_id, input) of every stdin_response.
        self.stdin_inputs: List[Tuple[str, str]] = []
        self._fresh = 0
        self._pairings = 0
        self._pending: Dict[str, List[_Interrupt]] = {}
        #: Switch: a reload has started, so a new ``message`` is answered with ``reloading``
        #: after its ack and not run (see :meth:`_on_message`). GatewayServer.reload() lifts it.
        self.reload_starting = False
        #: session id -> the turn another client (the terminal) runs there (:meth:`start_foreign_turn`).
        self.foreign_turns: Dict[str, _Turn] = {}
        #: session id -> ``{"directive": {"reconnect_notice", "continuation_message"}, "delivered": bool}``:
        #: the reload recovery intent a reload persisted for a session whose turn it interrupted
        #: (see :meth:`interrupt_turns_for_reload`).
        self.reload_recovery: Dict[str, dict] = {}

    def add_session(self, session_id: str, title: Optional[str], messages: List[dict], *,
                    images: Optional[List[dict]] = None, token_usage: Optional[Dict[str, int]] = None,
                    was_interrupted: bool = False, compacted: Optional[List[dict]] = None) -> dict:
        """A session the server knows (can be resumed). ``compacted``: rendered rows
        compaction moved out of the model's context, before ``messages`` (see
        :meth:`history_event`)."""
        usage = {key: 0 for key in DEFAULT_TOKEN_USAGE}
        usage.update(token_usage or {})
        session = {"title": title, "messages": copy.deepcopy(list(messages)), "images": copy.deepcopy(list(images or [])),
                   "usage": usage, "was_interrupted": was_interrupted, "working_dir": None,
                   "compacted": copy.deepcopy(list(compacted or []))}
        self.sessions[session_id] = session
        return session

    # -- HTTP ---------------------------------------------------------------

    def reachable(self, host: str, port: int) -> bool:
        return not host.lower().endswith(".invalid") and port == self.port

    def _check_reachable(self, host: str, port: int) -> None:
        if not self.reachable(host, port):
            raise Unreachable("Connection refused" if not host.endswith(".invalid") else f"Could not resolve host {host}")

    def http(self, method: str, host: str, port: int, path: str, body: Union[None, str, bytes, dict] = None,
             use_tls: bool = False) -> HTTPResponse:
        """Any plain HTTP request to the gateway.

        jcode: crates/jcode-base/src/gateway.rs (handle_http): GET /health,
        POST /pair, OPTIONS → 204; anything else 404 {"error":"Not found"}.
        The query string is ignored when matching the path.
        """
        self._check_reachable(host, port)
        route = (method.upper(), path.split("?", 1)[0])
        if route == ("GET", "/health"):
            return HTTPResponse(200, {"status": "ok", "version": self.version, "gateway": True})
        if route == ("POST", "/pair"):
            return self._pair(body)
        if route[0] == "OPTIONS":
            return HTTPResponse(204, {})
        return HTTPResponse(404, {"error": "Not found"})

    def health(self, host: str, port: int, use_tls: bool = False) -> HTTPResponse:
        """``GET /health`` → ``{status: "ok", version, gateway: true}``."""
        self.health_checks.append((host, port, use_tls))
        return self.http("GET", host, port, "/health", use_tls=use_tls)

    def pair(self, host: str, port: int, use_tls: bool, body: Union[dict, str, bytes]) -> HTTPResponse:
        """``POST /pair`` with ``{code, device_id, device_name, apns_token?}``
        (a dict, or the raw body text)."""
        self._check_reachable(host, port)
        recorded: Any = body
        if not isinstance(body, dict):
            try:
                recorded = json.loads(body)
            except ValueError:
                recorded = None
        if isinstance(recorded, dict):
            self.pair_requests.append(dict(recorded))
        return self.http("POST", host, port, "/pair", body, use_tls)

    def _pair(self, body: Union[None, str, bytes, dict]) -> HTTPResponse:
        # jcode: crates/jcode-base/src/gateway.rs (handle_pair_request)
        if isinstance(body, dict):
            text = json.dumps(body, separators=(",", ":"))
        elif isinstance(body, bytes):
            text = body.decode("utf-8", "replace")
        else:
            text = body or ""
        problem = self._pair_body_problem(text)
        if problem is not None:
            self.last_pair_refusal = f"the body is not a pairing request ({problem})"
            return HTTPResponse(400, {"error": f"Invalid JSON: {problem}"})
        request = json.loads(text)
        # jcode: crates/jcode-base/src/gateway/registry.rs (DeviceRegistry::validate_code): a pending
        # code works once (it is removed when used) and expires after 5 minutes
        if request["code"] not in self.pair_codes:
            if request["code"] in self.used_pair_codes:
                self.last_pair_refusal = ("the code was already used by an earlier pairing "
                                          "(a code works once, as in jcode)")
            else:
                self.last_pair_refusal = "the code is not one this gateway issued"
            return HTTPResponse(401, {"error": "Invalid or expired pairing code"})
        if not (self.reusable_pair_code and request["code"] == self.pair_code):
            self.pair_codes.discard(request["code"])
            self.used_pair_codes.add(request["code"])
        token = self._issue_token(request["device_id"], request["device_name"], request.get("apns_token"))
        # jcode: crates/jcode-base/src/gateway.rs (handle_pair_request): server_name is the literal "jcode"
        return HTTPResponse(200, {"token": token, "server_name": "jcode", "server_version": self.version})

    @staticmethod
    def _pair_body_problem(text: str) -> Optional[str]:
        """serde_json's complaint about a /pair body (None: a PairRequest).

        jcode: crates/jcode-base/src/gateway.rs (handle_pair_request, struct PairRequest):
        code, device_id, device_name are required strings, apns_token an optional string.
        """
        if not text.strip():
            return "EOF while parsing a value at line 1 column 0"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as problem:
            return _syntax_error(problem)
        end = len(text.rstrip())
        if not isinstance(value, dict):
            return f"invalid type: {_unexpected(value)}, expected struct PairRequest at line 1 column {end}"
        kinds = {"code": "str", "device_id": "str", "device_name": "str", "apns_token": "ostr"}
        for name, field_value in value.items():
            if name in kinds:
                problem = _field_problem(field_value, kinds[name])
                if problem:
                    return f"{problem} at line 1 column {_top_level_value_end(text, name) or end}"
        for name in ("code", "device_id", "device_name"):
            if name not in value:
                return f"missing field `{name}` at line 1 column {end}"
        return None

    def _issue_token(self, device_id: str, device_name: str, apns_token: Optional[str]) -> str:
        # jcode: crates/jcode-base/src/gateway/registry.rs (DeviceRegistry::pair_device): a new random
        # 32-byte hex token per pairing; pairing a device id again drops that device's old entry
        self._pairings += 1
        if self._pairings == 1:
            token = self.token
        else:
            token = hashlib.sha256(f"{self.token}#{self._pairings}".encode()).hexdigest()
        for old, device in list(self.devices.items()):
            if device["id"] == device_id:
                self.revoke_token(old)
        self.devices[token] = {"id": device_id, "name": device_name, "apns_token": apns_token}
        self.valid_tokens.add(token)
        return token

    def revoke_token(self, token: str) -> None:
        """Forget a token (as ``jcode`` does when a device is revoked)."""
        self.valid_tokens.discard(token)
        self.devices.pop(token, None)

    def revoke_device(self, device_id: str) -> None:
        for token, device in list(self.devices.items()):
            if device["id"] == device_id:
                self.revoke_token(token)

    # -- WebSocket ----------------------------------------------------------

    def open_socket(self, url: str, auth_token: Optional[str] = None) -> FakeSocket:
        """Open ``ws(s)://host:port/ws`` with ``Authorization: Bearer <auth_token>``
        (or ``?token=`` in the URL). Raises :class:`SocketRejected` before the
        socket opens when the gateway refuses the upgrade."""
        parts = urlsplit(url)
        default = 443 if parts.scheme == "wss" else 80
        self._check_reachable(parts.hostname or "", parts.port or default)
        # jcode: crates/jcode-base/src/gateway.rs (handle_ws_connection): only /ws upgrades
        if parts.path != "/ws":
            raise SocketRejected(404, "WebSocket endpoint not found")
        # jcode: crates/jcode-base/src/gateway/auth.rs (extract_ws_auth, authorize_ws_device): refused
        # with 401 during the handshake, so the client never sees an open socket
        header = None
        if auth_token is not None:
            if not auth_token.strip() or len(auth_token.split()) != 1:
                raise SocketRejected(401, "Authorization must be 'Bearer <token>'")
            header = auth_token.strip()
        query = next((p[len("token="):] for p in parts.query.split("&") if p.startswith("token=") and len(p) > 6), None)
        if header is not None and query is not None and header != query:
            raise SocketRejected(401, "Conflicting auth token sources")
        token = header if header is not None else query
        if token is None:
            raise SocketRejected(401, "Missing Authorization header or token query parameter")
        if token not in self.valid_tokens:
            if not _is_hex_token(token):
                raise SocketRejected(401, "Malformed auth token")
            raise SocketRejected(401, "Unknown or revoked auth token; re-pair this device")
        socket = FakeSocket(self, url, token)
        self.sockets.append(socket)
        return socket

    def open_sockets(self) -> List[FakeSocket]:
        return [s for s in self.sockets if s.open and not s.server_closed]

    def push(self, events: Union[dict, Sequence[dict]], socket: Optional[FakeSocket] = None) -> List[dict]:
        """Send events on ``socket`` (default: every subscribed open socket)."""
        batch = [events] if isinstance(events, dict) else list(events)
        targets = [socket] if socket is not None else [s for s in self.open_sockets() if s.subscribed]
        for target in targets:
            target.push(batch)
        return batch

    def request_session_close(self, reason: str, socket: Optional[FakeSocket] = None) -> dict:
        """Push ``session_close_requested {reason}``; the server keeps the socket open.

        jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::SessionCloseRequested);
        crates/jcode-app-core/src/server/comm_session.rs and server.rs send it to a
        session's clients ("Stopped by coordinator …", idle worker reaped) and do
        not end their connections.
        """
        event = {"type": "session_close_requested", "reason": reason}
        self.push(event, socket)
        return event

    @staticmethod
    def notification_event(message: str, *, from_session: str = "session-owl", from_name: Optional[str] = None,
                           kind: str = "message", **details: Any) -> dict:
        """A ``notification`` event.

        jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::Notification) and
        crates/jcode-protocol/src/notifications.rs (NotificationType, tagged by "kind"):
        file_conflict {path, operation, intent?, summary?, detail?},
        shared_context {key, value}, message {scope?, channel?, tldr?}.
        """
        required = {"file_conflict": ("path", "operation"), "shared_context": ("key", "value"), "message": ()}
        if kind not in required:
            raise ValueError(f"unknown notification kind {kind!r}")
        missing = [name for name in required[kind] if details.get(name) is None]
        if missing:
            raise ValueError(f"a {kind} notification needs {missing}")
        event: dict = {"type": "notification", "from_session": from_session}
        if from_name is not None:
            event["from_name"] = from_name
        event["notification_type"] = {"kind": kind, **{k: v for k, v in details.items() if v is not None}}
        event["message"] = message
        return event

    def notify(self, message: str, socket: Optional[FakeSocket] = None, **options: Any) -> dict:
        """Push a :meth:`notification_event`."""
        event = self.notification_event(message, **options)
        self.push(event, socket)
        return event

    def request_stdin(self, prompt: str, *, request_id: str = "stdin-1", is_password: bool = False,
                      socket: Optional[FakeSocket] = None) -> dict:
        """Push ``stdin_request``.

        jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::StdinRequest); the
        per-client forwarder in client_lifecycle.rs sends ``tool_call_id`` "".
        """
        event = {"type": "stdin_request", "request_id": request_id, "prompt": prompt,
                 "is_password": is_password, "tool_call_id": ""}
        self.push(event, socket)
        return event

    def queue_soft_interrupt(self, session_id: str, content: str, *, source: str = "system",
                             urgent: bool = False) -> None:
        """Queue a server-side soft interrupt (``source`` "system" or
        "background_task"); it is injected at the session's next safe point."""
        if source not in ("user", "system", "background_task"):
            raise ValueError(source)
        self._pending.setdefault(session_id, []).append(_Interrupt(content, [], urgent, source))

    def session_event(self, session_id: Optional[str] = None) -> dict:
        # jcode: crates/jcode-protocol/src/wire.rs (ServerEvent::SessionId, tag "session")
        return {"type": "session", "session_id": session_id or self.current_session}

    def history_event(self, request_id: int, session_id: Optional[str] = None, *,
                      was_interrupted: Optional[bool] = None, catalog_only: bool = False) -> dict:
        """A ``history`` event for a session, with the fields today's server sends.

        jcode: crates/jcode-app-core/src/server/client_state.rs (send_history,
        handle_get_model_catalog) and crates/jcode-protocol/src/wire.rs
        (ServerEvent::History): ``all_sessions`` is a list of session ids;
        ``total_tokens`` is ``[input, output]`` and comes with
        ``token_usage_totals`` once a message reported usage; ``images`` only
        when there are some; ``was_interrupted`` only from a resume. There is no
        title: a client learns titles from ``session_renamed``.
        """
        sid = session_id or self.current_session
        session = self.sessions[sid]
        event: dict = {"type": "history", "id": request_id, "session_id": sid}
        event["messages"] = [] if catalog_only else self._rendered(session, DEFAULT_VISIBLE_COMPACTED)[0]
        if session["images"] and not catalog_only:
            event["images"] = copy.deepcopy(session["images"])
        event["provider_name"] = self.provider_name
        event["provider_model"] = self.provider_model
        if self.available_models:
            event["available_models"] = list(self.available_models)
        if catalog_only:
            event["compaction_mode"] = "reactive"
            return event
        usage = session["usage"]
        if usage["messages_with_token_usage"] > 0:
            event["total_tokens"] = [usage["input_tokens"], usage["output_tokens"]]
            event["token_usage_totals"] = dict(usage)
        event["all_sessions"] = list(self.sessions)
        event["client_count"] = len(self.open_sockets())
        event["is_canary"] = False
        event["server_version"] = self.version
        event["server_name"] = self.server_name
        event["server_icon"] = self.server_icon
        event["server_has_update"] = False
        if was_interrupted is not None:
            event["was_interrupted"] = was_interrupted
        recovery = self.pending_reload_recovery(sid)
        if recovery is not None:
            event["reload_recovery"] = recovery
        if self.reasoning_effort is not None:
            event["reasoning_effort"] = self.reasoning_effort
        event["compaction_mode"] = "reactive"
        activity = self._activity(sid)
        if activity is not None:
            event["activity"] = activity
        return event

    @staticmethod
    def _rendered(session: dict, visible: int) -> Tuple[List[dict], Dict[str, int]]:
        """The session's rows as a history renders them: a compacted session starts with the
        marker row, then the shown part of the compacted prefix, then the live rows.

        jcode: crates/jcode-base/src/session/render.rs (render_messages_and_images_with_compacted_history)
        """
        prefix = session.get("compacted") or []
        if not prefix:
            return copy.deepcopy(session["messages"]), {"total": 0, "visible": 0, "remaining": 0, "hidden_prompts": 0}
        start, counts = compacted_window(prefix, visible)
        return [compacted_marker(counts)] + copy.deepcopy(prefix[start:] + session["messages"]), counts

    def compact_session(self, session_id: Optional[str] = None, *, keep_last: int = 0) -> dict:
        """Compaction: every row of the session but the last ``keep_last`` moves into its
        compacted prefix (the next history starts with the marker row). Returns the session."""
        session = self.sessions[session_id or self.current_session]
        cut = max(0, len(session["messages"]) - keep_last)
        session["compacted"] += session["messages"][:cut]
        session["messages"] = session["messages"][cut:]
        return session

    def _activity(self, session_id: str) -> Optional[dict]:
        """``history.activity``: ``{is_processing: true, current_tool_name?}`` while a client of
        the session is processing, else None (the field is then absent).

        jcode: crates/jcode-app-core/src/server/client_state.rs (session_activity_snapshot): built from
        the connection table, whose ``is_processing`` / ``current_tool_name`` each connection's event
        forwarder keeps from the events it writes (:meth:`FakeSocket._forwarded`; a ``message``
        accepted sets ``is_processing`` too). A connection with a running tool wins. The terminal of
        :meth:`start_foreign_turn` is a connection processing its own turn. A turn whose connection
        dropped (``detached``) shows only through the connections it still streams to: before any
        ``tool_start`` reached them, nothing says the session is busy.
        """
        busy = False
        foreign = self.foreign_turns.get(session_id)
        if foreign is not None and not foreign.detached:
            busy = True
            running = None
            for event in self._turn_events(session_id, foreign)[: foreign.sent]:
                if event["type"] == "tool_start":
                    running = event["name"]
                elif event["type"] == "tool_done":
                    running = None
            if running:
                return {"is_processing": True, "current_tool_name": running}
        for socket in self.open_sockets():
            if socket.subscribed and socket.session_id == session_id and socket.is_processing:
                if socket.current_tool_name:
                    return {"is_processing": True, "current_tool_name": socket.current_tool_name}
                busy = True
        return {"is_processing": True} if busy else None

    def _turn_events(self, session_id: str, turn: _Turn) -> List[dict]:
        """The whole stream of a running turn (nothing taken from the queues)."""
        if turn.planned:
            return self._plan_session(session_id, turn, keep_pending=True)[0]
        return turn.reply.events(turn.request_id)

    def pending_reload_recovery(self, session_id: str) -> Optional[dict]:
        """The reload recovery directive a ``history`` of the session carries (None: none pending).

        jcode: crates/jcode-app-core/src/server/client_state.rs (history_reload_recovery_snapshot) and
        reload_recovery.rs (pending_directive_for_session): every history attaches the persisted
        intent while it is pending, without marking it delivered (a history can be lost)."""
        intent = self.reload_recovery.get(session_id)
        if intent is None or intent["delivered"]:
            return None
        return dict(intent["directive"])

    def interrupt_turns_for_reload(self) -> List[str]:
        """A reload is about to end every connection: each session with a running turn (on a
        connection, detached, or the terminal's) is marked interrupted and gets a reload
        recovery intent. Returns those sessions.

        jcode: crates/jcode-app-core/src/server/reload.rs (persist intents for the sessions running
        during the reload): a session that is not the reload's initiator gets
        ``ReloadContext::recovery_directive_for_session(.., was_interrupted: true, ..)``, which
        without a selfdev reload context is ``{reconnect_notice: None, continuation_message:
        interrupted_session_continuation_message()}`` (crates/jcode-app-core/src/tool/selfdev/reload.rs);
        client_disconnect_cleanup.rs marks the session crashed ("Server reload interrupted processing").
        """
        running = {s.session_id for s in self.open_sockets() if s.turn is not None}
        running |= set(self.foreign_turns)
        marked = []
        for sid in sorted(r for r in running if r in self.sessions):
            self.sessions[sid]["was_interrupted"] = True
            self.reload_recovery[sid] = {
                "directive": {"reconnect_notice": None, "continuation_message": RELOAD_CONTINUATION},
                "delivered": False,
            }
            marked.append(sid)
        return marked

    def reload(self) -> List[FakeSocket]:
        """The server reloads (in memory): running turns are interrupted
        (:meth:`interrupt_turns_for_reload`), every subscribed connection gets
        ``reloading``, then every connection ends (``server_closed``), turns
        and queued soft interrupts are lost; sessions stay. Returns the
        connections it ended (a :class:`Host` reports them closed: see
        :meth:`Host.reload_server`).

        jcode: crates/jcode-app-core/src/server/client_session.rs (handle_reload): ``Reloading
        {new_socket: None}`` to the sessions' clients, then the new binary is exec'd."""
        self.interrupt_turns_for_reload()
        self.push({"type": "reloading"})
        ended = []
        for socket in self.open_sockets():
            socket.server_closed = True
            socket.turn = None
            socket.waiting, socket.held = None, []
            socket.is_processing, socket.current_tool_name = False, None
            ended.append(socket)
        self.foreign_turns.clear()
        self._pending.clear()
        self.reload_starting = False
        return ended

    def next_reply(self, content: str) -> Reply:
        return self.replies.popleft() if self.replies else self.default_reply(content)

    def new_session_id(self) -> str:
        """The id of a brand-new session (shaped like jcode's memorable ids:
        ``session_<name>_<millis>_<16 hex>``; jcode: crates/jcode-core/src/id.rs)."""
        self._fresh += 1
        name = _FRESH_NAMES[(self._fresh - 1) % len(_FRESH_NAMES)]
        return f"session_{name}_{1700000000000 + self._fresh}_{self._fresh:016x}"

    # -- requests -------------------------------------------------------------

    def _receive(self, socket: FakeSocket, text: str) -> List[dict]:
        # jcode: crates/jcode-base/src/gateway.rs (handle_ws_connection): a text frame is written to
        # the server with a newline added when missing; the server reads it line by line
        text = text if text.endswith("\n") else text + "\n"
        answers: List[dict] = []
        for line in text.split("\n")[:-1]:
            if socket.server_closed:
                socket.lost.append(line)
                continue
            if socket.waiting is not None:
                socket.held.append(line)
                continue
            answers += self._receive_line(socket, line)
        return answers

    def _receive_line(self, socket: FakeSocket, line: str) -> List[dict]:
        if not socket.subscribed and not line.strip():
            # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (handle_client): blank lines
            # before the first request are skipped
            return []
        request, problem = decode_request(line)
        if request is None:
            # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (handle_client): an undecodable
            # line is answered with an error quoting id 0; the connection stays (before and after subscribe)
            return [_error(0, f"Invalid request: {problem}")]
        self.requests.append(request)
        socket.received.append(request)
        if not socket.subscribed:
            refused = self._first_request(socket, request)
            if refused is not None:
                return refused
        return self._handle(socket, request)

    def _first_request(self, socket: FakeSocket, request: dict) -> Optional[List[dict]]:
        """Check a connection's first request; the answer when the server ends the connection."""
        kind, rid = request["type"], request["id"]
        if kind in LIGHTWEIGHT_REQUEST_TYPES:
            # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (handle_client) and
            # crates/jcode-app-core/src/server/client_lightweight_control.rs: answered
            # without a session, then the connection ends
            socket.server_closed = True
            if kind == "ping":
                return [{"type": "pong", "id": rid}]
            return [_ack(rid), _error(rid, f"FakeJcodeServer does not implement {kind!r}")]
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (initial_subscribe_working_dir,
        # handle_client): anything but a subscribe with a usable working_dir gets one error frame with
        # the request's id and the server returns, ending the connection
        if kind != "subscribe":
            problem: Optional[str] = "Client must Subscribe with a working_dir before sending stateful requests"
        else:
            problem = _working_dir_problem(request.get("working_dir"))
            if problem is not None:
                self._record_subscribe(request, problem)
        if problem is not None:
            socket.server_closed = True
            return [_error(rid, problem)]
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (handle_client): each connection gets a new agent
        # and session
        socket.subscribed = True
        sid = self.new_session_id()
        self.add_session(sid, None, [])["working_dir"] = request["working_dir"].strip()
        socket.session_id = sid
        return None

    def _record_subscribe(self, request: dict, error: Optional[str]) -> None:
        self.subscribes.append({
            "working_dir": request.get("working_dir"),
            "client_instance_id": request.get("client_instance_id"),
            "target_session_id": request.get("target_session_id"),
            "error": error,
        })

    def handle_request(self, socket: FakeSocket, request: dict) -> List[dict]:
        """The events the gateway sends in answer to one request (given parsed)."""
        return self._receive(socket, json.dumps(request, separators=(",", ":")))

    def _handle(self, socket: FakeSocket, request: dict) -> List[dict]:
        kind, rid = request["type"], request["id"]
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (handle_client): every decoded
        # request is acknowledged with {"type":"ack","id":N} before it is handled (cancel's ack is
        # queued first too)
        answers = [_ack(rid)]
        handler = getattr(self, "_on_" + kind, None)
        if handler is None:
            answers.append(_error(rid, f"FakeJcodeServer does not implement {kind!r}"))
        else:
            answers += handler(socket, request)
        return answers

    def _bind(self, socket: FakeSocket, session_id: str) -> None:
        old = socket.session_id
        socket.session_id = session_id
        self.current_session = session_id
        if old and old != session_id and old in self.sessions and not self.sessions[old]["messages"]:
            if not any(s.session_id == old for s in self.open_sockets()):
                del self.sessions[old]  # an unused fresh session leaves with its connection

    def _detach(self, socket: FakeSocket, turn: Optional[_Turn] = None) -> None:
        """A connection ended: its session leaves the server when nothing was said in it.

        ``turn``: the turn that was running on it. jcode:
        crates/jcode-app-core/src/server/client_disconnect_cleanup.rs (cleanup_client_connection,
        session_has_live_successor): while another client is still attached to the session nothing
        is torn down and the turn goes on, owned by no connection (``detached``, kept in
        ``foreign_turns``): its events and its final ``done {id}`` (the id of the message on the
        dropped connection) go out on the session fan-out to whichever clients are attached by then
        (state.rs, session_event_fanout_sender_with_fallback), a client that reconnects included;
        :meth:`finish_turn` sends the rest. When the last client leaves mid-turn the turn is
        aborted (no more events, no assistant row: only the user's row stays) and the session is
        marked crashed ("Client disconnected while processing"), which the next resume reports as
        ``was_interrupted: true`` (client_session.rs, restored_session_was_interrupted).
        """
        sid = socket.session_id
        socket.is_processing, socket.current_tool_name = False, None
        attached = [s for s in self.open_sockets() if s.subscribed and s.session_id == sid]
        if turn is not None and sid in self.sessions:
            if attached:
                turn.detached = True
                self.foreign_turns[sid] = turn
            else:
                self.sessions[sid]["was_interrupted"] = True
        elif not attached and sid in self.foreign_turns and self.foreign_turns[sid].detached:
            del self.foreign_turns[sid]  # the last client of a detached turn left: aborted
            self.sessions[sid]["was_interrupted"] = True
        if sid and sid in self.sessions and sid != self.main_session and not self.sessions[sid]["messages"]:
            if not any(s.session_id == sid for s in self.open_sockets()):
                del self.sessions[sid]

    def _on_subscribe(self, socket: FakeSocket, request: dict) -> List[dict]:
        rid = request["id"]
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (Request::Subscribe): a later subscribe is checked
        # the same way but
        # only answered with an error; the connection stays
        problem = _working_dir_problem(request.get("working_dir"))
        self._record_subscribe(request, problem)
        if problem is not None:
            return [_error(rid, problem)]
        socket.working_dir = request["working_dir"].strip()
        socket.client_instance_id = request.get("client_instance_id")
        self.sessions[socket.session_id]["working_dir"] = socket.working_dir
        target = request.get("target_session_id")
        answers: List[dict] = []
        if target is not None and target in self.sessions and target != socket.session_id:
            # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (Request::Subscribe → handle_resume_session,
            # then handle_subscribe):
            # the existing session's history and done, then session and done
            answers += self._resume(socket, rid, target)
        self.current_session = socket.session_id
        # jcode: crates/jcode-app-core/src/server/client_session.rs (handle_subscribe): session, then done
        return answers + [self.session_event(socket.session_id), _done(rid)]

    def _resume(self, socket: FakeSocket, rid: int, session_id: str) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_session.rs (handle_resume_session): history
        # (with was_interrupted) then done; a session that cannot be restored is an error
        if session_id not in self.sessions:
            return [_error(rid, "Failed to restore session: No such file or directory (os error 2)")]
        self._bind(socket, session_id)
        session = self.sessions[session_id]
        was_interrupted = bool(session["was_interrupted"])
        session["was_interrupted"] = False
        return [self.history_event(rid, session_id, was_interrupted=was_interrupted), _done(rid)]

    def _on_resume_session(self, socket: FakeSocket, request: dict) -> List[dict]:
        socket.client_instance_id = request.get("client_instance_id")
        return self._resume(socket, request["id"], request["session_id"])

    def _on_get_history(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_state.rs (handle_get_history)
        return [self.history_event(request["id"], socket.session_id)]

    def _on_get_model_catalog(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_state.rs (handle_get_model_catalog): a history event with no
        # messages
        return [self.history_event(request["id"], socket.session_id, catalog_only=True)]

    def _on_get_compacted_history(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_state.rs (handle_get_compacted_history): the whole
        # history rendered with visible_messages compacted rows shown, and the counts; images only when
        # there are some (wire.rs, ServerEvent::CompactedHistory)
        session = self.sessions[socket.session_id]
        messages, counts = self._rendered(session, request["visible_messages"])
        event: dict = {"type": "compacted_history", "id": request["id"], "session_id": socket.session_id,
                       "messages": messages}
        if session["images"]:
            event["images"] = copy.deepcopy(session["images"])
        event.update({"compacted_total": counts["total"], "compacted_visible": counts["visible"],
                      "compacted_remaining": counts["remaining"], "compacted_hidden_prompts": counts["hidden_prompts"]})
        return [event]

    def _on_state(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_state.rs (handle_get_state): message_count counts the server's
        # sessions
        return [{"type": "state", "id": request["id"], "session_id": socket.session_id,
                 "message_count": len(self.sessions), "is_processing": socket.turn is not None}]

    def _on_ping(self, socket: FakeSocket, request: dict) -> List[dict]:
        return [{"type": "pong", "id": request["id"]}]

    def session_busy(self, session_id: Optional[str]) -> bool:
        """A turn runs in the session, started on any connection or by another client.

        jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (reject_if_agent_busy_for_request):
        busy means the session's agent is locked, which a turn of any attached client does."""
        if session_id is None:
            return False
        return session_id in self.foreign_turns or any(
            s.session_id == session_id and s.turn is not None for s in self.open_sockets())

    def _busy(self, socket: FakeSocket, rid: int, kind: str) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (reject_if_agent_busy_for_request,
        # send_agent_busy_error)
        message = f"Cannot handle {kind} while the session is busy. Try again after the current turn finishes."
        return [_error(rid, message, retry_after_secs=1)]

    def _on_clear(self, socket: FakeSocket, request: dict) -> List[dict]:
        rid = request["id"]
        if self.session_busy(socket.session_id):
            return self._busy(socket, rid, "clear")
        # jcode: crates/jcode-app-core/src/server/client_session.rs (handle_clear_session): a fresh
        # session (same working dir), announced with session then done
        sid = self.new_session_id()
        self.add_session(sid, None, [])["working_dir"] = socket.working_dir
        self._bind(socket, sid)
        return [self.session_event(sid), _done(rid)]

    def _on_rename_session(self, socket: FakeSocket, request: dict) -> List[dict]:
        rid = request["id"]
        if self.session_busy(socket.session_id):
            return self._busy(socket, rid, "rename_session")
        # jcode: crates/jcode-app-core/src/server/client_actions.rs (handle_rename_session):
        # session_renamed {session_id, title?, display_title} then done
        title = request.get("title")
        title = title.strip() if isinstance(title, str) and title.strip() else None
        session = self.sessions[socket.session_id]
        if title is not None:
            session["title"] = title
        event: dict = {"type": "session_renamed", "session_id": socket.session_id}
        if title is not None:
            event["title"] = title
        event["display_title"] = session["title"] or socket.session_id
        return [event, _done(rid)]

    def _on_set_model(self, socket: FakeSocket, request: dict) -> List[dict]:
        rid, model = request["id"], request["model"]
        # jcode: crates/jcode-app-core/src/server/provider_control.rs (send_model_changed_result):
        # success → model_changed {id, model, provider_name}; failure → the current model and the error
        if model not in self.available_models:
            return [{"type": "model_changed", "id": rid, "model": self.provider_model, "error": "unknown model"}]
        self.provider_model = model
        return [{"type": "model_changed", "id": rid, "model": model, "provider_name": self.provider_name}]

    def _on_set_reasoning_effort(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/provider_control.rs (send_reasoning_effort_result)
        self.reasoning_effort = request["effort"]
        return [{"type": "reasoning_effort_changed", "id": request["id"], "effort": self.reasoning_effort}]

    def _on_compact(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_actions.rs (handle_compact)
        return [{"type": "compact_result", "id": request["id"], "message": "Conversation compacted", "success": True}]

    def _on_stdin_response(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_actions.rs (handle_stdin_response): done, whether or not a
        # command waited
        self.stdin_inputs.append((request["request_id"], request["input"]))
        return [_done(request["id"])]

    def _on_soft_interrupt(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (queue_soft_interrupt): queued for the session's
        # next safe point and
        # acknowledged a second time
        interrupt = _Interrupt(request["content"], list(request.get("images") or []),
                               bool(request.get("urgent", False)), "user")
        self._pending.setdefault(socket.session_id, []).append(interrupt)
        return [_ack(request["id"])]

    def _on_cancel_soft_interrupts(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (clear_soft_interrupts): the queue is emptied, a
        # second ack
        self._pending.pop(socket.session_id, None)
        return [_ack(request["id"])]

    def _on_background_tool(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (move_tool_to_background): a second ack
        return [_ack(request["id"])]

    def _on_cancel(self, socket: FakeSocket, request: dict) -> List[dict]:
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (handle_client: cancel's ack is
        # queued on the connection's event channel; cancel_processing_message): ``interrupted`` and then
        # ``done`` with the id of the message this connection was running go on the connection's own
        # channel (client_event_tx), to no other client; with nothing running only ``interrupted``.
        # Another client of the session sees the turn end only when the task stops cooperatively
        # (Reply.cancel "cooperative"): its own terminal ``done {id}`` goes on the session fan-out,
        # to every client of the session, before the canceller's interrupted. An aborted task
        # (default) sends nothing more to anyone. A cancel from a connection that does not own the
        # running turn (a detached or terminal turn) signals the session's cancel and answers
        # ``interrupted``; the fake leaves that turn running (finish it with finish_turn).
        turn = socket.turn
        if turn is None:
            return [{"type": "interrupted"}]
        socket.turn = None
        answers: List[dict] = []
        if turn.reply.cancel == "cooperative":
            done = [_done(turn.request_id)]
            for other in self._session_clients(socket.session_id):
                if other is not socket:
                    other.push(done)
            answers += done
        return answers + [{"type": "interrupted"}, _done(turn.request_id)]

    def _session_clients(self, session_id: Optional[str]) -> List[FakeSocket]:
        """The connections the session fan-out reaches: every open subscribed one of the session.

        jcode: crates/jcode-app-core/src/server/state.rs (fanout_session_event)"""
        return [s for s in self.open_sockets() if s.subscribed and s.session_id == session_id]

    def _on_message(self, socket: FakeSocket, request: dict) -> List[dict]:
        rid, content = request["id"], request["content"]
        session = self.sessions[socket.session_id]
        images = list(request.get("images") or [])
        if request.get("no_reply"):
            # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (append_context_message): stored, no turn
            self._add_user_row(session, content, images)
            return [{"type": "context_message_added", "id": rid}]
        if self.reload_starting:
            # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (start_processing_message,
            # server_reload_starting): while a reload is starting a new message is answered with
            # Reloading {new_socket: None} ({"type":"reloading"}) after its ack, and nothing else: it is
            # not stored, no turn runs, no done
            return [{"type": "reloading"}]
        if socket.turn is not None:
            # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (start_processing_message)
            return [_error(rid, "Already processing a message")]
        if socket.session_id in self.foreign_turns:
            # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (handle_client, Request::Message →
            # start_processing_message): the message is acknowledged, then its handler waits for the
            # session's agent (agent.lock().await), which the other client's turn holds; the
            # connection's request loop waits with it, so later lines are neither acknowledged nor
            # answered until that turn ends (finish_foreign_turn); then this turn runs
            socket.waiting = request
            return []
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (start_processing_message): once
        # the message is accepted, a system_reminder equal to the session's pending reload recovery
        # continuation marks it delivered (reload_recovery.rs, mark_delivered_if_matching_continuation;
        # an exact match, the content does not count)
        reminder = request.get("system_reminder")
        intent = self.reload_recovery.get(socket.session_id)
        if intent is not None and reminder is not None and reminder == intent["directive"]["continuation_message"]:
            intent["delivered"] = True
        # jcode: crates/jcode-app-core/src/agent/turn_execution.rs (run_once_streaming_mpsc_with_display_role):
        # the system_reminder only joins this turn's system prompt and is never stored; the content is
        # stored as the user's message, and crates/jcode-base/src/session/render.rs renders no row for
        # a message without text (so content "" with a reminder leaves no user row)
        self._add_user_row(session, content, images)
        socket.is_processing, socket.current_tool_name = True, None
        reply = self.next_reply(content)
        turn = _Turn(rid, reply, planned=True, session_id=socket.session_id)
        # jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (start_processing_message): the
        # turn's events, its terminal done {id} included, go out on the session fan-out
        # (state.rs, session_event_fanout_sender_with_fallback): to every client of the session
        others = [s for s in self._session_clients(socket.session_id) if s is not socket]
        if reply.hold_after is not None:
            socket.turn = turn
            plan, _, _ = self._plan(socket, turn, keep_pending=True)
            # done never goes out before finish_turn, nor an injection (what is injected is only known then)
            injections = [i for i, e in enumerate(plan) if e["type"] == "soft_interrupt_injected"]
            stop = min([reply.hold_after, len(plan) - 1] + injections[:1])
            turn.sent = stop
            for other in others:
                other.push(plan[:stop])
            return plan[:stop]
        plan, rows, follow_up = self._plan(socket, turn)
        self._complete(session, reply, rows, follow_up)
        for other in others:
            other.push(plan)
        return plan

    def finish_turn(self, socket: Optional[FakeSocket] = None) -> List[dict]:
        """Send the rest of a held turn and return it: the turn running on ``socket``, or (no
        socket) the one turn running, a detached one included (see :meth:`_detach`). The rest
        goes out on the session fan-out: to every connection attached to the session now."""
        if socket is None:
            running: List[Any] = [s for s in self.open_sockets() if s.turn is not None]
            running += [sid for sid, t in self.foreign_turns.items() if t.detached]
            if len(running) != 1:
                raise RuntimeError(f"{len(running)} turns are running; name the socket")
            if isinstance(running[0], str):
                return self.finish_foreign_turn(running[0])
            socket = running[0]
        turn = socket.turn
        if turn is None:
            raise RuntimeError("no turn is running on that socket")
        sid = turn.session_id or socket.session_id
        plan, rows, follow_up = self._plan_session(sid, turn)
        socket.turn = None
        self._complete(self.sessions[sid], turn.reply, rows, follow_up)
        rest = plan[turn.sent :]
        if self._session_clients(sid):
            self._fan_out(sid, rest)
        else:
            # jcode: crates/jcode-app-core/src/server/state.rs (session_event_fanout_sender_with_fallback):
            # with no client attached to the turn's session (its connection resumed another one) the
            # events go to the connection that started it
            socket.push(rest)
        return rest

    # -- another client ---------------------------------------------------------

    def start_foreign_turn(self, reply: Optional[Reply] = None, *, content: str = "Run the test suite",
                           session_id: Optional[str] = None, request_id: int = 41) -> List[dict]:
        """Another client attached to the session (the terminal) sends ``content``; its turn
        streams to every connection on that session, ending with ``done`` carrying
        ``request_id``: the other client's id, foreign to the phone. Returns the events
        fanned out. With ``reply.hold_after`` the turn stops after that many events and the
        session stays busy until :meth:`finish_foreign_turn`.

        jcode: crates/jcode-app-core/src/server/client_lifecycle.rs (start_processing_message):
        the turn's events, its final ``done {id}`` / ``error {id}`` included, go out through
        the session fan-out (state.rs, session_event_fanout_sender_with_fallback) to every
        client attached to the session, each carrying the id of the request that started it.
        The other client's own ``ack`` is not fanned out; its user row is only seen in the
        next history.
        """
        sid = session_id or self.current_session
        if sid in self.foreign_turns or self.session_busy(sid):
            raise RuntimeError(f"session {sid} is busy")
        session = self.sessions[sid]
        self._add_user_row(session, content, [])
        reply = reply if reply is not None else self.next_reply(content)
        events = reply.events(request_id)
        if reply.hold_after is not None:
            turn = _Turn(request_id, reply, sent=min(reply.hold_after, len(events) - 1))
            self.foreign_turns[sid] = turn
            events = events[: turn.sent]
        else:
            self._complete(session, reply, reply.rows(), None)
        self._fan_out(sid, events)
        return events

    def finish_foreign_turn(self, session_id: Optional[str] = None) -> List[dict]:
        """The rest of a held :meth:`start_foreign_turn`, fanned out; its rows join the history."""
        sid = session_id or (next(iter(self.foreign_turns)) if len(self.foreign_turns) == 1 else None)
        if sid is None or sid not in self.foreign_turns:
            raise RuntimeError(f"{len(self.foreign_turns)} foreign turns are running; name the session")
        turn = self.foreign_turns.pop(sid)
        if turn.planned:  # a phone's turn whose connection dropped (see _detach)
            plan, rows, follow_up = self._plan_session(sid, turn)
            self._complete(self.sessions[sid], turn.reply, rows, follow_up)
            rest = plan[turn.sent :]
        else:
            self._complete(self.sessions[sid], turn.reply, turn.reply.rows(), None)
            rest = turn.reply.events(turn.request_id)[turn.sent :]
        self._fan_out(sid, rest)
        for waiter in self.open_sockets():
            if waiter.session_id == sid and waiter.waiting is not None:
                request, held = waiter.waiting, waiter.held
                waiter.waiting, waiter.held = None, []
                answers = self._on_message(waiter, request)
                if held:
                    answers += self._receive(waiter, "\n".join(held))
                waiter.push(answers)
        return rest

    def _fan_out(self, session_id: str, events: List[dict]) -> None:
        for target in self._session_clients(session_id):
            target.push(events)

    def _add_user_row(self, session: dict, content: str, images: List[List[str]]) -> None:
        # jcode: crates/jcode-base/src/session/render.rs (image_anchor_for_message,
        # image_source_for_message): a user's images are listed in history.images, anchored to the
        # prompt's ordinal (no anchor when the message has no text to anchor to)
        ordinal = sum(1 for m in session["messages"] if m["role"] == "user")
        for media_type, data in images:
            image = {"media_type": media_type, "data": data, "label": None, "source": {"kind": "user_input"}}
            if content:
                image["anchor"] = {"kind": "user_prompt", "ordinal": ordinal}
            session["images"].append(image)
        if content:
            session["messages"].append({"role": "user", "content": content})

    def _complete(self, session: dict, reply: Reply, rows: List[dict], follow_up: Optional[Reply]) -> None:
        for row in rows:
            if row["role"] == "user" and row.get("_images"):
                self._add_user_row(session, row["content"], row["_images"])
            else:
                session["messages"].append({k: v for k, v in row.items() if not k.startswith("_")})
        for used in (reply, follow_up):
            if used is None or used.usage_event() is None:
                continue
            usage, event = session["usage"], used.usage_event()
            usage["messages_with_token_usage"] += 1
            usage["input_tokens"] += event["input"]
            usage["output_tokens"] += event["output"]
            if "cache_read_input" in event or "cache_creation_input" in event:
                usage["cache_reported_input_tokens"] += event["input"]
            usage["cache_read_input_tokens"] += event.get("cache_read_input", 0)
            usage["cache_creation_input_tokens"] += event.get("cache_creation_input", 0)

    def _plan(self, socket: FakeSocket, turn: _Turn, *, keep_pending: bool = False
              ) -> Tuple[List[dict], List[dict], Optional[Reply]]:
        return self._plan_session(socket.session_id, turn, keep_pending=keep_pending)

    def _plan_session(self, session_id: Optional[str], turn: _Turn, *, keep_pending: bool = False
                      ) -> Tuple[List[dict], List[dict], Optional[Reply]]:
        """The whole stream of ``turn`` (the first ``turn.sent`` events already
        went out), the history rows it leaves, and a follow-up reply when a soft
        interrupt continued the turn.

        Soft interrupts queued for the session are injected where the real turn
        loop looks for them (jcode: crates/jcode-app-core/src/agent/turn_streaming_mpsc.rs
        and agent/interrupts.rs): point "C" between tools when one is urgent
        (the remaining tools are skipped, ``tools_skipped``), "D" after the
        tools ran, "B" after a response without tools (the model then answers
        it: the next reply). Consecutive interrupts of one source are joined
        with a blank line into one ``soft_interrupt_injected``.
        """
        reply, sent, rid = turn.reply, turn.sent, turn.request_id
        pending = list(self._pending.get(session_id or "", []))
        injected_any = False
        events = reply.call_events()
        rows: List[dict] = []
        if reply.tools and reply.preamble:
            rows.append({"role": "assistant", "content": reply.preamble,
                         "tool_calls": [tool["name"] for tool in reply.tools]})
        follow_up: Optional[Reply] = None

        def inject(point: str, tools_skipped: Optional[int] = None) -> None:
            nonlocal pending, injected_any
            injected_any = True
            groups: List[Tuple[str, List[_Interrupt]]] = []
            for item in pending:
                if groups and groups[-1][0] == item.source:
                    groups[-1][1].append(item)
                else:
                    groups.append((item.source, [item]))
            for index, (source, items) in enumerate(groups):
                content = "\n\n".join(i.content for i in items)
                event: dict = {"type": "soft_interrupt_injected", "content": content}
                if source != "user":
                    event["display_role"] = source
                event["point"] = point
                if index == 0 and tools_skipped is not None:
                    event["tools_skipped"] = tools_skipped
                events.append(event)
                role = "user" if source == "user" else source
                rows.append({"role": role, "content": content, "_images": [img for i in items for img in i.images]})
            pending = []

        if reply.tools:
            urgent = any(i.urgent for i in pending)
            first_done = len(events) + 1
            if pending and urgent and len(reply.tools) >= 2 and sent <= first_done:
                first, rest = reply.tools[0], reply.tools[1:]
                events.append(reply.tool_done_event(first))
                rows.append(_tool_row(first))
                rows += [_tool_row(tool, "[Skipped: user interrupted]") for tool in rest]
                inject("C", tools_skipped=len(rest))
                rows.append({"role": "user", "content": f"[User interrupted: {len(rest)} remaining tool(s) skipped]"})
            else:
                events += [reply.tool_done_event(tool) for tool in reply.tools]
                rows += [_tool_row(tool) for tool in reply.tools]
                if pending and sent <= len(events):
                    inject("D")
        events += reply.final_events()
        text = "".join(reply.deltas())
        if text:
            rows.append({"role": "assistant", "content": text})
        ending = reply
        if pending and sent <= len(events):
            inject("B")
            asked = rows[-1]["content"]
            if keep_pending:  # look without taking the scripted reply
                follow_up = self.replies[0] if self.replies else self.default_reply(asked)
            else:
                follow_up = self.next_reply(asked)
            follow = follow_up.events(rid)[:-1]
            events += [e for e in follow if e["type"] != "provider_guardrail"]
            rows += follow_up.rows()
            ending = follow_up
        guardrail = ending.guardrail_event()
        if guardrail is not None:
            events.append(guardrail)
        events.append(_done(rid))
        if not keep_pending and injected_any and session_id is not None:
            self._pending[session_id] = pending
        return events, rows, follow_up


# -- the host -------------------------------------------------------------------


@dataclass
class Step:
    """One call into the core: ``kind`` is "action" or "event"."""

    kind: str
    input: Any
    report: dict


class HostError(AssertionError):
    """The core asked for something a well-behaved host cannot do."""


#: A 1×1 transparent PNG, what the fake photo picker returns.
TINY_PNG_BASE64 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000105d2b58f0000000049454e44ae426082"
    )
).decode("ascii")


#: What the in-memory :class:`Host` answers to ``create_device_id`` (uuid-shaped, fixed).
FAKE_DEVICE_ID = "00000000-0000-4000-8000-000000000001"


class Host:
    """Executes the core's effects against a :class:`FakeJcodeServer`.

    Parameters:
        app: the app to drive (default: ``App(options)``).
        server: the backend (default: a new :class:`FakeJcodeServer`).
        delivery: ``"parsed"`` sends ``{"event": {...}}`` per server event;
            ``"raw"`` sends ``{"line": "..."}`` text frames.
        frame_events: in raw mode, how many events share one frame
            (newline-separated).
        hold_frames: keep server frames in ``inbox`` instead of delivering
            them; deliver them one by one with :meth:`deliver_next` to watch
            a reply stream in.
        on_frame: called as ``on_frame(host, event_json)`` after each
            delivered frame has been applied and its effects executed.
        push_token, qr_payload, speech_text, image: what the device answers
            to register_push_notifications, the QR scanner, dictation and the
            photo picker (None: no answer / scan cancelled).
        device_id: what the device answers to ``create_device_id``
            (``device_id_created``); deterministic by default so runs compare
            (a real host makes a uuid4). None: never answered.
        recorder: also hands every call into the core to
            ``recorder.record(kind, input, report, app=app)`` (a
            :class:`jcode_mobile.trace.Recorder`, or anything with that
            method), right after the call, before its effects run. A call
            the core refuses raises before it is recorded.
    """

    def __init__(
        self,
        app: Optional[App] = None,
        server: Optional[FakeJcodeServer] = None,
        *,
        options: JSONInput = None,
        delivery: str = "parsed",
        frame_events: int = 1,
        hold_frames: bool = False,
        on_frame: Optional[Callable[["Host", dict], None]] = None,
        tag_frames: bool = True,
        push_token: Optional[str] = None,
        qr_payload: Optional[str] = None,
        speech_text: Optional[str] = "Run the tests",
        image: Optional[Tuple[str, str]] = ("image/png", TINY_PNG_BASE64),
        recorder: Optional[Any] = None,
        device_id: Optional[str] = FAKE_DEVICE_ID,
    ):
        if delivery not in ("parsed", "raw"):
            raise ValueError("delivery is 'parsed' or 'raw'")
        self.app = app if app is not None else App(options)
        self.server = server if server is not None else FakeJcodeServer()
        self.delivery = delivery
        self.frame_events = max(1, frame_events)
        self.hold_frames = hold_frames
        self.on_frame = on_frame
        self.tag_frames = tag_frames
        self.push_token = push_token
        self.qr_payload = qr_payload
        self.speech_text = speech_text
        self.image = image
        self.device_id = device_id
        #: Receives every call into the core (see ``recorder`` above); may be set later.
        self.recorder = recorder

        self.keychain: Dict[str, str] = {}
        self.storage: Dict[str, Any] = {}
        #: Pending timers: timer_id -> the schedule_timer effect.
        self.timers: Dict[str, dict] = {}
        self.haptics: List[str] = []
        #: Local notifications shown (show_local_notification), one per session: the latest.
        self.notifications: List[dict] = []
        #: Every text put on the clipboard (copy_to_clipboard), in order.
        self.clipboard: List[str] = []
        #: Every effect executed, in order (the full, unredacted effect objects).
        self.effects: List[dict] = []
        #: Every call into the core with its report.
        self.steps: List[Step] = []
        #: Server frames not delivered yet: (socket effect_id, [events]); ``None``
        #: instead of events: the server ended that connection here.
        self.inbox: Deque[Tuple[int, Optional[List[dict]]]] = deque()
        #: Open sockets by the effect_id of their websocket_connect.
        self.sockets: Dict[int, Any] = {}
        self.socket_id: Optional[int] = None
        self._queue: Deque[dict] = deque()
        self._closing: set = set()

    # -- driving the core -----------------------------------------------------

    def dispatch(self, action: JSONInput) -> dict:
        """Dispatch an action, then execute everything that follows. Returns its report."""
        report = self.app.dispatch(action)
        self._record("action", action, report)
        self.run()
        return report

    def platform_event(self, event: JSONInput) -> dict:
        """Report a platform event, then execute everything that follows."""
        report = self._event(event)
        self.run()
        return report

    def run(self) -> None:
        """Execute queued effects and (unless ``hold_frames``) deliver server
        frames until nothing is left."""
        while True:
            self._drain_effects()
            if self.hold_frames or not self.deliver_next():
                return

    def deliver_next(self) -> bool:
        """Deliver the oldest pending server frame and execute the effects it
        causes. Returns False when there was nothing to deliver."""
        while self.inbox:
            socket_id, events = self.inbox.popleft()
            socket = self.sockets.get(socket_id)
            if socket is None or not socket.open:
                continue  # frames of a closed socket never arrive
            if events is None:
                self._server_closed(socket_id)
                return True
            event: dict = {"type": "websocket_event"}
            if self.tag_frames:
                event["effect_id"] = socket_id
            if self.delivery == "raw":
                event["line"] = "\n".join(json.dumps(e, separators=(",", ":")) for e in events)
            else:
                (event["event"],) = events
            self._event(event)
            self._drain_effects()
            if self.on_frame is not None:
                self.on_frame(self, event)
            return True
        return False

    def deliver_all(self) -> int:
        """Deliver every pending frame (and what they cause); returns how many."""
        n = 0
        while self.deliver_next():
            n += 1
        return n

    def finish_turn(self) -> List[dict]:
        """The server sends the rest of the turn held on the current socket
        (see ``Reply.hold_after``); then run. Returns the events sent."""
        if self.socket_id is None:
            raise HostError("no open socket")
        events = self.server.finish_turn(self.sockets[self.socket_id])
        self.run()
        return events

    def fire_timers(self, purpose: Optional[str] = None) -> List[str]:
        """Fire every pending timer (optionally only those of ``purpose``), then run."""
        fired = [tid for tid, t in self.timers.items() if purpose is None or t.get("purpose") == purpose]
        for tid in fired:
            if self.timers.pop(tid, None) is None:
                continue  # cancelled by what an earlier timer caused
            self._event({"type": "timer_fired", "timer_id": tid})
            self.run()
        return fired

    def drop_connection(self, code: int = 1006, reason: str = "network lost") -> None:
        """The network dropped the current socket: report websocket_closed."""
        if self.socket_id is None:
            raise HostError("no open socket to drop")
        socket_id = self.socket_id
        self.sockets.pop(socket_id).close()
        self.socket_id = None
        self.platform_event({"type": "websocket_closed", "effect_id": socket_id, "code": code, "reason": reason})

    def reload_server(self) -> List[str]:
        """The server reloads (:meth:`FakeJcodeServer.reload`): the frames sent
        before arrive, ``reloading`` last, then every connection ends (the
        host reports 1006); then run. Returns the sessions whose turn the
        reload interrupted."""
        interrupted = sorted({s.session_id for s in self.server.open_sockets() if s.turn is not None}
                             | set(self.server.foreign_turns))
        ended = self.server.reload()
        for socket_id, socket in list(self.sockets.items()):
            if socket in ended and socket_id not in self._closing:
                self._closing.add(socket_id)
                self.inbox.append((socket_id, None))
        self.run()
        return interrupted

    def server_push(self, *events: dict) -> None:
        """The server sends unsolicited events on the current socket."""
        if self.socket_id is None:
            raise HostError("no open socket to push on")
        self._enqueue_frames(self.socket_id, list(events))
        self.run()

    # -- queries ----------------------------------------------------------------

    def mark(self) -> int:
        """A position in ``effects``, for :meth:`effects_since`."""
        return len(self.effects)

    def effects_since(self, mark: int) -> List[dict]:
        return self.effects[mark:]

    def effects_of(self, effect_type: str, since: int = 0) -> List[dict]:
        return [e for e in self.effects[since:] if e["type"] == effect_type]

    def sent_requests(self, since: int = 0) -> List[dict]:
        """The parsed lines of every websocket_send executed."""
        return [json.loads(e["line"]) for e in self.effects_of("websocket_send", since)]

    def reports(self) -> List[dict]:
        return [s.report for s in self.steps]

    # -- effects ------------------------------------------------------------------

    def _record(self, kind: str, value: Any, report: dict) -> None:
        self.steps.append(Step(kind, value, report))
        if self.recorder is not None:
            self.recorder.record(kind, value, report, app=self.app)
        self._queue.extend(report["effects"])

    def _event(self, event: JSONInput) -> dict:
        report = self.app.platform_event(event)
        self._record("event", event, report)
        return report

    def _drain_effects(self) -> None:
        while self._queue:
            effect = self._queue.popleft()
            self.effects.append(effect)
            self._execute(effect)

    def _answer(self, event: dict) -> None:
        self._event(event)

    def _enqueue_frames(self, socket_id: int, events: List[dict]) -> None:
        size = self.frame_events if self.delivery == "raw" else 1
        for i in range(0, len(events), size):
            self.inbox.append((socket_id, events[i : i + size]))

    def _server_closed(self, socket_id: int) -> None:
        """The server ended the connection after the frames before: the
        WebSocket drops without a close frame, the host reports 1006."""
        self._closing.discard(socket_id)
        self.sockets.pop(socket_id).close()
        if self.socket_id == socket_id:
            self.socket_id = None
        self._event({"type": "websocket_closed", "effect_id": socket_id, "code": 1006,
                     "reason": "connection closed by the server"})
        self._drain_effects()

    def _execute(self, effect: dict) -> None:
        kind = effect["type"]
        eid = effect["effect_id"]
        handler = getattr(self, "_do_" + kind, None)
        if handler is None:
            raise HostError(f"the host does not know effect {kind!r}: {effect}")
        handler(eid, effect)

    def _do_http_health(self, eid: int, e: dict) -> None:
        try:
            response = self.server.health(e["host"], e["port"], e["use_tls"])
        except Unreachable as problem:
            self._answer({"type": "health_finished", "effect_id": eid, "ok": False, "error": str(problem)})
            return
        answer = {"type": "health_finished", "effect_id": eid, "ok": response.status == 200}
        if response.status == 200:
            answer["version"] = response.body.get("version")
        else:
            answer["status"] = response.status
        self._answer(answer)

    def _do_http_pair(self, eid: int, e: dict) -> None:
        body = {"code": e["code"], "device_id": e["device_id"], "device_name": e["device_name"]}
        if "apns_token" in e:
            body["apns_token"] = e["apns_token"]
        try:
            response = self.server.pair(e["host"], e["port"], e["use_tls"], body)
        except Unreachable as problem:
            self._answer({"type": "pair_finished", "effect_id": eid, "ok": False, "error": str(problem)})
            return
        if response.status == 200:
            self._answer({"type": "pair_finished", "effect_id": eid, "ok": True, **response.body})
        else:
            answer = {"type": "pair_finished", "effect_id": eid, "ok": False, "status": response.status}
            if "error" in response.body:
                answer["error"] = response.body["error"]
            self._answer(answer)

    def _do_secure_store_write(self, eid: int, e: dict) -> None:
        self.keychain[e["key"]] = e["value"]
        self._answer({"type": "secure_store_write_finished", "effect_id": eid, "key": e["key"], "ok": True})

    def _do_secure_store_read(self, eid: int, e: dict) -> None:
        answer = {"type": "secure_store_read_finished", "effect_id": eid, "key": e["key"], "ok": True}
        if e["key"] in self.keychain:
            answer["value"] = self.keychain[e["key"]]
        self._answer(answer)

    def _do_secure_store_delete(self, eid: int, e: dict) -> None:
        self.keychain.pop(e["key"], None)

    def _do_storage_write(self, eid: int, e: dict) -> None:
        self.storage[e["key"]] = e["value"]

    def _do_websocket_connect(self, eid: int, e: dict) -> None:
        try:
            socket = self.server.open_socket(e["url"], e["auth_token"])
        except Unreachable as problem:
            self._answer({"type": "websocket_failed", "effect_id": eid, "error": str(problem)})
            return
        except SocketRejected as problem:
            self._answer({"type": "websocket_failed", "effect_id": eid, "error": str(problem), "status": problem.status})
            return
        if self.socket_id is not None and self.socket_id in self.sockets:
            self.sockets.pop(self.socket_id).close()
        self.sockets[eid] = socket
        self.socket_id = eid
        # what the server sends on its own (pushes, the rest of a held turn) arrives as frames
        socket.listener = lambda events, sid=eid: self._enqueue_frames(sid, events)
        self._answer({"type": "websocket_opened", "effect_id": eid})

    def _do_websocket_send(self, eid: int, e: dict) -> None:
        if self.socket_id is None:
            raise HostError(f"websocket_send with no open socket: {e}")
        socket_id = self.socket_id
        socket = self.sockets[socket_id]
        self._enqueue_frames(socket_id, socket.send(e["line"]))
        if socket.server_closed and socket_id not in self._closing:
            self._closing.add(socket_id)
            self.inbox.append((socket_id, None))

    def _do_websocket_close(self, eid: int, e: dict) -> None:
        if self.socket_id is None:
            return  # the socket was still connecting: nothing to report
        socket_id = self.socket_id
        self.sockets.pop(socket_id).close()
        self.socket_id = None
        self._answer({"type": "websocket_closed", "effect_id": socket_id, "code": 1000})

    def _do_schedule_timer(self, eid: int, e: dict) -> None:
        self.timers[e["timer_id"]] = e

    def _do_cancel_timer(self, eid: int, e: dict) -> None:
        self.timers.pop(e["timer_id"], None)

    def _do_register_push_notifications(self, eid: int, e: dict) -> None:
        if self.push_token is not None:
            self._answer({"type": "push_token_received", "token": self.push_token})

    def _do_request_camera_qr_scan(self, eid: int, e: dict) -> None:
        if self.qr_payload is None:
            self._answer({"type": "qr_scan_cancelled"})
        else:
            self._answer({"type": "qr_payload_scanned", "payload": self.qr_payload})

    def _do_request_speech_transcript(self, eid: int, e: dict) -> None:
        if self.speech_text is not None:
            self._answer({"type": "speech_transcript", "text": self.speech_text, "is_final": True})

    def _do_request_image_picker(self, eid: int, e: dict) -> None:
        if self.image is not None:
            media_type, data = self.image
            self._answer({"type": "image_attachment_selected", "media_type": media_type, "data_base64": data})

    def _do_haptic(self, eid: int, e: dict) -> None:
        self.haptics.append(e["style"])

    def _do_show_local_notification(self, eid: int, e: dict) -> None:
        # Like the OS with one identifier per session: a later one replaces the earlier.
        shown = {"title": e["title"], "body": e["body"], "session_id": e.get("session_id")}
        self.notifications = [n for n in self.notifications if n["session_id"] != shown["session_id"]]
        self.notifications.append(shown)

    def _do_copy_to_clipboard(self, eid: int, e: dict) -> None:
        self.clipboard.append(e["text"])

    def _do_create_device_id(self, eid: int, e: dict) -> None:
        if self.device_id is not None:
            self._answer({"type": "device_id_created", "effect_id": eid, "device_id": self.device_id})
