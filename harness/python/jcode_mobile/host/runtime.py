"""A host that executes the core's effects for real: HTTP, WebSocket, timers,
stores and a scripted device, on asyncio with one aiohttp ``ClientSession``.

:class:`RealHost` lives on an asyncio loop: every call into the core happens on
the loop's thread, one at a time. :class:`BackgroundHost` runs a RealHost on
its own loop in a daemon thread and offers a synchronous API (tests, CLIs).

How effects run. A report's effects are executed in order. Quick ones (stores,
timers, haptics, device answers, ``websocket_send``, which is queued on the
socket's ordered writer) are carried out at once; network ones (``http_health``,
``http_pair``, ``websocket_connect``) become tasks. Every answer (a platform
event) is queued and fed to the core after the effects before it have been
executed, one at a time: answers never interleave inside one core call.

Sockets. There is at most one socket the core uses, named by the ``effect_id``
of its ``websocket_connect``. A new ``websocket_connect`` closes the old socket
silently; ``websocket_close`` closes it with code 1000 and reports
``websocket_closed {code: 1000}``. A socket the server ends is reported once as
``websocket_closed`` with the close frame's code and reason, or code 1006 when
the connection ended without a close frame. Nothing is delivered for a socket
the core no longer uses, even when it was already queued.

Secrets. Auth tokens, pairing codes and stored values never enter ``errors``
or the ``jcode_mobile.host`` logger; they only go where the effect sends them.

Launch and restore. What survives a restart is the core's snapshot, which it
hands out as ``storage_write {key: "snapshot"}``: the host keeps it in its
:class:`Storage` like any other key (tokens stay in the secure store). With
``restore=True`` the host reads that value back and creates the app with
``{"snapshot": …}`` (first launch when there is none). Like a real iOS host,
which is told the app became active at launch, :meth:`RealHost.start` reports
``app_foreground`` once (``foreground_at_start=False`` to skip it): a restored
app reads its server's token and connects then. ``create_device_id`` is
answered by the :class:`DeviceScript` (a fresh uuid4 by default).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import threading
from collections import deque
from dataclasses import dataclass, field
from socket import gaierror
from typing import Any, Awaitable, Callable, Deque, Dict, List, Optional, Protocol, Set, Tuple, TypeVar

import aiohttp
import yarl

from ..binding import App, JcodeMobileError, JSONInput
from ..fake_gateway import Step
from .clock import Clock, RealClock, VirtualClock
from .device import DeviceScript
from .storage import SNAPSHOT_KEY, MemorySecureStore, MemoryStorage, SecureStore, Storage, StoreError, restore_options

log = logging.getLogger("jcode_mobile.host")

T = TypeVar("T")

#: Code reported when a socket ended without a close frame (RFC 6455: abnormal closure).
ABNORMAL_CLOSURE = 1006
#: Code the host closes with when it shuts down.
GOING_AWAY = 1001
#: The largest WebSocket message the host reads (64 MiB: tungstenite's default
#: max_message_size, what jcode's own gateway and clients read). A frame past
#: the core's 16 MiB input limit must still be read and handed to the core,
#: which refuses it (``too_large``) and notices the missing history in band
#: (docs/LIMITS.md, "A history too large"); aiohttp's own default (4 MiB)
#: would instead fail the connection on every image-heavy history, and the
#: app would reconnect forever.
MAX_MESSAGE_BYTES = 64 << 20

Observer = Callable[[str, Any], None]


class HostTimeout(Exception):
    """:meth:`RealHost.wait_for` gave up; the message says where the app was."""


class Recorder(Protocol):
    """What a recorder passed to :class:`RealHost` provides."""

    def record(self, kind: str, input: Any, report: dict) -> None:  # noqa: A002 - the recorder's own name
        """Called for every call into the core: ``kind`` is "action" or "event"."""


@dataclass
class _Close:
    """Writer-queue sentinel: close the socket (``code``) after the lines before it."""

    code: int


@dataclass(eq=False)
class _Socket:
    """One WebSocket the core asked for, named by its connect effect's id."""

    effect_id: int
    url: str
    #: The core still uses this socket: what it says may be delivered.
    live: bool = True
    ws: Optional[aiohttp.ClientWebSocketResponse] = None
    connect_task: Optional["asyncio.Task[None]"] = None
    reader_task: Optional["asyncio.Task[None]"] = None
    writer_task: Optional["asyncio.Task[None]"] = None
    queue: "asyncio.Queue[Any]" = field(default_factory=asyncio.Queue)
    #: Lines (and a close) queued on the writer and not handled yet.
    unsent: int = 0
    closing: bool = False


