"""Scripts for the fake gateway: the session it serves, the turns it plays, its faults.

A script is a JSON object (a file, or a dict already loaded). Every key is
optional::

    {
      "code": "123456",                 // the pairing code (works once)
      "history": [ {"role": "user", "content": "hi"}, ... ],
                                        // rows of the scripted session, as
                                        // FakeJcodeServer(history=...) takes them
      "replies": [ <reply>, ... ],      // played in order, one per `message`;
                                        // afterwards "You said: <text>"
      "faults": { "delay_ms": 40, ... },// see jcode_mobile.gateway.faults.Faults

      // also passed to FakeJcodeServer when present:
      "token", "server_name", "server_icon", "version", "session_id",
      "display_title", "provider_name", "provider_model", "available_models",
      "token_usage", "other_sessions" ({id: title}), "accepted_tokens",
      "images" (history.images of the scripted session),
      "compacted" (rows of its compacted prefix: the history then starts
                   with jcode's compaction marker row),

      // a session far over the core's input limit (replaces history and images):
      "image_heavy": {"turns": 24, "image_bytes": 786432}
    }

A ``<reply>`` is either a scripted turn (the fields of
:class:`~jcode_mobile.fake_gateway.Reply`)::

    {"text": "All green.", "chunks": ["All ", "green."], "reasoning": "Check CI",
     "reasoning_secs": 1.5, "preamble": "Running them.",
     "tools": [{"id": "toolu_1", "name": "bash", "input": {"command": "make test"},
                "output": "ok", "error": null}],
     "tokens": [1200, 80], "cache_read_input": 1024, "cache_creation_input": 0,
     "stop_reason": "end_turn", "guardrail": "…", "hold_after": 3}

or ``{"refusal": "content_filter", ...}`` (a turn the provider ends without
text: :meth:`Reply.refusal`), or raw server events::

    {"events": [{"type": "text_delta", "text": "Hi"},
                {"type": "notification", ...}, {"type": "message_end"}],
     "hold_after": 1}

Raw events are written exactly as given, in order (any server event type;
nothing is checked), then ``{"type": "done", "id": <the message's id>}``
(do not list ``done`` yourself). Their ``text_delta`` texts become the
assistant's history row and a ``tokens`` event counts in the session's usage,
as for a scripted turn. ``hold_after`` works for both kinds: the turn stops
after that many events until ``finish_turn``.

:func:`load_script` returns a :class:`Script` ``(server_kwargs, replies,
faults)``; :meth:`Script.build` makes the :class:`FakeJcodeServer`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Union

from ..fake_gateway import FakeJcodeServer, Reply, image_heavy_history
from .faults import Faults

__all__ = ["RawReply", "Script", "load_script", "reply_from_dict"]


@dataclass
class RawReply(Reply):
    """A turn made of raw server events: ``raw_events`` then ``done {id}``.

    It plugs into the fake's turn machinery (hold_after, cancel, soft
    interrupts at point "B") by standing in for the final provider response.
    """

    text: str = ""
    stop_reason: Optional[str] = None
    raw_events: List[dict] = field(default_factory=list)

    def deltas(self) -> List[str]:
        return [e["text"] for e in self.raw_events
                if e.get("type") == "text_delta" and isinstance(e.get("text"), str)]

    def call_events(self) -> List[dict]:
        return []

    def final_events(self) -> List[dict]:
        return [dict(e) for e in self.raw_events]

    def usage_event(self) -> Optional[dict]:
        used = [e for e in self.raw_events if e.get("type") == "tokens"]
        if not used or not all(isinstance(used[-1].get(k), int) for k in ("input", "output")):
            return None
        return dict(used[-1])

    def guardrail_event(self) -> Optional[dict]:
        return None  # a provider_guardrail listed in raw_events is sent where it stands


#: Script keys passed to FakeJcodeServer as they are (lists become tuples where it takes tuples).
_SERVER_KEYS = {
    "token": "token", "server_name": "server_name", "server_icon": "server_icon", "version": "version",
    "session_id": "session_id", "display_title": "display_title", "provider_name": "provider_name",
    "provider_model": "provider_model", "available_models": "available_models", "token_usage": "token_usage",
    "other_sessions": "other_sessions", "accepted_tokens": "accepted_tokens", "history": "history",
    "code": "pair_code", "images": "images", "compacted": "compacted",
}
_TUPLE_KEYS = {"available_models", "accepted_tokens"}
_REPLY_KEYS = {"text", "chunks", "reasoning", "reasoning_secs", "tools", "tokens", "preamble", "stop_reason",
               "cache_read_input", "cache_creation_input", "guardrail", "hold_after"}


class Script(NamedTuple):
    """A loaded script: FakeJcodeServer keyword arguments, the replies, the faults."""

    server_kwargs: Dict[str, Any]
    replies: List[Reply]
    faults: Faults

    def build(self, **overrides: Any) -> FakeJcodeServer:
        """A FakeJcodeServer playing this script (``overrides`` win over the script)."""
        kwargs = {**self.server_kwargs, **overrides}
        return FakeJcodeServer(replies=list(self.replies), **kwargs)


def reply_from_dict(value: Mapping[str, Any]) -> Reply:
    """One reply of a script (see the module docstring)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"a reply is a JSON object, not {value!r}")
    if "events" in value:
        unknown = sorted(set(value) - {"events", "hold_after"})
        if unknown:
            raise ValueError(f"a raw-events reply takes only events and hold_after, not {', '.join(unknown)}")
        events = value["events"]
        if not isinstance(events, list) or not all(isinstance(e, dict) and isinstance(e.get("type"), str)
                                                   for e in events):
            raise ValueError("events must be a list of objects, each with a string type")
        return RawReply(raw_events=[dict(e) for e in events], hold_after=value.get("hold_after"))
    options = dict(value)
    refusal = options.pop("refusal", None)
    unknown = sorted(set(options) - _REPLY_KEYS)
    if unknown:
        raise ValueError(f"unknown reply field {', '.join(unknown)} (known: {', '.join(sorted(_REPLY_KEYS))})")
    if options.get("tokens") is not None:
        tokens = options["tokens"]
        if not (isinstance(tokens, (list, tuple)) and len(tokens) == 2 and all(isinstance(t, int) for t in tokens)):
            raise ValueError(f"tokens is [input, output], not {tokens!r}")
        options["tokens"] = (tokens[0], tokens[1])
    for tool in options.get("tools") or []:
        if not isinstance(tool, dict) or not {"id", "name"} <= set(tool):
            raise ValueError(f"a tool needs at least id and name: {tool!r}")
    if refusal is not None:
        return Reply.refusal(str(refusal), **options)
    return Reply(**options)


