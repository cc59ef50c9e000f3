"""The fake jcode gateway on real sockets: :class:`FakeJcodeServer` behind aiohttp.

One TCP port serves what the real gateway serves (jcode:
crates/jcode-base/src/gateway.rs, handle_connection): a request with an
``Upgrade: websocket`` header goes to the WebSocket side, anything else is
plain HTTP. The rules themselves (routes, pairing, tokens, what the server
answers on the socket) are :class:`~jcode_mobile.fake_gateway.FakeJcodeServer`'s;
this module only carries bytes, the way the gateway does:

- HTTP: ``GET /health``, ``POST /pair``, ``OPTIONS`` → 204, anything else 404
  ``{"error":"Not found"}``; JSON bodies are compact, with
  ``Content-Type: application/json`` and ``Connection: close`` (jcode:
  gateway.rs, http_response, handle_http).
- WebSocket upgrade: only at ``/ws`` (404), authenticated by
  ``Authorization: Bearer <token>`` or ``?token=`` (401), refused as plain
  HTTP before the upgrade completes, with the reason as a ``text/plain``
  body ending in a newline (jcode: crates/jcode-base/src/gateway/auth.rs,
  ws_error_response, extract_ws_auth, authorize_ws_device).
- On the socket: every text frame from the client goes to the server as
  written (it may hold several newline-separated requests); every event the
  server writes goes out as one text frame holding one compact JSON object,
  no trailing newline (jcode: gateway.rs, handle_ws_connection, unix_to_ws).
  Pings are answered with pongs; the gateway pings every ``ping_interval``
  seconds (jcode: WEBSOCKET_KEEPALIVE_INTERVAL_SECS = 20). Binary frames are
  ignored. When the server ends a connection the gateway drops the TCP
  connection after the frames already written, without a close frame: the
  client sees 1006.

Fake-only extensions (absent from real jcode): the faults of
:class:`~jcode_mobile.gateway.faults.Faults`, the actions :meth:`GatewayServer.reload`,
:meth:`~GatewayServer.revoke_token`, :meth:`~GatewayServer.revoke_all_tokens`,
:meth:`~GatewayServer.request_session_close`, and the control endpoint
``POST /_fake/control`` (JSON ``{"command": …}`` → JSON; see
:meth:`GatewayServer.control`), which lets another process drive the fake.

Where the fake is stricter than jcode, on purpose: it listens on loopback,
and a web page the person has open must not drive it. Real jcode answers
every HTTP request with ``Access-Control-Allow-Origin: *`` (its preflight
too) and checks neither ``Host`` nor ``Origin``; the fake sends no CORS
header at all, and answers ``POST /pair`` and the control endpoint only for
a loopback ``Host`` with its port (``127.0.0.1``, ``localhost``, ``[::1]``;
with ``allow_remote``, an IP address too: no name a page could rebind) and a
loopback ``Origin`` or none. Anything else is 403 ``{"error": …}``.

All access to the FakeJcodeServer happens on the event loop that runs the
server. :class:`RunningGateway` runs one on its own loop in a daemon thread
for synchronous code and hops onto that loop for every call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import json
import secrets
import socket
import threading
from http import HTTPStatus
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, TypeVar, Union

from aiohttp import WSMsgType, web

from ..fake_gateway import FakeJcodeServer, FakeSocket, HTTPResponse, SocketRejected, Unreachable
from .faults import OPCODE_CONTINUATION, OPCODE_TEXT, Faults, garbage, ws_frame
from .script import reply_from_dict

__all__ = ["GatewayServer", "RunningGateway", "is_loopback", "origin_problem", "CONTROL_PATH", "KEEPALIVE_INTERVAL_SECS"]

T = TypeVar("T")

#: jcode: crates/jcode-base/src/gateway.rs (WEBSOCKET_KEEPALIVE_INTERVAL_SECS)
KEEPALIVE_INTERVAL_SECS = 20.0

#: The fake-only control endpoint (not part of real jcode).
CONTROL_PATH = "/_fake/control"

#: tungstenite's default maximum message size (64 MiB).
_MAX_MESSAGE = 64 << 20


def _json_line(value: Any) -> str:
    # serde_json::to_string: compact, non-ASCII left as UTF-8
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def is_loopback(host: str) -> bool:
    """True when every address ``host`` resolves to is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


#: The host names a request to ``/pair`` or the control endpoint may name in
#: its ``Host`` (with the gateway's port) and its ``Origin``.
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})

#: The paths a web page must not reach (a pairing code, the fake's controls).
GUARDED_PATHS = frozenset({"/pair", CONTROL_PATH})


