"""A fake jcode backend and a host that executes the core's effects.

The core never performs I/O: it returns effects (``http_pair``,
``websocket_connect``, ``websocket_send``…) and learns their outcome from
platform events. This module plays the other side, in memory:

- :class:`FakeJcodeServer` is a jcode gateway: ``GET /health``, ``POST /pair``
  and the WebSocket protocol (``subscribe``, ``get_history``, ``message`` with
  a scripted, streamed :class:`Reply`, and the other requests).
- :class:`Host` owns an :class:`~jcode_mobile.App` and a server and does
  what an iOS host would: it executes every effect, answers with platform
  events quoting the ``effect_id``, keeps the Keychain and storage as dicts,
  records timers, and delivers server frames parsed (``{"event":…}``) or raw
  (``{"line":…}``, several events per frame if asked).

    host = Host()
    host.dispatch({"type": "set_host", "value": "devbox.local"})
    ...
    host.dispatch({"type": "submit_pairing"})   # pairs, connects, loads history
    host.dispatch({"type": "send_message", "text": "hi"})  # reply streamed in

Every effect executed is kept in ``host.effects`` and every call into the
core in ``host.steps``, for assertions.
"""

from __future__ import annotations

import base64
import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from .binding import App, JSONInput

__all__ = [
    "Unreachable",
    "SocketRejected",
    "HTTPResponse",
    "Reply",
    "FakeSocket",
    "FakeJcodeServer",
    "Step",
    "HostError",
    "Host",
]

DEFAULT_PORT = 7643


class Unreachable(Exception):
    """Nothing answers at that address (the host maps it to ok:false without status)."""


class SocketRejected(Exception):
    """The gateway refused the WebSocket upgrade with an HTTP status (401: bad token)."""

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


@dataclass
class Reply:
    """A scripted assistant turn: what the fake server streams after ``message``.

    Order on the wire: ``reasoning_delta``… ``reasoning_done``, then per tool
    ``tool_start``/``tool_input``/``tool_exec``/``tool_done`` and a
    ``message_end``, then ``text_delta`` per chunk, ``tokens`` and finally
    ``done {id}`` with the message's request id.
    """

    text: str = "Done."
    #: The deltas to send; default: ``text`` cut by :func:`split_words`.
    chunks: Optional[List[str]] = None
    reasoning: Optional[str] = None
    reasoning_secs: Optional[float] = None
    #: Tool calls: ``{"id","name","input"(str),"output","error"?}``.
    tools: List[Dict[str, Any]] = field(default_factory=list)
    #: ``(input, output)`` token usage, sent before ``done`` when set.
    tokens: Optional[Tuple[int, int]] = None

    def deltas(self) -> List[str]:
        return list(self.chunks) if self.chunks is not None else split_words(self.text)

    def events(self, request_id: int) -> List[dict]:
        events: List[dict] = []
        if self.reasoning:
            for part in split_words(self.reasoning, 4):
                events.append({"type": "reasoning_delta", "text": part})
            done: dict = {"type": "reasoning_done"}
            if self.reasoning_secs is not None:
                done["duration_secs"] = self.reasoning_secs
            events.append(done)
        for tool in self.tools:
            events.append({"type": "tool_start", "id": tool["id"], "name": tool["name"]})
            if tool.get("input"):
                events.append({"type": "tool_input", "delta": tool["input"]})
            events.append({"type": "tool_exec", "id": tool["id"], "name": tool["name"]})
            finished = {"type": "tool_done", "id": tool["id"], "name": tool["name"], "output": tool.get("output", "")}
            if tool.get("error") is not None:
                finished["error"] = tool["error"]
            events.append(finished)
        if self.tools:
            events.append({"type": "message_end"})
        for chunk in self.deltas():
            events.append({"type": "text_delta", "text": chunk})
        if self.tokens is not None:
            events.append({"type": "tokens", "input": self.tokens[0], "output": self.tokens[1]})
        events.append({"type": "done", "id": request_id})
        return events


class FakeSocket:
    """One WebSocket connection to the fake gateway."""

    def __init__(self, server: "FakeJcodeServer", url: str, token: str):
        self.server = server
        self.url = url
        self.token = token
        self.open = True
        #: Request lines received on this connection, parsed.
        self.received: List[dict] = []

    def send(self, line: str) -> List[dict]:
        """Deliver one request line; returns the server events it causes, in order."""
        if not self.open:
            raise RuntimeError("send on a closed fake socket")
        request = json.loads(line)
        self.received.append(request)
        self.server.requests.append(request)
        return self.server.handle_request(self, request)

    def close(self) -> None:
        self.open = False