def load_script(source: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> Script:
    """Read a script from a JSON file (a path) or a dict. Unknown keys are an error."""
    if isinstance(source, Mapping):
        data: Any = dict(source)
    else:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("a script is a JSON object")
    unknown = sorted(set(data) - set(_SERVER_KEYS) - {"replies", "faults", "image_heavy"})
    if unknown:
        raise ValueError(f"unknown script key {', '.join(unknown)}")
    kwargs: Dict[str, Any] = {}
    for key, name in _SERVER_KEYS.items():
        if key in data:
            value = data[key]
            kwargs[name] = tuple(value) if key in _TUPLE_KEYS and isinstance(value, list) else value
    if "pair_code" in kwargs and not isinstance(kwargs["pair_code"], str):
        raise ValueError("code is a string")
    for key in ("history", "images", "compacted"):
        if key in kwargs and not isinstance(kwargs[key], list):
            raise ValueError(f"{key} is a list")
    if "image_heavy" in data:
        heavy = data["image_heavy"]
        if not isinstance(heavy, dict) or set(heavy) - {"turns", "image_bytes"} or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in heavy.values()):
            raise ValueError("image_heavy is {turns, image_bytes}: non-negative integers")
        kwargs["history"], kwargs["images"] = image_heavy_history(**heavy)
    replies_data = data.get("replies", [])
    if not isinstance(replies_data, list):
        raise ValueError("replies is a list")
    replies = [reply_from_dict(r) for r in replies_data]
    faults_data = data.get("faults", {})
    if not isinstance(faults_data, dict):
        raise ValueError("faults is an object")
    return Script(kwargs, replies, Faults.from_dict(faults_data))