def _authority(text: str) -> Optional[Tuple[str, Optional[int]]]:
    """``host[:port]`` split into the lowercased host (an IPv6 address keeps
    its brackets) and the port (None when absent); None when it is neither."""
    text = text.lower()
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            return None
        name, rest = text[:close + 1], text[close + 1:]
    else:
        name, colon, port = text.partition(":")
        rest = colon + port
    if not name:
        return None
    if not rest:
        return name, None
    digits = rest[1:]
    if not rest.startswith(":") or not digits.isascii() or not digits.isdigit() or len(digits) > 5:
        return None
    return name, int(digits)


def _is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name[1:-1] if name.startswith("[") and name.endswith("]") else name)
    except ValueError:
        return False
    return True


def origin_problem(host: Optional[str], origin: Optional[str], port: int, *, allow_remote: bool = False) -> Optional[str]:
    """Why a request to ``/pair`` or the control endpoint is refused (None: it
    is not): its ``Host`` must be a loopback name with the gateway's ``port``
    (with ``allow_remote``, an IP address too), its ``Origin`` absent or a
    loopback page's. A web page reaching the fake by another name (DNS
    rebinding) or from another site gets nothing."""
    found = _authority(host.strip()) if host else None
    if found is None:
        return "Forbidden: the request names no host"
    name, named_port = found
    if not (name in LOOPBACK_NAMES or (allow_remote and _is_ip_literal(name))) or (named_port or 80) != port:
        return f"Forbidden: host {host!r} is not this loopback gateway"
    if origin is None:
        return None
    scheme, sep, rest = origin.strip().partition("://")
    found = _authority(rest) if sep and scheme.lower() in ("http", "https") else None
    if found is None or found[0] not in LOOPBACK_NAMES:
        return f"Forbidden: origin {origin!r} is not a loopback page"
    return None


def _bearer_argument(header: Optional[str]) -> Optional[str]:
    """The ``auth_token`` FakeJcodeServer.open_socket takes for an
    ``Authorization`` header: the part after ``Bearer`` (None: no header;
    "": not a Bearer header, which the fake refuses as the real one does).

    jcode: crates/jcode-base/src/gateway/auth.rs (parse_bearer_token)
    """
    if header is None:
        return None
    parts = header.split(None, 1)
    if not parts or parts[0].lower() != "bearer":
        return ""
    return parts[1] if len(parts) > 1 else ""