class FakeJcodeServer:
    """An in-memory jcode gateway.

    Pairing: the code ``pair_code`` ("123456") returns ``token``; any other
    code gets 401 ``{"error":"Invalid or expired pairing code"}``. A host
    ending in ``.invalid`` (or a port other than ``port``) is unreachable.
    The WebSocket accepts tokens it issued (plus ``accepted_tokens``).

    Replies to ``message`` come from ``replies`` (a queue of :class:`Reply`)
    and, when it is empty, from ``default_reply(content)``.
    """

    def __init__(
        self,
        *,
        pair_code: str = "123456",
        token: str = "tok-fake-0001",
        server_name: str = "devbox",
        version: str = "0.9.2",
        port: int = DEFAULT_PORT,
        session_id: str = "session-fox",
        display_title: str = "Fix the flaky test",
        provider_name: str = "anthropic",
        provider_model: str = "claude-sonnet-4",
        available_models: Tuple[str, ...] = ("claude-sonnet-4", "claude-opus-4", "gpt-5"),
        history: Optional[List[dict]] = None,
        other_sessions: Optional[Dict[str, str]] = None,
        accepted_tokens: Tuple[str, ...] = ("fixture-token",),
        replies: Optional[List[Reply]] = None,
        default_reply: Optional[Callable[[str], Reply]] = None,
    ):
        self.pair_code = pair_code
        self.token = token
        self.server_name = server_name
        self.version = version
        self.port = port
        self.provider_name = provider_name
        self.provider_model = provider_model
        self.available_models = list(available_models)
        self.reasoning_effort = "medium"
        #: session id -> {"title": str, "messages": [...]}
        self.sessions: Dict[str, dict] = {
            session_id: {"title": display_title, "messages": list(history or [])},
        }
        for sid, title in (other_sessions if other_sessions is not None else {"session-owl": "Release notes"}).items():
            self.sessions.setdefault(sid, {"title": title, "messages": []})
        self.current_session = session_id
        self.valid_tokens = set(accepted_tokens)
        self.replies: Deque[Reply] = deque(replies or [])
        self.default_reply = default_reply or (lambda content: Reply(text=f"You said: {content}"))
        #: Bodies of every POST /pair, every request line (all connections), every socket.
        self.pair_requests: List[dict] = []
        self.health_checks: List[Tuple[str, int, bool]] = []
        self.requests: List[dict] = []
        self.sockets: List[FakeSocket] = []

    # -- HTTP ---------------------------------------------------------------

    def reachable(self, host: str, port: int) -> bool:
        return not host.lower().endswith(".invalid") and port == self.port

    def _check_reachable(self, host: str, port: int) -> None:
        if not self.reachable(host, port):
            raise Unreachable("Connection refused" if not host.endswith(".invalid") else f"Could not resolve host {host}")

    def health(self, host: str, port: int, use_tls: bool = False) -> HTTPResponse:
        """``GET /health``."""
        self.health_checks.append((host, port, use_tls))
        self._check_reachable(host, port)
        return HTTPResponse(200, {"status": "ok", "version": self.version, "gateway": True})

    def pair(self, host: str, port: int, use_tls: bool, body: dict) -> HTTPResponse:
        """``POST /pair`` with ``{code, device_id, device_name, apns_token?}``."""
        self._check_reachable(host, port)
        self.pair_requests.append(dict(body))
        if str(body.get("code", "")) != self.pair_code:
            return HTTPResponse(401, {"error": "Invalid or expired pairing code"})
        self.valid_tokens.add(self.token)
        return HTTPResponse(200, {"token": self.token, "server_name": self.server_name, "server_version": self.version})

    # -- WebSocket ----------------------------------------------------------

    def open_socket(self, url: str, auth_token: str) -> FakeSocket:
        """Open ``ws(s)://host:port/ws`` with ``Authorization: Bearer <auth_token>``."""
        parts = urlsplit(url)
        default = 443 if parts.scheme == "wss" else 80
        self._check_reachable(parts.hostname or "", parts.port or default)
        if parts.path != "/ws":
            raise SocketRejected(404, f"no WebSocket at {parts.path}")
        if auth_token not in self.valid_tokens:
            raise SocketRejected(401, "Unauthorized")
        socket = FakeSocket(self, url, auth_token)
        self.sockets.append(socket)
        return socket

    def session_event(self) -> dict:
        return {"type": "session", "session_id": self.current_session}

    def history_event(self, request_id: int) -> dict:
        session = self.sessions[self.current_session]
        return {
            "type": "history",
            "id": request_id,
            "session_id": self.current_session,
            "messages": list(session["messages"]),
            "provider_name": self.provider_name,
            "provider_model": self.provider_model,
            "available_models": list(self.available_models),
            "all_sessions": [{"session_id": sid, "display_title": s["title"]} for sid, s in self.sessions.items()],
            "server_version": self.version,
            "display_title": session["title"],
            "reasoning_effort": self.reasoning_effort,
        }

    def next_reply(self, content: str) -> Reply:
        return self.replies.popleft() if self.replies else self.default_reply(content)

    def handle_request(self, socket: FakeSocket, request: dict) -> List[dict]:
        """The events the gateway sends in answer to one request."""
        kind = request.get("type")
        rid = request.get("id")
        session = self.sessions[self.current_session]
        if kind == "subscribe":
            target = request.get("target_session_id")
            if target in self.sessions:
                self.current_session = target
            return [self.session_event()]
        if kind == "get_history":
            return [self.history_event(rid)]
        if kind == "message":
            content = request.get("content", "")
            session["messages"].append({"role": "user", "content": content})
            reply = self.next_reply(content)
            for tool in reply.tools:
                data = {"id": tool["id"], "name": tool["name"], "input": tool.get("input", ""), "output": tool.get("output", "")}
                if tool.get("error") is not None:
                    data["error"] = tool["error"]
                session["messages"].append({"role": "assistant", "content": "", "tool_data": data})
            session["messages"].append({"role": "assistant", "content": "".join(reply.deltas())})
            return reply.events(rid)
        if kind == "cancel":
            return [{"type": "interrupted"}]
        if kind == "soft_interrupt":
            return [{"type": "soft_interrupt_injected", "content": request.get("content", ""), "point": "after_tool"}]
        if kind == "cancel_soft_interrupts":
            return []
        if kind == "ping":
            return [{"type": "pong", "id": rid}]
        if kind == "resume_session":
            sid = request.get("session_id")
            if sid not in self.sessions:
                return [{"type": "error", "id": rid, "message": f"unknown session {sid}"}]
            self.current_session = sid
            return [self.session_event()]
        if kind == "set_model":
            model = request.get("model")
            if model not in self.available_models:
                return [{"type": "model_changed", "id": rid, "model": model, "error": "unknown model"}]
            self.provider_model = model
            return [{"type": "model_changed", "id": rid, "model": model}]
        if kind == "set_reasoning_effort":
            self.reasoning_effort = request.get("effort")
            return [{"type": "reasoning_effort_changed", "id": rid, "effort": self.reasoning_effort}]
        if kind == "compact":
            return [{"type": "compact_result", "id": rid, "message": "Conversation compacted", "success": True}]
        if kind == "rename_session":
            session["title"] = request.get("title") or session["title"]
            return [{"type": "session_renamed", "session_id": self.current_session, "display_title": session["title"]}]
        if kind == "clear":
            session["messages"] = []
            return [{"type": "ack", "id": rid}]
        if kind in ("permission_response", "stdin_response"):
            return [{"type": "ack", "id": rid}]
        return [{"type": "error", "id": rid, "message": f"unknown request type {kind!r}"}]


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

        self.keychain: Dict[str, str] = {}
        self.storage: Dict[str, Any] = {}
        #: Pending timers: timer_id -> the schedule_timer effect.
        self.timers: Dict[str, dict] = {}
        self.haptics: List[str] = []
        #: Every effect executed, in order (the full, unredacted effect objects).
        self.effects: List[dict] = []
        #: Every call into the core with its report.
        self.steps: List[Step] = []
        #: Server frames not delivered yet: (socket effect_id, [events]).
        self.inbox: Deque[Tuple[int, List[dict]]] = deque()
        #: Open sockets by the effect_id of their websocket_connect.
        self.sockets: Dict[int, Any] = {}
        self.socket_id: Optional[int] = None
        self._queue: Deque[dict] = deque()

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
        self._answer({"type": "websocket_opened", "effect_id": eid})

    def _do_websocket_send(self, eid: int, e: dict) -> None:
        if self.socket_id is None:
            raise HostError(f"websocket_send with no open socket: {e}")
        self._enqueue_frames(self.socket_id, self.sockets[self.socket_id].send(e["line"]))

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