def _describe(problem: BaseException) -> str:
    """A short, secret-free description of a network problem."""
    if isinstance(problem, asyncio.TimeoutError) and not str(problem):
        return "timed out"
    if isinstance(problem, aiohttp.ClientConnectorError) and not isinstance(problem, aiohttp.ClientSSLError):
        # aiohttp's own text names "ssl:default" even on plain HTTP: say it in plain words
        cause = problem.os_error
        if isinstance(cause, gaierror) or not cause.errno or cause.errno < 0:
            reason = cause.strerror or str(cause) or type(cause).__name__
        else:
            reason = os.strerror(cause.errno)
        return f"cannot connect to {problem.host} port {problem.port}: {reason[:1].lower()}{reason[1:]}"
    text = str(problem) or type(problem).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _http_url(effect: dict, path: str) -> str:
    """``http(s)://host:port/path`` for an http_* effect (IPv6 hosts in brackets)."""
    host = str(effect["host"]).strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    port = int(effect["port"])
    if not 0 < port < 65536:
        raise ValueError(f"invalid port {port}")
    scheme = "https" if effect.get("use_tls") else "http"
    return str(yarl.URL.build(scheme=scheme, host=host, port=port, path=path))


def _json_object(body: bytes) -> Optional[dict]:
    """The JSON object in an HTTP body, or None."""
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