class _Connection:
    """One upgraded WebSocket: bridges frames to a FakeSocket and back, applying faults."""

    def __init__(self, gateway: "GatewayServer", number: int, request: web.Request, ws: web.WebSocketResponse,
                 fake_socket: FakeSocket):
        self.gateway = gateway
        self.number = number
        self.ws = ws
        self.transport = request.transport
        self.fake_socket = fake_socket
        #: ("events", [event…]) or ("end", reason); written in order by the writer task.
        self.queue: "asyncio.Queue[tuple]" = asyncio.Queue()
        #: Why the server ends this connection (None: it does not).
        self.ending: Optional[str] = None
        self.events_sent = 0
        self.frames_sent = 0
        #: Frames received during a stall, not read yet.
        self.held: List[str] = []
        self.write_lock = asyncio.Lock()
        self.writer_task: Optional["asyncio.Task[None]"] = None
        self.keepalive_task: Optional["asyncio.Task[None]"] = None
        fake_socket.listener = self.enqueue

    # -- from the client ------------------------------------------------------

    def receive_text(self, text: str) -> None:
        """A text frame arrived (the server stops reading once it ends the connection)."""
        if self.ending is not None:
            return
        if self.gateway.faults.stall:
            self.held.append(text)
            return
        self.deliver(text)

    def deliver(self, text: str) -> None:
        if self.ending is not None or not self.fake_socket.open:
            return
        if self._drops_on(text):
            self.fake_socket.send(text)  # the server reads it and acts on it; its answers are never written
            faults = self.gateway.faults
            if faults.drop_times is not None:
                faults.drop_times -= 1
            self.ending = "drop_on_request"
            self.fake_socket.close()
            self.gateway._log(f"WS #{self.number} dropped on a {faults.drop_on_request!r} request (drop_on_request)")
            self._close_transport()
            return
        self.enqueue(self.fake_socket.send(text))
        if self.fake_socket.server_closed:
            # jcode: crates/jcode-base/src/gateway.rs (handle_ws_connection): when the server side of
            # the bridge ends, the gateway returns and drops the socket without a close frame
            self.end("the server ended the connection")

    def _drops_on(self, text: str) -> bool:
        """Whether the ``drop_on_request`` fault applies to this client frame."""
        faults = self.gateway.faults
        if faults.drop_on_request is None or faults.drop_times == 0:
            return False
        for line in text.split("\n"):
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if isinstance(request, dict) and request.get("type") == faults.drop_on_request:
                return True
        return False

    def release_held(self) -> None:
        held, self.held = self.held, []
        for text in held:
            self.deliver(text)

    # -- to the client ----------------------------------------------------------

    def enqueue(self, events: Sequence[dict]) -> None:
        if events and self.ending is None:
            self.queue.put_nowait(("events", list(events)))

    def end(self, reason: str) -> None:
        """End the connection after the frames already queued (no close frame)."""
        if self.ending is not None:
            return
        self.ending = reason
        self.fake_socket.close()
        self.queue.put_nowait(("end", reason))

    def kill(self, reason: str) -> None:
        """End the connection now, dropping whatever is queued."""
        if self.ending is None:
            self.ending = reason
            self.fake_socket.close()
        for task in (self.writer_task, self.keepalive_task):
            if task is not None:
                task.cancel()
        self._close_transport()

    def _close_transport(self) -> None:
        # transport.close() flushes what is buffered, then closes the TCP connection: the client
        # reads every frame written, then EOF without a close frame (1006)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    async def write_loop(self) -> None:
        try:
            while True:
                items = [await self.queue.get()]
                while not self.queue.empty():
                    items.append(self.queue.get_nowait())
                events: List[dict] = []
                for kind, value in items:
                    if kind == "events":
                        events.extend(value)
                        continue
                    if not await self._write_events(events):
                        return
                    self.gateway._log(f"WS #{self.number} ended by the server ({value}) after "
                                      f"{self.events_sent} events")
                    self._close_transport()
                    return
                if not await self._write_events(events):
                    return
        except (ConnectionError, RuntimeError):
            self.kill("the connection broke")

    async def _write_events(self, events: List[dict]) -> bool:
        """Write events as frames (faults applied); False once the connection was dropped."""
        while events:
            faults = self.gateway.faults
            size = max(1, faults.coalesce)
            if faults.drop_after is not None and faults.drop_times != 0:  # never write past the N-th event
                size = max(1, min(size, faults.drop_after - self.events_sent))  # type: ignore[operator]
            frame, events = events[:size], events[size:]
            await self._write_frame(frame)
            faults = self.gateway.faults
            if faults.drop_after is not None and faults.drop_times != 0 and self.events_sent >= faults.drop_after:
                if faults.drop_times is not None:
                    faults.drop_times -= 1
                self.ending = self.ending or "drop_after"
                self.fake_socket.close()
                self.gateway._log(f"WS #{self.number} dropped after {self.events_sent} events (drop_after)")
                self._close_transport()
                return False
        return True

    async def _write_frame(self, events: List[dict]) -> None:
        if self.ending is None:  # a connection the server is ending flushes its frames despite a stall
            await self.gateway._wait_unstalled()
        faults = self.gateway.faults
        if faults.delay_ms:
            await asyncio.sleep(faults.delay_ms / 1000)
            faults = self.gateway.faults
        text = "\n".join(_json_line(e) for e in events)
        self.frames_sent += 1
        garble = faults.garble_every is not None and self.frames_sent % faults.garble_every == 0
        if faults.garble_next > 0:
            faults.garble_next -= 1
            garble = True
        if garble:
            await self._send_text(garbage(text), faults)
        await self._send_text(text, faults)
        if faults.duplicate:
            await self._send_text(text, faults)
        self.events_sent += len(events)

    async def _send_text(self, text: str, faults: Faults) -> None:
        async with self.write_lock:
            if self.transport is None or self.transport.is_closing():
                raise ConnectionResetError("the connection is closed")
            if not faults.split:
                await self.ws.send_str(text)
                return
            # aiohttp's writer only writes whole messages: a fragmented message is written by hand,
            # a text frame with FIN=0 then a continuation frame with FIN=1 (server frames are unmasked)
            data = text.encode("utf-8")
            half = len(data) // 2
            pause = faults.split_pause_ms / 1000
            for frame in (ws_frame(data[:half], opcode=OPCODE_TEXT, fin=False),
                          ws_frame(data[half:], opcode=OPCODE_CONTINUATION, fin=True)):
                cut = len(frame) // 2
                self.transport.write(frame[:cut])
                await asyncio.sleep(pause)
                if self.transport.is_closing():
                    raise ConnectionResetError("the connection is closed")
                self.transport.write(frame[cut:])

    async def pong(self, data: bytes) -> None:
        async with self.write_lock:
            if self.transport is not None and not self.transport.is_closing():
                await self.ws.pong(data)

    async def keepalive(self, interval: float) -> None:
        # jcode: crates/jcode-base/src/gateway.rs (handle_ws_connection, keepalive): an empty ping
        # every WEBSOCKET_KEEPALIVE_INTERVAL_SECS; a failed ping ends the keepalive
        try:
            while True:
                await asyncio.sleep(interval)
                async with self.write_lock:
                    if self.transport is None or self.transport.is_closing():
                        return
                    await self.ws.ping(b"")
        except (ConnectionError, RuntimeError):
            return


