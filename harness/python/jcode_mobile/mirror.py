"""A copy of the core's state kept current from the change feed.

A host that renders from the state does not need the whole state after
every event: ``jcode_mobile_changes`` says what changed since a revision, in
bytes proportional to the change (a streamed delta is one ``append``).

    from jcode_mobile import App
    from jcode_mobile.mirror import Mirror

    app = App({"scenario": "connected_chat"})
    mirror = Mirror(app)            # starts from app.state()
    app.dispatch({"type": "set_draft", "value": "hi"})
    mirror.update()                 # applies the ops; mirror.state == app.state()
"""

from __future__ import annotations

import json
from typing import Any, List, Union

from .binding import App

__all__ = ["Mirror", "apply_ops", "parse_pointer"]


def parse_pointer(pointer: str) -> List[Union[str, int]]:
    """``"/transcript/4/text"`` → ``["transcript", 4, "text"]`` (RFC 6901 escapes undone).

    Numeric segments are returned as ints; whether they index a list or name
    a key is decided against the document when applying.
    """
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    parts: List[Union[str, int]] = []
    for raw in pointer[1:].split("/"):
        segment = raw.replace("~1", "/").replace("~0", "~")
        parts.append(int(segment) if segment.isdigit() else segment)
    return parts


def _step(container: Any, segment: Union[str, int]) -> Any:
    if isinstance(container, list):
        return container[int(segment)]
    return container[str(segment)]


def apply_ops(document: Any, ops: List[dict]) -> Any:
    """Applies JSON Patch ``add``/``remove``/``replace`` and the core's
    ``append`` (string append) to ``document``; returns the new document."""
    for op in ops:
        path = parse_pointer(op["path"])
        kind = op["op"]
        if not path:
            if kind in ("replace", "add"):
                document = op["value"]
                continue
            raise ValueError(f"cannot {kind} the whole document")
        parent = document
        for segment in path[:-1]:
            parent = _step(parent, segment)
        last = path[-1]
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if kind == "add":
                parent.insert(index, op["value"])
            elif kind == "remove":
                del parent[index]
            elif kind == "replace":
                parent[index] = op["value"]
            elif kind == "append":
                parent[index] = parent[index] + op["value"]
            else:
                raise ValueError(f"unknown op {kind!r}")
        else:
            key = str(last)
            if kind in ("add", "replace"):
                parent[key] = op["value"]
            elif kind == "remove":
                del parent[key]
            elif kind == "append":
                parent[key] = parent[key] + op["value"]
            else:
                raise ValueError(f"unknown op {kind!r}")
    return document


class Mirror:
    """The state of an :class:`App`, kept current from its change feed."""

    def __init__(self, app: App):
        self.app = app
        self.state: dict = app.state()
        self.revision: int = self.state["revision"]
        #: How many times the feed asked for a full resync.
        self.resyncs = 0
        #: Bytes of the last answer of the change feed.
        self.last_answer_bytes = 0

    def update(self) -> dict:
        """Brings the mirror to the app's current revision; returns the state."""
        text = self.app.changes_bytes(self.revision)
        self.last_answer_bytes = len(text)
        answer = json.loads(text.decode("utf-8"))
        if not answer.get("ok"):
            raise RuntimeError(f"change feed failed: {answer}")
        if answer.get("resync"):
            self.resyncs += 1
            self.state = answer["state"]
        else:
            for record in answer["changes"]:
                self.state = apply_ops(self.state, record["ops"])
                self.state["revision"] = record["revision"]
        self.revision = answer["revision"]
        return self.state