class RealHost:
    """An asyncio host that owns an :class:`App` and executes every effect for real.

    Parameters:
        app: the app to drive (default ``App(options)``; the host never frees it).
        options: ``App`` options when ``app`` is None.
        clock: runs ``schedule_timer`` (default :class:`RealClock`; pass a
            :class:`VirtualClock` to fire timers only on :meth:`advance`).
        secure_store: for ``secure_store_*`` (default :class:`MemorySecureStore`).
        storage: for ``storage_write`` (default :class:`MemoryStorage`).
        device: the scripted device (default ``DeviceScript()``: no answers).
        recorder: when given, ``recorder.record(kind, input, report)`` is called
            for every call into the core.
        http_timeout: seconds an ``http_health`` / ``http_pair`` may take.
        connect_timeout: seconds a WebSocket handshake may take (and the bound
            on a closing handshake).
        observer: when given, ``observer(kind, {"input": …, "report": …})`` is
            called for every call into the core (kind "action" or "event").
        heartbeat: seconds between the host's own WebSocket pings (None: the
            host only answers the server's pings, which it always does).
        restore: create the app from the snapshot kept in ``storage`` under
            ``"snapshot"`` (``options`` plus ``{"snapshot": …}``; a first
            launch when there is none). Not with ``app``.
        foreground_at_start: :meth:`start` reports ``app_foreground`` once,
            as iOS does at launch (a restored app connects then).
        max_message_bytes: the largest WebSocket message read (default
            :data:`MAX_MESSAGE_BYTES`); a larger one fails the connection.

    Attributes:
        app: the :class:`App`.
        steps: every call into the core, ``Step(kind, input, report)``.
        effects: every effect executed, in order (unredacted).
        errors: host-side problems (unknown effect types, a send with no
            socket, a store that failed…), secret-free; never raised.
        frames_in / frames_out: WebSocket text frames received / sent.
    """

    def __init__(
        self,
        app: Optional[App] = None,
        *,
        options: JSONInput = None,
        clock: Optional[Clock] = None,
        secure_store: Optional[SecureStore] = None,
        storage: Optional[Storage] = None,
        device: Optional[DeviceScript] = None,
        recorder: Optional[Recorder] = None,
        http_timeout: float = 10.0,
        connect_timeout: float = 10.0,
        observer: Optional[Observer] = None,
        heartbeat: Optional[float] = None,
        restore: bool = False,
        foreground_at_start: bool = True,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.storage: Storage = storage if storage is not None else MemoryStorage()
        if restore:
            if app is not None:
                raise ValueError("restore=True creates the app from the stored snapshot: do not pass app")
            options = restore_options(self.storage, options)
        #: Whether the app was created from a stored snapshot.
        self.restored: bool = restore and isinstance(options, dict) and "snapshot" in options
        self.app: App = app if app is not None else App(options)
        self.clock: Clock = clock if clock is not None else RealClock()
        self.secure_store: SecureStore = secure_store if secure_store is not None else MemorySecureStore()
        self.foreground_at_start = foreground_at_start
        self._started = False
        self.device: DeviceScript = device if device is not None else DeviceScript()
        self.recorder = recorder
        self.observer = observer
        self.http_timeout = http_timeout
        self.connect_timeout = connect_timeout
        self.heartbeat = heartbeat
        self.max_message_bytes = max_message_bytes

        self.steps: List[Step] = []
        self.effects: List[dict] = []
        self.errors: List[str] = []
        self.frames_in = 0
        self.frames_out = 0

        self._effect_queue: Deque[dict] = deque()
        self._input_queue: Deque[Tuple[dict, Optional[_Socket]]] = deque()
        self._draining = False
        self._socket: Optional[_Socket] = None
        self._writers: Set[_Socket] = set()
        self._tasks: Set["asyncio.Task[Any]"] = set()
        self._inflight: Set["asyncio.Task[Any]"] = set()
        self._session: Optional[aiohttp.ClientSession] = None
        self._last_input: float = 0.0
        self._changed: Optional[asyncio.Event] = None
        self._closed = False

    # -- lifetime -----------------------------------------------------------------

    async def start(self) -> None:
        """Open the HTTP session (done on first use otherwise) and, the first
        time, report ``app_foreground`` (unless ``foreground_at_start`` is False)."""
        self._check_open()
        self._ensure_session()
        if not self._started:
            self._started = True
            if self.foreground_at_start:
                self.platform_event({"type": "app_foreground"})

    def snapshot(self) -> dict:
        """The app's snapshot now (:meth:`App.snapshot`)."""
        return self.app.snapshot()

    def stored_snapshot(self) -> Any:
        """The snapshot the storage holds (the last ``storage_write`` of it), or None."""
        return self.storage.read(SNAPSHOT_KEY)

    async def close(self) -> None:
        """Close the socket (code 1001), cancel timers and tasks, close the
        HTTP session. Nothing is fed to the core afterwards. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.clock.cancel_all()
        self._effect_queue.clear()
        self._input_queue.clear()
        if self._socket is not None:
            self._retire(self._socket, GOING_AWAY)
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            # give closing handshakes a moment, then stop everything
            await asyncio.wait(pending, timeout=min(1.0, self.connect_timeout))
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    # -- calls into the core --------------------------------------------------------

    def dispatch(self, action: JSONInput) -> dict:
        """Dispatch an action (on the loop thread), start its effects; returns the
        report. Raises :class:`JcodeMobileError` when the core refuses the input."""
        return self._input("action", action)

    def platform_event(self, event: JSONInput) -> dict:
        """Report a platform event yourself (on the loop thread), start its
        effects; returns the report. Raises :class:`JcodeMobileError` when refused."""
        return self._input("event", event)

    def advance(self, ms: int) -> List[str]:
        """Move a :class:`VirtualClock` forward, firing due timers (and running
        what they cause); returns the fired timer ids."""
        if not isinstance(self.clock, VirtualClock):
            raise TypeError("advance() needs a VirtualClock")
        return self.clock.advance(ms)

    @property
    def haptics(self) -> List[str]:
        """The haptic styles played, in order."""
        return self.device.haptics

    @property
    def notifications(self) -> List[dict]:
        """The local notifications shown, one per session (the latest), in order."""
        return self.device.notifications

    @property
    def clipboard(self) -> List[str]:
        """The texts put on the clipboard (``copy_to_clipboard``), in order."""
        return self.device.clipboard

    @property
    def socket_id(self) -> Optional[int]:
        """The effect id of the socket the core uses (open or connecting), or None."""
        return self._socket.effect_id if self._socket is not None else None

    # -- waiting ------------------------------------------------------------------------

    def busy(self) -> int:
        """How many network operations are in flight (requests, handshakes,
        closes, lines not yet written); an idle open socket counts 0."""
        return len(self._inflight) + sum(s.unsent for s in self._writers)

    async def settle(self, quiet: float = 0.05, timeout: float = 5.0) -> bool:
        """Wait until no network operation is in flight and no input reached
        the core for ``quiet`` seconds; False when ``timeout`` passed first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        step = max(0.002, min(0.02, quiet / 4))
        while True:
            now = loop.time()
            idle = not self._effect_queue and not self._input_queue and self.busy() == 0
            if idle and now - self._last_input >= quiet:
                return True
            if now >= deadline:
                return False
            await asyncio.sleep(min(step, deadline - now))

    async def wait_for(self, predicate: Callable[[dict], bool], timeout: float = 5.0) -> dict:
        """Wait until ``predicate(state)`` holds (checked now and after every
        input); returns that state. Raises :class:`HostTimeout` naming the
        screen and connection phase when ``timeout`` passes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if self._changed is None:
            self._changed = asyncio.Event()
        while True:
            state = self.app.state()
            if predicate(state):
                return state
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise HostTimeout(self._timeout_message(predicate, timeout, state))
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    def _timeout_message(self, predicate: Callable[[dict], bool], timeout: float, state: dict) -> str:
        name = getattr(predicate, "__name__", repr(predicate))
        connection = state.get("connection") or {}
        banner = ((state.get("banners") or {}).get("error") or {}).get("message")
        last = self.steps[-1].input.get("type") if self.steps and isinstance(self.steps[-1].input, dict) else None
        parts = [
            f"timed out after {timeout} s waiting for {name}:",
            f"screen {state.get('screen')!r},",
            f"connection phase {connection.get('phase')!r} (attempt {connection.get('attempt')},"
            f" reason {connection.get('reason')!r}),",
            f"error banner {banner!r},",
            f"last input {last!r}, {self.busy()} network operation(s) in flight",
        ]
        if self.errors:
            parts.append(f"; host errors: {self.errors[-3:]}")
        return " ".join(parts)

    # -- the input loop ------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the host is closed")

    def _input(self, kind: str, value: JSONInput) -> dict:
        self._check_open()
        report = self._call_core(kind, value)
        self._drain()
        if report.get("ok") is not True:
            raise JcodeMobileError(report)
        return report

    def _call_core(self, kind: str, value: Any) -> dict:
        """One call into the core: record it, tell the recorder and the
        observer, queue the report's effects."""
        if kind == "action":
            report = self.app.dispatch_raw(value)
        else:
            report = self.app.platform_event_raw(value)
        self.steps.append(Step(kind, value, report))
        try:
            self._last_input = asyncio.get_running_loop().time()
        except RuntimeError:  # called outside a loop (a test driving the core by hand)
            pass
        if self.recorder is not None:
            try:
                self.recorder.record(kind, value, report)
            except Exception as problem:  # noqa: BLE001 - never into the loop
                self._error(f"recorder failed: {type(problem).__name__}")
        if self.observer is not None:
            try:
                self.observer(kind, {"input": value, "report": report})
            except Exception as problem:  # noqa: BLE001
                self._error(f"observer failed: {type(problem).__name__}")
        if self._changed is not None:
            self._changed.set()
        if report.get("ok") is True:
            self._effect_queue.extend(report.get("effects") or [])
        return report

    def _submit(self, event: dict, socket: Optional[_Socket] = None) -> None:
        """Queue an answer for the core (about ``socket``, when given) and run."""
        if self._closed:
            return
        self._input_queue.append((event, socket))
        self._drain()

    def _drain(self) -> None:
        """Execute queued effects, then feed queued answers, until both are empty."""
        if self._draining:
            return
        self._draining = True
        try:
            while not self._closed:
                if self._effect_queue:
                    effect = self._effect_queue.popleft()
                    self.effects.append(effect)
                    self._execute(effect)
                elif self._input_queue:
                    event, socket = self._input_queue.popleft()
                    self._feed(event, socket)
                else:
                    break
        finally:
            self._draining = False

    def _feed(self, event: dict, socket: Optional[_Socket]) -> None:
        if socket is not None:
            if not socket.live:
                return  # the core no longer uses this socket: drop what it said
            if event["type"] in ("websocket_closed", "websocket_failed"):
                socket.live = False
                if self._socket is socket:
                    self._socket = None
        report = self._call_core("event", event)
        if report.get("ok") is not True:
            code = (report.get("error") or {}).get("code")
            self._error(f"the core refused a {event.get('type')} event ({code})")

    def _error(self, message: str) -> None:
        """Note a host-side problem (the message must be secret-free)."""
        self.errors.append(message)
        log.warning("%s", message)

    def _spawn(self, coro: Awaitable[Any], *, inflight: bool) -> "asyncio.Task[Any]":
        task: "asyncio.Task[Any]" = asyncio.get_running_loop().create_task(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        if inflight:
            self._inflight.add(task)

        def done(t: "asyncio.Task[Any]") -> None:
            self._tasks.discard(t)
            self._inflight.discard(t)
            if not t.cancelled() and t.exception() is not None:
                self._error(f"host task failed: {type(t.exception()).__name__}")

        task.add_done_callback(done)
        return task

    def _ensure_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        return self._session

    # -- effects ------------------------------------------------------------------------------

    def _execute(self, effect: dict) -> None:
        kind = effect.get("type")
        eid = effect.get("effect_id")
        handler = getattr(self, "_do_" + kind, None) if isinstance(kind, str) else None
        if handler is None:
            self._error(f"unknown effect type {kind!r} (effect_id {eid}); ignored")
            return
        try:
            handler(effect)
        except Exception as problem:  # noqa: BLE001 - a host problem, never into the loop
            self._error(f"{kind} (effect_id {eid}) failed: {type(problem).__name__}")

    # stores

    def _do_secure_store_write(self, e: dict) -> None:
        ok = True
        try:
            self.secure_store.write(e["key"], e["value"])
        except StoreError as problem:
            ok = False
            self._error(f"secure_store_write {e['key']!r} failed: {problem}")
        except Exception as problem:  # noqa: BLE001
            ok = False
            self._error(f"secure_store_write {e['key']!r} failed: {type(problem).__name__}")
        self._submit({"type": "secure_store_write_finished", "effect_id": e["effect_id"], "key": e["key"], "ok": ok})

    def _do_secure_store_read(self, e: dict) -> None:
        answer: Dict[str, Any] = {"type": "secure_store_read_finished", "effect_id": e["effect_id"], "key": e["key"]}
        try:
            value = self.secure_store.read(e["key"])
        except StoreError as problem:
            answer["ok"] = False
            self._error(f"secure_store_read {e['key']!r} failed: {problem}")
        except Exception as problem:  # noqa: BLE001
            answer["ok"] = False
            self._error(f"secure_store_read {e['key']!r} failed: {type(problem).__name__}")
        else:
            answer["ok"] = True
            if value is not None:
                answer["value"] = value
        self._submit(answer)

    def _do_secure_store_delete(self, e: dict) -> None:
        try:
            self.secure_store.delete(e["key"])
        except StoreError as problem:
            self._error(f"secure_store_delete {e['key']!r} failed: {problem}")

    def _do_storage_write(self, e: dict) -> None:
        try:
            self.storage.write(e["key"], e["value"])
        except StoreError as problem:
            self._error(f"storage_write {e['key']!r} failed: {problem}")

    # timers

    def _do_schedule_timer(self, e: dict) -> None:
        timer_id = str(e["timer_id"])
        self.clock.schedule(timer_id, int(e["after_ms"]), lambda: self._timer_fired(timer_id))

    def _do_cancel_timer(self, e: dict) -> None:
        self.clock.cancel(str(e["timer_id"]))

    def _timer_fired(self, timer_id: str) -> None:
        self._submit({"type": "timer_fired", "timer_id": timer_id})

    # the device

    def _device(self, e: dict) -> None:
        answer = self.device.answer(e)
        if answer is not None:
            self._submit(answer)

    _do_register_push_notifications = _device
    _do_request_camera_qr_scan = _device
    _do_request_speech_transcript = _device
    _do_request_image_picker = _device
    _do_haptic = _device
    _do_show_local_notification = _device
    _do_copy_to_clipboard = _device
    _do_create_device_id = _device

    # HTTP

    def _do_http_health(self, e: dict) -> None:
        self._spawn(self._health(e), inflight=True)

    def _do_http_pair(self, e: dict) -> None:
        self._spawn(self._pair(e), inflight=True)

    async def _request(self, method: str, url: str, body: Optional[dict]) -> Tuple[int, bytes]:
        session = self._ensure_session()

        async def go() -> Tuple[int, bytes]:
            async with session.request(method, url, json=body) as response:
                return response.status, await response.read()

        return await asyncio.wait_for(go(), self.http_timeout)

    async def _http(self, e: dict, method: str, path: str, body: Optional[dict], answer: dict
                    ) -> Optional[Tuple[int, Optional[dict]]]:
        """Do one request; on failure fill ``answer`` (ok false, error) and return None."""
        try:
            url = _http_url(e, path)
        except (KeyError, TypeError, ValueError) as problem:
            answer.update(ok=False, error=f"invalid address: {_describe(problem)}")
            return None
        try:
            status, raw = await self._request(method, url, body)
        except asyncio.TimeoutError:
            answer.update(ok=False, error=f"no answer from {e['host']}:{e['port']} within {self.http_timeout} s")
            return None
        except (aiohttp.ClientError, OSError, ValueError) as problem:
            answer.update(ok=False, error=_describe(problem))
            return None
        return status, _json_object(raw)

    @staticmethod
    def _refused(answer: dict, status: int, data: Optional[dict], fallback: str) -> None:
        answer.update(ok=False, status=status)
        error = (data or {}).get("error")
        answer["error"] = error if isinstance(error, str) else fallback

    async def _health(self, e: dict) -> None:
        answer: Dict[str, Any] = {"type": "health_finished", "effect_id": e["effect_id"]}
        result = await self._http(e, "GET", "/health", None, answer)
        if result is not None:
            status, data = result
            if status == 200 and data is not None:
                answer["ok"] = True
                if isinstance(data.get("version"), str):
                    answer["version"] = data["version"]
            else:
                self._refused(answer, status, data,
                              "the answer is not JSON" if status == 200 else f"HTTP {status}")
        self._submit(answer)

    async def _pair(self, e: dict) -> None:
        answer: Dict[str, Any] = {"type": "pair_finished", "effect_id": e["effect_id"]}
        body = {"code": e["code"], "device_id": e["device_id"], "device_name": e["device_name"]}
        if e.get("apns_token") is not None:
            body["apns_token"] = e["apns_token"]
        result = await self._http(e, "POST", "/pair", body, answer)
        if result is not None:
            status, data = result
            token = (data or {}).get("token")
            if status == 200 and isinstance(token, str):
                answer.update(ok=True, token=token)
                for name in ("server_name", "server_version"):
                    if isinstance((data or {}).get(name), str):
                        answer[name] = data[name]  # type: ignore[index]
            else:
                self._refused(answer, status, data,
                              "the answer has no token" if status == 200 else f"HTTP {status}")
        self._submit(answer)

    # WebSocket

    def _do_websocket_connect(self, e: dict) -> None:
        if self._socket is not None:
            self._retire(self._socket, 1000)  # replaced: closed silently
        socket = _Socket(effect_id=e["effect_id"], url=str(e["url"]))
        self._socket = socket
        socket.connect_task = self._spawn(self._connect(socket, str(e["auth_token"])), inflight=True)

    def _do_websocket_send(self, e: dict) -> None:
        socket = self._socket
        if socket is None:
            self._error(f"websocket_send (effect_id {e.get('effect_id')}) with no open socket; line dropped")
            return
        socket.unsent += 1
        socket.queue.put_nowait(str(e["line"]))

    def _do_websocket_close(self, e: dict) -> None:
        socket = self._socket
        if socket is None:
            return  # nothing open: nothing to report
        opened = socket.ws is not None
        self._retire(socket, 1000)
        if opened:
            self._submit({"type": "websocket_closed", "effect_id": socket.effect_id, "code": 1000})
        # a socket still connecting is abandoned; the core already forgot it

    def _retire(self, socket: _Socket, code: int) -> None:
        """The core stops using ``socket``: deliver nothing more, close it (after
        the lines already queued)."""
        socket.live = False
        if self._socket is socket:
            self._socket = None
        if socket.connect_task is not None and not socket.connect_task.done():
            socket.connect_task.cancel()
        if socket.reader_task is not None and not socket.reader_task.done():
            socket.reader_task.cancel()
        self._close_socket(socket, code)

    def _close_socket(self, socket: _Socket, code: int) -> None:
        """Ask the writer to close the socket after what it has queued."""
        if socket.closing:
            return
        socket.closing = True
        if socket.writer_task is not None and not socket.writer_task.done():
            socket.unsent += 1
            socket.queue.put_nowait(_Close(code))
        elif socket.ws is not None and not socket.ws.closed:
            self._spawn(self._close_ws(socket.ws, code), inflight=True)

    async def _close_ws(self, ws: aiohttp.ClientWebSocketResponse, code: int) -> None:
        try:
            await asyncio.wait_for(ws.close(code=code), self.connect_timeout)
        except (asyncio.TimeoutError, aiohttp.ClientError, OSError):
            pass

    async def _connect(self, socket: _Socket, token: str) -> None:
        eid = socket.effect_id
        session = self._ensure_session()
        try:
            ws = await asyncio.wait_for(
                session.ws_connect(
                    socket.url,
                    headers={"Authorization": f"Bearer {token}"},
                    autoping=True,
                    heartbeat=self.heartbeat,
                    max_msg_size=self.max_message_bytes,
                    timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=self.connect_timeout),
                ),
                self.connect_timeout,
            )
        except aiohttp.WSServerHandshakeError as problem:
            self._submit({"type": "websocket_failed", "effect_id": eid, "status": problem.status,
                          "error": f"the server refused the WebSocket upgrade with HTTP {problem.status}"}, socket)
            return
        except asyncio.TimeoutError:
            self._submit({"type": "websocket_failed", "effect_id": eid,
                          "error": f"no WebSocket handshake within {self.connect_timeout} s"}, socket)
            return
        except (aiohttp.ClientError, OSError, ValueError) as problem:
            self._submit({"type": "websocket_failed", "effect_id": eid, "error": _describe(problem)}, socket)
            return
        if not socket.live or self._closed:
            await self._close_ws(ws, 1000)  # the core stopped waiting for it
            return
        socket.ws = ws
        socket.writer_task = self._spawn(self._write(socket), inflight=False)
        self._writers.add(socket)
        socket.reader_task = self._spawn(self._read(socket), inflight=False)
        self._submit({"type": "websocket_opened", "effect_id": eid}, socket)

    async def _read(self, socket: _Socket) -> None:
        """Deliver text frames, then report how the socket ended (once)."""
        ws = socket.ws
        assert ws is not None
        code, reason = ABNORMAL_CLOSURE, "connection lost"
        while True:
            try:
                message = await ws.receive()
            except asyncio.CancelledError:
                raise
            except Exception as problem:  # noqa: BLE001
                reason = _describe(problem)
                break
            if message.type == aiohttp.WSMsgType.TEXT:
                self.frames_in += 1
                self._submit({"type": "websocket_event", "effect_id": socket.effect_id, "line": message.data}, socket)
            elif message.type == aiohttp.WSMsgType.BINARY:
                self._error(f"binary frame of {len(message.data)} bytes on socket {socket.effect_id} ignored")
            elif message.type == aiohttp.WSMsgType.CLOSE:
                code, reason = int(message.data), str(message.extra or "")
                break
            elif message.type == aiohttp.WSMsgType.ERROR:
                reason = _describe(message.data) if isinstance(message.data, BaseException) else "connection error"
                break
            elif message.type in (aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.CLOSED):
                # after a lost connection aiohttp's own close attempt leaves a write error
                # behind, which is not the cause; a missed heartbeat pong is
                problem = ws.exception()
                if isinstance(problem, aiohttp.ServerTimeoutError):
                    reason = _describe(problem)
                break
        self._close_socket(socket, 1000)
        self._submit({"type": "websocket_closed", "effect_id": socket.effect_id, "code": code, "reason": reason},
                     socket)

    async def _write(self, socket: _Socket) -> None:
        """Send queued lines in order; a queued close closes the socket and ends."""
        ws = socket.ws
        assert ws is not None
        try:
            while True:
                item = await socket.queue.get()
                try:
                    if isinstance(item, _Close):
                        await self._close_ws(ws, item.code)
                        return
                    if ws.closed:
                        self._error(f"websocket_send on socket {socket.effect_id} after it closed; line dropped")
                        continue
                    try:
                        await ws.send_str(item)
                        self.frames_out += 1
                    except (aiohttp.ClientError, OSError, RuntimeError) as problem:
                        self._error(f"websocket_send on socket {socket.effect_id} failed: {_describe(problem)}")
                finally:
                    socket.unsent -= 1
        finally:
            self._writers.discard(socket)
            socket.unsent = 0


# -- on a thread -----------------------------------------------------------------------------------


class BackgroundHost:
    """A :class:`RealHost` on its own event loop in a daemon thread, with a
    synchronous API. Everything that touches the App runs on the loop thread.

    ``BackgroundHost(app=None, **options)`` takes :class:`RealHost`'s
    parameters. Use as a context manager or call :meth:`close`.
    """

    def __init__(self, app: Optional[App] = None, *, call_timeout: float = 10.0, **options: Any) -> None:
        self.call_timeout = call_timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="jcode-mobile-host", daemon=True)
        self._closed = False
        self._thread.start()
        try:
            self.host: RealHost = self.call(lambda: RealHost(app, **options))
            self._run(self.host.start(), call_timeout)
        except BaseException:
            self._stop_loop(call_timeout)
            raise

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            try:
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            finally:
                self._loop.close()

    def _stop_loop(self, timeout: float) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    # -- running things on the loop -------------------------------------------------------

    def call(self, fn: Callable[..., T], *args: Any, timeout: Optional[float] = None) -> T:
        """Run ``fn(*args)`` on the loop thread and return its result (or raise its exception)."""
        if threading.current_thread() is self._thread:
            return fn(*args)
        if self._closed or not self._thread.is_alive():
            raise RuntimeError("the host is closed")
        future: "concurrent.futures.Future[T]" = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args))
            except BaseException as problem:  # noqa: BLE001 - handed to the caller
                future.set_exception(problem)

        self._loop.call_soon_threadsafe(run)
        return future.result(self.call_timeout if timeout is None else timeout)

    def _run(self, coro: Awaitable[T], timeout: float) -> T:
        if self._closed or not self._thread.is_alive():
            raise RuntimeError("the host is closed")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)  # type: ignore[arg-type]

    # -- the synchronous API ------------------------------------------------------------------------

    def dispatch(self, action: JSONInput) -> dict:
        """:meth:`RealHost.dispatch` on the loop thread."""
        return self.call(self.host.dispatch, action)

    def platform_event(self, event: JSONInput) -> dict:
        """:meth:`RealHost.platform_event` on the loop thread."""
        return self.call(self.host.platform_event, event)

    def state(self) -> dict:
        """The app's state."""
        return self.call(self.host.app.state)

    def tree(self) -> dict:
        """The app's semantic tree (root node)."""
        return self.call(self.host.app.tree)

    def logs(self, limit: int = 0) -> dict:
        """The app's logs (``limit`` 0: all kept)."""
        return self.call(self.host.app.logs, limit)

    def snapshot(self) -> dict:
        """The app's snapshot now (``jcode_mobile_snapshot``)."""
        return self.call(self.host.app.snapshot)

    def stored_snapshot(self) -> Any:
        """The snapshot kept in the host's storage, or None."""
        return self.call(self.host.stored_snapshot)

    def settle(self, quiet: float = 0.05, timeout: float = 5.0) -> bool:
        """:meth:`RealHost.settle`, waited for from this thread."""
        return self._run(self.host.settle(quiet, timeout), timeout + self.call_timeout)

    def wait_for(self, predicate: Callable[[dict], bool], timeout: float = 5.0) -> dict:
        """:meth:`RealHost.wait_for` (the predicate runs on the loop thread)."""
        return self._run(self.host.wait_for(predicate, timeout), timeout + self.call_timeout)

    def advance(self, ms: int) -> List[str]:
        """Move the :class:`VirtualClock` forward (on the loop thread); returns the fired timer ids."""
        return self.call(self.host.advance, ms)

    @property
    def steps(self) -> List[Step]:
        """A copy of the host's steps."""
        return self.call(lambda: list(self.host.steps))

    @property
    def effects(self) -> List[dict]:
        """A copy of the effects executed."""
        return self.call(lambda: list(self.host.effects))

    @property
    def errors(self) -> List[str]:
        """A copy of the host's errors."""
        return self.call(lambda: list(self.host.errors))

    def close(self, timeout: float = 5.0) -> None:
        """Close the host (bounded by ``timeout``) and stop the loop thread. Idempotent."""
        if self._closed:
            return
        try:
            if self._thread.is_alive():
                self._run(self.host.close(), timeout)
        except (concurrent.futures.TimeoutError, RuntimeError):
            log.warning("the host did not close within %s s", timeout)
        finally:
            self._closed = True
            self._stop_loop(timeout)

    def __enter__(self) -> "BackgroundHost":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