class GatewayServer:
    """A :class:`FakeJcodeServer` served over HTTP and WebSocket on one loopback port.

    Parameters:
        fake: the server rules and state (default: a new FakeJcodeServer whose
            first pairing returns a random 64-hex token, as real tokens are).
            Its ``port`` is set to the bound port.
        host, port: where to listen (port 0: a free port). Only loopback
            addresses unless ``allow_remote``.
        faults: the faults in force (default: none); see :meth:`set_faults`.
        ping_interval: seconds between the gateway's WebSocket pings.
        control: serve the fake-only ``POST /_fake/control``.
        log: called with one line per request/connection event (no tokens).
    """

    def __init__(self, fake: Optional[FakeJcodeServer] = None, *, host: str = "127.0.0.1", port: int = 0,
                 faults: Optional[Faults] = None, ping_interval: float = KEEPALIVE_INTERVAL_SECS,
                 control: bool = True, allow_remote: bool = False,
                 log: Optional[Callable[[str], None]] = None):
        if not allow_remote and not is_loopback(host):
            raise ValueError(f"refusing to listen on {host!r}: not a loopback address (allow_remote=True to force)")
        if not 0 <= port <= 65535:  # getaddrinfo would take 99999 as 99999 % 65536
            raise ValueError(f"port {port} is not from 1 to 65535 (or 0: a free one)")
        self.fake = fake if fake is not None else FakeJcodeServer(token=secrets.token_hex(32))
        self.host = host
        self.port = port
        self.faults = faults if faults is not None else Faults()
        self.ping_interval = ping_interval
        self.control_enabled = control
        self.allow_remote = allow_remote
        self.log = log
        self._connections: Set[_Connection] = set()
        self._opened = 0
        self._runner: Optional[web.AppRunner] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._unstalled: Optional[asyncio.Event] = None
        self._http_unstalled: Optional[asyncio.Event] = None
        self._stopping: Optional[asyncio.Event] = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (the WebSocket is at ``ws://HOST:PORT/ws``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    # -- lifecycle ----------------------------------------------------------------

    async def start(self) -> None:
        """Bind and listen; ``port`` and ``url`` are then the real ones."""
        self._loop = asyncio.get_running_loop()
        self._unstalled, self._http_unstalled, self._stopping = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._sync_events()
        family, kind, proto, _, address = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        self.fake.port = self.port
        app = web.Application(client_max_size=1 << 20)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0, handle_signals=False)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        """Drop every connection and stop listening (bounded: a few seconds at most)."""
        if self._runner is None:
            return
        assert self._stopping is not None
        self._stopping.set()
        for conn in list(self._connections):
            conn.kill("the gateway stopped")
        runner, self._runner = self._runner, None
        try:
            await asyncio.wait_for(runner.cleanup(), timeout=3.0)
        except asyncio.TimeoutError:
            pass

    # -- actions and faults --------------------------------------------------------

    def connections(self) -> int:
        """Open WebSocket connections (those the server is not ending)."""
        return sum(1 for c in self._connections if c.ending is None)

    def set_faults(self, **changes: Any) -> Faults:
        """Change faults at run time (see :class:`Faults`); returns the faults now in force.

        Lifting ``stall`` answers the frames held meanwhile, in order."""
        was_stalled = self.faults.stall
        self.faults = self.faults.replace(**changes)
        self._sync_events()
        if was_stalled and not self.faults.stall:
            for conn in sorted(self._connections, key=lambda c: c.number):
                conn.release_held()
        return self.faults

    def push(self, events: Union[dict, Sequence[dict]]) -> List[dict]:
        """The server writes ``events`` to every subscribed connection."""
        return self.fake.push(events)

    def finish_turn(self) -> List[dict]:
        """Send the rest of the one held turn (see ``Reply.hold_after``)."""
        return self.fake.finish_turn()

    def request_session_close(self, reason: str) -> dict:
        """Push ``session_close_requested {reason}`` (the connections stay)."""
        return self.fake.request_session_close(reason)

    def reload(self) -> int:
        """What clients see when jcode reloads: ``reloading``, then every
        connection drops. Sessions survive (a client reconnects and resumes);
        a turn that was running is marked interrupted. Returns how many
        connections were dropped.

        jcode: crates/jcode-app-core/src/server/client_session.rs (handle_reload): ``Reloading
        {new_socket: None}`` (serialized ``{"type":"reloading"}``) to every live session's
        clients, then the server execs its new binary and every connection ends;
        crates/jcode-app-core/src/server/client_disconnect_cleanup.rs: a session that was
        processing is marked crashed ("Server reload interrupted processing"); reload.rs persists a
        reload recovery intent for it, which every history then carries until a message with the
        matching ``system_reminder`` is accepted (see FakeJcodeServer.interrupt_turns_for_reload).
        """
        self.fake.interrupt_turns_for_reload()
        self.fake.push({"type": "reloading"})
        self.fake.reload_starting = False  # the new process takes messages again
        dropped = 0
        for conn in list(self._connections):
            if conn.ending is None:
                conn.end("reload")
                dropped += 1
        self._log(f"reload: {dropped} connection(s) dropped")
        return dropped

    def drop_connections(self) -> int:
        """The network fails: every connection ends at once, without an event
        and without a close frame (the client sees 1006); what was queued is
        lost. The server forgets those connections as if the phones vanished;
        sessions stay for a reconnect. Returns how many connections were dropped."""
        dropped = 0
        for conn in list(self._connections):
            if conn.ending is None:
                conn.kill("network dropped")
                dropped += 1
        self._log(f"drop: {dropped} connection(s) dropped")
        return dropped

    def send_raw(self, data: bytes) -> int:
        """Write ``data`` as is on every open connection's TCP stream — bytes
        that need not be a valid WebSocket message (a protocol violation, a
        binary frame): the fault a broken proxy or server produces. Returns
        how many connections got it."""
        sent = 0
        for conn in self._connections:
            if conn.ending is None and conn.transport is not None and not conn.transport.is_closing():
                conn.transport.write(data)
                sent += 1
        return sent

    def revoke_token(self, token: str, *, drop: bool = True) -> int:
        """Revoke ``token``: later upgrades with it get 401. With ``drop``, its
        open connections are dropped too (real jcode checks tokens only at the
        upgrade and keeps them: pass ``drop=False`` for that). Returns how many
        connections were dropped."""
        self.fake.revoke_token(token)
        dropped = 0
        if drop:
            for conn in list(self._connections):
                if conn.ending is None and conn.fake_socket.token == token:
                    conn.end("token revoked")
                    dropped += 1
        return dropped

    def revoke_all_tokens(self, *, drop: bool = True) -> int:
        """Revoke every token the server accepts (see :meth:`revoke_token`);
        returns how many connections were dropped."""
        return sum(self.revoke_token(token, drop=drop) for token in sorted(self.fake.valid_tokens))

    def state(self) -> Dict[str, Any]:
        """A summary for the control endpoint (no tokens)."""
        return {
            "connections": self.connections(),
            "faults": self.faults.to_dict(),
            "pair_codes_left": len(self.fake.pair_codes),
            "paired_devices": sorted(d["name"] for d in self.fake.devices.values()),
            "sessions": list(self.fake.sessions),
            "replies_left": len(self.fake.replies),
            "requests": len(self.fake.requests),
            "running_turns": sum(1 for s in self.fake.open_sockets() if s.turn is not None),
        }

    def control(self, command: Dict[str, Any]) -> Dict[str, Any]:
        """Run one control command (the body of ``POST /_fake/control``).

        Commands: ``push {events}`` · ``finish_turn`` · ``reload`` · ``drop_connections`` ·
        ``revoke_all_tokens {drop?}`` · ``request_session_close {reason}`` ·
        ``set_faults {faults}`` · ``add_pair_code {code}`` · ``state`` ·
        ``foreign_turn {reply?, content?, request_id?, session_id?}`` (a turn another client
        started, fanned out; ``reply`` as in a script) · ``finish_foreign_turn {session_id?}`` ·
        ``set_rules {reload_starting}`` · ``compact_session {session_id?, keep_last?}``.
        The answer is ``{"ok": true, …}``; a bad command raises ValueError.
        """
        name = command.get("command")
        if name == "push":
            events = command.get("events")
            if isinstance(events, dict):
                events = [events]
            if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
                raise ValueError("push needs events: an event object or a list of them")
            targets = sum(1 for s in self.fake.open_sockets() if s.subscribed)
            return {"ok": True, "events": self.push(events), "connections": targets}
        if name == "finish_turn":
            try:
                return {"ok": True, "events": self.finish_turn()}
            except RuntimeError as problem:
                raise ValueError(str(problem)) from None
        if name == "reload":
            return {"ok": True, "dropped": self.reload()}
        if name == "drop_connections":
            return {"ok": True, "dropped": self.drop_connections()}
        if name == "revoke_all_tokens":
            return {"ok": True, "dropped": self.revoke_all_tokens(drop=bool(command.get("drop", True)))}
        if name == "request_session_close":
            reason = command.get("reason")
            if not isinstance(reason, str):
                raise ValueError("request_session_close needs reason: a string")
            return {"ok": True, "event": self.request_session_close(reason)}
        if name == "set_faults":
            changes = command.get("faults")
            if not isinstance(changes, dict):
                raise ValueError("set_faults needs faults: an object")
            return {"ok": True, "faults": self.set_faults(**changes).to_dict()}
        if name == "add_pair_code":
            code = command.get("code")
            if not isinstance(code, str) or not code:
                raise ValueError("add_pair_code needs code: a non-empty string")
            self.fake.pair_codes.add(code)
            return {"ok": True}
        if name == "state":
            return {"ok": True, **self.state()}
        if name == "foreign_turn":
            reply = command.get("reply")
            options: Dict[str, Any] = {}
            for key, kind in (("content", str), ("session_id", str), ("request_id", int)):
                if command.get(key) is not None:
                    if not isinstance(command[key], kind) or isinstance(command[key], bool):
                        raise ValueError(f"foreign_turn {key} must be a {kind.__name__}")
                    options[key] = command[key]
            try:
                events = self.fake.start_foreign_turn(
                    reply_from_dict(reply) if reply is not None else None, **options)
            except (RuntimeError, KeyError) as problem:
                raise ValueError(f"foreign_turn: {problem}") from None
            return {"ok": True, "events": events}
        if name == "finish_foreign_turn":
            try:
                return {"ok": True, "events": self.fake.finish_foreign_turn(command.get("session_id"))}
            except RuntimeError as problem:
                raise ValueError(str(problem)) from None
        if name == "set_rules":
            rules = command.get("rules")
            if not isinstance(rules, dict) or set(rules) - {"reload_starting"}:
                raise ValueError("set_rules needs rules: an object with reload_starting")
            if not isinstance(rules.get("reload_starting", False), bool):
                raise ValueError("reload_starting must be true or false")
            if "reload_starting" in rules:
                self.fake.reload_starting = rules["reload_starting"]
            return {"ok": True, "rules": {"reload_starting": self.fake.reload_starting}}
        if name == "compact_session":
            keep = command.get("keep_last", 0)
            if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
                raise ValueError("compact_session keep_last must be a non-negative integer")
            sid = command.get("session_id")
            if sid is not None and sid not in self.fake.sessions:
                raise ValueError(f"compact_session: no session {sid!r}")
            session = self.fake.compact_session(sid, keep_last=keep)
            return {"ok": True, "compacted": len(session["compacted"]), "messages": len(session["messages"])}
        raise ValueError(f"unknown command {name!r}")

    # -- internals ------------------------------------------------------------------

    def _log(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    def _sync_events(self) -> None:
        if self._unstalled is None or self._http_unstalled is None:
            return
        for event, stalled in ((self._unstalled, self.faults.stall), (self._http_unstalled, self.faults.http_stall)):
            if stalled:
                event.clear()
            else:
                event.set()

    async def _wait_for(self, event: asyncio.Event) -> bool:
        """Wait until ``event`` is set (True) or the gateway stops (False)."""
        assert self._stopping is not None
        if event.is_set():
            return True
        waiters = [asyncio.ensure_future(event.wait()), asyncio.ensure_future(self._stopping.wait())]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        return event.is_set() and not self._stopping.is_set()

    async def _wait_unstalled(self) -> None:
        assert self._unstalled is not None
        if not await self._wait_for(self._unstalled):
            raise ConnectionResetError("the gateway stopped")

    def _fake_host(self, request: web.Request) -> str:
        """The host name to give the fake: the request's, unless the fake would
        call it unreachable (a socket that reached us is proof enough)."""
        host = request.url.host or "127.0.0.1"
        return host if self.fake.reachable(host, self.fake.port) else "127.0.0.1"

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        # jcode: crates/jcode-base/src/gateway.rs (handle_connection): a request with an
        # "Upgrade: websocket" header goes to the WebSocket side whatever its path
        if "websocket" in request.headers.get("Upgrade", "").lower():
            return await self._websocket(request)
        if request.path in GUARDED_PATHS:
            problem = origin_problem(request.headers.get("Host"), request.headers.get("Origin"), self.port,
                                     allow_remote=self.allow_remote)
            if problem is not None:
                self._log(f"HTTP {request.method} {request.path} -> 403 ({problem})")
                return self._json_response(HTTPResponse(403, {"error": problem}))
        if self.control_enabled and request.method == "POST" and request.path == CONTROL_PATH:
            return await self._control(request)
        return await self._http(request)

    async def _http(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        method, path = request.method, request.path
        if (method, path) in (("GET", "/health"), ("POST", "/pair")):
            assert self._http_unstalled is not None
            if self.faults.http_stall:
                self._log(f"HTTP {method} {path} stalled (http_stall)")
                if not await self._wait_for(self._http_unstalled):
                    return web.Response(status=503)  # the gateway stopped: nobody reads this
            if self.faults.http_status is not None:
                status = self.faults.http_status
                self._log(f"HTTP {method} {path} -> {status} (http_status fault)")
                return self._json_response(HTTPResponse(status, {"error": HTTPStatus(status).phrase}))
        host = self._fake_host(request)
        try:
            if (method, path) == ("GET", "/health"):
                answer = self.fake.health(host, self.fake.port)
            elif (method, path) == ("POST", "/pair"):
                self.fake.last_pair_refusal = None
                answer = self.fake.pair(host, self.fake.port, False, body.decode("utf-8", "replace"))
            else:
                answer = self.fake.http(method, host, self.fake.port, request.raw_path, body)
        except Unreachable as problem:  # cannot happen with _fake_host; answered plainly if it does
            answer = HTTPResponse(502, {"error": str(problem)})
        note = ""
        if path == "/pair":
            try:
                device = json.loads(body).get("device_name")
            except (ValueError, AttributeError):
                device = None
            note = f" (device {device!r})" if isinstance(device, str) else ""
            if answer.status != 200 and self.fake.last_pair_refusal is not None:
                note += f": refused, {self.fake.last_pair_refusal}"
        self._log(f"HTTP {method} {path} -> {answer.status}{note}")
        return self._json_response(answer)

    @staticmethod
    def _json_response(answer: HTTPResponse) -> web.Response:
        # jcode: crates/jcode-base/src/gateway.rs (http_response; handle_http's CORS preflight).
        # jcode adds Access-Control-Allow-Origin: * (and grants the preflight); the fake grants
        # no other origin anything (see the module's docstring).
        if answer.status == 204:
            response = web.Response(status=204)
        else:
            response = web.Response(status=answer.status, body=_json_line(answer.body).encode("utf-8"), headers={
                "Content-Type": "application/json",
            })
        response.force_close()  # "Connection: close": one request per connection
        return response

    async def _control(self, request: web.Request) -> web.Response:
        name: Any = None
        try:
            command = json.loads(await request.read())
            if not isinstance(command, dict):
                raise ValueError("the body is a JSON object with a command")
            name = command.get("command")
            answer, status = self.control(command), 200
        except (ValueError, TypeError) as problem:
            answer, status = {"ok": False, "error": str(problem)}, 400
        self._log(f"control {name} -> {status}")
        return web.Response(status=status, body=_json_line(answer).encode("utf-8"),
                            headers={"Content-Type": "application/json"})

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        number = self._opened = self._opened + 1
        url = f"ws://{self._fake_host(request)}:{self.fake.port}{request.raw_path}"
        try:
            fake_socket = self.fake.open_socket(url, _bearer_argument(request.headers.get("Authorization")))
        except SocketRejected as refusal:
            # jcode: crates/jcode-base/src/gateway/auth.rs (ws_error_response): the handshake is
            # refused with the status and a text/plain body "<message>\n"
            self._log(f"WS #{number} refused {refusal.status}: {refusal}")
            response = web.Response(status=refusal.status, body=f"{refusal}\n".encode("utf-8"),
                                    headers={"Content-Type": "text/plain; charset=utf-8"})
            response.force_close()
            return response
        # tungstenite negotiates no compression; pings are answered by hand so every write to the
        # transport goes through the connection's write lock (a split frame is two writes)
        ws = web.WebSocketResponse(autoping=False, compress=False, max_msg_size=_MAX_MESSAGE)
        try:
            await ws.prepare(request)
        except Exception:
            fake_socket.close()
            raise
        device = self.fake.devices.get(fake_socket.token, {}).get("name", "a fixture token")
        conn = _Connection(self, number, request, ws, fake_socket)
        self._connections.add(conn)
        self._log(f"WS #{number} open ({device!r})")
        conn.writer_task = asyncio.ensure_future(conn.write_loop())
        if self.ping_interval > 0:
            conn.keepalive_task = asyncio.ensure_future(conn.keepalive(self.ping_interval))
        how = "closed by the client"
        try:
            while True:
                message = await ws.receive()
                if message.type == WSMsgType.TEXT:
                    conn.receive_text(message.data)
                elif message.type == WSMsgType.PING:
                    await conn.pong(message.data)
                elif message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                    if message.type == WSMsgType.ERROR:
                        how = "dropped by the client"
                    break
        finally:
            self._connections.discard(conn)
            if conn.ending is None:
                self._log(f"WS #{number} {how} after {conn.events_sent} events")
                conn.kill(how)
            elif conn.keepalive_task is not None:
                conn.keepalive_task.cancel()
        return ws


class RunningGateway:
    """A :class:`GatewayServer` on its own event loop in a daemon thread, for synchronous code.

    ::

        with RunningGateway(FakeJcodeServer(pair_code="111111")) as gw:
            requests.get(gw.url + "/health")
            gw.push({"type": "notification", ...})
            gw.set_faults(delay_ms=50)

    Every method hops onto the loop thread and waits for the result there
    (exceptions are re-raised here). Keyword arguments are GatewayServer's.
    """

    def __init__(self, fake: Optional[FakeJcodeServer] = None, *, host: str = "127.0.0.1", port: int = 0,
                 faults: Optional[Faults] = None, **options: Any):
        self.server = GatewayServer(fake, host=host, port=port, faults=faults, **options)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None

    @property
    def fake(self) -> FakeJcodeServer:
        """The server's FakeJcodeServer (read it through :meth:`call` while running)."""
        return self.server.fake

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def url(self) -> str:
        return self.server.url

    def __enter__(self) -> "RunningGateway":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def start(self, timeout: float = 5.0) -> "RunningGateway":
        """Start the loop thread; returns once the server listens."""
        if self._thread is not None:
            raise RuntimeError("already started")
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: List[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.server.start())
            except BaseException as problem:  # reported to start()
                failure.append(problem)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="jcode-fake-gateway", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise TimeoutError("the fake gateway did not start")
        if failure:
            self._thread = None
            raise failure[0]
        return self

    def stop(self, timeout: float = 4.0) -> None:
        """Drop every connection, stop listening, end the thread (never waits more than ``timeout``)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self.server.stop(), loop)
        try:
            future.result(timeout)
        except (concurrent.futures.TimeoutError, Exception):
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        self._thread = None

    def _on_loop(self, fn: Callable[[], T], timeout: float = 5.0) -> T:
        loop = self._loop
        if loop is None or self._thread is None:
            raise RuntimeError("the gateway is not running")
        if threading.current_thread() is self._thread:
            return fn()
        future: "concurrent.futures.Future[T]" = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn())
            except BaseException as problem:
                future.set_exception(problem)

        loop.call_soon_threadsafe(run)
        return future.result(timeout)

    def call(self, fn: Callable[[FakeJcodeServer], T], timeout: float = 5.0) -> T:
        """Run ``fn(fake)`` on the loop thread; its result (or its exception)."""
        return self._on_loop(lambda: fn(self.server.fake), timeout)

    def push(self, events: Union[dict, Sequence[dict]]) -> List[dict]:
        return self._on_loop(lambda: self.server.push(events))

    def request_session_close(self, reason: str) -> dict:
        return self._on_loop(lambda: self.server.request_session_close(reason))

    def revoke_token(self, token: str, *, drop: bool = True) -> int:
        return self._on_loop(lambda: self.server.revoke_token(token, drop=drop))

    def revoke_all_tokens(self, *, drop: bool = True) -> int:
        return self._on_loop(lambda: self.server.revoke_all_tokens(drop=drop))

    def reload(self) -> int:
        return self._on_loop(self.server.reload)

    def drop_connections(self) -> int:
        return self._on_loop(self.server.drop_connections)

    def send_raw(self, data: bytes) -> int:
        return self._on_loop(lambda: self.server.send_raw(data))

    def finish_turn(self) -> List[dict]:
        return self._on_loop(self.server.finish_turn)

    def set_faults(self, **changes: Any) -> Faults:
        return self._on_loop(lambda: self.server.set_faults(**changes))

    def connections(self) -> int:
        return self._on_loop(self.server.connections)
